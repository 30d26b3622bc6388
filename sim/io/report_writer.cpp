#include "sim/io/report_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include "trainsim/model/model_spec.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/version.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/scenario_loader.hpp"

namespace trainsim::io {
namespace {

std::string fixed(double v, int decimals) { return fixed_text(v, decimals); }

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + " %"; }

// Why the parameters line may read less than the weights: with the stack's fp8.param_gather the
// layers' weights live in their FP8 copies, which the buffers count (report/memory.cpp).
std::string parameters_note(const parallel::Scenario& s) {
  return report::layers_held_in_fp8(s) ? " (layers' weights in FP8, in buffers)" : "";
}

// The plan's pipeline layout, layers per model chunk in model order, when it has one; else the
// split parallel::chunk_layers makes where the chunks do not hold as many layers each (11|11|10
// of 32 layers on pp 3, which the line did not say).
std::string layout_text(const parallel::Scenario& s) {
  const parallel::ParallelPlan& p = s.parallel;
  if (p.pipeline_layout.empty()) {
    const std::int64_t chunks = p.pp * p.virtual_stages;
    if (chunks <= 1) return "";
    std::string counts;
    bool uneven = false;
    const std::int64_t first = parallel::chunk_layers(s, 0).count;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t n = parallel::chunk_layers(s, c).count;
      uneven = uneven || n != first;
      if (c > 0) counts += '|';
      counts += std::to_string(n);
    }
    return uneven ? ", layers " + counts + " per chunk" : "";
  }
  std::string out = ", layout";
  for (std::size_t c = 0; c < p.pipeline_layout.size(); ++c) {
    out += c == 0 ? ' ' : '|';
    out += std::to_string(p.pipeline_layout[c]);
  }
  return out + " layers per chunk";
}

// The optimizer state's dtypes when the stack keeps any of them in 16 bits.
std::string optimizer_note(const parallel::Scenario& s) {
  const auto& o = s.stack.optimizer_state;
  if (s.training.optimizer != parallel::Optimizer::AdamW ||
      (o.main_params_bytes == 4.0 && o.exp_avg_bytes == 4.0 && o.exp_avg_sq_bytes == 4.0)) {
    return "";
  }
  const auto bits = [](double bytes) { return bytes == 4.0 ? "32" : "16"; };
  return std::string(" (") +
         (report::element_bytes(s.training.precision) < 4
              ? std::string("main weights ") + bits(o.main_params_bytes) + "-bit, "
              : std::string()) +
         "moments " + bits(o.exp_avg_bytes) + "/" + bits(o.exp_avg_sq_bytes) + "-bit)";
}

}  // namespace

std::int64_t byte_count(Bytes bytes) { return std::llround(bytes.value()); }

nlohmann::json report_context() {
  return {{"schema_version", kReportSchemaVersion}, {"trainsim_version", kVersion}};
}

nlohmann::json scenario_context(const parallel::Scenario& scenario) {
  nlohmann::json context = report_context();
  context["hardware"] = scenario.hardware_name;
  context["model"] = scenario.model_name;
  context["stack"] = scenario.stack_name;
  return context;
}

std::string shown_name(const std::string& name, const std::string& inline_text) {
  return escape_control(name) + (!inline_text.empty() && name != "inline" ? " (inline)" : "");
}

nlohmann::json memory_reserve_to_json(const report::MemoryBreakdown& m) {
  return {{"capacity_bytes", byte_count(m.capacity)},
          {"usable_bytes", byte_count(m.usable)},
          {"reserved_bytes", byte_count(m.reserved)},
          {"headroom_fraction", m.headroom_fraction},
          {"reserved",
           {{"cuda_context_bytes", byte_count(m.cuda_context)},
            {"nccl_buffers_bytes", byte_count(m.nccl_buffers)},
            {"workspace_bytes", byte_count(m.workspace)},
            {"fragmentation_bytes", byte_count(m.fragmentation)},
            {"headroom_bytes", byte_count(m.headroom)}}}};
}

nlohmann::json memory_to_json(const report::MemoryBreakdown& m) {
  nlohmann::json j = memory_reserve_to_json(m);
  j["parameters_bytes"] = byte_count(m.parameters);
  j["gradients_bytes"] = byte_count(m.gradients);
  j["optimizer_bytes"] = byte_count(m.optimizer);
  j["activations_bytes"] = byte_count(m.activations);
  j["buffers_bytes"] = byte_count(m.buffers);
  j["total_bytes"] = byte_count(m.total);
  j["fits"] = m.fits;
  // The pipeline stage these bytes are of (the one that needs most, which the table's memory
  // line shows; 0 without a pipeline).
  j["stage"] = m.stage;
  return j;
}

nlohmann::json report_to_json(const parallel::Scenario& scenario, const report::Report& r) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : r.collectives) {
    collectives.push_back({{"stage", c.stage},
                           {"op", c.op},
                           {"group", c.group},
                           {"ranks", c.ranks},
                           {"nodes", c.nodes},
                           {"domains", c.domains},
                           {"bytes", byte_count(c.bytes)},
                           {"count", c.count},
                           {"time_s", c.time.value()},
                           {"algorithm", c.algorithm},
                           {"protocol", c.protocol}});
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages) {
    stages.push_back({{"stage", s.stage},
                      {"compute_s", s.compute.value()},
                      {"communication_s", s.communication.value()},
                      {"exposed_communication_s", s.exposed_communication.value()},
                      {"bubble_s", s.bubble.value()},
                      {"memory_total_bytes", byte_count(s.memory_total)},
                      {"watts_per_gpu", s.watts_per_gpu}});
  }
  return {{"context", scenario_context(scenario)},
          {"scenario", scenario_to_json(scenario)},
          {"iteration_time_s", r.iteration_time.value()},
          {"tokens_per_s", r.tokens_per_s},
          {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
          {"model_flops_per_token", r.model_flops_per_token.value()},
          {"tflops_per_gpu", r.model_flops_per_gpu.value() / 1e12},
          {"mfu", r.mfu},
          {"mfu_bf16", r.mfu_bf16},
          {"hfu", r.hfu},
          {"compute_s", r.compute.value()},
          {"communication_s", r.communication.value()},
          {"exposed_communication_s", r.exposed_communication.value()},
          {"bubble_s", r.bubble.value()},
          {"host_overhead_s", r.host_overhead.value()},
          {"critical_stage", r.critical_stage},
          {"memory", memory_to_json(r.memory)},
          {"power",
           {{"watts_per_gpu", r.power.per_gpu.value()},
            {"cluster_watts", r.power.cluster.value()},
            {"energy_per_iteration_j", r.power.energy_per_iteration.value()},
            {"tokens_per_joule", r.power.tokens_per_joule}}},
          {"cost",
           {{"gpu_hours_per_million_tokens", r.cost.gpu_hours_per_million_tokens},
            {"usd_per_million_tokens", r.cost.usd_per_million_tokens}}},
          {"collectives", collectives},
          {"stages", stages}};
}

void write_report_table(std::ostream& out, const parallel::Scenario& s, const report::Report& r) {
  const parallel::ParallelPlan& p = s.parallel;
  const double t = r.iteration_time.value();
  auto share = [t](Seconds x) { return t > 0.0 ? percent(x.value() / t) : std::string("-"); };
  // The plan line gives ep as describe does: a mixture-of-experts plan's table never said it.
  out << "scenario     " << shown_name(s.model_name, s.model_inline) << " on " << s.gpus << " x "
      << shown_name(s.hardware_name, s.hardware_inline) << " (" << s.nodes()
      << (s.nodes() == 1 ? " node)\n" : " nodes)\n") << "stack        "
      << shown_name(s.stack_name, s.stack_inline) << "\n"
      << "plan         tp " << p.tp << ", pp " << p.pp << ", cp " << p.cp << ", dp " << p.dp
      << (model::is_moe(s.model) ? ", ep " + std::to_string(p.ep) : std::string()) << ", sharding "
      << parallel::to_string(p.sharding) << ", schedule " << parallel::to_string(p.schedule)
      << (p.virtual_stages > 1 ? " x" + std::to_string(p.virtual_stages) : "") << ", recompute "
      << parallel::to_string(p.recompute)
      << (p.recompute_layers > 0 ? " (" + std::to_string(p.recompute_layers) + " layers per chunk)"
                                 : std::string())
      << (p.sequence_parallel ? ", sp" : "")
      << (p.account_for_embedding_in_pipeline_split && p.account_for_loss_in_pipeline_split
              ? ", embedding and loss counted in the pipeline split"
          : p.account_for_embedding_in_pipeline_split ? ", embedding counted in the pipeline split"
          : p.account_for_loss_in_pipeline_split      ? ", loss counted in the pipeline split"
                                                      : "")
      << layout_text(s) << "\n"
      << "training     seq " << s.training.seq_len << ", global batch " << s.training.global_batch
      << ", micro-batch " << s.training.micro_batch << " (" << s.num_microbatches()
      << " per step), " << parallel::to_string(s.training.precision) << "\n\n";
  out << "iteration    " << to_string(r.iteration_time) << "\n"
      << "  compute                 " << to_string(r.compute) << "  (" << share(r.compute) << ")\n"
      << "  communication           " << to_string(r.communication) << "\n"
      << "  exposed communication   " << to_string(r.exposed_communication) << "  ("
      << share(r.exposed_communication) << ")\n"
      << "  bubble                  " << to_string(r.bubble) << "  (" << share(r.bubble) << ")";
  // The stack's host time per step sits in the bubble (the GPUs idle): say how much of it.
  if (r.host_overhead.value() > 0.0) {
    out << ", of it host overhead " << to_string(r.host_overhead) << " (stack iteration_overhead)";
  }
  out << "\n";
  if (s.parallel.pp > 1 && !r.stages.empty()) {
    // The breakdown above is one stage's, the critical one (report.hpp): say which, and show
    // every stage's, so that a plan whose busiest stage changes reads as such.
    out << "  above: stage " << r.critical_stage << " of " << s.parallel.pp
        << ", the busiest (*); by stage:\n";
    std::array<char, 160> line{};
    std::snprintf(line.data(), line.size(), "  %-6s %10s %14s %10s %10s %10s %8s\n", "stage",
                  "compute", "communication", "exposed", "bubble", "memory", "power");
    out << line.data();
    for (const auto& st : r.stages) {
      std::snprintf(line.data(), line.size(), "  %-6s %10s %14s %10s %10s %10s %8s\n",
                    (std::to_string(st.stage) + (st.stage == r.critical_stage ? " *" : "")).c_str(),
                    to_string(st.compute).c_str(), to_string(st.communication).c_str(),
                    to_string(st.exposed_communication).c_str(), to_string(st.bubble).c_str(),
                    to_string(st.memory_total).c_str(), to_string(Watts(st.watts_per_gpu)).c_str());
      out << line.data();
    }
  }
  out << "\n";
  out << "throughput   " << fixed(r.tokens_per_s, 0) << " tokens/s, "
      << fixed(r.tokens_per_s_per_gpu, 1) << " tokens/s per GPU\n"
      << "model FLOPs  " << to_string(r.model_flops_per_token) << " per token, "
      << to_string(r.model_flops_per_gpu) << " per GPU\n"
      << "MFU          " << percent(r.mfu) << "   HFU " << percent(r.hfu)
      << (s.training.precision == hardware::Dtype::Bf16 ? std::string()
          // report::simulate's fallback for a GPU without bf16 (V100), named as such.
          : s.hardware.peak(hardware::Dtype::Bf16).value() > 0.0
              ? "   MFU vs bf16 peak " + percent(r.mfu_bf16)
              : "   MFU vs fp16 peak (no bf16) " + percent(r.mfu_bf16))
      << "\n\n";
  const auto& m = r.memory;
  // With a pipeline, the stage that needs most (the JSON's memory.stage).
  out << "memory/GPU   " << to_string(m.total) << " of " << to_string(m.usable) << " usable ("
      << to_string(m.capacity) << " HBM)" << report::on_stage(m, s.parallel.pp)
      << (m.fits ? "" : "   DOES NOT FIT") << "\n"
      << "  reserved   " << to_string(m.reserved) << ": CUDA context " << to_string(m.cuda_context)
      << ", NCCL " << to_string(m.nccl_buffers) << ", workspace " << to_string(m.workspace)
      << ", fragmentation " << to_string(m.fragmentation) << ", headroom "
      << percent(m.headroom_fraction) << " (" << to_string(m.headroom) << ")\n"
      << "  parameters " << to_string(m.parameters) << parameters_note(s) << ", gradients "
      << to_string(m.gradients) << ", optimizer " << to_string(m.optimizer) << optimizer_note(s)
      << "\n"
      << "  activations " << to_string(m.activations) << ", buffers " << to_string(m.buffers)
      << "\n\n";
  out << "power        " << to_string(r.power.per_gpu) << " per GPU, " << to_string(r.power.cluster)
      << " cluster, " << to_string(r.power.energy_per_iteration) << " per iteration, "
      << fixed_significant(r.power.tokens_per_joule, 2, 2) << " tokens/J\n"
      << "cost         " << fixed_significant(r.cost.gpu_hours_per_million_tokens, 3, 2)
      << " GPU-hours and $" << fixed_significant(r.cost.usd_per_million_tokens, 3, 2)
      << " per million tokens\n";
  if (!r.collectives.empty()) {
    // One block per pipeline stage, each under its own header line: the summaries are ordered by
    // stage, then by first use (report.hpp), so a stage's calls are contiguous.
    out << "\ncollectives (per call)\n";
    // The NVLink domains each call's group spans, where a domain holds more than one host
    // (GB200 NVL72); elsewhere they are the nodes, and the table keeps its columns.
    const bool domains = s.hardware.node.hosts_per_domain() > 1;
    // The group column is as wide as its longest name ('expert_shard' is 12), 9 at least.
    int group_width = 9;
    for (const auto& c : r.collectives) {
      group_width = std::max(group_width, static_cast<int>(c.group.size()));
    }
    std::array<char, 256> line{};
    std::int64_t stage = -1;
    for (const auto& c : r.collectives) {
      if (c.stage != stage) {
        stage = c.stage;
        if (s.parallel.pp > 1) out << "  stage " << stage << " of " << s.parallel.pp << "\n";
        std::snprintf(line.data(), line.size(), "  %-15s %-*s %6s %6s%s %12s %6s %10s  %s\n", "op",
                      group_width, "group", "ranks", "nodes", domains ? " domains" : "", "bytes",
                      "count", "time", "algorithm");
        out << line.data();
      }
      std::array<char, 32> domain_cell{};
      if (domains) {
        std::snprintf(domain_cell.data(), domain_cell.size(), " %7lld",
                      static_cast<long long>(c.domains));
      }
      std::snprintf(line.data(), line.size(), "  %-15s %-*s %6lld %6lld%s %12s %6lld %10s  %s/%s\n",
                    c.op.c_str(), group_width, c.group.c_str(), static_cast<long long>(c.ranks),
                    static_cast<long long>(c.nodes), domain_cell.data(), to_string(c.bytes).c_str(),
                    static_cast<long long>(c.count), to_string(c.time).c_str(), c.algorithm.c_str(),
                    c.protocol.c_str());
      out << line.data();
    }
  }
}

}  // namespace trainsim::io
