# trainsim validate: the three formats on a few sources of the built-in runs, a runs file given
# on the command line, exit codes for bad input, and --plot with and without matplotlib.
set(TRAINSIM_RUNS ${PROJECT_SOURCE_DIR}/validation/published_runs.json)

# Table: Korthikanti 2022's ten rows compared on iteration time, none skipped.
add_test(NAME cli.validate.table COMMAND trainsim validate --source Korthikanti --jobs 2)
set_tests_properties(cli.validate.table PROPERTIES PASS_REGULAR_EXPRESSION
  "korthikanti22-22B-selective-sp +korthikanti22 +iteration time +[0-9.]+ s +1.100 s +[-+][0-9.]+%.*\noverall +10 +0 +[0-9.]+% +[-+][0-9.]+%\n$")
# JSON (keys sorted): all 8 torchtitan rows compared, none skipped; a layer-level checkpointing
# row runs recompute full on half the layers, its plan saying so.
add_test(NAME cli.validate.json COMMAND trainsim validate --source torchtitan --format json)
set_tests_properties(cli.validate.json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"overall\": {[^}]*\"compared\": 8,[^}]*\"skipped\": 0.*\"id\": \"torchtitan-2024-a100-llama3-8b-64gpu-selective-layer\",[^}]*\"recompute\": \"full\",[^}]*\"recompute_layers\": 16,")
# CSV: header, rows, per-source and overall lines. A compared row's assumptions are in their own
# column, its reason empty (they used to fill the reason column).
add_test(NAME cli.validate.csv COMMAND trainsim validate --source Shoeybi --format csv)
set_tests_properties(cli.validate.csv PROPERTIES PASS_REGULAR_EXPRESSION
  "^kind,index,id,source,status,metric,[^\n]*,reason,assumptions\nrow,56,megatron19-v100-mp-1.2B-1gpu,shoeybi19,compared,flop_per_s_per_gpu,[^\n]*,(true|false),,,,,,\"measured on DGX-2.*\noverall,,,overall,[^\n]*,8,0,[0-9.e-]+,[0-9.e-]+,,\n$")
# A skipped row's reason is in the reason column.
add_test(NAME cli.validate.csv_skipped COMMAND trainsim validate --source GPT-NeoX --format csv)
set_tests_properties(cli.validate.csv_skipped PROPERTIES PASS_REGULAR_EXPRESSION
  "\nrow,[0-9]+,gptneox20b-96gpu,gpt-neox-20b,skipped,,,,,,,,,,,,,,[^\n]*in parallel")
# --source ignores case: "bloom" keeps the BLOOM-176B row (it used to be "in no row's source_group").
add_test(NAME cli.validate.source_any_case COMMAND trainsim validate --source bloom)
set_tests_properties(cli.validate.source_any_case PROPERTIES PASS_REGULAR_EXPRESSION
  "\\(source or source_group contains \"bloom\"\\).*bloom176b-384gpu +bloom-176b +tokens/s/GPU")
# --source also takes the report's short source name: the H100 tables of llm-foundry, whose
# source_group ("MosaicML llm-foundry MPT benchmarks, H100") holds no "llm-foundry-h100".
add_test(NAME cli.validate.source_short_name COMMAND trainsim validate --source llm-foundry-h100)
set_tests_properties(cli.validate.source_short_name PROPERTIES PASS_REGULAR_EXPRESSION
  "\noverall +70 +0 ")
# A runs file on the command line (here the same rows as the built-in copy).
add_test(NAME cli.validate.file COMMAND trainsim validate ${TRAINSIM_RUNS} --source BLOOM)
set_tests_properties(cli.validate.file PROPERTIES PASS_REGULAR_EXPRESSION
  "in [^\n]*published_runs.json \\(source or source_group contains \"BLOOM\"\\).*bloom176b-384gpu +bloom-176b +tokens/s/GPU")

# Bad input: one "error:" line naming the file (and the row's JSON pointer), exit 2.
trainsim_bad_input(validate missing_file "nonexistent.json: cannot open file"
                   ${CMAKE_CURRENT_BINARY_DIR}/nonexistent.json)
trainsim_bad_input(validate garbage "README.md: [^\n]*invalid JSON"
                   ${PROJECT_SOURCE_DIR}/validation/README.md)
trainsim_bad_input(validate not_an_array "a100-dgx.json: expected a JSON array of published runs"
                   ${PROJECT_SOURCE_DIR}/hardware_profiles/a100-dgx.json)
trainsim_bad_input(validate stack_twice "command line \\(--stack\\): stack 'megatron-lm' given twice; expected one file per stack id"
                   --source BLOOM --stack megatron-lm=${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json
                   --stack megatron-lm=${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json)
# A replaced stack that no validated row runs (BLOOM runs megatron-lm) changed nothing silently:
# a note on stderr says so, and the run goes on (exit 0).
trainsim_expect_exit(cli.validate.stack_unused 0 "^note: --stack torchtitan-fsdp2: no validated row runs stack 'torchtitan-fsdp2' \\(--source BLOOM\\), so the file changes nothing; the rows' stacks: megatron-lm\n$"
                     validate --source BLOOM --stack torchtitan-fsdp2=${PROJECT_SOURCE_DIR}/stacks/torchtitan-fsdp2.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/validate_bad_row.json "[{\"id\": 7}]\n")
trainsim_bad_input(validate wrong_type "validate_bad_row.json: /0/id: expected a string, got 7"
                   ${CMAKE_CURRENT_BINARY_DIR}/validate_bad_row.json)
# A bad flag value: CLI11's message (two lines) and exit 2.
add_test(NAME cli.validate.bad.format
         COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2 "-DCOMMAND=$<TARGET_FILE:trainsim>;validate;--format;yaml"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
# The plot is a PNG and its path must end so, refused before anything is printed: '.pdf' wrote a
# PDF stamped with its creation time, '.svg' failed after the table blaming the path.
trainsim_bad_input(validate plot_not_png "command line \\(--plot\\): '[^']*out\\.pdf' does not end in \\.png\; expected a PNG path"
  --source Shoeybi --plot ${CMAKE_CURRENT_BINARY_DIR}/out.pdf)
# --plot without python3 (nothing on PATH): one clean error line, exit 2.
add_test(NAME cli.validate.plot_without_python
         COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2 "-DEXPECTED_STDERR=^error: --plot [^\n]*python3 with matplotlib"
                 "-DCOMMAND=${CMAKE_COMMAND};-E;env;PATH=/nonexistent;$<TARGET_FILE:trainsim>;validate;--source;Shoeybi;--plot;${CMAKE_CURRENT_BINARY_DIR}/no.png"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
# --plot with python3 and matplotlib, where this machine has them.
execute_process(COMMAND python3 -c "import matplotlib" RESULT_VARIABLE TRAINSIM_NO_MATPLOTLIB
                OUTPUT_QUIET ERROR_QUIET)
if(TRAINSIM_NO_MATPLOTLIB EQUAL 0)
  add_test(NAME cli.validate.plot
           COMMAND trainsim validate --source Korthikanti --plot ${CMAKE_CURRENT_BINARY_DIR}/validate.png)
endif()

# --scenarios DIR: the compared rows' scenarios, which `trainsim run` reproduces exactly.
add_test(NAME cli.validate.scenarios
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/validate-scenarios
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/validate_scenarios.cmake)
# Every shipped row's file (290) with 64 file descriptors: the files are written to their
# temporaries and closed one at a time, then renamed. Kept open until the renames, they ran out
# of descriptors under macOS's default of 256 ('Too many open files').
add_test(NAME cli.validate.scenarios_few_descriptors
         COMMAND sh -c "rm -rf \"$1\" && ulimit -n 64 && \"$0\" validate --scenarios \"$1\" >/dev/null && ls \"$1\" | wc -l"
                 $<TARGET_FILE:trainsim> ${CMAKE_CURRENT_BINARY_DIR}/validate-scenarios-fd)
set_tests_properties(cli.validate.scenarios_few_descriptors PROPERTIES
  PASS_REGULAR_EXPRESSION "^ *290\n$")
# ... and its folder must be one: a file there, or a missing parent, is one error line.
trainsim_bad_input(validate scenarios_not_a_folder "--scenarios [^\n]*README.md: expected a folder"
                   --source BLOOM --scenarios ${PROJECT_SOURCE_DIR}/README.md)
trainsim_bad_input(validate scenarios_no_parent "--scenarios [^\n]*: cannot create the folder: its parent [^\n]*no-such-parent does not exist. expected"
                   --source BLOOM --scenarios ${CMAKE_CURRENT_BINARY_DIR}/no-such-parent/scenarios)
# A parent that is a file is named as one.
trainsim_bad_input(validate scenarios_file_parent "--scenarios [^\n]*: cannot create the folder: its parent [^\n]*README.md is not a folder. expected"
                   --source BLOOM --scenarios ${PROJECT_SOURCE_DIR}/README.md/scenarios)

# scripts/split-rows (standard Python only) on torchtitan's 8 rows: each row's scenario from
# --scenarios, its trace split by kind, the two free weights fitted with the others held.
find_program(TRAINSIM_PYTHON3 python3)
if(TRAINSIM_PYTHON3)
  add_test(NAME cli.validate.split_rows
           COMMAND ${TRAINSIM_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/split-rows
                   $<TARGET_FILE:trainsim> --source torchtitan --hold gemm=1 --hold attention=1)
  set_tests_properties(cli.validate.split_rows PROPERTIES PASS_REGULAR_EXPRESSION
    "^source 'torchtitan': 8 rows\; mean absolute error of the step time [0-9.]+% as modelled, [0-9.]+% with the weights\n  other +weight +[0-9.]+ +\\(standard error [0-9.]+\\)\n  communication +weight +[0-9.]+ +\\(standard error [0-9.]+\\)\n  gemm +weight +1.000 +\\(held\\)\n  attention +weight +1.000 +\\(held\\)\n$")
endif()
# A skip reason quoting a runs file's text writes its control characters escaped.
add_test(NAME cli.validate.control_characters
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DRUNS=${TRAINSIM_RUNS}
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/validate-control
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/validate_control.cmake)
set_tests_properties(cli.validate.control_characters PROPERTIES PASS_REGULAR_EXPRESSION
  "validate control checks passed")
# Two row ids that would share a file: one error line, nothing written.
add_test(NAME cli.validate.bad.scenarios_clash
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DRUNS=${TRAINSIM_RUNS}
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/validate-clash
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/validate_clash.cmake)

# Nothing validated is an error, not an empty table: a --source matching no row, a file of no
# runs, and a file whose every row is skipped (one row whose gpus, 1 more than the source's,
# do not factor into its tp x pp x dp; the table still gives the reason).
trainsim_bad_input(validate source_none "--source\\): 'nosuchsource' is in no row's source_group or source of [^;]*; expected text from a source \\(narayanan21-t1, [^)]*\\) or a source_group \\("
                   --source nosuchsource)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/validate_no_runs.json "[]\n")
trainsim_bad_input(validate no_runs "validate_no_runs.json: no runs"
                   ${CMAKE_CURRENT_BINARY_DIR}/validate_no_runs.json)
trainsim_bad_input(validate all_skipped "validate_all_skipped.json: no row could be compared"
                   ${PROJECT_SOURCE_DIR}/tests/data/validate_all_skipped.json)
# With --plot the table and its reasons still come first, then the error: the plot script's own
# "no compared rows to plot" used to stop the command before either.
add_test(NAME cli.validate.bad.all_skipped_plot
         COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2
                 "-DEXPECTED_STDERR=^error: [^\n]*no row could be compared \\(1 skipped, each with its reason in the output; no plot drawn\\)"
                 "-DEXPECTED_STDOUT=korthikanti22-inconsistent-gpus +[^\n]*tp x pp"
                 "-DCOMMAND=$<TARGET_FILE:trainsim>;validate;${PROJECT_SOURCE_DIR}/tests/data/validate_all_skipped.json;--plot;${CMAKE_CURRENT_BINARY_DIR}/validate_all_skipped.png"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
# validate --stack resolves the file's relative extends where the file is (beside it), as run
# does: the rows got the document inline and looked for its base from the working directory
# ("no such file 'base.json'" on every row). stack_pair/ is run.cmake's pair of stacks.
add_test(NAME cli.validate.stack_extends_beside
         COMMAND trainsim validate --source korthikanti
                 --stack megatron-lm=${CMAKE_CURRENT_BINARY_DIR}/stack_pair/inner/derived.json)
set_tests_properties(cli.validate.stack_extends_beside PROPERTIES PASS_REGULAR_EXPRESSION
  "\nkorthikanti22 +10 +0 " FAIL_REGULAR_EXPRESSION "no such file")
# '-' as the scenarios folder is refused (it made a folder named '-'); a plot path without an
# extension is drawn as PNG, as it always was.
trainsim_bad_input(validate scenarios_dash "command line \\(--scenarios\\): '-' would be standard output, which carries the table\\; expected a folder path"
  --source Shoeybi --scenarios -)
if(TRAINSIM_NO_MATPLOTLIB EQUAL 0)
  add_test(NAME cli.validate.plot_no_extension
           COMMAND trainsim validate --source Korthikanti --plot ${CMAKE_CURRENT_BINARY_DIR}/validate_plot)
endif()
# --scenarios may not replace an input: a row's scenario file that is the runs file or a --stack
# file is refused before anything runs, as --plot and every -o are (docs/sweep.md, "Output
# files"); the runs file, or the stack, was overwritten by the row's scenario, exit 0.
# The inputs are copied afresh before each run (a fixture): a build that does replace them
# leaves the next run its scenario, not the input.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber)
add_test(NAME cli.validate.clobber_runs_input
         COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/tests/data/validate_all_skipped.json
                 ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/korthikanti22-inconsistent-gpus.json)
add_test(NAME cli.validate.clobber_stack_input
         COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json
                 ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/bloom176b-384gpu.json)
add_test(NAME cli.validate.clobber_plot_input
         COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json
                 ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/stack_without_extension)
set_tests_properties(cli.validate.clobber_runs_input cli.validate.clobber_stack_input
                     cli.validate.clobber_plot_input PROPERTIES FIXTURES_SETUP validate_clobber)
trainsim_bad_input(validate scenarios_replace_runs "command line \\(--scenarios\\): '[^']*validate_clobber/korthikanti22-inconsistent-gpus\\.json' is the input file [^,]*, which the output would replace\\; expected another path"
  ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/korthikanti22-inconsistent-gpus.json
  --scenarios ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber)
trainsim_bad_input(validate scenarios_replace_stack "command line \\(--scenarios\\): '[^']*validate_clobber/bloom176b-384gpu\\.json' is the input file [^,]*, which the output would replace\\; expected another path"
  --source bloom --stack megatron-lm=${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/bloom176b-384gpu.json
  --scenarios ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber)
# A stack file the --stack file extends is an input too: it was replaced by the row's scenario,
# exit 0, and the --stack file no longer loaded.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/validate_extends_clobbered.json
  "{\"extends\": \"${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/bloom176b-384gpu.json\", \"id\": \"over\"}\n")
trainsim_bad_input(validate scenarios_replace_extended_stack "command line \\(--scenarios\\): '[^']*validate_clobber/bloom176b-384gpu\\.json' is the input file [^,]*, which the output would replace\\; expected another path"
  --source bloom --stack megatron-lm=${CMAKE_CURRENT_BINARY_DIR}/validate_extends_clobbered.json
  --scenarios ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber)
set_tests_properties(cli.validate.bad.scenarios_replace_extended_stack PROPERTIES
                     FIXTURES_REQUIRED validate_clobber)
# --plot too (a path without an extension is drawn as PNG): it was checked against the runs
# file only.
trainsim_bad_input(validate plot_replace_stack "command line \\(--plot\\): '[^']*validate_clobber/stack_without_extension' is the input file [^,]*, which the output would replace\\; expected another path"
  --source bloom --stack megatron-lm=${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/stack_without_extension
  --plot ${CMAKE_CURRENT_BINARY_DIR}/validate_clobber/stack_without_extension)
set_tests_properties(cli.validate.bad.scenarios_replace_runs cli.validate.bad.scenarios_replace_stack
                     cli.validate.bad.plot_replace_stack PROPERTIES FIXTURES_REQUIRED validate_clobber)
# A replaced stack is named: in the table's header, and in each row's assumptions (CSV, JSON);
# the report read as a default run's.
add_test(NAME cli.validate.stack_named_table
         COMMAND trainsim validate --source bloom --stack megatron-lm=${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json)
set_tests_properties(cli.validate.stack_named_table PROPERTIES PASS_REGULAR_EXPRESSION
  "\nstack 'megatron-lm' replaced by [^\n]*stacks/megatron-lm\\.json \\(--stack\\)\nerror = ")
add_test(NAME cli.validate.stack_named_csv
         COMMAND trainsim validate --source bloom --format csv --stack megatron-lm=${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json)
set_tests_properties(cli.validate.stack_named_csv PROPERTIES PASS_REGULAR_EXPRESSION
  "\nrow,[0-9]+,bloom176b-384gpu,[^\n]*stack 'megatron-lm' replaced by [^\n]*stacks/megatron-lm\\.json \\(--stack\\)\"\n")
# A replaced stack that no row ran is not named in the header (stderr's note says so instead).
add_test(NAME cli.validate.stack_unused_not_named
         COMMAND trainsim validate --source BLOOM --stack torchtitan-fsdp2=${PROJECT_SOURCE_DIR}/stacks/torchtitan-fsdp2.json)
set_tests_properties(cli.validate.stack_unused_not_named PROPERTIES
  PASS_REGULAR_EXPRESSION "bloom176b-384gpu" FAIL_REGULAR_EXPRESSION "replaced by")
# A python3 that exits 0 without drawing (a stub first on PATH) left an empty file, renamed
# into place as the plot, exit 0: what it leaves must begin as a PNG does.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/validate_stub_python)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/validate_stub_python/python3 "#!/bin/sh\nexit 0\n")
file(CHMOD ${CMAKE_CURRENT_BINARY_DIR}/validate_stub_python/python3
     PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
add_test(NAME cli.validate.plot_stub_python
         COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=2
                 "-DEXPECTED_STDERR=^error: --plot [^\n]*plot\\.png: python3 exited without drawing a PNG\; expected python3 with matplotlib[^\n]*\n$"
                 "-DCOMMAND=${CMAKE_COMMAND};-E;env;PATH=${CMAKE_CURRENT_BINARY_DIR}/validate_stub_python:$ENV{PATH};$<TARGET_FILE:trainsim>;validate;--source;bloom;--plot;${CMAKE_CURRENT_BINARY_DIR}/validate_stub_python/plot.png"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
# --stack takes one ID=FILE per flag: a runs file after it was read as another stack ("expected
# ID=FILE, ... got '.../published_runs.json'").
add_test(NAME cli.validate.stack_then_runs
         COMMAND trainsim validate --source bloom --stack megatron-lm=${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json
                 ${PROJECT_SOURCE_DIR}/validation/published_runs.json)
set_tests_properties(cli.validate.stack_then_runs PROPERTIES PASS_REGULAR_EXPRESSION
  "\nstack 'megatron-lm' replaced by [^\n]*stacks/megatron-lm\\.json \\(--stack\\)\nerror = ")
# A stack only a skipped row chose is no replaced stack (validate_skipped_stack.cmake).
add_test(NAME cli.validate.stack_of_skipped_row
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/validate_skipped_stack
                 -DRUNS=${PROJECT_SOURCE_DIR}/validation/published_runs.json
                 -DSTACK=${PROJECT_SOURCE_DIR}/stacks/megatron-lm.json
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/validate_skipped_stack.cmake)
set_tests_properties(cli.validate.stack_of_skipped_row PROPERTIES PASS_REGULAR_EXPRESSION
  "skipped row's stack not replaced")
# A compared row's plan names the experts' degree and a recipe's split where the row ran them
# (the Megatron-Bridge DeepSeek-V3 rows: ep 64 and the recipe's layout; the plan had neither).
add_test(NAME cli.validate.plan_ep COMMAND trainsim validate --source Megatron-Bridge --format json)
set_tests_properties(cli.validate.plan_ep PROPERTIES PASS_REGULAR_EXPRESSION
  "\"dp\": 64,\n +\"ep\": 64,\n +\"global_batch\": 4096,[^}]*\"pipeline_layout\": \\[\n +4,")
