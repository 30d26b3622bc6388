// The scaling-trends paper's FSDP setting as a test scenario (docs/sources.md P2): h100-dgx,
// llama2-7b, shard_grad_op, TP = PP = 1, micro-batch 2, seq 4096, no gradient accumulation
// (the global batch defaults to dp x micro-batch). Loaded the way `trainsim run` loads it.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "sim/io/scenario_loader.hpp"

namespace trainsim::testing {

// The setting on `gpus` GPUs, with dotted scenario keys overridden: {"parallel.tp": 2}.
inline parallel::Scenario paper_fsdp(std::int64_t gpus,
                                     const nlohmann::json& overrides = nlohmann::json::object()) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 8},
    "training": {"seq_len": 4096, "micro_batch": 2},
    "parallel": {"sharding": "shard_grad_op"}})");
  io::set_path(doc, "cluster.gpus", gpus, "test");
  for (const auto& [key, value] : overrides.items()) io::set_path(doc, key, value, "test");
  return io::scenario_from_document(doc);
}

}  // namespace trainsim::testing
