# trainsim sweep: spec expansion (--list), CSV and JSON lines, sharding flags, bad input, and
# every examples/*.json sweep spec (listed here, not globbed) on a small shard so CI stays fast.
set(TRAINSIM_EXAMPLES ${PROJECT_SOURCE_DIR}/examples)
set(TRAINSIM_SWEEP_DATA ${PROJECT_SOURCE_DIR}/tests/sweep/data)

# Figure 4: GPUs zipped with the global batch, 8..2048 x 2 = 9 scenarios, in written order.
add_test(NAME cli.sweep.list COMMAND trainsim sweep ${TRAINSIM_EXAMPLES}/fig4_scaling.json --list)
set_tests_properties(cli.sweep.list PROPERTIES PASS_REGULAR_EXPRESSION
  "^index,cluster.gpus,training.global_batch\n0,8,16\n1,16,32\n.*\n8,2048,4096\n$")
# The same list as JSON lines (--format json was ignored: CSV came out).
add_test(NAME cli.sweep.list_json COMMAND trainsim sweep ${TRAINSIM_EXAMPLES}/fig4_scaling.json --list --format json)
set_tests_properties(cli.sweep.list_json PROPERTIES PASS_REGULAR_EXPRESSION
  "^{\"index\":0,\"cluster.gpus\":8,\"training.global_batch\":16}\n.*\n{\"index\":8,\"cluster.gpus\":2048,\"training.global_batch\":4096}\n$")

# Figure 9, shard 0 of 5: only scenario 0 (seq 1024), with its scenario columns and status ok,
# then the stack, mfu_bf16 and ep (appended columns; ep 1, llama2-7b being dense), then the
# shard's end record (4 scenarios in all, 1 row here).
add_test(NAME cli.sweep.csv COMMAND trainsim sweep ${TRAINSIM_EXAMPLES}/fig9_seq_len.json --shard 0/5)
set_tests_properties(cli.sweep.csv PROPERTIES PASS_REGULAR_EXPRESSION
  "^index,hardware,model,gpus,nodes,tp,pp,cp,dp,[^\n]*,status,stack,mfu_bf16,ep,recompute_layers,nodes_per_domain\n0,h100-dgx,llama2-7b,256,32,1,1,1,256,1,256,1024,bf16,adamw,shard_grad_op,,1f1b,1,none,false,[0-9.e+-]+,[^\n]*,ok,pytorch-2.3-fsdp,[0-9.e+-]+,1,0,1\n# trainsim shard 0/5 of 4 scenarios, spec [0-9a-f]+, 1 rows\n$")
add_test(NAME cli.sweep.json COMMAND trainsim sweep ${TRAINSIM_EXAMPLES}/fig9_seq_len.json --shard 1/5 --format json)
set_tests_properties(cli.sweep.json PROPERTIES PASS_REGULAR_EXPRESSION
  "^\\{\"index\":1,\"scenario\":\\{[^\n]*\"seq_len\":2048[^\n]*\"status\":\"ok\"[^\n]*\"tokens_per_s\":[^\n]*\\}\n\\{\"trainsim_shard\":\"1/5\",\"scenarios\":4,\"spec\":\"[0-9a-f]+\",\"rows\":1\\}\n$")
# --shard auto from a Kubernetes indexed job: JOB_COMPLETION_INDEX 3 of --shard-count 5.
add_test(NAME cli.sweep.shard_auto_kubernetes
         COMMAND ${CMAKE_COMMAND} -E env --unset=SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX=3
                 $<TARGET_FILE:trainsim> sweep ${TRAINSIM_EXAMPLES}/fig9_seq_len.json --shard auto
                 --shard-count 5 --list)
set_tests_properties(cli.sweep.shard_auto_kubernetes PROPERTIES PASS_REGULAR_EXPRESSION
  "^index,training.seq_len\n3,8192\n$")
add_test(NAME cli.sweep.shard_auto_slurm
         COMMAND ${CMAKE_COMMAND} -E env SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2
                 $<TARGET_FILE:trainsim> sweep ${TRAINSIM_EXAMPLES}/fig9_seq_len.json --shard auto --list)
set_tests_properties(cli.sweep.shard_auto_slurm PROPERTIES PASS_REGULAR_EXPRESSION
  "^index,training.seq_len\n1,2048\n3,8192\n$")

# Every example sweep spec parses (--list) and runs on a small shard.
foreach(spec fig4_scaling fig5_tp_pp fig7_fixed_batch fig9_seq_len)
  add_test(NAME cli.examples.${spec}.list COMMAND trainsim sweep ${TRAINSIM_EXAMPLES}/${spec}.json --list)
  set_tests_properties(cli.examples.${spec}.list PROPERTIES PASS_REGULAR_EXPRESSION "^index,")
  add_test(NAME cli.examples.${spec}.shard
           COMMAND trainsim sweep ${TRAINSIM_EXAMPLES}/${spec}.json --shard 0/64)
  set_tests_properties(cli.examples.${spec}.shard PROPERTIES PASS_REGULAR_EXPRESSION "\n0,h100-dgx,llama2-7b,[^\n]*,ok,pytorch-2.3-fsdp,[0-9.e+-]+,1,0,1\n")
endforeach()
add_test(NAME cli.examples.paper_fsdp_128 COMMAND trainsim run ${TRAINSIM_EXAMPLES}/paper_fsdp_128.json --format json)
set_tests_properties(cli.examples.paper_fsdp_128 PROPERTIES PASS_REGULAR_EXPRESSION
  "\"gpus\": 128[^}]*\"nodes\": 16.*\"tokens_per_s\": [0-9]")

# Bad input: one line "error: ..." and exit code 2.
set(fig9 ${TRAINSIM_EXAMPLES}/fig9_seq_len.json)
trainsim_bad_input(sweep shard_out_of_range
  "--shard: shard index out of range; expected K/N with 0 <= K < N, got '3/2'"
  ${fig9} --shard 3/2)
trainsim_bad_input(sweep shard_zero "shard index out of range; expected K/N with 0 <= K < N, got '0/0'"
  ${fig9} --shard 0/0)
trainsim_bad_input(sweep shard_garbage "--shard: malformed shard; expected K/N"
  ${fig9} --shard half)
add_test(NAME cli.sweep.bad.shard_auto_no_env
         COMMAND ${CMAKE_COMMAND} -E env --unset=SLURM_ARRAY_TASK_ID --unset=JOB_COMPLETION_INDEX
                 ${CMAKE_COMMAND} -DEXPECTED_EXIT=2
                 "-DEXPECTED_STDERR=^error: [^\n]*no shard in the environment"
                 "-DCOMMAND=$<TARGET_FILE:trainsim>;sweep;${fig9};--shard;auto"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
trainsim_bad_input(sweep unknown_axis "/axes/parallel.tpp: unknown scenario key 'parallel.tpp'; did you mean 'parallel.tp'\\?"
  ${TRAINSIM_SWEEP_DATA}/bad_axis.json)
trainsim_bad_input(sweep zip_mismatch "/zip/0/1: zipped axes of different lengths"
  ${TRAINSIM_SWEEP_DATA}/zip_mismatch.json)
trainsim_bad_input(sweep malformed "malformed.json: invalid JSON at line 1"
  ${TRAINSIM_SWEEP_DATA}/malformed.json)
trainsim_bad_input(sweep missing_file "cannot read the file"
  ${TRAINSIM_SWEEP_DATA}/no_such_spec.json)

# --jobs is bounded (sim/sweep/evaluate.hpp kMaxJobs) on every command that takes it.
trainsim_bad_input(sweep jobs_too_many
  "--jobs: too many threads; expected 0 .all cores. or 1 to 1024, got '5000'" ${fig9} --jobs 5000)
trainsim_bad_input(sweep jobs_huge "--jobs: too many threads" ${fig9} --jobs 99999999999999999999)
trainsim_bad_input(sweep jobs_negative "--jobs: negative" ${fig9} --jobs -1)
trainsim_bad_input(search jobs_too_many "--jobs: too many threads" --hardware h100-dgx
  --model llama2-7b --gpus 8 --global-batch 8 --seq-len 1024 --jobs 1025)
trainsim_bad_input(validate jobs_too_many "--jobs: too many threads" --jobs 100000)

# -o writes atomically: into a folder that does not exist it fails with one line and leaves
# nothing; the written file equals stdout's bytes.
trainsim_bad_input(sweep output_folder_missing
  "no_such_folder/out.csv: cannot write the file .No such file or directory.; expected a writable path"
  ${fig9} --shard 0/5 -o ${CMAKE_CURRENT_BINARY_DIR}/no_such_folder/out.csv)

# A shard killed mid-write (stdout redirected, or -o) is refused by merge; rerun, it merges
# into the unsharded bytes. See the script for what it checks.
add_test(NAME cli.sweep.crash_consistency
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/crash_consistency.sh $<TARGET_FILE:trainsim>
                 ${CMAKE_CURRENT_BINARY_DIR}/crash_consistency)
set_tests_properties(cli.sweep.crash_consistency PROPERTIES TIMEOUT 120
                     PASS_REGULAR_EXPRESSION "crash consistency: killed shards refused")

# Threads the system refuses to create do not abort the sweep: with a 1 GiB default thread stack
# (RLIMIT_STACK) under a 3.5 GiB address-space limit only about two of the eight threads start;
# the sweep still writes the bytes of --jobs 1. Sanitizers reserve terabytes of address space,
# so the limit cannot apply to them.
if(NOT TRAINSIM_SANITIZE)
  add_test(NAME cli.sweep.thread_limit
           COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                   -DSPEC=${TRAINSIM_SWEEP_DATA}/many_invalid.json
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/thread_limit
                   -P ${PROJECT_SOURCE_DIR}/tests/sweep/thread_limit.cmake)
endif()

# An output path that names an input is refused before anything is written: the write would
# replace the spec (a copy here, so that a regression cannot touch the example), however the
# path is spelled.
set(output_is_input ${CMAKE_CURRENT_BINARY_DIR}/output_is_input)
configure_file(${TRAINSIM_EXAMPLES}/fig9_seq_len.json ${output_is_input}/spec.json COPYONLY)
configure_file(${TRAINSIM_EXAMPLES}/paper_fsdp_128.json ${output_is_input}/scenario.json COPYONLY)
trainsim_bad_input(sweep output_is_spec
  "command line \\(-o\\): '[^']*' is the input file [^ ]*spec.json, which the output would replace; expected another path"
  ${output_is_input}/spec.json -o ${output_is_input}/../output_is_input/spec.json --list)
trainsim_bad_input(run trace_is_scenario
  "command line \\(--trace\\): '[^']*scenario.json' is the input file [^ ]*scenario.json, which the output would replace"
  ${output_is_input}/scenario.json --trace ${output_is_input}/scenario.json)
trainsim_bad_input(merge output_is_shard "command line \\(-o\\): '[^']*spec.json' is the input file"
  ${output_is_input}/spec.json -o ${output_is_input}/spec.json)
# The files the spec and the scenario name are inputs too: a model file on a sweep's axis, and
# one a scenario file names beside it, were replaced by the CSV and the trace.
configure_file(${PROJECT_SOURCE_DIR}/models/llama2-7b.json ${output_is_input}/mm.json COPYONLY)
file(WRITE ${output_is_input}/model_axis.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 1024}},
    \"axes\": {\"model\": [\"llama2-7b\", \"mm.json\"]}}\n")
file(WRITE ${output_is_input}/names_model.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"mm.json\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 1024}}\n")
trainsim_bad_input(sweep output_is_axis_model
  "command line \\(-o\\): '[^']*mm.json' is the input file [^ ]*mm.json, which the output would replace"
  ${output_is_input}/model_axis.json -o ${output_is_input}/mm.json)
# A stack file a named stack extends is an input too (StackSpec::extends_files).
file(WRITE ${output_is_input}/parent_stack.json "{\"extends\": \"megatron-core\", \"id\": \"parent\"}\n")
file(WRITE ${output_is_input}/child_stack.json "{\"extends\": \"parent_stack.json\", \"id\": \"child\"}\n")
file(WRITE ${output_is_input}/extends_spec.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"stack\": \"child_stack.json\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 1024}},
    \"axes\": {\"training.global_batch\": [16, 32]}}\n")
file(WRITE ${output_is_input}/names_stack.json
  "{\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"stack\": \"child_stack.json\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 1024}}\n")
trainsim_bad_input(sweep output_is_extended_stack
  "command line \\(-o\\): '[^']*parent_stack.json' is the input file [^ ]*parent_stack.json, which the output would replace"
  ${output_is_input}/extends_spec.json -o ${output_is_input}/parent_stack.json)
trainsim_bad_input(run trace_is_extended_stack
  "command line \\(--trace\\): '[^']*parent_stack.json' is the input file [^ ]*parent_stack.json, which the output would replace"
  ${output_is_input}/names_stack.json --trace ${output_is_input}/parent_stack.json)
trainsim_bad_input(run trace_is_named_model
  "command line \\(--trace\\): '[^']*mm.json' is the input file [^ ]*mm.json, which the output would replace"
  ${output_is_input}/names_model.json --trace ${output_is_input}/mm.json)
# shard_group applies to hybrid_shard scenarios only; a sweep may set it beside a sharding axis
# for them, but one whose every scenario shards otherwise ignored it in every row (run refuses
# such a scenario): refused where the spec writes it, on an axis or in the base.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_axis.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 2048}, \"parallel\": {\"sharding\": \"full_shard\"}},
    \"axes\": {\"parallel.shard_group\": [2, 4]}}\n")
trainsim_bad_input(sweep shard_group_axis "sweep_shard_group_axis\\.json: /axes/parallel\\.shard_group: shard_group applies only with sharding \"hybrid_shard\", and no scenario of the sweep has it \\(sharding \"full_shard\"\\)"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_axis.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_base.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 2048}, \"parallel\": {\"shard_group\": 4}},
    \"axes\": {\"parallel.tp\": [1, 2]}}\n")
trainsim_bad_input(sweep shard_group_base "sweep_shard_group_base\\.json: /base/parallel/shard_group: shard_group applies only with sharding \"hybrid_shard\", and no scenario of the sweep has it \\(sharding \"none\"\\)"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_base.json)
# An invalid row's CSV keeps the shard group its axis gave (the reason it is invalid): the cell
# was blank on such rows, while JSON lines carried it. 16 GPUs, dp 16: 3 does not divide it.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_invalid.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 2048}, \"parallel\": {\"sharding\": \"hybrid_shard\"}},
    \"axes\": {\"parallel.shard_group\": [3, 4]}}\n")
add_test(NAME cli.sweep.shard_group_invalid_row
         COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_invalid.json)
set_tests_properties(cli.sweep.shard_group_invalid_row PROPERTIES PASS_REGULAR_EXPRESSION
  "\n0,[^\n]*,hybrid_shard,3,[^\n]*invalid: /parallel/shard_group: [^\n]*\n1,[^\n]*,hybrid_shard,4,")
# Beside a sharding axis that holds hybrid_shard it applies to those rows: the sweep runs.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_mixed.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 16}, \"training\": {\"seq_len\": 2048}, \"parallel\": {\"shard_group\": 4}},
    \"axes\": {\"parallel.sharding\": [\"full_shard\", \"hybrid_shard\"]}}\n")
add_test(NAME cli.sweep.shard_group_mixed COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_shard_group_mixed.json)
set_tests_properties(cli.sweep.shard_group_mixed PROPERTIES PASS_REGULAR_EXPRESSION
  "\n0,[^\n]*,full_shard,,[^\n]*\n1,[^\n]*,hybrid_shard,4,")
# --full-simulation holds a sweep's plans to the command line's 4 million ops, as run does:
# llama2-7b on 8 H100 at global batch 65,536 (8,192 micro-batches, 6,635,521 ops; run refuses
# it) is an invalid row, not minutes and gigabytes; at 64 it runs.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_full_bound.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}, \"parallel\": {\"sharding\": \"full_shard\"}},
    \"axes\": {\"training.global_batch\": [64, 65536]}}\n")
add_test(NAME cli.sweep.full_simulation_bound
         COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_full_bound.json --full-simulation)
set_tests_properties(cli.sweep.full_simulation_bound PROPERTIES PASS_REGULAR_EXPRESSION
  "\n0,[^\n]*,ok,[^\n]*\n1,[^\n]*invalid: --full-simulation: the whole iteration has 6635521 ops \\(8192 micro-batches per step\\)\; expected at most 4000000")
# GPipe is simulated whole without --full-simulation too: past the bound its plan is an invalid
# row, beside 1F1B's extrapolated one. A deep, narrow model keeps 2,000 micro-batches of GPipe
# in memory (128 layers of width 64 at seq 16 over 2 stages) with 5,656,002 ops.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_gpipe_bound.json
  "{\"base\": {\"hardware\": \"a100-dgx\", \"model\": {\"name\": \"deep\", \"layers\": 128, \"hidden\": 64, \"heads\": 1, \"kv_heads\": 1, \"ffn_hidden\": 128, \"vocab\": 128, \"activation\": \"swiglu\", \"norm\": \"rmsnorm\", \"tied_embeddings\": false, \"position_embedding\": \"rope\"},
    \"cluster\": {\"gpus\": 2}, \"training\": {\"seq_len\": 16, \"global_batch\": 2000}, \"parallel\": {\"pp\": 2}},
    \"axes\": {\"parallel.pipeline_schedule\": [\"1f1b\", \"gpipe\"]}}\n")
add_test(NAME cli.sweep.gpipe_whole_bound
         COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_gpipe_bound.json)
set_tests_properties(cli.sweep.gpipe_whole_bound PROPERTIES PASS_REGULAR_EXPRESSION
  "\n0,[^\n]*,1f1b,[^\n]*,ok,[^\n]*\n1,[^\n]*invalid: /parallel/pipeline_schedule: gpipe is simulated whole, and the whole iteration has 5656002 ops")
# With --full-simulation the row names GPipe's bound too, not the flag's (whose advice, to drop
# it, would not help).
add_test(NAME cli.sweep.gpipe_whole_bound_full
         COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_gpipe_bound.json --full-simulation)
set_tests_properties(cli.sweep.gpipe_whole_bound_full PROPERTIES PASS_REGULAR_EXPRESSION
  "\n1,[^\n]*invalid: /parallel/pipeline_schedule: gpipe is simulated whole, and the whole iteration has 5656002 ops")
# A required key missing from an axis's inline model, beside its near miss, is named where the
# axis writes the object (it was named /base/model/layers, in the base the spec never gave it).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_inline_model_near_miss.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 2048}},
    \"axes\": {\"model\": [\"llama2-7b\", {\"name\": \"tiny\", \"n_layers\": 4, \"hidden\": 256, \"heads\": 4, \"ffn_hidden\": 1024, \"vocab\": 1000}]}}\n")
trainsim_bad_input(sweep inline_model_near_miss "sweep_inline_model_near_miss\\.json: /axes/model/1/layers: missing required key \\(the object has 'n_layers': a misspelling of 'layers'\\?\\)"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_inline_model_near_miss.json)
# An inline stack on the stack axis is a stack, as an inline model or profile is (it was read as
# a range: "unknown range key 'extends'"); its id names the row.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_inline_stack.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 2048}, \"parallel\": {\"sharding\": \"full_shard\"}},
    \"axes\": {\"stack\": [\"megatron-lm\", {\"extends\": \"megatron-lm\", \"id\": \"m2\", \"name\": \"m2\"}]}}\n")
add_test(NAME cli.sweep.inline_stack COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_inline_stack.json)
set_tests_properties(cli.sweep.inline_stack PROPERTIES PASS_REGULAR_EXPRESSION
  "\n0,[^\n]*,megatron-lm,[^\n]*\n1,[^\n]*,m2,")
# examples/plot_sweep.py, where this machine has python3 and matplotlib: bad input is one line
# on stderr and exit 2, as its docstring says, where it raised tracebacks (exit 1) for --ideal
# from x = 0, an output path that cannot be written or named no image format, and a text
# column for x (which it called "no simulated rows").
execute_process(COMMAND python3 -c "import matplotlib" RESULT_VARIABLE TRAINSIM_NO_MATPLOTLIB
                OUTPUT_QUIET ERROR_QUIET)
if(TRAINSIM_NO_MATPLOTLIB EQUAL 0)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plot_sweep_rows.csv
    "gpus,hardware,bubble_s,tokens_per_s,status\n8,h100-dgx,0,100,ok\n16,h100-dgx,0,190,ok\n")
  set(plot_rows ${CMAKE_CURRENT_BINARY_DIR}/plot_sweep_rows.csv)
  foreach(case "ideal_from_zero;--x;bubble_s;--y;tokens_per_s;--ideal;-o;${CMAKE_CURRENT_BINARY_DIR}/p.png;^error: --ideal: column 'bubble_s' has values <= 0"
               "unwritable;--x;gpus;--y;tokens_per_s;-o;${CMAKE_CURRENT_BINARY_DIR}/no-such-dir/p.png;^error: -o: cannot write '[^']*no-such-dir/p\\.png'"
               "no_format;--x;gpus;--y;tokens_per_s;-o;${CMAKE_CURRENT_BINARY_DIR}/p.xyz;^error: -o: '[^']*p\\.xyz' names no image format matplotlib writes"
               "text_column;--x;hardware;--y;tokens_per_s;-o;${CMAKE_CURRENT_BINARY_DIR}/p.png;^error: [^\n]*plot_sweep_rows\\.csv: no row with status ok has numbers in both --x 'hardware' and --y 'tokens_per_s' \\(column 'hardware' holds 'h100-dgx'\\)")
    trainsim_split_case("${case}")
    add_test(NAME cli.plot_sweep.${case_name}
             COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2 "-DEXPECTED_STDERR=${case_regex}[^\n]*\n$"
                     "-DCOMMAND=python3;${PROJECT_SOURCE_DIR}/examples/plot_sweep.py;${plot_rows};${case_args}"
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  endforeach()
  add_test(NAME cli.plot_sweep.draws
           COMMAND python3 ${PROJECT_SOURCE_DIR}/examples/plot_sweep.py ${plot_rows} --x gpus
                   --y tokens_per_s --ideal -o ${CMAKE_CURRENT_BINARY_DIR}/plot_sweep.png)
endif()
# A row cut short or a nan cell (no sweep writes either) is one line naming the line, checked
# before anything is drawn: an empty stand-in matplotlib package lets the check run where the
# real one is missing. A short row raised a TypeError; nan was drawn as a gap.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plot_stub/matplotlib/__init__.py "")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plot_sweep_short.csv "tp,tokens_per_s\n1,5\n2\n")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plot_sweep_nan.csv "tp,tokens_per_s\n1,5\n2,nan\n")
# sweep --format json's lines: their first line's cells were quoted as 2 KB of column names.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/plot_sweep_jsonl.csv "{\"index\":0,\"scenario\":{\"cluster\":{\"gpus\":8}}}\n")
foreach(case "short;line 3: 1 cells where the header has 2. expected a whole trainsim sweep row"
             "nan;line 3: column 'tokens_per_s' holds 'nan'. expected a finite number"
             "jsonl;JSON lines \\(sweep --format json\\), not a CSV. expected a trainsim sweep CSV")
  list(GET case 0 name)
  list(GET case 1 regex)
  add_test(NAME cli.plot_sweep.${name}_row
           COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2
                   "-DEXPECTED_STDERR=^error: [^\n]*plot_sweep_${name}\\.csv: ${regex}[^\n]*\n$"
                   "-DCOMMAND=python3;${PROJECT_SOURCE_DIR}/examples/plot_sweep.py;${CMAKE_CURRENT_BINARY_DIR}/plot_sweep_${name}.csv;--x;tp;--y;tokens_per_s;-o;${CMAKE_CURRENT_BINARY_DIR}/p.png"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
  set_tests_properties(cli.plot_sweep.${name}_row PROPERTIES
                       ENVIRONMENT "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}/plot_stub")
endforeach()
# An axis value given twice, or a zip group's row given twice, would give the same rows twice:
# refused at the repeat. Zipped axes may repeat a value alone.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_repeat.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}},\n \"axes\": {\"parallel.tp\": [2, 1, 2]}}\n")
trainsim_bad_input(sweep repeated_value
  "sweep_repeat.json: /axes/parallel.tp/2: value 2 repeats the one at /axes/parallel.tp/0\\; expected each value of an axis once"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_repeat.json --list)
# 1 and 1.0 (and a range's 1) are one value: [1, 1.0] gave two identical rows.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_repeat_float.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}},\n \"axes\": {\"parallel.tp\": [1, 1.0]}}\n")
trainsim_bad_input(sweep repeated_float_value
  "sweep_repeat_float.json: /axes/parallel.tp/1: value 1.0 repeats the one at /axes/parallel.tp/0\\; expected each value of an axis once"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_repeat_float.json --list)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_zip_repeat.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 4096}},\n \"axes\": {\"parallel.tp\": [2, 2, 1], \"parallel.pp\": [1, 2, 1]}, \"zip\": [[\"parallel.tp\", \"parallel.pp\"]]}\n")
add_test(NAME cli.sweep.zip_repeats_one_axis
         COMMAND trainsim sweep ${CMAKE_CURRENT_BINARY_DIR}/sweep_zip_repeat.json --list)
set_tests_properties(cli.sweep.zip_repeats_one_axis PROPERTIES PASS_REGULAR_EXPRESSION
  "0,2,1\n1,2,2\n2,1,1\n")
# A base file that is not there, or is a folder, is named at the spec's /base key: the message
# named the missing path alone, so with several specs sharing a folder the faulty one was not
# said.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_base_missing.json
  "{\"base\": \"no_such_base.json\", \"axes\": {\"parallel.tp\": [1]}}\n")
trainsim_bad_input(sweep base_missing "sweep_base_missing.json: /base: no such file '[^']*no_such_base.json' \\(a relative path is taken from the spec's folder\\)"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_base_missing.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_base_folder.json
  "{\"base\": \".\", \"axes\": {\"parallel.tp\": [1]}}\n")
trainsim_bad_input(sweep base_folder "sweep_base_folder.json: /base: '[^']*' is a directory; expected a scenario object or a scenario file"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_base_folder.json)
# A range bound past 64 bits is out of range (JSON reads it as a double: it was "not an
# integer"), and a range on an axis of documents is named as such (it was read as an inline
# stack and refused for its missing id, "a misspelling of 'id'?").
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_range_huge.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"training\": {\"seq_len\": 1024}}, \"axes\": {\"cluster.gpus\": {\"from\": 8, \"to\": 92233720368547758070, \"times\": 2}}}\n")
trainsim_bad_input(sweep range_past_int64
  "sweep_range_huge.json: /axes/cluster.gpus/to: 9.223372036854776e\\+19: out of range. expected at most 9223372036854775807"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_range_huge.json --list)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_range_stack.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama2-7b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 1024}}, \"axes\": {\"stack\": [{\"from\": 1, \"to\": 2, \"step\": 1}]}}\n")
trainsim_bad_input(sweep range_on_stack
  "sweep_range_stack.json: /axes/stack/0: a range on the stack axis. expected software stacks"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_range_stack.json --list)
# The default global batch past 2^30 is refused at its axis value in either order: the fast
# path took micro_batch 2048 on 1,048,576 GPUs (2^31 sequences) as an "ok" row that run refuses,
# and the loader refused it only where it came first.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/sweep_default_batch_bound.json [=[
{"base": {"hardware": "h100-dgx", "model": "llama3.2-1b", "cluster": {"gpus": 1048576},
          "training": {"seq_len": 8}},
 "axes": {"training.micro_batch": [1, 2048]}}
]=])
trainsim_bad_input(sweep default_batch_bound "sweep_default_batch_bound\\.json: /axes/training\\.micro_batch/1: the default global_batch dp x micro_batch = 2147483648: out of range"
  ${CMAKE_CURRENT_BINARY_DIR}/sweep_default_batch_bound.json)
