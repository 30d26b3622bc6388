#include "trainsim/parallel/validate.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "trainsim/error.hpp"
#include "trainsim/parallel/placement.hpp"

namespace trainsim::parallel {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

std::string workspace_problem(const Scenario& s) {
  // As report::apply_memory_reserve computes the reserve: a workspace that, with the CUDA
  // context and NCCL's buffers, takes the whole HBM leaves no memory for the plan, and the
  // reserve's terms would sum past the HBM.
  const Bytes capacity = s.hardware.gpu.hbm_capacity;
  const Bytes fixed = s.hardware.gpu.cuda_context + s.hardware.gpu.nccl_buffers;
  const Bytes workspace = s.stack.memory.workspace;
  // No workspace is never the fault (the hardware loader holds the context and buffers below
  // the HBM), nor a scenario built by hand without an HBM (the loader requires one).
  if (!(workspace > Bytes(0.0)) || !(capacity > Bytes(0.0)) || workspace < capacity - fixed) {
    return "";
  }
  return "memory.workspace " + to_string(workspace) + " with the CUDA context (" +
         to_string(s.hardware.gpu.cuda_context) + ") and NCCL buffers (" +
         to_string(s.hardware.gpu.nccl_buffers) + ") leaves nothing of the " + to_string(capacity) +
         " HBM; expected a workspace below " + to_string(capacity - fixed);
}

std::string headroom_problem(const Scenario& s) {
  // As report::apply_memory_reserve computes the reserve (report/memory.hpp).
  const Bytes capacity = s.hardware.gpu.hbm_capacity;
  const Bytes left = capacity - s.hardware.gpu.cuda_context - s.hardware.gpu.nccl_buffers -
                     s.stack.memory.workspace;
  const double fraction = s.stack.memory.headroom_fraction;
  const Bytes headroom = Bytes(std::round((capacity * fraction).value()));
  // No headroom is never the fault, even where the fixed terms alone fill the HBM.
  if (fraction <= 0.0 || headroom <= left) return "";
  // The largest fraction that passes this check, exactly (81088 of 81920 MiB: 0.98984375): a
  // 4-decimal 0.9898 was named as the bound while 0.98984 passed.
  double most = std::max(left.value() / capacity.value(), 0.0);
  while (most > 0.0 && std::round((capacity * most).value()) > left.value()) {
    most = std::nextafter(most, 0.0);
  }
  // The fraction as given (shortest round trip: 0.9999999 is not "1"), the two amounts in MiB
  // with a decimal, so that they never read alike (0.99 of 80 GiB is 81100.8 MiB against the
  // 81088.0 MiB left; both are "79.2 GiB").
  const auto shortest = [](double v) {
    std::array<char, 32> buf{};
    const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    return std::string(buf.data(), result.ptr);
  };
  const auto mib = [](Bytes b) { return fixed_text(b.value() / (1024.0 * 1024.0), 1) + " MiB"; };
  // Bytes where the two round to one MiB figure (0.98984376 keeps 81088.0 "more than" 81088.0).
  const Bytes free_left(std::max(left.value(), 0.0));
  const bool alike = mib(headroom) == mib(free_left);
  const auto amount = [&](Bytes b) { return alike ? fixed_text(b.value(), 0) + " bytes" : mib(b); };
  return shortest(fraction) + " of HBM keeps " + amount(headroom) + " free, more than the " +
         amount(free_left) + " the CUDA context (" + to_string(s.hardware.gpu.cuda_context) +
         "), NCCL buffers (" + to_string(s.hardware.gpu.nccl_buffers) + ") and workspace (" +
         to_string(s.stack.memory.workspace) + ") leave of the " + to_string(capacity) +
         " HBM; expected at most " + shortest(most);
}

std::vector<Problem> validate(const Scenario& s) {
  std::vector<Problem> out;
  auto problem = [&out](std::string key, std::string message, std::vector<std::string> also = {}) {
    out.push_back(
        Problem{.key = std::move(key), .message = std::move(message), .also = std::move(also)});
  };
  // What the micro-batch count is made of: dp (gpus / (tp x pp x cp), derived by
  // scenario_loader: kDegreeInputs) and the micro-batch; under the interleaved schedule the
  // schedule too. The cluster's size, not where its ranks sit: /cluster named
  // --nodes-per-domain too, which changes no degree (docs/placement.md). Static: validate() runs
  // once per sweep scenario, and only a problem copies them.
  static const std::vector<std::string> kDegreeInputs = {
      "/cluster/gpus", "/cluster/nodes", "/parallel/tp", "/parallel/pp", "/parallel/cp"};
  static const std::vector<std::string> kBatchInputs = [] {
    std::vector<std::string> v = kDegreeInputs;
    v.emplace_back("/training/micro_batch");
    return v;
  }();
  static const std::vector<std::string> kInterleavedBatchInputs = [] {
    std::vector<std::string> v = kBatchInputs;
    v.emplace_back("/parallel/pipeline_schedule");
    return v;
  }();
  const ParallelPlan& p = s.parallel;
  const model::ModelSpec& m = s.model;
  const TrainingSpec& t = s.training;
  const std::int64_t g = s.hardware.node.gpus_per_node;

  if (s.gpus > g && s.gpus % g != 0) {
    problem("/cluster/gpus", "gpus " + str(s.gpus) + " is not a whole number of " + str(g) +
                                 "-GPU nodes; expected a multiple of " + str(g));
  }
  if (const std::int64_t hosts = s.hardware.node.hosts_per_domain();
      s.nodes_per_domain < 0 || s.nodes_per_domain > hosts) {
    problem("/cluster/nodes_per_domain",
            "nodes_per_domain " + str(s.nodes_per_domain) +
                " exceeds the hosts of one NVLink domain of this hardware (" + str(hosts) + " of " +
                str(g) + " GPUs each); expected 1 to " + str(hosts));
  }
  if (const std::string workspace = workspace_problem(s); !workspace.empty()) {
    problem("/stack", "stack '" + s.stack_name + "' " + workspace, {"/hardware"});
  } else if (const std::string headroom = headroom_problem(s); !headroom.empty()) {
    problem("/stack", "stack '" + s.stack_name + "' memory.headroom_fraction " + headroom,
            {"/hardware"});
  }
  const auto model_parallel_or = model_parallel_size(p);
  if (!model_parallel_or || *model_parallel_or > s.gpus) {
    // Checked first: the product may not even fit an int64 (tp = pp = cp = 2^24).
    problem("/parallel",
            "tp x pp x cp = " + str(p.tp) + " x " + str(p.pp) + " x " + str(p.cp) +
                " exceeds the " + str(s.gpus) + " gpus; expected a product that divides the gpus",
            kDegreeInputs);
    return out;
  }
  const std::int64_t model_parallel = *model_parallel_or;
  if (s.gpus % model_parallel != 0) {
    problem("/parallel",
            "gpus " + str(s.gpus) + " do not split into tp x pp x cp = " + str(p.tp) + " x " +
                str(p.pp) + " x " + str(p.cp) + " = " + str(model_parallel) +
                "; expected gpus divisible by " + str(model_parallel),
            kDegreeInputs);
    return out;  // dp is meaningless below
  }
  // Megatron-LM splits attention heads and query groups evenly over TP ranks
  // (megatron/core/transformer/attention.py asserts num_query_groups % tp == 0); trainsim does
  // not model replicating key/value heads across TP ranks.
  if (m.num_heads % p.tp != 0) {
    problem("/parallel/tp",
            "tp " + str(p.tp) + " does not divide heads " + str(m.num_heads) +
                "; expected a divisor of " + str(m.num_heads),
            {"/model"});
  } else if (m.num_kv_heads % p.tp != 0) {
    problem("/parallel/tp",
            "tp " + str(p.tp) + " does not divide kv_heads " + str(m.num_kv_heads) +
                " (grouped-query attention heads are split, not replicated, across TP ranks); "
                "expected a divisor of " +
                str(m.num_kv_heads),
            {"/model"});
  }
  // ffn_hidden is the dense layers' MLP: unused by a mixture-of-experts model without leading
  // dense layers (docs/models.md), whose multi-token-prediction layers are MoE layers too.
  if ((!model::is_moe(m) || m.num_dense_layers > 0) && m.ffn_hidden % p.tp != 0) {
    problem("/parallel/tp",
            "tp " + str(p.tp) + " does not divide ffn_hidden " + str(m.ffn_hidden) +
                "; expected a divisor of " + str(m.ffn_hidden),
            {"/model"});
  }
  if (p.ep > 1 || model::is_moe(m)) {
    // Expert parallelism: EP groups of ep data-parallel ranks each hold num_experts / ep routed
    // experts (Megatron-Core: expert_model_parallel_size divides the data-parallel size and
    // num_moe_experts). Carving EP out of CP ranks too, as Megatron-Core may, is not modelled.
    if (!model::is_moe(m)) {
      problem("/parallel/ep",
              "ep " + str(p.ep) + " needs a mixture-of-experts model, and '" + m.id +
                  "' is dense; expected ep 1",
              {"/model"});
    } else if (m.num_experts % p.ep != 0) {
      // Before dp: a property of the model and ep alone, which no cluster size mends (search
      // --ep 3 on an 8-expert model named dp in every plan).
      problem("/parallel/ep",
              "ep " + str(p.ep) + " does not divide the " + str(m.num_experts) +
                  " experts; expected a divisor of " + str(m.num_experts),
              {"/model"});
    } else if (p.dp > 0 && p.dp % p.ep != 0) {
      problem("/parallel/ep",
              "ep " + str(p.ep) + " does not divide dp " + str(p.dp) +
                  " (expert-parallel groups are carved out of the data-parallel ranks); "
                  "expected a divisor of " +
                  str(p.dp),
              kDegreeInputs);
    } else if (p.ep > 1 && p.cp > 1) {
      problem("/parallel/ep",
              "ep " + str(p.ep) + " with cp " + str(p.cp) +
                  " is not modelled (EP groups are carved out of the data-parallel ranks only); "
                  "expected ep 1 or cp 1",
              {"/parallel/cp"});
    } else if (p.ep > 1 && p.sharding == Sharding::HybridShard) {
      problem("/parallel/ep",
              "ep " + str(p.ep) +
                  " with sharding hybrid_shard is not modelled; expected ep 1 or sharding none, "
                  "zero1, shard_grad_op or full_shard",
              {"/parallel/sharding"});
    } else if (p.ep > 1 && p.tp > 1 && !p.sequence_parallel) {
      // Megatron-Core's TransformerConfig refuses it: "When using expert parallelism and
      // tensor parallelism, sequence parallelism must be used" (docs/models.md). Without it
      // every TP rank would send all T tokens through the all-to-all, tp times the bytes.
      problem("/parallel/sequence_parallel",
              "ep " + str(p.ep) + " with tp " + str(p.tp) +
                  " needs sequence parallelism (Megatron-Core refuses expert and tensor "
                  "parallelism without it); expected sequence_parallel true, or ep 1 or tp 1",
              {"/parallel/ep", "/parallel/tp"});
    }
    if (m.expert_ffn_hidden % p.tp != 0) {
      problem("/parallel/tp",
              "tp " + str(p.tp) + " does not divide expert_ffn_hidden " + str(m.expert_ffn_hidden) +
                  " (experts are split over tp); expected a divisor of " + str(m.expert_ffn_hidden),
              {"/model"});
    }
    // The shared experts run as one MLP of their summed width, split over tp (Megatron-Core's
    // SharedExpertMLP, moe_shared_expert_intermediate_size); a width tp does not divide was
    // priced at the next multiple.
    const std::int64_t shared = m.num_shared_experts * m.shared_expert_ffn_hidden;
    if (shared % p.tp != 0) {
      problem("/parallel/tp",
              "tp " + str(p.tp) + " does not divide the shared experts' width " + str(shared) +
                  " (num_shared_experts x shared_expert_ffn_hidden, "
                  "split over tp); expected a divisor of " +
                  str(shared),
              {"/model"});
    }
  }
  // Stages may hold unequal layer counts (Megatron's uneven first/last stage), but each model
  // chunk needs at least one layer.
  if (p.pp * p.virtual_stages > m.num_layers) {
    problem("/parallel/pp",
            "pp x virtual_stages = " + str(p.pp * p.virtual_stages) + " exceeds the model's " +
                str(m.num_layers) + " layers; expected at most one chunk per layer",
            {"/parallel/virtual_stages", "/parallel/pipeline_schedule", "/model"});
  }
  const std::int64_t counted = (p.account_for_embedding_in_pipeline_split ? 1 : 0) +
                               (p.account_for_loss_in_pipeline_split ? 1 : 0);
  const std::int64_t chunks = p.pp * p.virtual_stages;
  bool split_ok = true;
  if (!p.pipeline_layout.empty()) {
    // Megatron-Core's pipeline_model_parallel_layout names every chunk's layers; it refuses the
    // account_for_* options beside it (TransformerConfig's checks).
    const auto entries = static_cast<std::int64_t>(p.pipeline_layout.size());
    std::int64_t sum = 0;
    for (const std::int64_t n : p.pipeline_layout) sum += n;
    split_ok = false;
    if (counted > 0) {
      problem("/parallel/pipeline_layout",
              "a pipeline_layout gives every model chunk's layers; expected no "
              "account_for_embedding_in_pipeline_split or account_for_loss_in_pipeline_split "
              "beside it",
              {"/parallel/account_for_embedding_in_pipeline_split",
               "/parallel/account_for_loss_in_pipeline_split"});
    } else if (entries != chunks) {
      problem("/parallel/pipeline_layout",
              "pipeline_layout has " + str(entries) + " model chunks where pp x virtual_stages = " +
                  str(chunks) + "; expected " + str(chunks) + " entries",
              {"/parallel/pp", "/parallel/virtual_stages", "/parallel/pipeline_schedule"});
    } else if (sum != m.num_layers) {
      problem("/parallel/pipeline_layout",
              "pipeline_layout's chunks hold " + str(sum) + " layers where the model has " +
                  str(m.num_layers) + "; expected entries summing to " + str(m.num_layers),
              {"/model"});
    } else {
      split_ok = true;
    }
  } else if (counted > 0) {
    // Megatron-Core counts the embedding and the loss as layers of the split and requires the
    // count to divide evenly (transformer_block.py get_num_layers_to_build, its assertions).
    const char* key = p.account_for_embedding_in_pipeline_split
                          ? "/parallel/account_for_embedding_in_pipeline_split"
                          : "/parallel/account_for_loss_in_pipeline_split";
    // The loss's flag too where both are counted: the message counts both.
    std::vector<std::string> inputs = {"/parallel/pp", "/parallel/virtual_stages",
                                       "/parallel/pipeline_schedule", "/model"};
    if (counted == 2) inputs.emplace_back("/parallel/account_for_loss_in_pipeline_split");
    const std::int64_t slots = m.num_layers + counted;
    if (slots % chunks != 0) {
      split_ok = false;
      const char* what = counted == 2                                ? "the embedding and loss"
                         : p.account_for_embedding_in_pipeline_split ? "the embedding"
                                                                     : "the loss";
      problem(key,
              "the " + str(m.num_layers) + " layers plus " + str(counted) + " counted for " + what +
                  ", " + str(slots) + ", do not split evenly over pp x virtual_stages = " +
                  str(chunks) + " model chunks; expected a multiple of " + str(chunks),
              inputs);
    } else if (chunk_layers(p, m.num_layers, 0).count < 1 ||
               chunk_layers(p, m.num_layers, chunks - 1).count < 1) {
      split_ok = false;
      problem(key,
              "with " + str(slots / chunks) +
                  " layer per model chunk, the chunk that holds the embedding or the loss "
                  "keeps no transformer layer; expected pp x virtual_stages of at most " +
                  str(slots / 2),
              inputs);
    }
  }
  if (p.recompute_layers > 0 && p.recompute != Recompute::Full) {
    problem("/parallel/recompute_layers",
            "recompute_layers " + str(p.recompute_layers) +
                " applies only with recompute \"full\"; expected recompute \"full\" or no "
                "recompute_layers");
  } else if (p.recompute_layers > 0 && chunks <= m.num_layers && split_ok) {
    // The largest model chunk: the first, or with the embedding counted the second; any with a
    // layout.
    std::int64_t largest = 0;
    const std::int64_t scanned =
        p.pipeline_layout.empty() ? std::min<std::int64_t>(chunks, 2) : chunks;
    for (std::int64_t c = 0; c < scanned; ++c) {
      largest = std::max(largest, chunk_layers(p, m.num_layers, c).count);
    }
    if (p.recompute_layers > largest) {
      problem("/parallel/recompute_layers",
              "recompute_layers " + str(p.recompute_layers) + " exceeds the " + str(largest) +
                  " layers of a model chunk; expected at most " + str(largest),
              {"/parallel/pp", "/parallel/virtual_stages", "/parallel/pipeline_layout", "/model"});
    }
  }
  if (p.recompute == Recompute::Selective &&
      s.stack.selective == model::SelectiveRecompute::MlaUpProj && !model::has_mla(m)) {
    // Megatron-Core would run it, recomputing nothing: the plan's "selective" would mean none.
    problem("/parallel/recompute",
            "recompute \"selective\" with stack " + s.stack_name +
                ", whose recompute.selective is \"mla_up_proj\", recomputes nothing in a model "
                "without latent attention; expected recompute \"none\" or \"full\", or a stack "
                "whose selective policy applies (\"attention\" or \"op\")");
  }
  if (p.virtual_stages > 1 && p.schedule != PipelineSchedule::Interleaved) {
    problem("/parallel/virtual_stages",
            "virtual_stages " + str(p.virtual_stages) +
                " needs pipeline_schedule \"interleaved\"; expected 1 for gpipe and 1f1b",
            {"/parallel/pipeline_schedule"});
  }
  if (p.schedule == PipelineSchedule::Interleaved && p.pp < 2) {
    problem("/parallel/pipeline_schedule",
            "the interleaved schedule needs pp >= 2; expected pp > 1 or schedule \"1f1b\"",
            {"/parallel/pp"});
  } else if (p.schedule == PipelineSchedule::GPipe && p.pp < 2) {
    // With one stage no framework runs every forward before every backward: Megatron-Core's
    // forward_backward_no_pipelining (and PyTorch's gradient accumulation loop) runs each
    // micro-batch's forward and backward in turn, which 1f1b is at pp 1. GPipe's order held
    // every micro-batch's activations at once, in silence.
    problem("/parallel/pipeline_schedule",
            "the gpipe schedule needs pp >= 2 (one stage runs each micro-batch's forward and "
            "backward in turn); expected pp > 1 or schedule \"1f1b\"",
            {"/parallel/pp"});
  } else if (p.schedule == PipelineSchedule::Interleaved && p.virtual_stages < 2) {
    // One model chunk per pipeline rank is 1F1B: the run was 1F1B's to the last bit while its
    // report said "interleaved" (search refuses --virtual-stages 1 with it too).
    problem("/parallel/virtual_stages",
            "the interleaved schedule needs 2 or more virtual stages per pipeline rank, got " +
                str(p.virtual_stages) +
                "; expected virtual_stages of 2 or more, or pipeline_schedule \"1f1b\"",
            {"/parallel/pipeline_schedule"});
  }
  if (s.model.position_embedding == model::PositionEmbedding::Learned &&
      t.seq_len > s.model.max_positions) {
    // A learned position table has one row per position: a longer sequence has no embedding.
    problem("/training/seq_len", "seq_len " + str(t.seq_len) + " exceeds the model's " +
                                     str(s.model.max_positions) +
                                     " learned positions (max_positions); expected at most " +
                                     str(s.model.max_positions));
  }
  if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0) {
    // Load-balanced causal context parallelism cuts the sequence into 2*cp chunks
    // (Megatron-LM context_parallel docs).
    problem("/training/seq_len",
            "seq_len " + str(t.seq_len) + " does not split into 2 x cp = " + str(2 * p.cp) +
                " chunks; expected a multiple of " + str(2 * p.cp),
            {"/parallel/cp"});
  } else if (p.sequence_parallel && p.tp > 1 && (t.seq_len / p.cp) % p.tp != 0) {
    // Sequence parallelism splits each rank's sequence (its seq_len / cp tokens) over the TP
    // ranks: Megatron-Core's reduce-scatter to the sequence-parallel region asserts "First
    // dimension of the tensor should be divisible by tensor parallel size"
    // (megatron/core/tensor_parallel/mappings.py, _reduce_scatter_along_first_dim).
    problem("/training/seq_len",
            "seq_len " + str(t.seq_len) + (p.cp > 1 ? " / cp " + str(p.cp) : std::string()) +
                " does not split over tp " + str(p.tp) +
                " under sequence parallelism; expected a "
                "multiple of " +
                str(p.tp * p.cp),
            {"/parallel/tp", "/parallel/cp", "/parallel/sequence_parallel"});
  }
  // A micro-batch's tokens times any width fit an int64 (scenario.hpp); the loader bounds each
  // factor, so the product is at most 2^56 here.
  if (t.micro_batch > kMaxMicroBatchTokens / t.seq_len) {
    problem("/training/micro_batch",
            "micro_batch " + str(t.micro_batch) + " sequences of " + str(t.seq_len) +
                " tokens = " + str(t.micro_batch * t.seq_len) +
                " tokens; expected micro_batch x seq_len at most " + str(kMaxMicroBatchTokens) +
                " tokens",
            {"/training/seq_len"});
  }
  const std::int64_t per_step = p.dp * t.micro_batch;
  if (t.global_batch % per_step == 0 && t.global_batch / per_step > kMaxMicrobatches) {
    // Each micro-batch is simulated: millions of them would run for hours.
    problem("/training/global_batch",
            "global_batch " + str(t.global_batch) + " makes " + str(t.global_batch / per_step) +
                " micro-batches of dp x micro_batch = " + str(per_step) +
                " sequences; expected at most " + str(kMaxMicrobatches) +
                " micro-batches per step (a larger micro_batch or more dp)",
            kBatchInputs);
  } else if (t.global_batch % per_step == 0 && m.num_layers > 0 &&
             t.global_batch / per_step > kMaxLayerPasses / (m.num_layers + m.mtp_layers)) {
    // The multi-token-prediction modules' layers are simulated like the model's.
    const std::int64_t micro = t.global_batch / per_step;
    const std::int64_t layers = m.num_layers + m.mtp_layers;
    problem("/training/global_batch",
            "global_batch " + str(t.global_batch) + " makes " + str(micro) + " micro-batches of " +
                str(layers) + " layers = " + str(micro * layers) +
                " layer passes to simulate; expected at most " + str(kMaxLayerPasses) +
                " (fewer micro-batches: a larger micro_batch or more dp)",
            kBatchInputs);
  }
  if (t.global_batch % per_step != 0) {
    problem("/training/global_batch",
            "global_batch " + str(t.global_batch) + " is not divisible by dp x micro_batch = " +
                str(p.dp) + " x " + str(t.micro_batch) + " = " + str(per_step) +
                "; expected a multiple of " + str(per_step),
            kBatchInputs);
  } else if (p.schedule == PipelineSchedule::Interleaved && p.pp > 1 &&
             (t.global_batch / per_step) % p.pp != 0) {
    // Megatron-LM's interleaved schedule needs the micro-batch count divisible by pp.
    problem("/training/global_batch",
            "the interleaved schedule needs micro-batches (" + str(t.global_batch / per_step) +
                ") divisible by pp " + str(p.pp) + "; expected global_batch a multiple of " +
                str(per_step * p.pp),
            kInterleavedBatchInputs);
  }
  if (p.sharding == Sharding::HybridShard) {
    const std::int64_t shard = hybrid_shard_size(s);
    const std::int64_t node = s.hardware.node.gpus_per_node;
    if (p.shard_group == 0 && p.tp * p.cp > node) {
      // One node holds no whole data-parallel rank, so its default, one node's ranks, names
      // none (hybrid_shard_size took 1 without a word). Where tp x cp fills a node exactly the
      // default is that node's one rank: defined, and as replicated as DDP, so it runs.
      problem("/parallel/sharding",
              "hybrid_shard's default shard_group, one node's data-parallel ranks, is none: tp " +
                  str(p.tp) + " x cp " + str(p.cp) + " spans more than a node's " + str(node) +
                  " GPUs; expected a shard_group (sharding none keeps a replica per rank)",
              {"/parallel/tp", "/parallel/cp"});
    } else if (p.dp % shard != 0 && p.shard_group > 0) {
      problem("/parallel/shard_group", "shard_group " + str(shard) + " does not divide dp " +
                                           str(p.dp) + "; expected a divisor of " + str(p.dp));
    } else if (p.dp % shard != 0) {
      // The default, which the user never set: said as such, with the keys it comes from (the
      // message blamed a shard_group of 4 on a plan that gave none).
      problem("/parallel/sharding",
              "hybrid_shard's default shard_group, one node's data-parallel ranks (" + str(shard) +
                  " of " + str(s.hardware.node.gpus_per_node) + " GPUs per node at tp " +
                  str(p.tp) + " x cp " + str(p.cp) + "), does not divide dp " + str(p.dp) +
                  "; expected dp a multiple of " + str(shard) + ", or a shard_group that divides " +
                  str(p.dp),
              kDegreeInputs);
    }
  }
  if (s.hardware.peak(t.precision).value() <= 0.0) {
    // Name the profile's key that says so, and the precisions the profile has a peak for.
    std::string supported;
    for (std::size_t d = 0; d < hardware::kNumDtypes; ++d) {
      const auto dtype = static_cast<hardware::Dtype>(d);
      // tf32 is a GEMM math mode of fp32 training, not a training precision of its own.
      if (dtype == hardware::Dtype::Tf32) continue;
      if (s.hardware.peak(dtype).value() > 0.0) {
        supported += std::string(supported.empty() ? "" : ", ") + to_string(dtype);
      }
    }
    // The profile as the scenario gave it (a file's path, "inline"), with its id when they
    // differ: a copied profile keeps the id of the one it was copied from.
    const std::string name = s.hardware_name.empty() || s.hardware_name == s.hardware.id
                                 ? "'" + s.hardware.id + "'"
                                 : "'" + s.hardware_name + "' (profile id '" + s.hardware.id + "')";
    problem("/training/precision",
            "hardware " + name + " has no " + std::string(to_string(t.precision)) +
                " tensor cores (its /gpu/peak_dense/" + to_string(t.precision) + " is 0" +
                (t.precision == hardware::Dtype::Bf16
                     ? "; bf16 is also the precision when none is given"
                     : "") +
                "); expected a precision it supports" +
                (supported.empty() ? std::string() : " (" + supported + ")") +
                " in training.precision (--precision)");
  }
  // MXFP8 block scaling runs on Blackwell's tensor cores only (Transformer Engine's support
  // matrix: MXFP8BlockScaling on compute capability 10.0 and 10.3; per-tensor FP8 from 8.9).
  if (t.precision == hardware::Dtype::Fp8 && s.stack.fp8.recipe == stack::Fp8Recipe::Mxfp8 &&
      s.hardware.gpu.arch != hardware::GpuArch::Blackwell &&
      s.hardware.peak(t.precision).value() > 0.0) {
    problem("/stack",
            "stack '" + s.stack_name +
                "' fp8.recipe mxfp8 (MXFP8 block scaling) needs Blackwell tensor cores, and "
                "hardware '" +
                s.hardware.id +
                "' is not Blackwell; expected a recipe it runs (fp8.recipe current, delayed or "
                "blockwise)",
            {"/hardware", "/training/precision"});
  }
  return out;
}

void require_valid(const Scenario& scenario) {
  const auto problems = validate(scenario);
  if (!problems.empty()) throw PlanError(problems.front().key + ": " + problems.front().message);
}

}  // namespace trainsim::parallel
