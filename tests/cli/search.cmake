# trainsim search: table, JSON, --explain and bad restrictions.
set(search_small --hardware h100-dgx --model llama2-7b --gpus 16 --global-batch 32 --seq-len 2048
    --tp 1,2 --pp 1,2 --micro-batch 1,2 --sharding shard_grad_op --recompute none --jobs 2)
add_test(NAME cli.search.table COMMAND trainsim search ${search_small} --top 3)
# tp 2 x pp 3 schedules (pp 1: one; pp 2: 1f1b, interleaved v2) x 2 micro-batches = 12 plans.
# llama2-7b is dense: no ep in the count (ep 1 only) nor among the columns (dp, then schedule).
set_tests_properties(cli.search.table PROPERTIES PASS_REGULAR_EXPRESSION
  "12 plans enumerated[^\n]*\n\nrank +tp +pp +cp +dp +schedule [^\n]*\n +1 +[12] +[12] +1 ")
# The dp column widens to its widest value: a data-parallel degree of 1,048,576 (seven digits
# in a column of five) pushed the row out of line under the header.
add_test(NAME cli.search.table_wide_dp COMMAND trainsim search --hardware h100-dgx
         --model llama2-7b --gpus 1048576 --global-batch 1048576 --seq-len 2048 --tp 1 --pp 1
         --sharding zero1 --recompute none --micro-batch 1 --top 1)
set_tests_properties(cli.search.table_wide_dp PROPERTIES PASS_REGULAR_EXPRESSION
  "\nrank  tp  pp  cp      dp schedule [^\n]*\n   1   1   1   1 1048576 - ")
# Every column widens to its widest value: "interleaved v16" (15 characters in a column of 14)
# pushed sp and the columns after it one place right of their headers.
add_test(NAME cli.search.table_wide_schedule COMMAND trainsim search --hardware h100-dgx
         --model llama2-7b --gpus 16 --global-batch 64 --seq-len 2048 --tp 1 --pp 2
         --micro-batch 1 --sharding zero1 --recompute none --schedule interleaved
         --virtual-stages 16 --top 1)
set_tests_properties(cli.search.table_wide_schedule PROPERTIES PASS_REGULAR_EXPRESSION
  "\nrank  tp  pp  cp    dp schedule         sp  mb sharding [^\n]*\n   1   1   2   1     8 interleaved v16   -   1 zero1 ")
add_test(NAME cli.search.explain_json
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=search;${search_small};--top;3;--exhaustive"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/search_explain_json
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/search_explain_json.cmake)
add_test(NAME cli.search.json COMMAND trainsim search ${search_small} --format json --top 2)
set_tests_properties(cli.search.json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"plans\": \\[\n +\\{\n +\"rank\": 1,.*\"scenario\": \\{.*\"tokens_per_s\": [0-9].*\"rank\": 2,")
# llama2-70b on 64 GPUs cannot train with pure data parallelism (the gathered bf16 weights
# alone are 138 GB): --explain says so with the numbers.
add_test(NAME cli.search.explain
         COMMAND trainsim search --hardware h100-dgx --model llama2-70b --gpus 64 --global-batch 64
                 --seq-len 4096 --tp 1,8 --pp 1,4 --micro-batch 1 --sharding shard_grad_op
                 --recompute none --schedule 1f1b --explain --jobs 2)
set_tests_properties(cli.search.explain PROPERTIES PASS_REGULAR_EXPRESSION
  "Why the best plan \\(tp=[48][^\n]*\n +Pure data parallelism \\(tp=1 pp=1 cp=1 dp=64[^\n]*cannot run: out_of_memory: needs [0-9.]+ GiB")

# deepseek-v3 on 256 H200 (fp8, megatron-core), global batch 2,048: the best model-parallel plan
# (pp 8, dp 32, ep 8, interleaved v 2; pp 4, dp 64 with 4 micro-batches of 8 was it until the
# interleaved schedule ran all its forwards first where micro-batches equal pp, as Megatron
# does) exposes less communication than the best plan (pure data parallelism for the dense
# layers, ep 16) although its data-parallel calls take longer in all (the routed experts' 4.2 s
# more on 4 ranks instead of 16, 8 micro-batches of 8 against 1 per rank, each gathering
# again; the dense layers' 0.4 s less on 32 ranks, given apart): the saving is more
# communication beside compute (fewer, smaller expert all-to-alls), not a shorter ring, which
# --explain claimed. (On H100 the reference plans of this case no longer fit once FSDP's root
# unit is counted held from forward to backward.)
add_test(NAME cli.search.explain_dp_longer
         COMMAND trainsim search --hardware h200-dgx --model deepseek-v3 --gpus 256
                 --global-batch 2048 --seq-len 4096 --precision fp8 --stack megatron-core
                 --top 5 --explain --jobs 2)
set_tests_properties(cli.search.explain_dp_longer PROPERTIES PASS_REGULAR_EXPRESSION
  "data-parallel [0-9.]+ s on 256 ranks -> [0-9.]+ s on 32 ranks \\([^)]*\\)\\; the routed experts' data-parallel [0-9.]+ s on 16 ranks -> [0-9.]+ s on 4 ranks\\;[^\n]*\n +- Exposed communication: [^\n]*\\(-[0-9.]+ s\\)\\. The data-parallel collectives take longer in all \\([0-9.]+ -> [0-9.]+ s\\), but more of the communication runs beside compute: [0-9.]+ of [0-9.]+ s hidden, against [0-9.]+ of [0-9.]+ s\\.")
set_tests_properties(cli.search.explain_dp_longer PROPERTIES FAIL_REGULAR_EXPRESSION
  "shorter rings")

# Expert parallelism beside tensor parallelism needs sequence parallelism (Megatron-Core refuses
# it otherwise): the automatic ep values skip such plans instead of counting them invalid.
# mixtral-8x7b on 64 GPUs, tp 1 or 2, sp off or on: tp 1 (dp 64) tries ep 1, 2, 4, 8 once (no
# sequence parallelism without tp); tp 2 (dp 32) ep 1 with sp off and on, and ep 2, 4, 8 with sp
# on only: 4 + 2 + 3 = 9 plans, none invalid (12 and 3 invalid when they were enumerated).
add_test(NAME cli.search.ep_tp_needs_sp
         COMMAND trainsim search --hardware h100-dgx --model mixtral-8x7b --gpus 64 --seq-len 4096
                 --global-batch 256 --stack megatron-core --sequence-parallel false,true
                 --tp 1,2 --pp 1 --micro-batch 1 --recompute full --sharding zero1)
set_tests_properties(cli.search.ep_tp_needs_sp PROPERTIES PASS_REGULAR_EXPRESSION
  "\n9 plans enumerated\; 0 invalid,")

# Pure data parallelism outside the searched space (--tp 2,4) takes a micro-batch that divides
# its share of the global batch: the best plan's 8 sequences at dp 8 made dp 16 'invalid'
# (16 x 8 = 128 of 64), and --explain said model parallelism was needed to run at all, where
# pure data parallelism at micro-batch 4 is the faster plan.
add_test(NAME cli.search.explain_dp_micro_batch
         COMMAND trainsim search --hardware h100-dgx --model llama2-7b --gpus 16 --global-batch 64
                 --seq-len 4096 --tp 2,4 --explain --top 2 --jobs 2)
set_tests_properties(cli.search.explain_dp_micro_batch PROPERTIES PASS_REGULAR_EXPRESSION
  "Against pure data parallelism \\(tp=1 pp=1 cp=1 dp=16 mb=4 [^\n]*\n +The best plan of the searched space does not beat pure data parallelism")
set_tests_properties(cli.search.explain_dp_micro_batch PROPERTIES FAIL_REGULAR_EXPRESSION
  "Model parallelism is needed")
# Out of memory at the best plan's micro-batch (8 at dp 64: 148 GiB), pure data parallelism
# fits at micro-batch 2 (48.4 GiB) and runs faster (800,476 against 763,250 tokens/s):
# --explain said model parallelism was needed.
add_test(NAME cli.search.explain_dp_smaller_micro_batch
         COMMAND trainsim search --hardware h100-dgx --model llama2-7b --gpus 64 --global-batch 512
                 --seq-len 4096 --tp 2 --pp 1 --explain --top 2 --jobs 2)
set_tests_properties(cli.search.explain_dp_smaller_micro_batch PROPERTIES PASS_REGULAR_EXPRESSION
  "Against pure data parallelism \\(tp=1 pp=1 cp=1 dp=64 mb=2 [^\n]*\n +The best plan of the searched space does not beat pure data parallelism")
set_tests_properties(cli.search.explain_dp_smaller_micro_batch PROPERTIES FAIL_REGULAR_EXPRESSION
  "Model parallelism is needed")
# llama3-8b on 4,096 GPUs with a global batch of 2,048: pure data parallelism cannot run because
# dp 4,096 exceeds the sequences (an 8B plan needs 26.5 of 75.2 GiB): --explain says so, where
# it blamed memory.
add_test(NAME cli.search.explain_not_memory
         COMMAND trainsim search --hardware h100-dgx --model llama3-8b --gpus 4096
                 --global-batch 2048 --seq-len 8192 --tp 1,4 --pp 1 --micro-batch 1
                 --sharding zero1 --recompute none --explain --jobs 2)
set_tests_properties(cli.search.explain_not_memory PROPERTIES PASS_REGULAR_EXPRESSION
  "cannot run: invalid: /training/global_batch: [^\n]*\n +Model parallelism is needed for the plan to run at all \\(the problem above\\): the best plan spreads the GPUs over tp x pp x cp = 4 and dp 1024")
set_tests_properties(cli.search.explain_not_memory PROPERTIES FAIL_REGULAR_EXPRESSION
  "split the model state and activations")

# When pure data parallelism wins, --explain compares it with the best model-parallel plan:
# TP = 2 halves the data-parallel group of 16 GPUs (placement: dp = gpus / tp = 8) and adds
# tensor-parallel collectives, so that line must show 16 -> 8 ranks and a non-zero TP time.
add_test(NAME cli.search.explain_data_parallel_wins
         COMMAND trainsim search --hardware h100-dgx --model llama2-7b --gpus 16 --global-batch 32
                 --seq-len 2048 --tp 1,2 --pp 1 --micro-batch 2,4 --sharding shard_grad_op
                 --recompute none --explain --jobs 2)
set_tests_properties(cli.search.explain_data_parallel_wins PROPERTIES PASS_REGULAR_EXPRESSION
  "It is pure data parallelism[^\n]*\n +The best model-parallel plan \\(tp=2 [^\n]*x the tokens/s[^\n]*\n +- Collective time per iteration[^\n]*data-parallel [0-9.]+ s on 16 ranks -> [0-9.]+ s on 8 ranks[^\n]*tensor/context/pipeline 0\\.000 s -> 0\\.0*[1-9]")

# --explain names the causes: llama3-70b on 64 GPUs, global batch 128, micro-batch 1. Pure data
# parallelism (dp 64) runs 128 / 64 = 2 micro-batches and fits only with full recomputation;
# tp 2 (dp 32) runs 128 / 32 = 4, and under full_shard each one gathers the parameters again, so
# its data-parallel calls double, while its split weights leave room to keep every activation.
add_test(NAME cli.search.explain_causes
         COMMAND trainsim search --hardware h100-dgx --model llama3-70b --gpus 64 --global-batch 128
                 --seq-len 4096 --tp 1,2 --pp 1 --micro-batch 1 --sharding full_shard
                 --recompute none,full --explain --top 1 --jobs 2)
set_tests_properties(cli.search.explain_causes PROPERTIES PASS_REGULAR_EXPRESSION
  "Gradient accumulation: 2 -> 4 micro-batches per step per data-parallel rank\; data-parallel collective calls ([0-9]+) -> [0-9]+ per iteration \\(full_shard -> full_shard: the parameters are gathered again for every micro-batch\\)\\.\n +- Recomputation: full -> none, recomputed share of executed FLOPs [1-9][0-9.]*% -> 0\\.0%")

# Mixture of experts: mixtral-8x7b (8 experts) on 64 H100, tp 1 or 2, no pipeline: dp 64 or 32,
# and ep in the divisors of dp that divide 8: 1, 2, 4, 8 for each, so 2 x 4 = 8 plans. Under
# zero1 tp 1 with ep 1 holds all 46.7 B parameters in bf16 (93 GB > 80 GB): it cannot fit, and
# the table lists ep after dp.
set(search_moe --hardware h100-dgx --model mixtral-8x7b --gpus 64 --global-batch 64
    --seq-len 4096 --tp 1,2 --pp 1 --micro-batch 1 --sharding zero1 --recompute full --jobs 2)
add_test(NAME cli.search.moe COMMAND trainsim search ${search_moe} --top 8)
set_tests_properties(cli.search.moe PROPERTIES PASS_REGULAR_EXPRESSION
  "8 plans enumerated\; 0 invalid, [1-9] out of memory[^\n]*\n\nrank +tp +pp +cp +dp +ep +schedule [^\n]*\n(.*\n)? +[1-8] +[12] +1 +1 +(64|32) +[248] ")
# --explain names what ep costs (the all-to-all, with its exposed share) and saves (the experts'
# state per GPU), with numbers, against the same plan with ep 1.
add_test(NAME cli.search.moe_explain COMMAND trainsim search ${search_moe} --top 1 --explain)
set_tests_properties(cli.search.moe_explain PROPERTIES PASS_REGULAR_EXPRESSION
  "Expert parallelism \\(ep=[248]\\): each GPU holds 8 / [248] = [124] routed experts[^\n]*\n +- Costs: all-to-all dispatch and combine, [1-9][0-9]* calls of [^\n]* per iteration[^\n]*: [0-9.]+ s per iteration, [0-9.]+% of it exposed[^\n]*\n +- Saves: parameters [0-9.]+ GiB -> [0-9.]+ GiB")
# An explicit --ep list: ep 3 divides neither dp nor the 8 experts, so its plans are invalid.
add_test(NAME cli.search.moe_ep_list COMMAND trainsim search ${search_moe} --ep 3,8)
set_tests_properties(cli.search.moe_ep_list PROPERTIES PASS_REGULAR_EXPRESSION
  "4 plans enumerated\; 2 invalid,")

set(search_base --hardware h100-dgx --model llama2-7b --global-batch 32 --seq-len 2048)
trainsim_bad_input(search ep_dense "--ep: ep 2 needs a mixture-of-experts model, and 'llama2-7b' is dense; expected 1"
  ${search_base} --gpus 16 --ep 1,2)
trainsim_bad_input(search ep_list "--ep: not a list of positive integers; expected e.g. 1,2,4,8 .decimal, no zero before the first digit., got '0'"
  --hardware h100-dgx --model mixtral-8x7b --global-batch 32 --seq-len 2048 --gpus 16 --ep 0)
trainsim_bad_input(search tp_list "--tp: not a list of positive integers; expected e.g. 1,2,4,8 .decimal, no zero before the first digit., got '1,x'"
  ${search_base} --gpus 16 --tp 1,x)
trainsim_bad_input(search sharding "--sharding: unknown value 'shard_grad'; did you mean 'shard_grad_op'\\?"
  ${search_base} --gpus 16 --sharding shard_grad)
trainsim_bad_input(search no_cluster "/cluster: missing required key. expected --gpus or --nodes"
  ${search_base})
trainsim_bad_input(search shard "--shard: shard index out of range" ${search_base} --gpus 16 --shard 3/2)
# A profile priced at 0 USD/h (allowed: costs are then unknown) gives every plan $0 per million
# tokens, and --objective usd_per_million_tokens ranked them in enumeration order; refused.
file(READ ${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json search_free_hw)
string(JSON search_free_hw SET "${search_free_hw}" price_per_gpu_hour "\"0 USD/h\"")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/search_free_hw.json "${search_free_hw}")
trainsim_bad_input(search usd_objective_free "--objective: hardware '[^']*search_free_hw.json' has a price_per_gpu_hour of 0, so every plan costs \\$0 per million tokens\; expected a profile with a price, or another objective"
  --hardware ${CMAKE_CURRENT_BINARY_DIR}/search_free_hw.json --model llama2-7b --global-batch 32
  --seq-len 2048 --gpus 16 --objective usd_per_million_tokens)
# --top holds an int: 2^31 is past it, and the error says so instead of pointing to a range
# --help does not state.
trainsim_bad_input(search top_past_int "--top: cannot convert '2147483648'; expected a smaller integer \\(the value is past what the option holds\\)"
  ${search_base} --gpus 16 --top 2147483648)

# --memory-headroom: the search says which usable memory its plans were held to,
# (80 - 0.5 - 0.25 - 0.0625 - 0.25 x 80) x (1 - 0.05) = 56.2 GiB of 80 (reserved 23.8 GiB); with
# 90% kept free (6.8 GiB usable) no llama2-7b plan of the space fits, so none is recommended.
add_test(NAME cli.search.memory_headroom
         COMMAND trainsim search ${search_small} --top 1 --memory-headroom 0.25)
set_tests_properties(cli.search.memory_headroom PROPERTIES PASS_REGULAR_EXPRESSION
  "Memory per GPU: 56\\.2 GiB usable of 80\\.0 GiB HBM \\(reserved 23\\.8 GiB, headroom 25\\.0 %\\)")
trainsim_expect_exit(cli.search.memory_headroom_excludes 3 "no plan of the search space runs and fits in memory"
  search ${search_small} --memory-headroom 0.9)

# Its JSON states the same budget where no plan fits: (80 - 0.5 - 0.25 - 0.0625 - 0.9 x 80) GiB x
# (1 - 0.05) = 6.828125 GiB = 7,331,643,392 bytes usable, the headroom 0.9 x 80 GiB.
add_test(NAME cli.search.json_no_plan_memory
         COMMAND trainsim search ${search_small} --memory-headroom 0.9 --format json)
set_tests_properties(cli.search.json_no_plan_memory PROPERTIES PASS_REGULAR_EXPRESSION
  "\"memory_per_gpu\": \\{\n +\"capacity_bytes\": 85899345920,\n +\"headroom_fraction\": 0\\.9,[^}]*\"headroom_bytes\": 77309411328,[^}]*\\},\n +\"reserved_bytes\": [0-9]+,\n +\"usable_bytes\": 7331643392\n +\\},\n +\"plans\": \\[\\]")

# --explain's headline names what the best model-parallel plan loses most in: here not
# communication or bubble (they fall by 0.010 s) but compute (+0.136 s at micro-batch 1 against
# 2); it said the model parallelism did not pay for its communication.
add_test(NAME cli.search.explain_headline_compute
         COMMAND trainsim search --hardware h100-dgx --model qwen3-30b-a3b --gpus 32
                 --global-batch 128 --seq-len 4096 --stack megatron-core --top 3 --explain)
set_tests_properties(cli.search.explain_headline_compute PROPERTIES PASS_REGULAR_EXPRESSION
  "It is pure data parallelism[^\n]*: with this cluster and batch the best model-parallel plan loses more in compute than in communication or pipeline bubble \\(exposed communication and bubble -[0-9.]+ s, the rest of the iteration \\+[0-9.]+ s\\)\\.\n")

# A search whose every plan is invalid names the commonest problem instead of asking for a larger
# cluster: tp 3 divides no GPU count of 16 (nor the 32 heads).
trainsim_expect_exit(cli.search.all_invalid 3
  "^error: no plan of the search space runs and fits in memory; [0-9]+ of [0-9]+ plans are invalid; the commonest problem \\([0-9]+ plans\\), as its first plan has it: /parallel: gpus 16 do not split into tp x pp x cp = 3 x 1 x 1 = 3"
  search ${search_base} --gpus 16 --tp 3)
add_test(NAME cli.search.all_invalid_table COMMAND trainsim search ${search_base} --gpus 16 --tp 3)
set_tests_properties(cli.search.all_invalid_table PROPERTIES PASS_REGULAR_EXPRESSION
  "Invalid plans by the key at fault \\(the first plan's problem\\):\n  [0-9]+ x /parallel: gpus 16")
# One virtual stage is no interleaving: refused, where it was skipped (and with --pp 1,2 and only
# the interleaved schedule the pp 2 plans were neither searched nor counted).
trainsim_bad_input(search empty_space "--virtual-stages: the interleaved schedule needs 2 or more virtual stages per pipeline rank\\; expected counts of 2 or more, got 1 \\(for no interleaving, --schedule 1f1b\\)\n$"
  ${search_base} --gpus 16 --pp 1,2 --schedule interleaved --virtual-stages 1)
# Virtual stages without the interleaved schedule changed nothing: refused.
trainsim_bad_input(search stages_without_interleaving "--virtual-stages: only used with the interleaved schedule, which --schedule 'gpipe,1f1b' does not name"
  ${search_base} --gpus 16 --pp 2 --schedule gpipe,1f1b --virtual-stages 4)
# qwen3-30b-a3b on 32 H100: the best model-parallel plan (pp 2, ep 2) exposes more communication
# than pure data parallelism (0.030 s -> 0.222 s), so its bubble is not set against a saving it
# does not make (the line said "not smaller than the communication saved").
add_test(NAME cli.search.explain_bubble
         COMMAND trainsim search --hardware h100-dgx --model qwen3-30b-a3b --gpus 32
                 --global-batch 128 --seq-len 4096 --explain --top 4)
set_tests_properties(cli.search.explain_bubble PROPERTIES
  PASS_REGULAR_EXPRESSION "Exposed communication: [0-9.]+ s -> [0-9.]+ s per iteration \\(\\+[0-9.]+ s\\)[^\n]*\n  - Pipeline bubble: [^\n]*: the cost of filling and draining 2 stages, on top of the exposed communication added\\.\n")
# A stack whose own headroom is more than the HBM leaves (0.995 of 80 GiB = 81510.4 MiB, against
# the 81088 MiB the CUDA context, NCCL buffers and workspace leave): one line naming the stack,
# not every plan of the space invalid for it.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/search_tight_stack.json
  "{\"id\": \"tight\", \"extends\": \"pytorch-2.3-fsdp\", \"memory\": {\"headroom_fraction\": 0.995}}\n")
trainsim_expect_exit(cli.search.stack_headroom 3
  "^error: command line \\(--hardware, --stack\\): /stack: stack '[^']*search_tight_stack\\.json' memory\\.headroom_fraction 0\\.995 of HBM keeps 81510\\.4 MiB free[^\n]*; expected at most 0\\.98984375\n$"
  search --hardware h100-dgx --model llama2-7b --gpus 16 --global-batch 64 --seq-len 4096
  --stack ${CMAKE_CURRENT_BINARY_DIR}/search_tight_stack.json)
# Mixture of experts under a stack that launches each local expert's GEMM apart (megatron-core,
# moe.expert_gemm_launch 23 us): more EP leaves each GPU the same expert rows per token, and the
# explanation says why its compute still falls (fewer launches per grouped GEMM).
add_test(NAME cli.search.explain_expert_launches COMMAND trainsim search --model qwen3-30b-a3b
         --hardware b200-dgx --gpus 16 --global-batch 64 --seq-len 4096 --stack megatron-core
         --precision fp8 --top 3 --explain)
set_tests_properties(cli.search.explain_expert_launches PROPERTIES PASS_REGULAR_EXPRESSION
  "Expert GEMMs: the same rows per token [^\n]*over 16 experts instead of 128\\), but the stack launches them expert by expert \\(moe.expert_gemm_launch 23.0 us\\): each grouped GEMM takes at least its local experts' launches and FP8 casts, 128 -> 16 per forward GEMM: compute")
# A search sharded in one (--shard 0/1, or `auto` with one task) simulates every plan that fits,
# as any sharded search does, so that its counts are those merge sums for any N: llama3.2-1b on
# 8 H100, global batch 16, bounds 20 of 468 plans out unsharded (simulated 448, bounded 20) and
# none with --shard 0/1 (it had bounded the same 20).
add_test(NAME cli.search.one_shard_exhaustive
         COMMAND trainsim search --hardware h100-dgx --model llama3.2-1b --seq-len 1024 --gpus 8
                 --global-batch 16 --format json --shard 0/1)
set_tests_properties(cli.search.one_shard_exhaustive PROPERTIES PASS_REGULAR_EXPRESSION
  "\"simulated\": 468,\n  \"bounded\": 0,")
# Under an energy objective --explain compares in the objective's quantity first: it said
# "1.03x the tokens/s" where the best plan's edge was 1.24x the tokens/J.
add_test(NAME cli.search.explain_energy_ratio
         COMMAND trainsim search --hardware h100-dgx --model llama2-70b --gpus 64
                 --global-batch 128 --seq-len 4096 --objective tokens_per_joule --explain)
set_tests_properties(cli.search.explain_energy_ratio PROPERTIES PASS_REGULAR_EXPRESSION
  "Against pure data parallelism \\([^\n]*tokens/J\\): [0-9.]+x the tokens/J and [0-9.]+x the tokens/s\\; iteration")

# A precision the hardware cannot run fails every plan: one line naming it, as run gives it.
# Counted plan by plan, fp8 on 8 A100s lost to 'the commonest problem (432 plans) ...: /parallel:
# tp x pp x cp = 2 x 8 x 1 exceeds the 8 gpus' (360 plans named the precision).
trainsim_expect_exit(cli.search.precision_unsupported 3
  "^error: command line \\(--hardware, --precision\\): /training/precision: hardware 'a100-dgx' has no fp8 tensor cores"
  search --hardware a100-dgx --model llama3.2-1b --gpus 8 --global-batch 8 --seq-len 2048
  --precision fp8 --top 1)

# --explain where the model-parallel plan's communication stays hidden: llama3-8b on 16 H100,
# cp 2 adds 0.019 s of ring exchanges beside compute and exposed communication stays 0.043 s.
# The explanation said the compute stream waited for them, and called equal memory "more".
add_test(NAME cli.search.explain_hidden_cp COMMAND trainsim search --hardware h100-dgx
         --model llama3-8b --gpus 16 --global-batch 32 --seq-len 8192 --tp 1 --pp 1 --cp 1,2
         --top 2 --explain)
set_tests_properties(cli.search.explain_hidden_cp PROPERTIES PASS_REGULAR_EXPRESSION
  "\\(0\\.000 s\\)\\. The exposed communication does not change at the printed precision: the 0\\.019 s of model-parallel communication added runs beside compute or beside communication already exposed\\.\n.*\\(the same at the printed precision\\)")
# A difference below the printed precision either way is no change: -1.1e-16 s read "The
# data-parallel group shrinks from 16 to 16 ranks" (llama3.2-1b on 16 H100, cp 2, dp 8: 16
# groups both ways). A memory change names the part that moved: qwen3-30b-a3b's best plan at
# ep 1 holds every expert (weights, gradients and optimizer state up; activations down), where
# it read "more in-flight activations or gathered buffers"; with no plan bounded out, a rank is
# exact (it read "ranks below the plans that bounded the search").
add_test(NAME cli.search.explain_no_change_either_way COMMAND trainsim search --hardware h100-dgx
         --model llama3.2-1b --gpus 16 --global-batch 64 --seq-len 16384 --tp 1 --pp 1 --cp 1,2,4
         --sharding shard_grad_op --explain --top 3)
set_tests_properties(cli.search.explain_no_change_either_way PROPERTIES
  PASS_REGULAR_EXPRESSION "The exposed communication does not change at the printed precision"
  FAIL_REGULAR_EXPRESSION "shrinks from 16 to 16 ranks")
add_test(NAME cli.search.explain_memory_cause COMMAND trainsim search --hardware h200-dgx
         --model qwen3-30b-a3b --gpus 16 --global-batch 128 --seq-len 2048 --top 4 --explain)
set_tests_properties(cli.search.explain_memory_cause PROPERTIES PASS_REGULAR_EXPRESSION
  "Memory: [0-9.]+ GiB -> [0-9.]+ GiB per GPU of [0-9.]+ GiB usable \\(mostly more weights, gradients and optimizer state per GPU\\)")
add_test(NAME cli.search.explain_rank_unbounded COMMAND trainsim search --hardware h100-dgx
         --model qwen3-30b-a3b --gpus 64 --global-batch 32 --seq-len 4096 --explain --top 3)
set_tests_properties(cli.search.explain_rank_unbounded PROPERTIES
  PASS_REGULAR_EXPRESSION "\\) ranks 5"
  FAIL_REGULAR_EXPRESSION "ranks below the plans that bounded the search")
# With a mixture of experts the expert all-to-alls are named: qwen3-30b-a3b on 32 H100, the
# best plan (dp 32, ep 2) and the best model-parallel plan (pp 2, ep 2) both run them; the latter
# adds 0.009 s of pipeline sends and 0.005 s more all-to-all, and the explanation named the
# pipeline's alone as what the compute stream waits for (with the best plan at ep 1, before
# FSDP's root unit was counted held, 0.152 s of all-to-all were added).
add_test(NAME cli.search.explain_expert_all_to_all COMMAND trainsim search --hardware h100-dgx
         --model qwen3-30b-a3b --gpus 32 --global-batch 128 --seq-len 4096 --top 4 --explain)
set_tests_properties(cli.search.explain_expert_all_to_all PROPERTIES PASS_REGULAR_EXPRESSION
  "tensor/context/pipeline 0\\.000 s -> 0\\.009 s\\; expert all-to-all 0\\.148 s -> 0\\.152 s\\.\n[^\n]*unlike the 0\\.013 s of model-parallel communication added \\(0\\.005 s of it expert all-to-all\\), which the compute stream waits for\\.")

# Plans that run but do not fit make memory the thing to change, whatever the invalid plans
# lack: mixtral-8x7b on 1 H100 has 972 invalid plans (tp x pp x cp past 1 GPU) and 36 that run
# out of memory; the error named the invalid plans' problem, which no fix of the space can cure.
trainsim_expect_exit(cli.search.no_fit_names_memory 3
  "^error: no plan of the search space runs and fits in memory\\; 36 of 1008 plans run but do not fit, the least hungry \\(tp=1 pp=1 cp=1 dp=1 ep=1 mb=1 zero1 recompute=full\\) needs 697 GiB per GPU, more than the 75\\.2 GiB usable of 80\\.0 GiB of HBM\\; expected a larger cluster, a smaller global batch or a wider search space\n$"
  search --hardware h100-dgx --model mixtral-8x7b --gpus 1 --global-batch 16 --seq-len 2048)
# A headroom that leaves 3.40 MiB: the header said "0.0 GiB usable", and the error asked for a
# larger cluster without naming the headroom the user set.
add_test(NAME cli.search.headroom_leaves_little COMMAND trainsim search --hardware h100-dgx
         --model llama3.2-1b --gpus 1024 --global-batch 1024 --seq-len 128 --top 2
         --memory-headroom 0.9898)
set_tests_properties(cli.search.headroom_leaves_little PROPERTIES
  PASS_REGULAR_EXPRESSION "Memory per GPU: 3\\.40 MiB usable of 80\\.0 GiB HBM \\(reserved 80\\.0 GiB, headroom 99\\.0 %\\)"
  WILL_FAIL FALSE)
trainsim_expect_exit(cli.search.headroom_leaves_little_error 3
  "the least hungry \\(tp=8 pp=1 cp=1 dp=128 sp mb=1 full_shard recompute=full\\) needs 212 MiB per GPU, more than the 3\\.40 MiB usable of 80\\.0 GiB of HBM\\; expected a larger cluster, a smaller global batch or a wider search space, or less than the 99\\.0 % of HBM kept free \\(--memory-headroom\\)\n$"
  search --hardware h100-dgx --model llama3.2-1b --gpus 1024 --global-batch 1024 --seq-len 128
  --top 2 --memory-headroom 0.9898)
# The headroom is named only where less of it would make room: mixtral-8x7b on 1 H100 needs
# 698 GiB at least, more than the 80 GiB, whatever the 50% headroom.
trainsim_expect_exit(cli.search.headroom_not_the_cure 3
  "the least hungry [^\n]* needs 698 GiB per GPU, more than the 37\\.2 GiB usable of 80\\.0 GiB of HBM\\; expected a larger cluster, a smaller global batch or a wider search space\n$"
  search --hardware h100-dgx --model mixtral-8x7b --gpus 1 --global-batch 8 --seq-len 4096
  --memory-headroom 0.5)
# ep = dp: each EP rank holds its routed experts whole, never gathered (report::
# expert_sharding_degree 1); --explain said their state was "sharded over 1 ranks". qwen3-30b-a3b
# on 8 GPUs: the best plan is ep 8 under full_shard, against ep 1, whose experts full_shard
# shards over the 8 data-parallel ranks.
add_test(NAME cli.search.explain_experts_whole
         COMMAND trainsim search --hardware h100-dgx --model qwen3-30b-a3b --gpus 8 --global-batch 32
                 --seq-len 4096 --stack megatron-core --explain --jobs 2)
set_tests_properties(cli.search.explain_experts_whole PROPERTIES
  PASS_REGULAR_EXPRESSION "the routed experts: 16 instead of 128 per GPU, their state held whole instead of their state sharded over 8 ranks under full_shard\\)"
  FAIL_REGULAR_EXPRESSION "sharded over 1 ranks")

# Gradient accumulation of one micro-batch on both sides reads "1 -> 1 micro-batch" (it read
# "micro-batches"): llama2-7b on 64 H100 at a global batch of 256, whose best plan and pure-FSDP
# baseline both run one micro-batch per step per data-parallel rank.
add_test(NAME cli.search.explain_one_microbatch COMMAND trainsim search --hardware h100-dgx
  --model llama2-7b --gpus 64 --global-batch 256 --seq-len 4096 --explain)
set_tests_properties(cli.search.explain_one_microbatch PROPERTIES
  PASS_REGULAR_EXPRESSION "Gradient accumulation: 1 -> 1 micro-batch per step per data-parallel rank"
  FAIL_REGULAR_EXPRESSION "1 -> 1 micro-batches")
# A list item with a zero before its first digit is refused, as every numeric flag refuses one.
trainsim_bad_input(search leading_zero_list "--tp.*not a list of positive integers. expected e.g. 1,2,4,8 .decimal, no zero before the first digit., got '01,2'"
  --hardware h100-dgx --model llama2-7b --gpus 16 --global-batch 32 --seq-len 2048 --tp 01,2)
# --explain says what the best plan gains where it is not time: llama3-70b on 1,024 H100 under
# tokens_per_joule prefers tp 2, pp 8, 4.483 -> 4.735 s a step, for its lower power per GPU
# (652 -> 466 W); it said "the rest of the iteration gains more" of the slower plan.
add_test(NAME cli.search.explain_slower_by_objective COMMAND trainsim search --hardware h100-dgx
         --model llama3-70b --gpus 1024 --global-batch 1024 --seq-len 4096
         --objective tokens_per_joule --explain --top 1)
set_tests_properties(cli.search.explain_slower_by_objective PROPERTIES PASS_REGULAR_EXPRESSION
  "More communication is exposed and the iteration is slower \\(4\\.483 -> 4\\.735 s\\), but the plan draws less power per GPU \\(652 -> 466 W\\)")
# A mixture of experts whose best plan saves most in the expert all-to-all (qwen3-30b-a3b on 16
# H100, global batch 1,024: 4.154 -> 3.581 s of all-to-all, 0.131 s of data-parallel calls) is
# credited with it, not with the smaller data-parallel group.
add_test(NAME cli.search.explain_expert_all_to_all_saved COMMAND trainsim search --hardware h100-dgx
         --model qwen3-30b-a3b --gpus 16 --global-batch 1024 --seq-len 4096 --explain --top 1)
set_tests_properties(cli.search.explain_expert_all_to_all_saved PROPERTIES PASS_REGULAR_EXPRESSION
  "The expert all-to-all falls by 0\\.573 s, more than the data-parallel collectives \\(-0\\.131 s\\)")
# The routed experts' data-parallel groups are given apart (dp / ep ranks): qwen3-30b-a3b on 32
# H100 under megatron-core saves 0.250 s there (4 -> 2 ranks) and 0.028 s in the 32 -> 16 rank
# group, which the explanation credited with the whole.
add_test(NAME cli.search.explain_expert_data_parallel COMMAND trainsim search --hardware h100-dgx
         --gpus 32 --model qwen3-30b-a3b --stack megatron-core --global-batch 128 --seq-len 4096
         --explain)
set_tests_properties(cli.search.explain_expert_data_parallel PROPERTIES PASS_REGULAR_EXPRESSION
  "data-parallel 0\\.039 s on 32 ranks -> 0\\.011 s on 16 ranks \\(-0\\.028 s\\)\\; the routed experts' data-parallel 0\\.358 s on 4 ranks -> 0\\.108 s on 2 ranks\\;.*The routed experts' data-parallel group shrinks from 4 to 2 ranks, and their gradient and parameter collectives save 0\\.250 s")
# A mixture of experts that does not fit as pure data parallelism at the best plan's ep is tried
# at the others: DeepSeek-V3 on 256 GB200 fits at ep 256 (146.8 of 175.9 GiB), where --explain
# said model parallelism was needed.
add_test(NAME cli.search.explain_moe_baseline_other_ep COMMAND trainsim search
         --hardware gb200-nvl72 --gpus 256 --model deepseek-v3 --stack megatron-core
         --global-batch 1024 --seq-len 4096 --tp 1,2 --pp 4,8,16 --explain)
set_tests_properties(cli.search.explain_moe_baseline_other_ep PROPERTIES PASS_REGULAR_EXPRESSION
  "Against pure data parallelism \\(tp=1 pp=1 cp=1 dp=256 ep=256 mb=1 zero1 recompute=full, 271459 tokens/s\\)")
set_tests_properties(cli.search.explain_moe_baseline_other_ep PROPERTIES FAIL_REGULAR_EXPRESSION
  "Model parallelism is needed")
# Blanks around a list item are allowed on both sides ("2 " was refused where " 2" passed); a
# sign is not.
add_test(NAME cli.search.list_blanks COMMAND trainsim search --hardware h100-dgx --model llama2-7b
         --gpus 16 --global-batch 32 --seq-len 2048 --tp "2 " --pp " 1" --micro-batch 1
         --sharding zero1 --recompute none --top 1)
set_tests_properties(cli.search.list_blanks PROPERTIES PASS_REGULAR_EXPRESSION "\n +1 +2 +1 +1 +8 ")
trainsim_bad_input(search list_sign "--tp: not a list of positive integers.*got '\\+2'"
  --hardware h100-dgx --model llama2-7b --gpus 16 --global-batch 32 --seq-len 2048 --tp +2)
# Another tool's name for a sharding mode is said as the mode it is: "zero2" got "did you mean
# 'zero1'?", a mode with every gradient whole on every rank.
trainsim_bad_input(search sharding_alias "--sharding: unknown value 'zero2'. it is 'shard_grad_op' here. expected a comma-separated list of"
  ${search_base} --gpus 16 --sharding full_shard,zero2)
# The routed experts' group keeps its 2 ranks from the best plan to the model-parallel one and
# leaves a node instead (ep 8 -> ep 4 with pp 2 on 16 H100): it said "shrinks from 2 to 2 ranks".
add_test(NAME cli.search.explain_expert_group_nodes COMMAND trainsim search --hardware h100-dgx
         --model qwen3-30b-a3b --gpus 16 --global-batch 64 --seq-len 4096 --explain)
set_tests_properties(cli.search.explain_expert_group_nodes PROPERTIES
  PASS_REGULAR_EXPRESSION "The routed experts' data-parallel group keeps its 2 ranks on fewer nodes \\(2 nodes -> 1\\)"
  FAIL_REGULAR_EXPRESSION "shrinks from 2 to 2 ranks")
# A plan with ep 1 has no expert group: its experts' calls are data-parallel ones, not 0 s on
# 8 ranks credited as a saving.
add_test(NAME cli.search.explain_expert_group_ep1 COMMAND trainsim search --hardware h100-dgx
         --model qwen3-30b-a3b --gpus 32 --global-batch 128 --seq-len 4096 --ep 1,8 --explain)
set_tests_properties(cli.search.explain_expert_group_ep1 PROPERTIES
  PASS_REGULAR_EXPRESSION "the routed experts' data-parallel [0-9.]+ s on 4 ranks -> with the data-parallel calls \\(ep 1\\)"
  FAIL_REGULAR_EXPRESSION "group shrinks from 4 to 8 ranks")
# A cluster the hardware cannot hold fails every plan: one line naming the flag, as run gives
# it ("1008 of 1008 plans are invalid" before).
trainsim_expect_exit(cli.search.cluster_not_whole_nodes 3
  "^error: command line \\(--gpus\\): /cluster/gpus: gpus 12 is not a whole number of 8-GPU nodes. expected a multiple of 8\n$"
  search ${search_base} --gpus 12)
# The JSON names what was searched, as run's context does, also where no plan fits (the
# document held the versions alone and "plans": []).
trainsim_expect_exit(cli.search.json_context_no_plan 3 ""
  search --hardware h100-dgx --model llama2-70b --gpus 1 --global-batch 8 --seq-len 4096 --format json)
add_test(NAME cli.search.json_context COMMAND trainsim search --hardware h100-dgx
         --model llama2-70b --gpus 1 --global-batch 8 --seq-len 4096 --format json)
set_tests_properties(cli.search.json_context PROPERTIES WILL_FAIL FALSE
  PASS_REGULAR_EXPRESSION "\"context\": \\{\n +\"hardware\": \"h100-dgx\",\n +\"model\": \"llama2-70b\",\n +\"schema_version\": 1,\n +\"stack\": \"pytorch-2.3-fsdp\",")
