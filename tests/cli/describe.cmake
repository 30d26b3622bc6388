# `trainsim describe` of the paper's scenario: llama2-7b has 6,738,415,616 parameters
# (docs/sources.md W.1) and 46,086,512,640 model FLOPs per token.
set(paper_args --hardware h100-dgx --model llama2-7b --gpus 128 --sharding shard_grad_op
               --micro-batch 2 --seq-len 4096)
add_test(NAME cli.describe.table COMMAND trainsim describe ${paper_args})
set_tests_properties(cli.describe.table PROPERTIES
  PASS_REGULAR_EXPRESSION "6738415616.*46086512640.*total.*fits")
# The fit is judged against the usable memory, as run's is: with half the HBM kept free the
# paper's 47.6 GiB does not fit in (80 - 0.8125 - 40) x 0.95 = 37.2 GiB, and the line says so
# beside the 37.2 (it gave "47.3 GiB of 80.0 GiB (DOES NOT FIT)").
add_test(NAME cli.describe.usable COMMAND trainsim describe ${paper_args} --memory-headroom 0.5)
set_tests_properties(cli.describe.usable PROPERTIES PASS_REGULAR_EXPRESSION
  "\n  reserved     42\\.8 GiB \\(headroom 50\\.0 %\\)\n  total        47\\.6 GiB of 37\\.2 GiB usable \\(80\\.0 GiB HBM\\) \\(DOES NOT FIT\\)\n")
add_test(NAME cli.describe.json COMMAND trainsim describe ${paper_args} --format json)
set_tests_properties(cli.describe.json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"memory\": {.*\"capacity_bytes\".*\"fits\": true.*\"total_bytes\"")
# Its context names the hardware, model and stack as run's report does (it gave the versions
# only).
add_test(NAME cli.describe.json_context COMMAND trainsim describe ${paper_args} --format json)
set_tests_properties(cli.describe.json_context PROPERTIES
  PASS_REGULAR_EXPRESSION "\"context\": {\n +\"hardware\": \"h100-dgx\",\n +\"model\": \"llama2-7b\",\n +\"schema_version\": 1,\n +\"stack\": \"pytorch-2\\.3-fsdp\"")
# One node: 8 GPUs, dp 8 all on one node; counts agree with their nouns ("1 node", not "1 nodes").
add_test(NAME cli.describe.one_node COMMAND trainsim describe --hardware h100-dgx
         --model llama2-7b --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.one_node PROPERTIES
  PASS_REGULAR_EXPRESSION "dp group: 8 ranks on 1 node, 8 per node\; tp group: 1 rank on 1 node\n"
  FAIL_REGULAR_EXPRESSION " 1 nodes| 1 ranks|node\\(s\\)")

# --optimizer: llama2-7b's 6,738,415,616 parameters unsharded on 8 GPUs keep AdamW's fp32 master,
# momentum and variance (12 B each: 80,860,987,392 B = 75.3 GiB) or SGD's master and momentum
# (8 B each: 53,907,324,928 B = 50.2 GiB).
add_test(NAME cli.describe.optimizer_adamw COMMAND trainsim describe --hardware h100-dgx
         --model llama2-7b --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.optimizer_adamw PROPERTIES
  PASS_REGULAR_EXPRESSION "optimizer +75\\.3 GiB")
add_test(NAME cli.describe.optimizer_sgd COMMAND trainsim describe --hardware h100-dgx
         --model llama2-7b --gpus 8 --seq-len 4096 --optimizer sgd)
set_tests_properties(cli.describe.optimizer_sgd PROPERTIES
  PASS_REGULAR_EXPRESSION "optimizer +50\\.2 GiB")
trainsim_expect_exit(cli.describe.optimizer_unknown 2
  "^error: command line \\(--optimizer\\): /training/optimizer: unknown value 'adam'; did you mean 'adamw'"
  describe --hardware h100-dgx --model llama2-7b --gpus 8 --seq-len 4096 --optimizer adam)

# Bad input: one line naming the problem, exit 2; impossible plans exit 3.
trainsim_expect_exit(cli.describe.unknown_profile 2
  "^error: .*unknown hardware profile 'h100'; did you mean 'h100-dgx'"
  describe --hardware h100 --model llama2-7b --gpus 8 --seq-len 4096)
trainsim_expect_exit(cli.describe.malformed_profile 2
  "^error: .*bad_profile.json: invalid JSON at line"
  describe --hardware ${CMAKE_CURRENT_SOURCE_DIR}/../data/bad_profile.json --model llama2-7b
  --gpus 8 --seq-len 4096)
trainsim_expect_exit(cli.describe.unitless_profile 2
  "^error: .*unitless_profile.json: /gpu/hbm_bandwidth: expected a bandwidth with a unit"
  describe --hardware ${CMAKE_CURRENT_SOURCE_DIR}/../data/unitless_profile.json
  --model llama2-7b --gpus 8 --seq-len 4096)
trainsim_expect_exit(cli.describe.bad_scenario 2
  "^error: .*bad_scenario.json: /parallel/sharding: unknown value 'shard_grad'; did you mean 'shard_grad_op'"
  describe ${CMAKE_CURRENT_SOURCE_DIR}/../data/bad_scenario.json)
trainsim_expect_exit(cli.describe.unknown_model 2
  "^error: .*unknown model 'llama2-7'; did you mean 'llama2-7b'"
  describe --hardware h100-dgx --model llama2-7 --gpus 8 --seq-len 4096)
trainsim_expect_exit(cli.describe.tp_over_heads 3
  "^error: command line \\(--model, --tp\\): /parallel/tp: tp 64 does not divide heads 32"
  describe --hardware h100-dgx --model llama2-7b --gpus 64 --tp 64 --seq-len 4096)
trainsim_expect_exit(cli.describe.misspelled_model 2
  "^error: .*misspelled_model.json: /position_embedding: missing required key"
  describe --hardware h100-dgx --model ${CMAKE_CURRENT_SOURCE_DIR}/../data/misspelled_model.json
  --gpus 8 --seq-len 4096)
# A Hugging Face config.json is read as is: Llama-3-8B has 8,030,261,248 parameters.
add_test(NAME cli.describe.hf_config COMMAND trainsim describe --hardware h100-dgx --model
         ${CMAKE_CURRENT_SOURCE_DIR}/../data/hf_llama3_8b_config.json --gpus 8 --seq-len 8192)
set_tests_properties(cli.describe.hf_config PROPERTIES PASS_REGULAR_EXPRESSION "8030261248")

# Mixture-of-experts models: describe shows total and active parameters (tests/model/
# moe_counts_test.cpp derives them) and the memory per GPU under the plan.
# deepseek-v3: 671,026,419,200 total, 37,552,297,472 active; model FLOPs at 4096 tokens
# 6 * 36,625,618,432 + 6 * 61 * 128 * (192 + 128) * 4096 = 281,158,321,152.
add_test(NAME cli.describe.moe_deepseek_v3 COMMAND trainsim describe --hardware h100-dgx
         --model deepseek-v3 --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.moe_deepseek_v3 PROPERTIES
  PASS_REGULAR_EXPRESSION
  "multi-head latent.*256 routed of width 2048, 8 per token\; 1 shared of width 2048\; first 3 layers dense.*671026419200 total, 37552297472 active per token.*281158321152 per token.*memory per GPU \\(stage")
# DeepSeek-V3's config.json reads num_nextn_predict_layers 1: its module's 11,610,068,224
# parameters (tests/model/moe_counts_test.cpp) on top of the 671B, 682,636,487,424 in all, and
# 281,158,321,152 + 10,695,310,848 = 291,853,632,000 model FLOPs per token; in JSON an "mtp"
# object.
add_test(NAME cli.describe.mtp COMMAND trainsim describe --hardware h100-dgx
         --model ${CMAKE_CURRENT_SOURCE_DIR}/../data/hf_deepseek_v3_moe_config.json --gpus 8
         --seq-len 4096)
set_tests_properties(cli.describe.mtp PROPERTIES
  PASS_REGULAR_EXPRESSION
  "mtp +1 multi-token-prediction module on the last pipeline stage: 11610068224 parameters.*682636487424 total.*291853632000 per token")
add_test(NAME cli.describe.mtp_json COMMAND trainsim describe --hardware h100-dgx
         --model ${CMAKE_CURRENT_SOURCE_DIR}/../data/hf_deepseek_v3_moe_config.json --gpus 8
         --seq-len 4096 --format json)
set_tests_properties(cli.describe.mtp_json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"mtp\": {[^}]*\"layers\": 1,[^}]*\"parameters\": 11610068224")
# mixtral-8x7b as JSON: 46,702,792,704 total, 12,879,925,248 active.
add_test(NAME cli.describe.moe_json COMMAND trainsim describe --hardware h100-dgx
         --model mixtral-8x7b --gpus 8 --seq-len 4096 --format json)
set_tests_properties(cli.describe.moe_json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"active_parameters\": 12879925248,.*\"routed\": 8.*\"parameters\": 46702792704")
# A Hugging Face config of Qwen3-30B-A3B reads as the built-in: 30,532,110,336 and 3,353,020,416.
add_test(NAME cli.describe.moe_hf_config COMMAND trainsim describe --hardware h100-dgx --model
         ${CMAKE_CURRENT_SOURCE_DIR}/../data/hf_qwen3_30b_a3b_moe_config.json --gpus 8
         --seq-len 4096)
set_tests_properties(cli.describe.moe_hf_config PROPERTIES
  PASS_REGULAR_EXPRESSION "30532110336 total, 3353020416 active per token")
# mixtral-8x7b on 64 H100s with ep 8 simulates (expert parallelism).
add_test(NAME cli.run.moe_ep COMMAND trainsim run --hardware h100-dgx --model mixtral-8x7b
         --gpus 64 --seq-len 4096 --global-batch 256 --tp 2 --sequence-parallel --ep 8
         --sharding zero1 --format json)
set_tests_properties(cli.run.moe_ep PROPERTIES
  PASS_REGULAR_EXPRESSION "\"op\": \"all_to_all\"")
# The table's plan line gives ep for a mixture-of-experts model, as describe does (ep 1 and 8
# printed the same header); a dense model's gives none.
add_test(NAME cli.run.moe_ep_table COMMAND trainsim run --hardware h100-dgx --model mixtral-8x7b
         --gpus 64 --seq-len 4096 --global-batch 256 --tp 2 --sequence-parallel --ep 8
         --sharding zero1)
set_tests_properties(cli.run.moe_ep_table PROPERTIES
  PASS_REGULAR_EXPRESSION "\nplan         tp 2, pp 1, cp 1, dp 32, ep 8, sharding zero1,")
add_test(NAME cli.run.dense_no_ep COMMAND trainsim run --hardware h100-dgx --model llama2-7b
         --gpus 8 --seq-len 4096 --global-batch 8)
set_tests_properties(cli.run.dense_no_ep PROPERTIES
  PASS_REGULAR_EXPRESSION "\nplan         tp 1, pp 1, cp 1, dp 8, sharding ")
# Expert and tensor parallelism without sequence parallelism: the flags that set ep and tp are
# named (it said "command line:" alone). Megatron-Core's TransformerConfig
# refuses it ("When using expert parallelism and tensor parallelism, sequence parallelism must
# be used"), and each TP rank would route all T tokens, tp times the all-to-all bytes.
trainsim_expect_exit(cli.run.moe_ep_tp_without_sp 3
  "^error: command line \\(--ep, --tp\\): /parallel/sequence_parallel: ep 8 with tp 2 needs sequence parallelism[^\n]*expected sequence_parallel true, or ep 1 or tp 1\n$"
  run --hardware h100-dgx --model mixtral-8x7b --gpus 64 --seq-len 4096 --global-batch 256
  --tp 2 --ep 8 --sharding zero1)
# The experts are the model's: --model is named beside --ep, as for the dense checks of tp
# against heads or ffn_hidden (it named --ep alone).
trainsim_expect_exit(cli.run.moe_ep_not_dividing 3
  "^error: command line \\(--model, --ep\\): /parallel/ep: ep 3 does not divide the 8 experts"
  run --hardware h100-dgx --model mixtral-8x7b --gpus 64 --seq-len 4096 --tp 2 --ep 3)
# deepseek-v3 (latent attention, 256 experts) on 1,024 H800s with pp 16 and ep 64 simulates.
add_test(NAME cli.run.deepseek_v3_ep COMMAND trainsim run --hardware h800-dgx --model deepseek-v3
         --gpus 1024 --seq-len 4096 --global-batch 1024 --pp 16 --ep 64 --sharding zero1
         --stack megatron-core --format json)
set_tests_properties(cli.run.deepseek_v3_ep PROPERTIES
  PASS_REGULAR_EXPRESSION "\"op\": \"all_to_all\"")
# A dense model's sliding window and biases are named when set (mistral-7b: a window of 4096;
# qwen2-7b: Q, K and V biases).
add_test(NAME cli.describe.window COMMAND trainsim describe --hardware h100-dgx
         --model mistral-7b --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.window PROPERTIES
  PASS_REGULAR_EXPRESSION "attention    sliding window of 4096 tokens on every layer\n")
# gpt-oss-120b's window of 128 on its even layers (models/gpt-oss-120b.json), in the text and
# in the JSON's layer list.
add_test(NAME cli.describe.window_layers COMMAND trainsim describe --hardware h100-dgx
         --model gpt-oss-120b --gpus 64 --ep 8 --seq-len 4096)
set_tests_properties(cli.describe.window_layers PROPERTIES
  PASS_REGULAR_EXPRESSION "attention    sliding window of 128 tokens on 18 of 36 layers \\(0, 2, \\.\\.\\., 34\\), full attention on the others\n")
add_test(NAME cli.describe.window_layers_json COMMAND trainsim describe --hardware h100-dgx
         --model gpt-oss-120b --gpus 64 --ep 8 --seq-len 4096 --format json)
set_tests_properties(cli.describe.window_layers_json PROPERTIES
  PASS_REGULAR_EXPRESSION "\"attention_window\": {\n    \"layers\": \\[\n      0,\n      2,")
# Every layer listed and a multi-token-prediction module: the module is named as the one in
# full attention (it read "on 4 of 4 layers (0-3), full attention on the others").
add_test(NAME cli.describe.window_layers_mtp COMMAND trainsim describe --hardware h100-dgx
         --model ${CMAKE_CURRENT_SOURCE_DIR}/../data/window_mtp_model.json --gpus 1 --seq-len 1024)
set_tests_properties(cli.describe.window_layers_mtp PROPERTIES
  PASS_REGULAR_EXPRESSION "attention    sliding window of 64 tokens on every layer, full attention in the 1 multi-token-prediction module\n")
add_test(NAME cli.describe.biases COMMAND trainsim describe --hardware h100-dgx
         --model qwen2-7b --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.biases PROPERTIES
  PASS_REGULAR_EXPRESSION "biases       Q, K, V\nparameters   7615616512 ")

# Placement on GB200 NVL72 (docs/placement.md): llama2-7b, tp 16, pp 4 on 256 GPUs. On full
# racks of 72 the TP group of ranks 64-79 has 8 GPUs in each of two racks, and the DP groups
# (16 apart over 64 ranks) starting at 64-79, 128-143 and 192-207 span two, the worst of them
# (64, 80, 96, 112) with 1 rank in the first rack and 3 in the second; filling 16 of each
# rack's 18 trays (--nodes-per-domain 16: 64 GPUs per rack) puts every group in one rack.
set(nvl72_args --hardware gb200-nvl72 --model llama2-7b --gpus 256 --tp 16 --pp 4
               --seq-len 4096)
add_test(NAME cli.describe.nvl72_full_racks COMMAND trainsim describe ${nvl72_args})
set_tests_properties(cli.describe.nvl72_full_racks PROPERTIES PASS_REGULAR_EXPRESSION
  "placement +dp group: 4 ranks on 4 nodes in 2 NVLink domains \\(1 to 3 ranks each\\), 1 per node\; tp group: 16 ranks on 4 nodes in 2 NVLink domains\n")
# The same, on stderr: the TP kind straddles, and 16 trays per rack is the largest segment that
# puts every TP group of 16 in one rack (16 divides 4 x 16, not 4 x 17 or 4 x 18).
add_test(NAME cli.describe.nvl72_straddle_note COMMAND trainsim describe ${nvl72_args})
set_tests_properties(cli.describe.nvl72_straddle_note PROPERTIES PASS_REGULAR_EXPRESSION
  "note: some tp groups span 2 NVLink domains \\(16 ranks, 8 in one\\), where rank 0's spans 1: the job's hosts in each domain do not fall on the groups' boundaries\; --nodes-per-domain 16 avoids it \\(docs/placement.md\\)\n")
# On hosts of 8 GPUs (h100-dgx), tp 2 cp 2 pp 4 on 144 GPUs: the DP groups of 9 ranks 4 apart
# hold 2 ranks on each of four hosts and 1 on a fifth (0, 4, ..., 32).
add_test(NAME cli.describe.dgx_uneven_dp COMMAND trainsim describe --hardware h100-dgx
         --model llama2-7b --seq-len 4096 --gpus 144 --tp 2 --cp 2 --pp 4)
set_tests_properties(cli.describe.dgx_uneven_dp PROPERTIES PASS_REGULAR_EXPRESSION
  "placement +dp group: 9 ranks on 5 nodes, 1 to 2 per node\; tp group: 2 ranks on 1 node\; cp group: 2 ranks on 1 node\n")
add_test(NAME cli.describe.nvl72_segment COMMAND trainsim describe ${nvl72_args}
         --nodes-per-domain 16 --format json)
set_tests_properties(cli.describe.nvl72_segment PROPERTIES PASS_REGULAR_EXPRESSION
  "\"tp\": {[ \n]*\"domains\": 1,[ \n]*\"min_ranks_per_domain\": 16,[ \n]*\"nodes\": 4,[ \n]*\"ranks\": 16,[ \n]*\"ranks_per_domain\": 16,[ \n]*\"ranks_per_node\": 4[ \n]*}.*\"cluster\": {[^}]*\"nodes_per_domain\": 16")
set_tests_properties(cli.describe.nvl72_segment PROPERTIES FAIL_REGULAR_EXPRESSION "note:")

# Each stage's groups where they lie otherwise than the job's worst (docs/placement.md): 216
# GB200 GPUs in racks of 72 (18 trays of 4), pp 4, tp 1: each stage holds 54 consecutive ranks,
# so stage 0 (ranks 0-53) and stage 3 (162-215) sit in one rack, stage 1 (54-107) in racks 0 and
# 1 (18 + 36 ranks) and stage 2 (108-161) in racks 1 and 2 (36 + 18).
set(gb200_pp4 --hardware gb200-nvl72 --model llama2-7b --gpus 216 --pp 4 --seq-len 4096
              --global-batch 864 --sharding full_shard)
add_test(NAME cli.describe.stage_placement COMMAND trainsim describe ${gb200_pp4})
set_tests_properties(cli.describe.stage_placement PROPERTIES PASS_REGULAR_EXPRESSION
  "placement +dp group: 54 ranks on 14 nodes in 2 NVLink domains \\(18 to 36 ranks each\\)[^\n]*\n +stages 0 and 3: dp group: 54 ranks on 14 nodes in 1 NVLink domain, [^\n]*\n +stages 1 and 2: dp group: 54 ranks on 14 nodes in 2 NVLink domains \\(18 to 36 ranks each\\)")
add_test(NAME cli.describe.stage_placement_json COMMAND trainsim describe ${gb200_pp4}
         --format json)
set_tests_properties(cli.describe.stage_placement_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"stages\": \\[[^]]*\"dp\": {[^}]*\"domains\": 1,[^]]*\"stage\": 0[^]]*\"dp\": {[^}]*\"domains\": 2,[^]]*\"stage\": 1")
# A mixture-of-experts model's stages list their ep and expert_dp groups too, as the text's stage
# lines do: deepseek-v3 on 144 GB200 GPUs (two racks of 72), pp 3, ep 16, tp 1: stage 1 holds
# ranks 48-95, so its ep group of ranks 64-79 has 8 ranks on each side of the rack boundary at
# 72, while stages 0 (0-47) and 2 (96-143) sit in one rack each.
add_test(NAME cli.describe.stage_placement_ep_json COMMAND trainsim describe --hardware gb200-nvl72
         --model deepseek-v3 --gpus 144 --pp 3 --ep 16 --seq-len 4096 --format json)
set_tests_properties(cli.describe.stage_placement_ep_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"stages\": \\[[^]]*\"ep\": {[^}]*\"domains\": 1,[^}]*},[ \n]*\"expert_dp\": {[^}]*\"domains\": 1,[^]]*\"stage\": 0[^]]*\"ep\": {[^}]*\"domains\": 2,[^}]*\"min_ranks_per_domain\": 8,[^}]*},[ \n]*\"expert_dp\": {[^}]*\"domains\": 2,[^]]*\"stage\": 1")
# Where every stage's groups lie alike (H100 nodes of 8, stages of 16 ranks), no stage lines.
add_test(NAME cli.describe.stage_placement_alike COMMAND trainsim describe --hardware h100-dgx
         --model llama2-7b --gpus 64 --pp 4 --seq-len 4096 --global-batch 64)
set_tests_properties(cli.describe.stage_placement_alike PROPERTIES
  PASS_REGULAR_EXPRESSION "placement +dp group: 16 ranks on 2 nodes, 8 per node\; tp group: 1 rank on 1 node\n\nmemory"
  FAIL_REGULAR_EXPRESSION "stage 0:|stages 0")
# Another family's expert key in a Hugging Face config is not read, and the note says so (a
# Mixtral config's n_shared_experts 2 made it 58.0B; tests/model/moe_counts_test.cpp checks the
# shape): the built-in mixtral-8x7b's 46,702,792,704 parameters.
file(READ ${CMAKE_CURRENT_SOURCE_DIR}/../data/hf_mixtral_8x7b_moe_config.json mixtral_config)
string(JSON mixtral_config SET "${mixtral_config}" n_shared_experts 2)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/hf_mixtral_foreign_key.json "${mixtral_config}")
add_test(NAME cli.describe.hf_foreign_expert_key
         COMMAND trainsim describe --model ${CMAKE_CURRENT_BINARY_DIR}/hf_mixtral_foreign_key.json
                 --hardware h100-dgx --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.hf_foreign_expert_key PROPERTIES PASS_REGULAR_EXPRESSION
  "note: [^\n]*hf_mixtral_foreign_key\\.json: Hugging Face keys ignored [^\n]*n_shared_experts \\(not a mixtral key\\)[^\n]*\n.*46702792704 total")
# A mixture-of-experts plan's expert groups (parallel::Placement): mixtral-8x7b on 64 H100, tp 2,
# ep 8: the EP group is 8 data-parallel ranks tp = 2 apart, ranks 0-14 of 16, so 2 nodes with 4
# each; the expert-data-parallel group is the dp / ep = 32 / 8 = 4 ranks holding the same
# experts, tp x ep = 16 apart, one per node on 4 nodes.
add_test(NAME cli.describe.moe_placement
         COMMAND trainsim describe --hardware h100-dgx --model mixtral-8x7b --gpus 64 --tp 2
                 --sequence-parallel --ep 8 --seq-len 4096)
set_tests_properties(cli.describe.moe_placement PROPERTIES PASS_REGULAR_EXPRESSION
  "tp group: 2 ranks on 1 node\; ep group: 8 ranks on 2 nodes\; expert_dp group: 4 ranks on 4 nodes\n")
# One GPU is "1 GPU" (it said "1 GPUs", where the placement line already said "1 rank").
add_test(NAME cli.describe.one_gpu COMMAND trainsim describe --hardware h100-dgx
         --model llama2-7b --gpus 1 --seq-len 4096)
set_tests_properties(cli.describe.one_gpu PROPERTIES PASS_REGULAR_EXPRESSION
  "\ncluster      1 GPU of h100-dgx, ")

# A plan needing more than 2^53 bytes per GPU: 16,777,216 tokens per micro-batch held 2,000 at
# once under GPipe (llama2-7b, 1.93e19 B on stage 1). The byte counts of the JSON are whole
# numbers, and past 2^63 the conversion gave -9223372036854775808 for activations and total
# (describe, run, a sweep's row, which merge then refused as damaged). Refused as a problem of
# the plan at the key it grows with, naming the flags behind it; run says the same.
trainsim_expect_exit(cli.describe.memory_past_exact_bytes 3
  "^error: command line \\(--gpus, --model, --schedule, --pp, --global-batch, --micro-batch, --seq-len\\): /training/micro_batch: the plan needs 16\\.8 EiB per GPU on stage 1, past the 8 PiB \\(2\\^53 bytes\\) up to which trainsim counts bytes exactly\\; expected a plan that needs less[^\n]*\n$"
  describe --hardware h100-dgx --model llama2-7b --gpus 2 --pp 2 --schedule gpipe
  --seq-len 16777216 --micro-batch 256 --global-batch 512000 --format json)
trainsim_expect_exit(cli.run.memory_past_exact_bytes 3
  "^error: command line [^\n]*: /training/micro_batch: the plan needs 16\\.8 EiB per GPU on stage 1, past the 8 PiB"
  run --hardware h100-dgx --model llama2-7b --gpus 2 --pp 2 --schedule gpipe
  --seq-len 16777216 --micro-batch 256 --global-batch 512000 --format json)
# In a sweep the plan is an invalid row with no memory, which merge reads back.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/memory_past_exact.json [=[
{"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 2},
          "training": {"seq_len": 16777216, "micro_batch": 256, "global_batch": 512000},
          "parallel": {"pp": 2, "pipeline_schedule": "gpipe"}},
 "axes": {"parallel.tp": [1]}}
]=])
add_test(NAME cli.sweep.memory_past_exact_bytes
         COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/memory_past_exact.json)
set_tests_properties(cli.sweep.memory_past_exact_bytes PROPERTIES PASS_REGULAR_EXPRESSION
  "\n0,h100-dgx,llama2-7b,2,1,1,2,1,1,256,512000,16777216,bf16,adamw,none,,gpipe,1,none,false,,+\"invalid: /training/micro_batch: the plan needs 16\\.8 EiB per GPU on stage 1, past the 8 PiB")
# The text's FLOPs per token is the JSON's value rounded: gpt-oss-120b at seq 4096 has
# 34,643,888,358.54 (model_flops_per_token), which the text truncated to ...358.
add_test(NAME cli.describe.flops_rounded COMMAND trainsim describe --hardware h100-dgx
         --model gpt-oss-120b --gpus 8 --seq-len 4096 --micro-batch 1)
set_tests_properties(cli.describe.flops_rounded PROPERTIES PASS_REGULAR_EXPRESSION
  "\nmodel FLOPs  34643888359 per token \\(34\\.6 GFLOP")
# A config's "_name_or_path" (transformers writes it) and a "notes" key were accepted without a
# word: trainsim's documenting keys are allowed in every object of its own files, and in a
# Hugging Face config they are ignored keys like the others, named on the note line.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/hf_underscore.json
  "{\"_name_or_path\": \"meta-llama/Meta-Llama-3-8B\", \"model_type\": \"llama\", \"hidden_size\": 4096,
    \"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8,
    \"intermediate_size\": 14336, \"vocab_size\": 128256, \"notes\": \"x\"}\n")
add_test(NAME cli.describe.hf_documenting_keys_named
         COMMAND trainsim describe --model ${CMAKE_CURRENT_BINARY_DIR}/hf_underscore.json
                 --hardware h100-dgx --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.hf_documenting_keys_named PROPERTIES PASS_REGULAR_EXPRESSION
  "note: [^\n]*hf_underscore\\.json: Hugging Face keys ignored \\(no effect on cost\\): _name_or_path, notes\\; docs/models.md")

# A stack whose workspace leaves nothing of the HBM fails at any headroom: with
# --memory-headroom the plan's check still names the workspace (exit 3), where the flag was
# blamed (exit 2, "0.1 of HBM keeps 3276.8 MiB free, more than the 0.0 MiB ...").
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/workspace_40g_stack.json
  "{\"extends\": \"pytorch-2.3-fsdp\", \"id\": \"s\", \"memory\": {\"workspace\": \"40 GiB\"}}\n")
trainsim_expect_exit(cli.describe.headroom_flag_names_workspace 3
  "^error: command line \\(--hardware, --stack\\): /stack: stack '[^']*workspace_40g_stack.json' memory.workspace 40.0 GiB [^\n]*leaves nothing of the 32.0 GiB HBM"
  describe --model llama2-7b --hardware v100-dgx --nodes 4 --seq-len 1024 --micro-batch 1
  --sharding full_shard --stack ${CMAKE_CURRENT_BINARY_DIR}/workspace_40g_stack.json
  --memory-headroom 0.1)
# The placement line gives the CP group where cp > 1 (8 ranks of stride 2 on trays of 4 GPUs: 4
# trays; 144 GPUs in racks of 72: 2 NVLink domains), as the note on straddling groups names it.
add_test(NAME cli.describe.cp_group COMMAND trainsim describe --model llama2-7b
         --hardware gb200-nvl72 --gpus 144 --cp 8 --tp 2 --seq-len 8192)
set_tests_properties(cli.describe.cp_group PROPERTIES PASS_REGULAR_EXPRESSION
  "tp group: 2 ranks on 1 node in 1 NVLink domain. cp group: 8 ranks on 4 nodes in 2 NVLink domains")
# Korthikanti et al. 2022 §4.3 on GPT-3 175B (s 2048, b 1, h 12288, a 96, L 96, t 8, p 8, SP,
# megatron-lm's unfused attention with dropout): the first stage of 1F1B holds p micro-batches
# of its L/p layers, sbhL/t (34 + 5as/h) = 2048 x 12288 x 96 / 8 x (34 + 80) = 34,426,847,232 B,
# and the input embedding's dropout mask, sbhp/t = 25,165,824 B: 34,452,013,056.
add_test(NAME cli.describe.first_stage_embedding_dropout COMMAND trainsim describe
         --hardware a100-dgx --model gpt3-175b --stack megatron-lm --gpus 512 --tp 8 --pp 8
         --sequence-parallel --seq-len 2048 --micro-batch 1 --global-batch 512 --sharding none
         --format json)
set_tests_properties(cli.describe.first_stage_embedding_dropout PROPERTIES
  PASS_REGULAR_EXPRESSION "\"activations_bytes\": 34452013056,")
# DeepSpeed ZeRO-3 (deepspeed-zero3-2021) gathers GPT-3 175B one weight tensor at a time; the
# tensors under its persistence threshold of 1e5 elements, each layer's biases and LayerNorms
# (3h + h + 4h + h + 2 x 2h = 13h = 159,744 elements), stay whole on every rank: bf16 parameters
# 2 x (174,604,259,328 / 64 + 96 x 159,744 x 63/64) = 5,456,383,104 + 30,191,616 B, and the
# same for their gradients, which an AllReduce leaves whole.
add_test(NAME cli.describe.zero3_persistent_tensors COMMAND trainsim describe
         --hardware a100-dgx --model gpt3-175b --stack deepspeed-zero3-2021 --gpus 64
         --seq-len 2048 --micro-batch 1 --sharding full_shard --format json)
set_tests_properties(cli.describe.zero3_persistent_tensors PROPERTIES
  PASS_REGULAR_EXPRESSION "\"gradients_bytes\": 5486574720,.*\"parameters_bytes\": 5486574720,")
# Under shard_grad_op the whole parameters are in the buffers already; the persistent tensors'
# gradients, reduced whole, add 30,191,616 B as under full_shard.
add_test(NAME cli.describe.zero3_persistent_tensors_shard_grad_op COMMAND trainsim describe
         --hardware a100-dgx --model gpt3-175b --stack deepspeed-zero3-2021 --gpus 64
         --seq-len 2048 --micro-batch 1 --sharding shard_grad_op --format json)
set_tests_properties(cli.describe.zero3_persistent_tensors_shard_grad_op PROPERTIES
  PASS_REGULAR_EXPRESSION "\"gradients_bytes\": 5486574720,.*\"parameters_bytes\": 5456383104,")

# N is what a token is multiplied by: with tied embeddings (llama3.2-1b) it equals the total, the
# one matrix counted once as the LM head; "N = 1235814400, less the input embedding" read as a
# subtraction that was not made.
add_test(NAME cli.describe.n_wording
         COMMAND trainsim describe --hardware h100-dgx --model llama3.2-1b --gpus 8 --seq-len 4096)
set_tests_properties(cli.describe.n_wording PROPERTIES PASS_REGULAR_EXPRESSION
  "parameters +1235814400 \\(N = 1235814400: the parameters a token is multiplied by, the LM head in, the input embedding's lookup out\\)")
# The stack is among what the activations' bytes depend on: megatron-lm's unfused attention keeps
# the s x s scores (pytorch-2.3-fsdp's fused kernel runs the same plan, 66.6 TiB, not fitting),
# and a command line's --stack was not named.
trainsim_expect_exit(cli.run.memory_past_exact_bytes_stack 3
  "^error: command line \\(--gpus, --model, --stack, --seq-len\\): /training/micro_batch: the plan needs 1\\.25 EiB per GPU, past the 8 PiB"
  run --hardware h100-dgx --model llama2-7b --gpus 1 --seq-len 16777216 --stack megatron-lm)
