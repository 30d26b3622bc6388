// The scaling-trends paper's 13 claims (Fernandez et al. 2024, "Hardware Scaling Trends and
// Diminishing Returns in Large-Scale Distributed Training"), each with the scenario and the
// tolerance band of docs/sources.md P1-P13, one TEST_CASE per claim. Scenarios go through
// io::scenario_from_document and report::simulate as in `trainsim run`; "best plan" through
// sweep::search as in `trainsim search`; P1 through CollectiveModel::cost as in `trainsim
// collective`; P13 through io::load_hardware. Built-in profiles, and no "stack" key, so every
// scenario runs the default stack pytorch-2.3-fsdp (the paper's PyTorch 2.3 FSDP).
//
// A claim the simulator misses today keeps its true band and is tagged [!shouldfail]: it passes
// while the claim fails and fails (so shows) the day the claim holds, so whoever closes the gap
// turns it into a plain test. The comment above it gives today's figures.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/sweep/search.hpp"

#include "sim/io/hardware_loader.hpp"
#include "sim/io/scenario_loader.hpp"

#include "tests/paper_scenario.hpp"

using namespace trainsim;
using sweep::Candidate;
using sweep::SearchResult;

namespace {

constexpr double kGiB = 1073741824.0;

// The paper's FSDP setting (sources.md P2): h100-dgx, llama2-7b, shard_grad_op, TP = PP = 1,
// no accumulation, with another micro-batch or sequence length.
parallel::Scenario fsdp(std::int64_t gpus, std::int64_t micro_batch = 2, std::int64_t seq = 4096) {
  return testing::paper_fsdp(gpus,
                             {{"training.micro_batch", micro_batch}, {"training.seq_len", seq}});
}

// P2/P3/P4/P12's sweep: 8, 16, ..., 2048 GPUs.
struct FsdpPoint {
  std::int64_t gpus = 0;
  report::Report report;
};

std::vector<FsdpPoint> fsdp_sweep() {
  std::vector<FsdpPoint> out;
  for (std::int64_t gpus = 8; gpus <= 2048; gpus *= 2) {
    out.push_back(FsdpPoint{.gpus = gpus, .report = report::simulate(fsdp(gpus)).report});
  }
  return out;
}

const report::Report& at(const std::vector<FsdpPoint>& sweep_points, std::int64_t gpus) {
  const auto it = std::find_if(sweep_points.begin(), sweep_points.end(),
                               [gpus](const FsdpPoint& p) { return p.gpus == gpus; });
  REQUIRE(it != sweep_points.end());
  return it->report;
}

// The scenario a plan search starts from, as `trainsim search --hardware H --model M --gpus G
// --global-batch B --seq-len 4096` builds it, with the paper's shard_grad_op.
parallel::Scenario search_base(const std::string& hardware, const std::string& model,
                               std::int64_t gpus, std::int64_t global_batch) {
  io::ScenarioDocument doc;
  io::set_path(doc, "hardware", hardware, "test");
  io::set_path(doc, "model", model, "test");
  io::set_path(doc, "cluster.gpus", gpus, "test");
  io::set_path(doc, "training.seq_len", 4096, "test");
  io::set_path(doc, "training.global_batch", global_batch, "test");
  io::set_path(doc, "parallel.sharding", "shard_grad_op", "test");
  return io::scenario_from_document(doc);
}

// The "best plan" of sources.md P.0: TP, PP in `degrees` ({1, 2, 4, 8}, 16 where stated),
// micro-batch in {1, 2, 4, 8}, global batch fixed, ranked by tokens/s among the plans that fit.
// What the claim does not vary stays the paper's or the scenario's: shard_grad_op, no
// recomputation, 1F1B; sequence parallelism with TP > 1 as `trainsim search` tries it.
// Equivalent to `trainsim search --tp 1,2,4,8 --pp 1,2,4,8 --micro-batch 1,2,4,8
// --sharding shard_grad_op --recompute none --schedule 1f1b`.
SearchResult best_plans(const parallel::Scenario& base,
                        const std::vector<std::int64_t>& degrees = {1, 2, 4, 8}) {
  sweep::SearchSpace space;
  space.tp = degrees;
  space.pp = degrees;
  space.micro_batch = {1, 2, 4, 8};
  space.sharding = {parallel::Sharding::ShardGradOp};
  space.recompute = {parallel::Recompute::None};
  space.schedule = {parallel::PipelineSchedule::OneFOneB};
  SearchResult result = sweep::search(base, space, sweep::Objective::TokensPerS, 2);
  REQUIRE(!result.ranked.empty());
  return result;
}

// The best ranked plan that satisfies `keep`, or null.
const Candidate* best_where(const SearchResult& result,
                            const std::function<bool(const parallel::ParallelPlan&)>& keep) {
  for (const Candidate& c : result.ranked) {
    if (keep(c.scenario.parallel)) return &c;
  }
  return nullptr;
}

bool data_parallel_only(const parallel::ParallelPlan& p) { return p.tp == 1 && p.pp == 1; }

const report::Report& report_of(const Candidate& c) { return *c.evaluation.report; }

std::string describe(const Candidate& c) {
  const parallel::Scenario& s = c.scenario;
  const report::Report& r = report_of(c);
  return "tp " + std::to_string(s.parallel.tp) + " pp " + std::to_string(s.parallel.pp) + " dp " +
         std::to_string(s.parallel.dp) + " mb " + std::to_string(s.training.micro_batch) + ": " +
         std::to_string(r.tokens_per_s) + " tokens/s, MFU " + std::to_string(r.mfu) + ", exposed " +
         std::to_string(r.exposed_communication.value()) + " s of " +
         std::to_string(r.iteration_time.value()) + " s";
}

double exposed_share(const report::Report& r) { return r.exposed_communication / r.iteration_time; }

// Pearson's r of exposed communication against tokens/s over the ranked (fitting) plans.
double pearson_exposed_vs_tokens(const SearchResult& result) {
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  const auto n = static_cast<double>(result.ranked.size());
  for (const Candidate& c : result.ranked) {
    const double x = report_of(c).exposed_communication.value();
    const double y = report_of(c).tokens_per_s;
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / std::sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
}

}  // namespace

TEST_CASE("paper P1: AllReduce keeps its bus bandwidth with nodes, AllGather loses it",
          "[validation][paper]") {
  // Fig 3: h100-dgx, nccl-tests-style AllReduce and AllGather of a 1 GiB buffer on 4, 8, ...,
  // 512 nodes of 8 GPUs, priced as `trainsim collective` does (the model's algorithm choice).
  const collective::CollectiveModel model(io::load_hardware("h100-dgx"));
  const auto busbw = [&model](collective::Op op, std::int64_t nodes) {
    const parallel::GroupShape group{.ranks = 8 * nodes, .nodes = nodes, .ranks_per_node = 8};
    return model.cost(op, group, Bytes(kGiB)).busbw.value();
  };
  std::vector<double> all_gather;
  for (std::int64_t nodes = 4; nodes <= 512; nodes *= 2) {
    all_gather.push_back(busbw(collective::Op::AllGather, nodes));
  }
  std::ostringstream figures;
  for (std::size_t i = 0; i < all_gather.size(); ++i) {
    figures << " " << (4 << i) << ":" << all_gather[i] / 1e9;
  }
  INFO("AllGather busbw GB/s by nodes" << figures.str() << "; AllReduce at 4 nodes "
                                       << busbw(collective::Op::AllReduce, 4) / 1e9 << ", at 512 "
                                       << busbw(collective::Op::AllReduce, 512) / 1e9);
  // Band: AllGather busbw falls monotonically from 4 to 512 nodes (paper: the ring is
  // latency-bound).
  for (std::size_t i = 1; i < all_gather.size(); ++i) {
    INFO("AllGather busbw at " << (4 << i) << " nodes against " << (4 << (i - 1)));
    CHECK(all_gather[i] < all_gather[i - 1]);
  }
  // Band: AllGather busbw at 512 nodes <= 0.5 x at 4 nodes.
  CHECK(all_gather.back() <= 0.5 * all_gather.front());
  // Band: AllReduce busbw at 512 nodes >= 0.7 x at 4 nodes (paper: the tree keeps bandwidth).
  CHECK(busbw(collective::Op::AllReduce, 512) >= 0.7 * busbw(collective::Op::AllReduce, 4));
}

TEST_CASE("paper P2: per-GPU throughput and TFLOP/s fall 28-45% from 128 to 2048 H100",
          "[validation][paper]") {
  // Fig 4, §4.1: h100-dgx, llama2-7b, shard_grad_op, TP = PP = 1, micro-batch 2, global batch
  // 2 x GPUs.
  const report::Report r128 = report::simulate(fsdp(128)).report;
  const report::Report r2048 = report::simulate(fsdp(2048)).report;
  const double tokens_ratio = r2048.tokens_per_s_per_gpu / r128.tokens_per_s_per_gpu;
  const double tflops_ratio = r2048.model_flops_per_gpu / r128.model_flops_per_gpu;
  INFO("tokens/s/GPU " << r128.tokens_per_s_per_gpu << " at 128, " << r2048.tokens_per_s_per_gpu
                       << " at 2048: ratio " << tokens_ratio << "; TFLOP/s ratio " << tflops_ratio);
  // Band: per-GPU tokens/s at 2048 / at 128 in [0.55, 0.72] (paper 0.6278, -37.22%).
  CHECK(tokens_ratio >= 0.55);
  CHECK(tokens_ratio <= 0.72);
  // Band: per-GPU TFLOP/s falls by the same ratio +- 0.02 (paper: same ratio).
  CHECK(tflops_ratio == Approx(tokens_ratio).margin(0.02));
}

// Known gap, so [!shouldfail]. With elementwise_traffic 3.0 (the stack's earlier fit;
// docs/validation.md has today's figures): compute 0.595 s at 8 GPUs and 0.636 s at 2048 (+7.0%;
// max/min over the sweep 1.080): the profile's comm_compute_contention (0.1, an assumption)
// slows compute while the 0.61 s of overlapped communication runs at 2048 GPUs. Today h100-dgx's
// GEMMs also slow beside a collective (gemm_comm_contention 0.24, measured on an H200,
// docs/calibration.md): 0.658 s at 8, 0.749 s at 2048 (at the derived 1 before it: 0.678, 0.992).
// Communication 0.0676 s at 8 GPUs and 0.0626 s at 16 (exposed 4.51 -> 4.18 ms): the 2-node ring,
// calibrated to nccl-tests logs (~400 GB/s busbw), beats the single-node NVLink ring (NCCL's 360).
// The rest holds: communication and exposed communication non-decreasing from 16 GPUs on, tokens/s
// increasing, 18.0 M tokens/s at 2048 GPUs = 0.645 x ideal.
TEST_CASE("paper P3: compute flat, communication growing, throughput sublinear from 8 to 2048",
          "[validation][paper][!shouldfail]") {
  // Fig 4: the sweep of P2 on 8, 16, ..., 2048 GPUs.
  const std::vector<FsdpPoint> points = fsdp_sweep();
  const double compute8 = points.front().report.compute.value();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const report::Report& r = points[i].report;
    INFO("gpus " << points[i].gpus << ": compute " << r.compute.value() << " s, communication "
                 << r.communication.value() << " s, exposed " << r.exposed_communication.value()
                 << " s, " << r.tokens_per_s << " tokens/s");
    // Band: per-GPU compute kernel time constant within +-5% across GPU counts (paper: flat),
    // taken against the smallest run (8 GPUs).
    CHECK(r.compute.value() == Approx(compute8).epsilon(0.05));
    if (i == 0) continue;
    const report::Report& previous = points[i - 1].report;
    // Band: communication and exposed communication non-decreasing with GPU count.
    CHECK(r.communication >= previous.communication);
    CHECK(r.exposed_communication >= previous.exposed_communication);
    // Band: global tokens/s increasing.
    CHECK(r.tokens_per_s > previous.tokens_per_s);
  }
  // Band: at 2048 GPUs below 0.75 x ideal linear scaling from 8 GPUs (256 x the GPUs).
  CHECK(points.back().report.tokens_per_s < 0.75 * 256.0 * points.front().report.tokens_per_s);
}

TEST_CASE("paper P4: watts per GPU near 658 W, falling slightly; cluster watts about 15x",
          "[validation][paper]") {
  // §4.1 power: the sweep of P2 at 128 and 2048 GPUs.
  const report::Report r128 = report::simulate(fsdp(128)).report;
  const report::Report r2048 = report::simulate(fsdp(2048)).report;
  INFO("W/GPU " << r128.power.per_gpu.value() << " at 128, " << r2048.power.per_gpu.value()
                << " at 2048");
  // Band: watts per GPU at 128 GPUs in [625, 690] (paper 658 W).
  CHECK(r128.power.per_gpu.value() >= 625.0);
  CHECK(r128.power.per_gpu.value() <= 690.0);
  // Band: at 2048 / at 128 in [0.90, 0.98] (paper 620/658 = 0.942).
  const double per_gpu_ratio = r2048.power.per_gpu / r128.power.per_gpu;
  CHECK(per_gpu_ratio >= 0.90);
  CHECK(per_gpu_ratio <= 0.98);
  // Band: cluster watts at 2048 / at 128 in [14.0, 16.0] (paper: 16x the GPUs, 15.1x the watts).
  const double cluster_ratio = r2048.power.cluster / r128.power.cluster;
  INFO("W/GPU ratio " << per_gpu_ratio << ", cluster ratio " << cluster_ratio);
  CHECK(cluster_ratio >= 14.0);
  CHECK(cluster_ratio <= 16.0);
}

// Known gap, so [!shouldfail]. With elementwise_traffic 3.0 (the stack's earlier fit;
// docs/validation.md has today's figures), the best plan is TP = PP = 1, micro-batch 2 (3.43 M
// tokens/s, MFU 0.625, 12.9 ms exposed of 0.611 s); the best TP x PP > 1 plan is TP 2,
// micro-batch 4 at 0.93x; Pearson r = -0.42 over 60 fitting plans. FSDP hides 94% of its
// 0.200 s of communication behind compute at 256 GPUs, so model parallelism only adds TP
// collectives (see search_test.cpp's P5 for the per-layer numbers).
TEST_CASE("paper P5: small model parallelism beats pure FSDP on 256 H100",
          "[validation][paper][!shouldfail]") {
  // Fig 5: h100-dgx, llama2-7b, 256 GPUs, global batch 512, shard_grad_op, best plan of TP,
  // PP in {1, 2, 4, 8} and micro-batch in {1, 2, 4, 8}.
  const SearchResult result = best_plans(search_base("h100-dgx", "llama2-7b", 256, 512));
  const Candidate& best = result.ranked.front();
  const Candidate* dp = best_where(result, data_parallel_only);
  REQUIRE(dp != nullptr);
  const std::int64_t model_parallel = best.scenario.parallel.tp * best.scenario.parallel.pp;
  INFO("best " << describe(best) << "; TP = PP = 1 " << describe(*dp));
  // Band: 2 <= TP x PP <= 8 for the best plan (paper: small TP/PP degrees win).
  CHECK(model_parallel >= 2);
  CHECK(model_parallel <= 8);
  // Band: >= 1.05 x the tokens/s of TP = PP = 1.
  CHECK(report_of(best).tokens_per_s >= 1.05 * report_of(*dp).tokens_per_s);
  // Band: its exposed communication below TP = PP = 1's.
  CHECK(report_of(best).exposed_communication < report_of(*dp).exposed_communication);
  // Band: Pearson r of exposed communication and throughput across the sweep <= -0.5.
  const double r = pearson_exposed_vs_tokens(result);
  INFO("Pearson r " << r << " over " << result.ranked.size() << " plans");
  CHECK(r <= -0.5);
}

TEST_CASE("paper P6: a TP or PP group of 16 spanning two nodes is slower than inside a node",
          "[validation][paper]") {
  // Fig 6, §4.2: P5's scenario with TP or PP = 16 added to the search.
  const SearchResult result =
      best_plans(search_base("h100-dgx", "llama2-7b", 256, 512), {1, 2, 4, 8, 16});
  const auto spans = [](const parallel::ParallelPlan& p) { return p.tp == 16 || p.pp == 16; };
  const Candidate* inside =
      best_where(result, [&spans](const parallel::ParallelPlan& p) { return !spans(p); });
  REQUIRE(inside != nullptr);
  std::int64_t spanning = 0;
  for (const Candidate& c : result.ranked) {
    if (!spans(c.scenario.parallel)) continue;
    ++spanning;
    INFO("spanning " << describe(c) << "; best inside a node " << describe(*inside));
    // Band: slower than the best plan inside a node (paper: TP/PP 16 lose throughput) ...
    CHECK(report_of(c).tokens_per_s < report_of(*inside).tokens_per_s);
    // ... with more exposed communication.
    CHECK(report_of(c).exposed_communication > report_of(*inside).exposed_communication);
  }
  REQUIRE(spanning > 0);
}

// Known gap, so [!shouldfail]. Today the best plan is TP = PP = 1, micro-batch 2 on both: MFU
// 0.673 on A100 (band [0.50, 0.68], inside it) and 0.567 on H100 (band [0.34, 0.47]);
// exposed share 0.8% and 2.0%, a gap of +1.2 points (band [+5, +20]). Of eager PyTorch's
// overheads only the stack's fitted elementwise_traffic (1.5) is modelled (kernel_dispatch and
// iteration_overhead are neutral), and FSDP's communication is almost entirely hidden on both.
TEST_CASE("paper P7: H100 reaches a lower MFU than A100 and exposes more communication",
          "[validation][paper][!shouldfail]") {
  // Fig 6, §4.4: the best plan of P5 (searched on each profile) on a100-dgx and h100-dgx.
  const SearchResult a100 = best_plans(search_base("a100-dgx", "llama2-7b", 256, 512));
  const SearchResult h100 = best_plans(search_base("h100-dgx", "llama2-7b", 256, 512));
  const report::Report& ra = report_of(a100.ranked.front());
  const report::Report& rh = report_of(h100.ranked.front());
  INFO("A100 best " << describe(a100.ranked.front()) << "; H100 best "
                    << describe(h100.ranked.front()));
  // Band: MFU on A100 in [0.50, 0.68] (paper 59.67%).
  CHECK(ra.mfu >= 0.50);
  CHECK(ra.mfu <= 0.68);
  // Band: MFU on H100 in [0.34, 0.47] (paper 40.77%).
  CHECK(rh.mfu >= 0.34);
  CHECK(rh.mfu <= 0.47);
  // Band: exposed-communication share of iteration time, H100 minus A100, in [+0.05, +0.20]
  // (paper +12.83 points).
  const double share_gap = exposed_share(rh) - exposed_share(ra);
  INFO("exposed share A100 " << exposed_share(ra) << ", H100 " << exposed_share(rh));
  CHECK(share_gap >= 0.05);
  CHECK(share_gap <= 0.20);
}

// Known gap, so [!shouldfail] (docs/validation.md, "The paper's claims"). Best plans TP 1 (2
// and 4 nodes), TP 2 (8), TP 4 (16), TP 8 (32); MFU 0.565 at 2 nodes (band [0.33, 0.47]: the
// model's H100 runs fast) and 0.154 at 32 (in band); tokens/s +2.5% from 16 to 32 nodes (holds);
// cluster watts +91% (band 25-60%): 618.7 W per GPU on 16 nodes, 590.4 W on 32. Holding the
// band would take communication power at most 0.40 of compute power, where P4 needs 0.68 or
// more. The 32-node runner-up, TP 4 PP 2 (0.1% slower), has half its step in bubble at idle
// power and gives +20%.
TEST_CASE("paper P8: with a fixed global batch of 32, MFU collapses from 2 to 32 nodes",
          "[validation][paper][!shouldfail]") {
  // Fig 7, §4.3: h100-dgx, llama2-7b, global batch 32, best plan on 2, 4, 8, 16, 32 nodes.
  std::vector<report::Report> best;
  std::ostringstream plans;
  for (std::int64_t nodes = 2; nodes <= 32; nodes *= 2) {
    const SearchResult result = best_plans(search_base("h100-dgx", "llama2-7b", 8 * nodes, 32));
    best.push_back(report_of(result.ranked.front()));
    plans << "\n"
          << nodes << " nodes: best " << describe(result.ranked.front()) << ", "
          << best.back().power.cluster.value() << " W";
  }
  INFO(plans.str());
  const report::Report& n2 = best.front();
  const report::Report& n16 = best[3];
  const report::Report& n32 = best.back();
  // Band: MFU at 2 nodes in [0.33, 0.47] (paper about 40%).
  CHECK(n2.mfu >= 0.33);
  CHECK(n2.mfu <= 0.47);
  // Band: MFU at 32 nodes in [0.05, 0.17] (paper below 15%).
  CHECK(n32.mfu >= 0.05);
  CHECK(n32.mfu <= 0.17);
  // Band: global tokens/s from 16 to 32 nodes grows by at most 25% (paper about 10%).
  CHECK(n32.tokens_per_s <= 1.25 * n16.tokens_per_s);
  // Band: cluster watts from 16 to 32 nodes grow by 25-60% (paper about 40%).
  const double watts_ratio = n32.power.cluster / n16.power.cluster;
  CHECK(watts_ratio >= 1.25);
  CHECK(watts_ratio <= 1.60);
}

// Known gap, so [!shouldfail]. With elementwise_traffic 3.0 (the stack's earlier fit;
// docs/validation.md has today's figures), llama2-7b holds (MFU 0.609 -> 0.281, 0.46x) but
// llama2-70b does not: best plan TP 4, micro-batch 2 at every size, MFU 0.530 -> 0.486 -> 0.429
// (0.81x). With the global batch fixed, FSDP's AllGather and ReduceScatter are issued once per
// micro-batch, and the micro-batches per step fall 4 -> 2 -> 1 as dp grows: the communication
// shrinks with the compute (exposed 1.27 -> 0.93 -> 0.70 s) while the per-call ring time grows
// only from 8.4 to 13.0 ms.
TEST_CASE("paper P9: MFU falls more than 30% from 512 to 2048 H100 at global batch 1024",
          "[validation][paper][!shouldfail]") {
  // App. E, Fig 13: h100-dgx, llama2-7b and llama2-70b, global batch 1024, best plan on 512,
  // 1024 and 2048 GPUs.
  for (const char* model : {"llama2-7b", "llama2-70b"}) {
    std::vector<double> mfu;
    std::ostringstream plans;
    for (const std::int64_t gpus : {512, 1024, 2048}) {
      const SearchResult result = best_plans(search_base("h100-dgx", model, gpus, 1024));
      plans << "\n" << model << " on " << gpus << " GPUs: best " << describe(result.ranked.front());
      mfu.push_back(report_of(result.ranked.front()).mfu);
    }
    INFO(plans.str());
    // Band: MFU at 2048 / at 512 <= 0.75 (paper: more than 30% lower).
    CHECK(mfu.back() / mfu.front() <= 0.75);
  }
}

// Known gap, so [!shouldfail]. With elementwise_traffic 3.0 (the stack's earlier fit;
// docs/validation.md has today's figures), exposed communication of the best plan grows with size
// (7.6, 12.9, 15.7, 494 ms) and llama2-70b's best plan (TP 2 PP 4, 292 k tokens/s) beats the
// best smallest model-parallel plan that fits (TP 4, 221 k), but for 1B, 7B and 13B the best
// plan is pure data parallelism (TP = PP = 1, micro-batch 2): the cause of P5.
TEST_CASE("paper P10: bigger models expose more communication; model parallelism pays",
          "[validation][paper][!shouldfail]") {
  // Fig 8, §4.5: h100-dgx, 256 GPUs, global batch 512, best plan of models 1B, 7B, 13B and
  // 70B. The 1B model is the built-in llama2-1b-32k: llama3.2-1b's shape (16 layers, hidden
  // 2048, 32 heads, 8 KV heads, FFN 8192, tied embeddings) with Llama 2's 32K vocabulary, as
  // sources.md P10 allows, since no Llama-2 1B exists.
  double previous_exposed = -1.0;
  for (const char* model : {"llama2-1b-32k", "llama2-7b", "llama2-13b", "llama2-70b"}) {
    const SearchResult result = best_plans(search_base("h100-dgx", model, 256, 512));
    const Candidate& best = result.ranked.front();
    // Pure data parallelism, or for a model it does not fit (70B): the best of the plans with
    // the smallest TP x PP that fit.
    const Candidate* baseline = best_where(result, data_parallel_only);
    if (baseline == nullptr) {
      std::int64_t smallest = 0;
      for (const Candidate& c : result.ranked) {
        const std::int64_t mp = c.scenario.parallel.tp * c.scenario.parallel.pp;
        if (smallest == 0 || mp < smallest) smallest = mp;
      }
      baseline = best_where(
          result, [smallest](const parallel::ParallelPlan& p) { return p.tp * p.pp == smallest; });
    }
    REQUIRE(baseline != nullptr);
    INFO(model << ": best " << describe(best) << "; baseline " << describe(*baseline));
    // Band: exposed communication time of the best plan grows with model size.
    CHECK(report_of(best).exposed_communication.value() > previous_exposed);
    previous_exposed = report_of(best).exposed_communication.value();
    // Band: the best plan beats pure data parallelism (70B: the smallest model-parallel plan
    // that fits), so it is a plan with more model parallelism than the baseline.
    const std::int64_t best_mp = best.scenario.parallel.tp * best.scenario.parallel.pp;
    CHECK(best_mp > baseline->scenario.parallel.tp * baseline->scenario.parallel.pp);
    CHECK(report_of(best).tokens_per_s > report_of(*baseline).tokens_per_s);
  }
}

TEST_CASE("paper P11: MFU rises and the exposed share falls from seq 1024 to 8192",
          "[validation][paper]") {
  // Fig 9, §4.6: h100-dgx, llama2-7b, 256 GPUs, shard_grad_op, TP = PP = 1, micro-batch 1,
  // seq 1024, 2048, 4096, 8192.
  double previous_mfu = 0.0;
  double previous_share = 1.0;
  for (const std::int64_t seq : {1024, 2048, 4096, 8192}) {
    const report::Report r = report::simulate(fsdp(256, 1, seq)).report;
    const double share = exposed_share(r);
    INFO("seq " << seq << ": MFU " << r.mfu << ", exposed share " << share);
    // Band: MFU rises with the sequence (paper: rises).
    CHECK(r.mfu > previous_mfu);
    // Band: the exposed-communication share falls (paper: falls).
    CHECK(share < previous_share);
    previous_mfu = r.mfu;
    previous_share = share;
  }
}

TEST_CASE("paper P12: memory per GPU falls with the GPUs, ever less", "[validation][paper]") {
  // Fig 12, App. D: the sweep of P2 (micro-batch 2) on 8, 16, ..., 2048 GPUs, memory as the
  // simulated report gives it.
  const std::vector<FsdpPoint> points = fsdp_sweep();
  for (std::size_t i = 1; i < points.size(); ++i) {
    INFO("gpus " << points[i].gpus << ": " << points[i].report.memory.total.value() << " B");
    // Band: memory per GPU falls monotonically.
    CHECK(points[i].report.memory.total < points[i - 1].report.memory.total);
  }
  // Band: the saving from 1024 to 2048 GPUs is under a quarter of the saving from 8 to 16.
  const double first = (at(points, 8).memory.total - at(points, 16).memory.total).value();
  const double last = (at(points, 1024).memory.total - at(points, 2048).memory.total).value();
  INFO("saving 8->16 " << first << " B, 1024->2048 " << last << " B");
  CHECK(last < 0.25 * first);
}

TEST_CASE("paper P13: built-in V100, A100 and H100 profiles match Table 1", "[validation][paper]") {
  // Table 1: V100 / A100 / H100.
  const hardware::HardwareSpec v100 = io::load_hardware("v100-dgx");
  const hardware::HardwareSpec a100 = io::load_hardware("a100-dgx");
  const hardware::HardwareSpec h100 = io::load_hardware("h100-dgx");
  // Band: BF16 (V100: FP16) dense 125 / 312 / 989 TFLOP/s.
  CHECK(v100.peak(hardware::Dtype::Fp16).value() == Approx(125e12).epsilon(1e-12));
  CHECK(a100.peak(hardware::Dtype::Bf16).value() == Approx(312e12).epsilon(1e-12));
  CHECK(h100.peak(hardware::Dtype::Bf16).value() == Approx(989e12).epsilon(1e-12));
  // Band: HBM 0.9 / 2.0 / 3.35 TB/s. The A100's spec sheet says 2.039 TB/s, which the paper
  // gives to two digits: 2.0.
  CHECK(v100.gpu.hbm_bandwidth.value() == Approx(0.9e12).epsilon(1e-12));
  CHECK(std::round(a100.gpu.hbm_bandwidth.value() / 1e11) / 10.0 == Approx(2.0).epsilon(1e-12));
  CHECK(h100.gpu.hbm_bandwidth.value() == Approx(3.35e12).epsilon(1e-12));
  // Band: NVLink 300 / 600 / 900 GB/s per GPU bidirectional (2 x per direction).
  CHECK(2.0 * v100.node.nvlink_bandwidth_per_direction.value() == Approx(300e9).epsilon(1e-12));
  CHECK(2.0 * a100.node.nvlink_bandwidth_per_direction.value() == Approx(600e9).epsilon(1e-12));
  CHECK(2.0 * h100.node.nvlink_bandwidth_per_direction.value() == Approx(900e9).epsilon(1e-12));
  // Band: inter-node 100 / 200 / 400 GB/s per node. A100: 8 x 200 Gb/s and H100: 8 x 400 Gb/s
  // per direction. The V100 DGX-1 has 4 x 100 Gb/s = 50 GB/s per direction: the paper's 100
  // GB/s is that counted in both directions (the profile's sources say so), so it is checked
  // bidirectionally.
  const auto per_node = [](const hardware::HardwareSpec& hw) {
    return static_cast<double>(hw.fabric.nics_per_node) * hw.fabric.nic_bandwidth.value();
  };
  CHECK(2.0 * per_node(v100) == Approx(100e9).epsilon(1e-12));
  CHECK(per_node(a100) == Approx(200e9).epsilon(1e-12));
  CHECK(per_node(h100) == Approx(400e9).epsilon(1e-12));
}
