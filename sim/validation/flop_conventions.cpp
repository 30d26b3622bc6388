#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/validation/published_run.hpp"

namespace trainsim::validation {

SourceFlops source_flops(FlopConvention convention, const model::ModelSpec& m, std::int64_t batch,
                         std::int64_t seq_len, parallel::Recompute recompute) {
  const auto b = static_cast<double>(batch);
  const auto s = static_cast<double>(seq_len);
  const auto l = static_cast<double>(m.num_layers);
  const auto h = static_cast<double>(m.hidden);
  const auto v = static_cast<double>(m.vocab);
  switch (convention) {
    case FlopConvention::Narayanan2021: {
      // Narayanan et al. 2021 eq. 3 (model::megatron_flops_per_iteration): the paper's only
      // count, used for its TFLOP/s and its "% of peak" alike.
      const Flops f = model::megatron_flops_per_iteration(m, batch, seq_len);
      return {.model = f, .hardware = f};
    }
    case FlopConvention::Korthikanti2022: {
      // Korthikanti et al. 2022 §6 (arXiv 2205.05198): model FLOPs
      // 72 B L s h^2 (1 + s/6h + v/12hL); hardware FLOPs with selective recompute add the
      // attention core's forward again, 72 B L s h^2 (1 + s/3h + v/12hL); with full recompute
      // every layer runs its forward twice, 96 B L s h^2 (1 + s/6h + v/16hL) (the LM head is
      // not recomputed: 96 v/16hL = 72 v/12hL).
      const double base = 72.0 * b * l * s * h * h;
      const Flops model(base * (1.0 + s / (6.0 * h) + v / (12.0 * h * l)));
      switch (recompute) {
        case parallel::Recompute::None:
          return {.model = model, .hardware = model};
        case parallel::Recompute::Selective:
          return {.model = model,
                  .hardware = Flops(base * (1.0 + s / (3.0 * h) + v / (12.0 * h * l)))};
        case parallel::Recompute::Full:
          return {.model = model,
                  .hardware =
                      Flops(96.0 * b * l * s * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * h * l)))};
      }
      return {.model = model, .hardware = model};
    }
    case FlopConvention::MegatronCore2024: {
      // Megatron-Core num_floating_point_operations (megatron/training/training.py, core_r0.8):
      // 12 B s L h^2 ((1 + g/a + s/h) * q/h + f/h * gated + V / (2 L h)), q = heads * head_dim,
      // g = query groups (kv heads), gated = 3/2 for SwiGLU. Megatron reports model FLOPs only,
      // so hardware = model.
      const double q = static_cast<double>(m.num_heads * m.head_dim);
      const double kv_ratio =
          static_cast<double>(m.num_kv_heads) / static_cast<double>(m.num_heads);
      const double gated = m.activation == model::Activation::SwiGlu ? 1.5 : 1.0;
      const double f = static_cast<double>(m.ffn_hidden);
      const Flops flops(12.0 * b * s * l * h * h *
                        ((1.0 + kv_ratio + s / h) * (q / h) + (f / h) * gated + v / (2.0 * l * h)));
      return {.model = flops, .hardware = flops};
    }
    case FlopConvention::PalmWithEmbeddings: {
      // torchtitan train.py and llm-foundry's MFU callback: per token 6 N + 12 L h s with N
      // every parameter, embeddings included (model::num_parameters). llm-foundry's HFU counts
      // 4 passes instead of 3 with activation checkpointing: 8 N + 16 L h s.
      const auto n = static_cast<double>(model::num_parameters(m));
      const double tokens = b * s;
      const Flops model(tokens * (6.0 * n + 12.0 * l * h * s));
      if (recompute == parallel::Recompute::Full) {
        return {.model = model, .hardware = Flops(tokens * (8.0 * n + 16.0 * l * h * s))};
      }
      return {.model = model, .hardware = model};
    }
    case FlopConvention::Unstated:
      break;
  }
  throw InternalError("source_flops: the convention of the source is not stated");
}

bool tflops_count_hardware_flops(FlopConvention convention) {
  return convention == FlopConvention::Narayanan2021;
}

const char* to_string(FlopConvention c) {
  switch (c) {
    case FlopConvention::Narayanan2021:
      return "narayanan2021";
    case FlopConvention::Korthikanti2022:
      return "korthikanti2022";
    case FlopConvention::MegatronCore2024:
      return "megatron-core-2024";
    case FlopConvention::PalmWithEmbeddings:
      return "6N+12Lhs";
    case FlopConvention::Unstated:
      return "unstated";
  }
  return "unstated";
}

}  // namespace trainsim::validation
