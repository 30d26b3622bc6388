// The scaling-trends paper's claims in direction (Fernandez et al. 2024, as listed in
// docs/sources.md P1-P13), through the same code path as `trainsim run`, with the built-in
// profiles. Exact bands are the validation work's; these check that the mechanisms point the
// right way.
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/report/simulate.hpp"

#include "tests/paper_scenario.hpp"

using namespace trainsim;

namespace {

// P2/P3/P4/P12: the paper's FSDP setting with another micro-batch or sequence length.
parallel::Scenario fsdp(std::int64_t gpus, std::int64_t micro_batch = 2, std::int64_t seq = 4096) {
  return testing::paper_fsdp(gpus,
                             {{"training.micro_batch", micro_batch}, {"training.seq_len", seq}});
}

}  // namespace

TEST_CASE("paper P2-P4: FSDP scaling from 128 to 2048 H100", "[validation][paper]") {
  const report::Report r128 = report::simulate(fsdp(128)).report;
  const report::Report r2048 = report::simulate(fsdp(2048)).report;
  // P2 (paper: 2048/128 = 0.6278): per-GPU throughput falls.
  CHECK(r2048.tokens_per_s_per_gpu < r128.tokens_per_s_per_gpu);
  // P3: exposed communication grows (compute within 5 %: the known gap below).
  CHECK(r2048.exposed_communication > r128.exposed_communication);
  CHECK(r2048.communication > r128.communication);
  // P4 (paper: 658 W at 128, 620 W at 2048): power per GPU nearly flat and not rising; cluster
  // power grows about linearly, 16x the GPUs giving 14-16x the watts.
  CHECK(r2048.power.per_gpu <= r128.power.per_gpu);
  CHECK(r2048.power.per_gpu.value() / r128.power.per_gpu.value() > 0.9);
  const double cluster_ratio = r2048.power.cluster.value() / r128.power.cluster.value();
  CHECK(cluster_ratio >= 14.0);
  CHECK(cluster_ratio <= 16.0);
}

// Known gap, tagged [!shouldfail] as search_test.cpp's P5: it passes while the model misses the
// claim and fails (so shows) once it holds. Compute includes the slowdown from communication
// running beside it: every kernel's comm_compute_contention 0.1 (an assumption of the profile)
// and the GEMMs' gemm_comm_contention 0.24 (h100-dgx: measured on an H200 beside a stand-in for
// NCCL's blocks, docs/calibration.md). 2048 GPUs overlap about 0.7 s of communication, and
// compute grows from 0.666 to 0.749 s (+12.5%; +38% with the derived 1 the profiles had before,
// +6.1% before any GEMM contention). The paper measured compute kernel time flat within 5%
// (docs/validation.md, "The paper's claims").
TEST_CASE("paper P3 (known gap): compute kernel time stays within 5% from 128 to 2048 H100",
          "[validation][paper][!shouldfail]") {
  const report::Report r128 = report::simulate(fsdp(128)).report;
  const report::Report r2048 = report::simulate(fsdp(2048)).report;
  CHECK(r2048.compute.value() == Approx(r128.compute.value()).epsilon(0.05));
}

// Known gap, [!shouldfail] as above: 16 GPUs (2 nodes) communicate about 7% less than 8 (one
// node). The calibrated 2-node ring reaches about 400 GB/s busbw (measured 392.7 with NCCL_ALGO=Ring,
// nccl-tests#309) while the single-node NVLink ring keeps NCCL's 360 (no single-node H100 ring
// log to fit; 365-370 measured in nccl#1455), so the data themselves put 2 nodes ahead of one.
TEST_CASE("paper P3 (known gap): 16 GPUs communicate at least as long as 8",
          "[validation][paper][!shouldfail]") {
  const report::Report r8 = report::simulate(fsdp(8)).report;
  const report::Report r16 = report::simulate(fsdp(16)).report;
  CHECK(r16.communication >= r8.communication);
}

TEST_CASE("paper P3: communication never shrinks as the FSDP job grows", "[validation][paper]") {
  Seconds previous_comm{};
  Seconds previous_exposed{};
  double first_tokens = 0.0;
  double last_tokens = 0.0;
  for (std::int64_t gpus = 8; gpus <= 2048; gpus *= 2) {
    const report::Report r = report::simulate(fsdp(gpus)).report;
    INFO("gpus " << gpus);
    // From 8 to 16 GPUs: the known gap above.
    if (gpus > 16) {
      CHECK(r.communication >= previous_comm);
      CHECK(r.exposed_communication >= previous_exposed);
    }
    previous_comm = r.communication;
    previous_exposed = r.exposed_communication;
    if (gpus == 8) first_tokens = r.tokens_per_s;
    // Global throughput keeps increasing.
    CHECK(r.tokens_per_s > last_tokens);
    last_tokens = r.tokens_per_s;
  }
  // ... but below ideal linear scaling from 8 GPUs (256x the GPUs).
  CHECK(last_tokens < 256.0 * first_tokens);
}

TEST_CASE("paper P11: longer sequences raise MFU and hide communication", "[validation][paper]") {
  // 256 H100, micro-batch 1, seq 1024..8192: MFU rises, exposed share falls.
  double previous_mfu = 0.0;
  double previous_share = 1.0;
  for (std::int64_t seq : {1024, 2048, 4096, 8192}) {
    const report::Report r = report::simulate(fsdp(256, 1, seq)).report;
    INFO("seq " << seq);
    const double share = r.exposed_communication / r.iteration_time;
    CHECK(r.mfu > previous_mfu);
    CHECK(share < previous_share);
    previous_mfu = r.mfu;
    previous_share = share;
  }
}

TEST_CASE("paper P12: memory per GPU falls with diminishing returns", "[validation][paper]") {
  std::vector<double> totals;
  for (std::int64_t gpus = 8; gpus <= 2048; gpus *= 2) {
    totals.push_back(report::simulate(fsdp(gpus)).report.memory.total.value());
  }
  for (std::size_t i = 1; i < totals.size(); ++i) CHECK(totals[i] < totals[i - 1]);
  // The saving from 1024 to 2048 GPUs is under a quarter of the saving from 8 to 16.
  const double first_saving = totals[0] - totals[1];
  const double last_saving = totals[totals.size() - 2] - totals.back();
  CHECK(last_saving < 0.25 * first_saving);
}
