# `trainsim diff`: the paper's scenario (examples/paper_fsdp_128.json) against the same with
# tp 2 (tests/data/diff_paper_tp2.json): tp 1 -> 2 halves dp, 128 -> 64. Flags apply to both
# sides. Bad input: one line, exit 2; both plans impossible: exit 3; one impossible: exit 0 and
# the diff says so.
set(diff_a ${CMAKE_CURRENT_SOURCE_DIR}/../../examples/paper_fsdp_128.json)
set(diff_b ${CMAKE_CURRENT_SOURCE_DIR}/../data/diff_paper_tp2.json)
set(diff_tp3 ${CMAKE_CURRENT_SOURCE_DIR}/../data/diff_paper_tp3.json)

add_test(NAME cli.diff.table COMMAND trainsim diff ${diff_a} ${diff_b})
set_tests_properties(cli.diff.table PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed.*/parallel/dp +128 -> 64\n  /parallel/tp +1 -> 2\n.*step time.*exposed communication.*step time = compute.*why it moved\n  1\\. ")
trainsim_expect_exit(cli.diff.table_exit 0 "" diff ${diff_a} ${diff_b})
# A collective only one side runs, counted in words that agree with their numbers: B's two TP
# ranks lie on one node ("1 node(s)" before).
add_test(NAME cli.diff.collective_counts COMMAND trainsim diff ${diff_a} ${diff_b})
set_tests_properties(cli.diff.collective_counts PROPERTIES
  PASS_REGULAR_EXPRESSION "tp all_reduce only in B: [^\n]* per step, [0-9]+ calls, 2 ranks on 1 node\n"
  FAIL_REGULAR_EXPRESSION "node\\(s\\)")

add_test(NAME cli.diff.json COMMAND trainsim diff ${diff_a} ${diff_b} --format json)
set_tests_properties(cli.diff.json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"a\": {.*\"b\": {.*\"collectives\".*\"context\".*\"deltas\": {.*\"/iteration_time_s\".*\"inputs_changed\": \\[.*\"pointer\": \"/parallel/dp\".*\"reasons\": \\[.*\"step_time\": {")

# A reason's delta in bytes is an integer, as every byte count of a report (tp 2 frees about
# 19 GiB per GPU here; it was written -20635942400.0).
add_test(NAME cli.diff.json_memory_reason COMMAND trainsim diff ${diff_a} ${diff_b} --format json)
set_tests_properties(cli.diff.json_memory_reason PROPERTIES
  PASS_REGULAR_EXPRESSION "\"component\": \"memory\",\n *\"delta\": -[0-9]+,"
  FAIL_REGULAR_EXPRESSION "\"component\": \"memory\",\n *\"delta\": -[0-9]+\\.")

# Flags apply to both sides: --gpus 256 on both leaves only tp and dp different (256 -> 128).
add_test(NAME cli.diff.flags_both COMMAND trainsim diff ${diff_a} ${diff_b} --gpus 256)
set_tests_properties(cli.diff.flags_both PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed.*/parallel/dp +256 -> 128\n  /parallel/tp +1 -> 2\n\n")

# Identical inputs: nothing changed, nothing moved.
add_test(NAME cli.diff.same COMMAND trainsim diff ${diff_a} ${diff_a})
set_tests_properties(cli.diff.same PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed \\(A -> B\\)\n  none\n.*the step time did not move")

# One side impossible (128 GPUs do not split into tp 3): a result, exit 0.
add_test(NAME cli.diff.one_impossible COMMAND trainsim diff ${diff_a} ${diff_tp3})
# dp, derived, has no value for B: "none", not 0.
set_tests_properties(cli.diff.one_impossible PROPERTIES PASS_REGULAR_EXPRESSION
  "/parallel/dp +128 -> none\n  /parallel/tp +1 -> 3\n\nB is an impossible plan:\n  /parallel: ")
trainsim_expect_exit(cli.diff.one_impossible_exit 0 "" diff ${diff_a} ${diff_tp3})
# Without a global batch, the default dp x micro_batch has no value for B either: it was
# micro_batch, as if dp were 1 ("128 -> 2"), a change the user never made.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_no_gbs.json [=[
{"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
 "training": {"seq_len": 4096, "micro_batch": 2}}
]=])
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_no_gbs_tp3.json [=[
{"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
 "training": {"seq_len": 4096, "micro_batch": 2}, "parallel": {"tp": 3}}
]=])
add_test(NAME cli.diff.one_impossible_default_batch
         COMMAND trainsim diff ${CMAKE_CURRENT_BINARY_DIR}/diff_no_gbs.json
                 ${CMAKE_CURRENT_BINARY_DIR}/diff_no_gbs_tp3.json)
set_tests_properties(cli.diff.one_impossible_default_batch PROPERTIES PASS_REGULAR_EXPRESSION
  "/parallel/dp +64 -> none
  /parallel/tp +1 -> 3
  /training/global_batch +128 -> none
")
# Both impossible: nothing to compare, exit 3 with one line naming both files and the flag
# that made the plan impossible, the problem said once.
trainsim_expect_exit(cli.diff.both_impossible 3
  "^error: [^\n]*paper_fsdp_128.json, [^\n]*diff_paper_tp2.json, command line \\(--tp\\): /parallel: [^;\n]*; expected gpus divisible by 3\n$"
  diff ${diff_a} ${diff_b} --tp 3)

trainsim_bad_input(diff missing_file "no_such_scenario.json: cannot open file"
  ${diff_a} no_such_scenario.json)
trainsim_bad_input(diff missing_b "command line: missing argument 'scenario_b'; expected it" ${diff_a})
trainsim_bad_input(diff bad_flag "--tp: cannot convert 'x'; expected an integer[^ ]" ${diff_a} ${diff_b} --tp x)
# An integer past the option's type (--top is an int) says which way it is off; --help states
# no range to look up.
trainsim_bad_input(diff int_too_large "--tp: cannot convert '99999999999999999999'; expected a smaller integer"
  ${diff_a} ${diff_b} --tp 99999999999999999999)
# A number option says so too (it read "a value of the option's type and range").
trainsim_bad_input(diff bad_float_flag "--memory-headroom: cannot convert 'half'; expected a number[^ ]" ${diff_a} ${diff_b} --memory-headroom half)
trainsim_bad_input(diff bad_format "--format: unknown value 'yaml'" ${diff_a} ${diff_b}
  --format yaml)
# A bad key in B names B's file and the key.
trainsim_bad_input(diff bad_key_in_b "bad_scenario.json: /parallel/sharding: unknown value"
  ${diff_a} ${CMAKE_CURRENT_SOURCE_DIR}/../data/bad_scenario.json)

# The compute reason names the inputs that set the kernels' time where they changed: here only
# recompute_layers (full recomputation of every layer -> of 16 per chunk), which the inputs table
# prints as "all" -> 16 (every layer, the default, against 16; it read none -> 16).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_all.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 128}, "model": "llama2-7b",
 "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 2},
 "parallel": {"sharding": "shard_grad_op", "recompute": "full"}}
]=])
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_16.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 128}, "model": "llama2-7b",
 "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 2},
 "parallel": {"sharding": "shard_grad_op", "recompute": "full", "recompute_layers": 16}}
]=])
add_test(NAME cli.diff.compute_reason_names_recompute_layers COMMAND trainsim diff
         ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_all.json
         ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_16.json)
set_tests_properties(cli.diff.compute_reason_names_recompute_layers PROPERTIES
  PASS_REGULAR_EXPRESSION "/parallel/recompute_layers +\"all\" -> 16\n.*  1\\. compute -[^\n]*MFU [^\n]*, recompute layers \"all\" -> 16\n")
# Every layer recomputed is one plan, whether recompute_layers is left out or gives the layers of
# the largest chunk (32 of llama2-7b's 32 on one stage): no input changed (it listed "none -> 32").
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_32.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 128}, "model": "llama2-7b",
 "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 2},
 "parallel": {"sharding": "shard_grad_op", "recompute": "full", "recompute_layers": 32}}
]=])
add_test(NAME cli.diff.recompute_layers_all COMMAND trainsim diff
         ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_all.json
         ${CMAKE_CURRENT_BINARY_DIR}/diff_recompute_32.json)
set_tests_properties(cli.diff.recompute_layers_all PROPERTIES
  PASS_REGULAR_EXPRESSION "inputs changed \\(A -> B\\)\n  none\n.*the step time did not move")
# Only the usable memory moved (h100-dgx -> h200-dgx: the same plan needs the same bytes, the
# capacity grows from 80 to 141 GB): the memory reason says the need is unchanged, where it read
# "memory per GPU 0.00 B (47.3 GiB -> 47.3 GiB)".
file(READ ${diff_a} diff_h100_text)
string(REPLACE "\"h100-dgx\"" "\"h200-dgx\"" diff_h200_text "${diff_h100_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_h200.json "${diff_h200_text}")
add_test(NAME cli.diff.memory_unchanged_usable_moved COMMAND trainsim diff ${diff_a}
         ${CMAKE_CURRENT_BINARY_DIR}/diff_h200.json)
set_tests_properties(cli.diff.memory_unchanged_usable_moved PROPERTIES PASS_REGULAR_EXPRESSION
  "\n  [0-9]\\. memory per GPU unchanged \\([0-9.]+ GiB\\)\\; usable [0-9.]+ GiB -> [0-9.]+ GiB \\(capacity less the reserve\\)\n")
# --memory-headroom applies to both sides and is checked against each side's hardware: 0.992
# of HBM suits a B200 (180 GiB) but not an H100 (80 GiB, at most 0.9898): the line names the
# H100 side's file.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_b200.json [=[
{"hardware": "b200-dgx", "cluster": {"gpus": 128}, "model": "llama2-7b",
 "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 2},
 "parallel": {"sharding": "shard_grad_op"}}
]=])
trainsim_bad_input(diff headroom_names_side
  "examples/paper_fsdp_128.json, command line \\(--memory-headroom\\): 0.992 of HBM keeps"
  ${CMAKE_CURRENT_BINARY_DIR}/diff_b200.json ${diff_a} --memory-headroom 0.992)
# An impossible side names the flag that set its key, as run does: --gpus 256 leaves A (dp 256 x
# micro-batch 2 = 512) unable to divide its global batch of 256.
add_test(NAME cli.diff.impossible_names_flag COMMAND trainsim diff ${diff_a} ${diff_b} --gpus 256)
set_tests_properties(cli.diff.impossible_names_flag PROPERTIES PASS_REGULAR_EXPRESSION
  "\nA is an impossible plan \\(set by command line \\(--gpus\\)\\):\n  /training/global_batch: global_batch 256 is not divisible by dp x micro_batch = 256 x 2 = 512")

# The same name for two files: each scenario's "m.json" resolves beside it (llama2-7b with 32
# and with 16 layers), so the model changed though the names are equal: the diff names both files.
set(diff_same_name ${CMAKE_CURRENT_SOURCE_DIR}/../data/diff_same_name)
add_test(NAME cli.diff.same_name_other_file
  COMMAND trainsim diff ${diff_same_name}/a/s.json ${diff_same_name}/b/s.json)
set_tests_properties(cli.diff.same_name_other_file PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed \\(A -> B\\)\n  /model +\"m.json \\([^)]*/a/m.json\\)\" -> \"m.json \\([^)]*/b/m.json\\)\"\n\n")
# The same file reached by two spellings of its path is no change.
add_test(NAME cli.diff.same_file_two_paths
  COMMAND trainsim diff ${diff_same_name}/a/s.json ${diff_same_name}/a/../a/s.json)
set_tests_properties(cli.diff.same_file_two_paths PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed \\(A -> B\\)\n  none\n")
# Two names for one file (c/s.json says "../a/m.json", a/s.json "m.json"): no change either.
add_test(NAME cli.diff.two_names_one_file
  COMMAND trainsim diff ${diff_same_name}/a/s.json ${diff_same_name}/c/s.json)
set_tests_properties(cli.diff.two_names_one_file PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed \\(A -> B\\)\n  none\n")

# A decrease too small for one decimal keeps its sign: seq_len 4096 -> 8192 (diff_paper_seq8k)
# moves exposed communication by -188 us, -0.03 % of A's step time, written "0.0 %".
add_test(NAME cli.diff.small_decrease_signed COMMAND trainsim diff ${diff_a}
         ${CMAKE_CURRENT_SOURCE_DIR}/../data/diff_paper_seq8k.json)
set_tests_properties(cli.diff.small_decrease_signed PROPERTIES PASS_REGULAR_EXPRESSION
  "exposed communication -[0-9]+ us \\([^)]*, -0\\.0 % of A's step time\\)")
# Two inline stacks that differ in one key: the host-overhead reason named no cause (the stack
# input is named when it is a reference, here its keys are): paper_fsdp_128 with a stack
# extending pytorch-2.3-fsdp, and the same with 50 ms of iteration_overhead.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_inline_stack_a.json
  "{\"hardware\": \"h100-dgx\", \"cluster\": {\"gpus\": 128}, \"model\": \"llama2-7b\",
    \"training\": {\"seq_len\": 4096, \"global_batch\": 256, \"micro_batch\": 2},
    \"parallel\": {\"sharding\": \"shard_grad_op\"}, \"stack\": {\"extends\": \"pytorch-2.3-fsdp\"}}\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_inline_stack_b.json
  "{\"hardware\": \"h100-dgx\", \"cluster\": {\"gpus\": 128}, \"model\": \"llama2-7b\",
    \"training\": {\"seq_len\": 4096, \"global_batch\": 256, \"micro_batch\": 2},
    \"parallel\": {\"sharding\": \"shard_grad_op\"},
    \"stack\": {\"extends\": \"pytorch-2.3-fsdp\", \"iteration_overhead\": \"50 ms\"}}\n")
add_test(NAME cli.diff.inline_stack_key_named COMMAND trainsim diff
         ${CMAKE_CURRENT_BINARY_DIR}/diff_inline_stack_a.json
         ${CMAKE_CURRENT_BINARY_DIR}/diff_inline_stack_b.json)
set_tests_properties(cli.diff.inline_stack_key_named PROPERTIES PASS_REGULAR_EXPRESSION
  "1\\. host overhead \\+50\\.0 ms \\([^)]*\\): stack iteration_overhead none -> \"50 ms\"\n")
# Each column of the metrics table is as wide as its widest cell: llama2-7b on 8 against 16,384
# H100 (global batch 16,384) changes tokens/s by +121167.1 %, 11 characters, where the column
# had 10 and the cell pushed the rest of its row out of line.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_small.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}}\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_huge.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 16384}, \"training\": {\"seq_len\": 4096, \"global_batch\": 16384}}\n")
add_test(NAME cli.diff.column_widths COMMAND trainsim diff ${CMAKE_CURRENT_BINARY_DIR}/diff_small.json
         ${CMAKE_CURRENT_BINARY_DIR}/diff_huge.json)
set_tests_properties(cli.diff.column_widths PROPERTIES PASS_REGULAR_EXPRESSION
  "\nmetric +A +B +delta    relative\nstep time +[^\n]* +\\+68\\.9 %\ntokens/s +79942\\.1 +96943485\\.0 +\\+96863543\\.0 \\+121167\\.1 %\n")
# More recomputed layers than a model chunk holds is no plan and stays a number: llama2-13b's
# 40 layers on one stage, recompute_layers 41 against the default (every layer). It read
# "all", and the diff listed no input changed beside B's impossible plan.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_rl_all.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 64}, "model": "llama2-13b",
 "training": {"seq_len": 4096, "global_batch": 128, "micro_batch": 1},
 "parallel": {"tp": 2, "sharding": "shard_grad_op", "recompute": "full"}}
]=])
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_rl_41.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 64}, "model": "llama2-13b",
 "training": {"seq_len": 4096, "global_batch": 128, "micro_batch": 1},
 "parallel": {"tp": 2, "sharding": "shard_grad_op", "recompute": "full", "recompute_layers": 41}}
]=])
add_test(NAME cli.diff.recompute_layers_past_chunk COMMAND trainsim diff
         ${CMAKE_CURRENT_BINARY_DIR}/diff_rl_all.json ${CMAKE_CURRENT_BINARY_DIR}/diff_rl_41.json)
set_tests_properties(cli.diff.recompute_layers_past_chunk PROPERTIES PASS_REGULAR_EXPRESSION
  "inputs changed \\(A -> B\\)\n  /parallel/recompute_layers +\"all\" -> 41\n\nB is an impossible plan")
# On a V100 (no bf16) the report's mfu_bf16 is against the fp16 peak, as run's table names it;
# the row read "MFU (bf16 peak)".
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_v100_a.json [=[
{"hardware": "v100-dgx", "cluster": {"gpus": 64}, "model": "llama2-7b",
 "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 1, "precision": "fp16"},
 "parallel": {"sharding": "full_shard", "recompute": "full"}}
]=])
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_v100_b.json [=[
{"hardware": "v100-dgx", "cluster": {"gpus": 64}, "model": "llama2-7b",
 "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 1, "precision": "fp16"},
 "parallel": {"sharding": "full_shard", "recompute": "selective"}}
]=])
add_test(NAME cli.diff.mfu_fp16_peak_on_v100 COMMAND trainsim diff
         ${CMAKE_CURRENT_BINARY_DIR}/diff_v100_a.json ${CMAKE_CURRENT_BINARY_DIR}/diff_v100_b.json)
set_tests_properties(cli.diff.mfu_fp16_peak_on_v100 PROPERTIES
  PASS_REGULAR_EXPRESSION "\nMFU \\(fp16 peak, no bf16\\) +[0-9.]+ %"
  FAIL_REGULAR_EXPRESSION "bf16 peak\\)")
# A flag applied to both sides that only one side refuses names that side's file: --shard-group
# with A hybrid_shard and B shard_grad_op (the message gave B's sharding, not B).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_hybrid.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 128}, "model": "llama2-7b",
 "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 2},
 "parallel": {"sharding": "hybrid_shard"}}
]=])
trainsim_bad_input(diff flag_refused_by_one_side
  "examples/paper_fsdp_128\\.json, command line \\(--shard-group\\): /parallel/shard_group: shard_group applies only with sharding \"hybrid_shard\", and the sharding is \"shard_grad_op\""
  ${CMAKE_CURRENT_BINARY_DIR}/diff_hybrid.json ${diff_a} --shard-group 4)
# A ratio below 0.1 keeps two significant digits: the TP AllReduce of seq 16,384 against 128
# shrinks to 4.74 / 101 ms = 0.047 of itself, written "(0.05x)" before, and a drop of 7.54 s to
# 18.2 ms "(0.00x)", as if the call had gone.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_seq16k.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 16}, "model": "llama2-7b",
 "training": {"seq_len": 16384, "global_batch": 16, "micro_batch": 1},
 "parallel": {"tp": 2, "sharding": "shard_grad_op"}}
]=])
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/diff_seq128.json [=[
{"hardware": "h100-dgx", "cluster": {"gpus": 16}, "model": "llama2-7b",
 "training": {"seq_len": 128, "global_batch": 16, "micro_batch": 1},
 "parallel": {"tp": 2, "sharding": "shard_grad_op"}}
]=])
add_test(NAME cli.diff.small_ratio_digits COMMAND trainsim diff
         ${CMAKE_CURRENT_BINARY_DIR}/diff_seq16k.json ${CMAKE_CURRENT_BINARY_DIR}/diff_seq128.json)
set_tests_properties(cli.diff.small_ratio_digits PROPERTIES PASS_REGULAR_EXPRESSION
  "tp all_reduce per step 101 ms -> 4\\.74 ms \\(0\\.047x\\)")
