// A software-stack profile (stacks/*.json): what the training framework does, apart from what
// the hardware can do. How far FSDP prefetches, whether tensor-parallel collectives overlap the
// GEMMs beside them, the dtype gradients are reduced in, how many bytes its elementwise kernels
// move compared with fused kernels, and the host costs per kernel and per optimizer step.
// io/stack_loader reads one; every value in a built-in carries its source or its fit.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/units.hpp"

namespace trainsim::stack {

// When FSDP issues the AllGather of the next unit during backward (PyTorch's BackwardPrefetch).
enum class BackwardPrefetch {
  Pre,   // BACKWARD_PRE: as the current unit's backward starts (overlaps it)
  Post,  // BACKWARD_POST: after the current unit's gradient is computed
};

struct StackSpec {
  std::string id;    // "pytorch-2.3-fsdp"
  std::string name;  // "PyTorch 2.3 FSDP (FULL_SHARD / SHARD_GRAD_OP), eager, FlashAttention-2"

  // FSDP forward: AllGathers in flight, i.e. the gather of layer l is issued when layer
  // l - forward_prefetch ends. PyTorch FSDP's rate limiter (limit_all_gathers) keeps two.
  int fsdp_forward_prefetch = 2;
  BackwardPrefetch fsdp_backward_prefetch = BackwardPrefetch::Pre;

  // Tensor-parallel collectives run beside the GEMM they feed or drain (Transformer Engine's
  // userbuffers overlap, PyTorch async TP) instead of blocking it (Megatron-LM's default).
  bool tp_overlap = false;

  // Dtype of gradient ReduceScatter / AllReduce for each training precision (indexed by the
  // training dtype); nullopt reduces in the training precision.
  std::array<std::optional<hardware::Dtype>, hardware::kNumDtypes> gradient_reduce_dtype{};

  // Speed of the stack's attention kernel relative to FlashAttention-2, the kernel the hardware
  // profile's attention curve describes (FlashAttention-2 in Triton, FlashAttention-1, unfused
  // attention are slower; FlashAttention-3 and cuDNN on Hopper faster).
  double attention_speed = 1.0;

  // HBM bytes of memory-bound kernels relative to the fused kernels the model counts (norm,
  // activation, residual, RoPE): eager frameworks launch several kernels per op and keep
  // fp32 intermediates under autocast. 1 = fused.
  double elementwise_traffic = 1.0;

  // Host time to dispatch one kernel: a kernel never takes less wall time than this, since
  // the CPU cannot issue faster (eager PyTorch; ~0 under CUDA graphs).
  Seconds kernel_dispatch;

  // Fixed host time per optimizer step (data loading, logging, gradient clipping's host sync).
  Seconds iteration_overhead;
};

}  // namespace trainsim::stack
