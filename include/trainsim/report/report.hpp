// The result of simulating one training iteration: DESIGN.md's report ("Command line and
// report", "Metrics") as typed values. io/report_writer turns it into JSON, a table or CSV.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/report/memory.hpp"
#include "trainsim/units.hpp"

namespace trainsim::report {

// One kind of collective call of the iteration (same op, group and size) on one pipeline stage.
struct CollectiveSummary {
  std::int64_t stage = 0;  // pipeline stage that issues the calls
  std::string op;          // "all_gather"
  std::string group;       // "tp", "cp", "dp", "pp", "shard", "replicate", "ep", "expert_dp",
                           // "expert_shard", "embedding"
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;
  std::int64_t domains = 0;  // NVLink domains the ranks span (the nodes where a node is one)
  Bytes bytes;               // per call, nccl-tests accounting
  std::int64_t count = 0;  // calls per iteration on that stage
  Seconds time;            // per call
  std::string algorithm;   // "ring"
  std::string protocol;    // "Simple"
};

struct StageSummary {
  std::int64_t stage = 0;
  Seconds compute;                // summed compute kernel time (contention included)
  Seconds communication;          // summed communication kernel time
  Seconds exposed_communication;  // communication running while no compute runs
  Seconds bubble;                 // nothing running
  Bytes memory_total;
  double watts_per_gpu = 0.0;
};

struct PowerSummary {
  Watts per_gpu;                // average over the iteration and over stages
  Watts cluster;                // per_gpu x gpus
  Joules energy_per_iteration;  // cluster x iteration time
  double tokens_per_joule = 0.0;
};

struct CostSummary {
  double gpu_hours_per_million_tokens = 0.0;
  double usd_per_million_tokens = 0.0;
};

struct Report {
  Seconds iteration_time;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  Flops model_flops_per_token;
  FlopsPerSecond model_flops_per_gpu;  // achieved model FLOP/s per GPU (tflops_per_gpu x 1e12)
  double mfu = 0.0;  // against the dense peak of the training dtype (DESIGN.md "Metrics")
  // Against the dense bf16 peak whatever the training dtype, so that fp8 and bf16 runs compare
  // (Megatron-Bridge's performance tables give both); equals mfu for bf16 and fp16 runs.
  double mfu_bf16 = 0.0;
  double hfu = 0.0;
  // The critical stage: the one with the most compute plus exposed communication.
  std::int64_t critical_stage = 0;
  // Of the critical stage.
  Seconds compute;
  Seconds communication;
  Seconds exposed_communication;
  Seconds bubble;
  // The stack's fixed host time per optimizer step (iteration_overhead), with the GPUs idle
  // after their work: part of every stage's bubble.
  Seconds host_overhead;
  MemoryBreakdown memory;  // the stage that needs most
  PowerSummary power;
  CostSummary cost;
  std::vector<CollectiveSummary> collectives;
  std::vector<StageSummary> stages;
};

}  // namespace trainsim::report
