// What the suite measures: the GEMMs and attention calls a scenario's iteration runs, exactly as
// the simulator prices them (model::layer_kernels and head_kernels, forward and both backward
// GEMMs), plus a general grid that covers shapes no scenario names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/parallel/scenario.hpp"

namespace trainsim::calib {

// C[m x n] = A[m x k] B[k x n], as model::GemmShape and the measurement document's `gemm`.
struct GemmCase {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  std::string origin;  // "qkv_proj forward; mlp_down dgrad" or "grid"
};

// One forward attention call: Q, K and V of [batch, heads, seq_len, head_dim].
struct AttentionCase {
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t seq_len = 1;
  std::int64_t head_dim = 1;
  bool causal = true;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  std::string origin;
};

struct Plan {
  std::vector<GemmCase> gemms;
  std::vector<AttentionCase> attention;
};

// The GEMMs and attention of one iteration of `s` on one rank: every GEMM of a transformer layer
// and of the LM head, each as its forward (m, n, k), data-gradient (m, k, n) and weight-gradient
// (k, n, m) product (model/kernels.hpp), in the scenario's precision; one attention call of
// micro_batch x heads / tp queries of seq_len / cp, head_dim, causal. Requires a valid scenario
// (parallel::require_valid).
[[nodiscard]] Plan scenario_plan(const parallel::Scenario& s);

// A grid independent of any scenario: square GEMMs from 256 to 16384 in bf16, fp16, tf32 and
// fp8, and GEMMs with one small side (the decode-like and narrow-TP shapes the size curve
// needs); attention over sequence lengths 512 to 16384, head dims 64 and 128, causal and not.
// `quick` keeps every other size.
[[nodiscard]] Plan grid_plan(bool quick);

// Appends `more` to `into`, merging cases of equal shape and dtype (their origins joined with
// "; ") and keeping the first appearance's order, so that each shape is measured once.
void merge_plans(Plan& into, const Plan& more);

}  // namespace trainsim::calib
