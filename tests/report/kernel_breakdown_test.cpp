// Kernel classification, interval arithmetic and the simulated breakdown that `trainsim compare`
// sets beside a measured trace.
#include "trainsim/report/kernel_breakdown.hpp"

#include <cmath>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include "trainsim/report/simulate.hpp"

#include "sim/io/scenario_loader.hpp"

using namespace trainsim;
using report::KernelCategory;

namespace {

report::KernelInterval iv(double start, double end) {
  return report::KernelInterval{.start = Seconds(start), .end = Seconds(end)};
}

}  // namespace

TEST_CASE("kernel_breakdown: classification table", "[report]") {
  // Real kernel names, one per row of the table in kernel_breakdown.cpp.
  const auto [name, cat, expected] = GENERATE(table<std::string, std::string, KernelCategory>({
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "kernel",
       KernelCategory::Communication},
      {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "kernel",
       KernelCategory::Communication},
      {"void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       "kernel", KernelCategory::Communication},
      {"ncclSymkDevKernel_AllReduce_RSxLDMC_AGxSTMC_sum_bf16", "kernel",
       KernelCategory::Communication},
      {"Memcpy DtoD (Device -> Device)", "gpu_memcpy", KernelCategory::Memcpy},
      {"Memset (Device)", "gpu_memset", KernelCategory::Memset},
      {"Memcpy HtoD (Pageable -> Device)", "Memcpy", KernelCategory::Memcpy},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
       "cutlass::bfloat16_t> >(Flash_fwd_params)",
       "kernel", KernelCategory::Attention},
      {"void cutlass::device_kernel<flash::FlashAttnFwdSm90<...> >(...)", "kernel",
       KernelCategory::Attention},
      {"fmha_cutlassB_bf16_aligned_64x64_k128_sm80(PyTorchMemEffAttention::"
       "AttentionBackwardKernel)",
       "kernel", KernelCategory::Attention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1",
       "kernel", KernelCategory::Attention},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", "kernel",
       KernelCategory::Gemm},
      {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "kernel",
       KernelCategory::Gemm},
      {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNN", "kernel", KernelCategory::Gemm},
      {"void "
       "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_align8>",
       "kernel", KernelCategory::Gemm},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>(...)", "kernel",
       KernelCategory::Gemm},
      {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4>(...)", "kernel",
       KernelCategory::Gemm},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(...)",
       "kernel", KernelCategory::MemoryBound},
      {"triton_poi_fused_add_mul_0", "kernel", KernelCategory::MemoryBound},
  }));
  INFO(name);
  CHECK(report::classify_kernel(name, cat) == expected);
}

TEST_CASE("kernel_breakdown: the collective op of an NCCL kernel", "[report]") {
  CHECK(report::nccl_op("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "") == "reduce_scatter");
  CHECK(report::nccl_op("ncclKernel_AllReduce_RING_LL_Sum_float", "") == "all_reduce");
  CHECK(report::nccl_op("ncclDevKernel_AllGather_RING_LL", "") == "all_gather");
  CHECK(report::nccl_op("ncclKernel_Broadcast_RING_LL_Sum_int8_t", "") == "broadcast");
  CHECK(report::nccl_op("ncclKernel_Reduce_RING_LL_Sum_float", "") == "reduce");
  CHECK(report::nccl_op("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "") ==
        "send_recv");
  CHECK(report::nccl_op("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "") == "other");
  // PyTorch's "Collective name" wins: all-to-all runs as SendRecv kernels.
  CHECK(report::nccl_op("ncclDevKernel_SendRecv", "all_to_all") == "all_to_all");
  CHECK(report::nccl_op("ncclDevKernel_Generic", "_reduce_scatter_base") == "reduce_scatter");
  CHECK(report::nccl_op("ncclDevKernel_Generic", "_allgather_base") == "all_gather");
}

TEST_CASE("kernel_breakdown: union and intersection of intervals", "[report]") {
  // [0,2) u [1,3) u [5,6) = [0,3) u [5,6): 3 + 1 = 4.
  CHECK(report::union_length({iv(5, 6), iv(0, 2), iv(1, 3)}).value() == Approx(4.0).epsilon(1e-12));
  CHECK(report::union_length({}).value() == 0.0);
  // Touching intervals [0,1) and [1,2) merge: 2.
  CHECK(report::union_length({iv(0, 1), iv(1, 2)}).value() == Approx(2.0).epsilon(1e-12));
  // a = [0,3) u [5,6), b = [2,5.5): overlap [2,3) + [5,5.5) = 1.5.
  CHECK(report::intersection_length({iv(0, 2), iv(1, 3), iv(5, 6)}, {iv(2, 5.5)}).value() ==
        Approx(1.5).epsilon(1e-12));
  CHECK(report::intersection_length({iv(0, 1)}, {iv(1, 2)}).value() == 0.0);
  // Kernels read from microseconds: ts 1.1 + dur 2.2 ends at 3.3000000000000003 us, one
  // rounding past the next kernel's start at 3.3 us. That sliver (4.4e-22 s) is no overlap; it
  // printed as "0.00 ns" of overlapped communication, -100% against a simulated 0. A real
  // overlap a million times larger than a rounding is kept.
  const double end = std::nextafter(3.3e-6, 1.0);  // one rounding past
  CHECK(report::intersection_length({iv(1.1e-6, end)}, {iv(3.3e-6, 4.3e-6)}).value() == 0.0);
  CHECK(report::intersection_length({iv(1.1e-6, 3.3e-6 + 1e-15)}, {iv(3.3e-6, 4.3e-6)}).value() ==
        Approx(1e-15).epsilon(1e-3));
}

TEST_CASE("kernel_breakdown: idle time within a rounding of zero is zero", "[report]") {
  // Two kernels back to back over a span ending at the second's end: busy is the span up to a
  // rounding (the union's sum and the span are computed apart), and idle is 0, not 1e-22 s.
  const double end = std::nextafter(3.3e-6, 0.0);  // one rounding short: a gap of 4e-22 s
  const std::vector<report::TimedKernel> k = {
      {.category = KernelCategory::Gemm, .op = {}, .start = Seconds(1.1e-6), .end = Seconds(end)},
      {.category = KernelCategory::Gemm,
       .op = {},
       .start = Seconds(3.3e-6),
       .end = Seconds(4.3e-6)},
  };
  const auto b = report::breakdown(k, Seconds(4.3e-6 - 1.1e-6), Seconds(1e-5), 0);
  CHECK(b.idle.value() == 0.0);
}

TEST_CASE("kernel_breakdown: concurrent kernels are not counted twice", "[report]") {
  // GEMMs on two streams [0,4) and [2,6); an AllReduce [3,8). busy GEMM = 6, sum 8;
  // communication 5, overlapped with compute on [3,6) = 3, exposed 2; span 10 (given):
  // idle = 10 - |[0,8)| = 2; compute + exposed + idle = 6 + 2 + 2 = 10.
  const std::vector<report::TimedKernel> k = {
      {.category = KernelCategory::Gemm, .op = {}, .start = Seconds(0), .end = Seconds(4)},
      {.category = KernelCategory::Gemm, .op = {}, .start = Seconds(2), .end = Seconds(6)},
      {.category = KernelCategory::Communication,
       .op = "all_reduce",
       .start = Seconds(3),
       .end = Seconds(8)},
  };
  const auto b = report::breakdown(k, Seconds(10), Seconds(11), 7);
  CHECK(b.step == 7);
  CHECK(b.categories.at(KernelCategory::Gemm).busy.value() == Approx(6.0).epsilon(1e-12));
  CHECK(b.categories.at(KernelCategory::Gemm).kernel_sum.value() == Approx(8.0).epsilon(1e-12));
  CHECK(b.categories.at(KernelCategory::Gemm).num_kernels == 2);
  CHECK(b.compute.value() == Approx(6.0).epsilon(1e-12));
  CHECK(b.communication.value() == Approx(5.0).epsilon(1e-12));
  CHECK(b.overlapped_communication.value() == Approx(3.0).epsilon(1e-12));
  CHECK(b.exposed_communication.value() == Approx(2.0).epsilon(1e-12));
  CHECK(b.idle.value() == Approx(2.0).epsilon(1e-12));
  CHECK(b.collectives.at("all_reduce").num_kernels == 1);
}

TEST_CASE("kernel_breakdown: the simulated breakdown agrees with the report", "[report]") {
  // Under the paper's stack, and under one with a host time per step of 5 ms, which the report
  // counts in the iteration and in every stage's bubble: the breakdown's span and idle time
  // left it out (the iteration's GPU work only), so compare's JSON gave two iteration times.
  for (const bool overhead : {false, true}) {
    io::ScenarioDocument doc;
    doc.json = {{"hardware", "h100-dgx"},
                {"model", "llama2-7b"},
                {"cluster", {{"gpus", 16}}},
                {"training", {{"seq_len", 4096}, {"global_batch", 32}, {"micro_batch", 1}}},
                {"parallel", {{"tp", 2}, {"pp", 2}, {"sharding", "shard_grad_op"}}}};
    if (overhead) {
      doc.json["stack"] = {{"extends", "pytorch-2.3-fsdp"}, {"iteration_overhead", "5 ms"}};
    }
    const auto s = io::scenario_from_document(doc);
    const auto sim = report::simulate(s);
    const auto& r = sim.report;
    CHECK(r.host_overhead.value() == (overhead ? 0.005 : 0.0));
    for (std::int64_t stage = 0; stage < 2; ++stage) {
      const auto b = report::simulated_breakdown(sim, stage);
      const auto& st = r.stages[static_cast<std::size_t>(stage)];
      // Same ops and the same definitions as engine::activity: the report's numbers come back.
      CHECK(b.compute_kernel_sum.value() == Approx(st.compute.value()));
      CHECK(b.communication_kernel_sum.value() == Approx(st.communication.value()));
      CHECK(b.exposed_communication.value() == Approx(st.exposed_communication.value()));
      CHECK(b.idle.value() == Approx(st.bubble.value()).margin(1e-12));
      CHECK(b.span.value() == Approx(r.iteration_time.value()));
      // One compute stream: the categories partition compute.
      Seconds categories{};
      for (const auto c :
           {KernelCategory::Gemm, KernelCategory::Attention, KernelCategory::MemoryBound}) {
        REQUIRE(b.categories.count(c) == 1);
        categories += b.categories.at(c).busy;
      }
      CHECK(categories.value() == Approx(b.compute.value()));
      // TP 2 without SP: all-reduce; PP: send_recv; shard_grad_op: all_gather and reduce_scatter.
      CHECK(b.collectives.count("all_reduce") == 1);
      CHECK(b.collectives.count("send_recv") == 1);
    }
    CHECK(r.critical_stage >= 0);
    CHECK(r.critical_stage < 2);
  }
}

TEST_CASE("kernel_breakdown: a simulated op of several NCCL calls counts each call", "[report]") {
  // DDP (sharding none) on 8 GPUs: each layer's gradient buckets are one op of several calls
  // (workload::CollectiveCall::calls_per_op). `trainsim compare` set 33 simulated all_reduce
  // "kernels" against a trace's one kernel per call, where the report counts 533 calls
  // (llama2-7b, seq 2048: 512 + 21).
  io::ScenarioDocument doc;
  doc.json = {{"hardware", "h100-dgx"},
              {"model", "llama2-7b"},
              {"cluster", {{"gpus", 8}}},
              {"training", {{"seq_len", 2048}, {"global_batch", 8}, {"micro_batch", 1}}},
              {"parallel", {{"sharding", "none"}}}};
  const auto s = io::scenario_from_document(doc);
  const auto sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  std::int64_t calls = 0;
  std::int64_t ops = 0;
  for (const auto& c : sim.report.collectives) {
    if (c.op == "all_reduce") calls += c.count;
  }
  for (const auto& c : sim.iteration.collectives) {
    if (c.op == "all_reduce") ++ops;
  }
  // The report's count, as `trainsim run --format json` gives it for this plan: the gradients,
  // 6,738,415,616 x 2 B = 13.48 GB in bf16, reduced in DDP buckets of about 25 MB
  // (bucket_cap_mb 25): 512 calls of 25,297,920 B and 21 of 24,966,485 B, 533 in all.
  REQUIRE(calls == 533);
  REQUIRE(calls > ops);  // some op stands for several calls
  const auto b = report::simulated_breakdown(sim, 0);
  CHECK(b.collectives.at("all_reduce").num_kernels == calls);
}
