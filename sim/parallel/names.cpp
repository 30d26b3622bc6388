#include "trainsim/parallel/scenario.hpp"

namespace trainsim::parallel {

const char* to_string(Sharding s) {
  switch (s) {
    case Sharding::None:
      return "none";
    case Sharding::Zero1:
      return "zero1";
    case Sharding::ShardGradOp:
      return "shard_grad_op";
    case Sharding::FullShard:
      return "full_shard";
    case Sharding::HybridShard:
      return "hybrid_shard";
  }
  return "?";
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None:
      return "none";
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
  }
  return "?";
}

const char* to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::GPipe:
      return "gpipe";
    case PipelineSchedule::OneFOneB:
      return "1f1b";
    case PipelineSchedule::Interleaved:
      return "interleaved";
  }
  return "?";
}

const char* to_string(Optimizer o) {
  switch (o) {
    case Optimizer::AdamW:
      return "adamw";
    case Optimizer::Sgd:
      return "sgd";
  }
  return "?";
}

const char* to_string(hardware::Dtype d) {
  switch (d) {
    case hardware::Dtype::Fp32:
      return "fp32";
    case hardware::Dtype::Tf32:
      return "tf32";
    case hardware::Dtype::Fp16:
      return "fp16";
    case hardware::Dtype::Bf16:
      return "bf16";
    case hardware::Dtype::Fp8:
      return "fp8";
  }
  return "?";
}

}  // namespace trainsim::parallel
