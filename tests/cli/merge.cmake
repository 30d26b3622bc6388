# trainsim merge: sharded-then-merged equals unsharded byte for byte (sweep CSV and JSON lines,
# search JSON), and duplicate rows, missing rows or shards, mismatched headers and outputs of
# different runs are bad input.
add_test(NAME cli.merge.roundtrip
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=sweep;${PROJECT_SOURCE_DIR}/examples/fig9_seq_len.json" "-DFORMATS=csv;json"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_roundtrip
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)
# A search keeps each shard's best 4; the merged top 4 must be the unsharded top 4, so the space
# (448 plans) must be ranked again across shard borders, ties broken by plan index. Sharded
# searches simulate every plan that fits, as --exhaustive does (an unsharded search is bounded
# by its --top: sweep::search), so the unsharded reference runs with it.
set(search_run search --hardware h100-dgx --model llama2-7b --gpus 64 --global-batch 128
    --seq-len 4096 --sharding shard_grad_op,full_shard --recompute none,selective --top 4
    --exhaustive)
add_test(NAME cli.merge.search_roundtrip
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> "-DRUN=${search_run}"
                 -DFORMATS=json -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_roundtrip
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)
# The same with shard 1 written again by another JSON tool (keys sorted, spaced, 0.0 as 0):
# merge writes the search's own document all the same.
add_test(NAME cli.merge.search_roundtrip_rewritten
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> "-DRUN=${search_run}"
                 -DFORMATS=json -DREWRITE=ON
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_roundtrip_rewritten
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)
add_test(NAME cli.merge.search_roundtrip_usd
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=${search_run};--objective;usd_per_million_tokens" -DFORMATS=json
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_roundtrip_usd
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)

set(data ${PROJECT_SOURCE_DIR}/tests/sweep/data)
# header_a.csv is shard 0/2 of a 3-scenario sweep (rows 0 and 2), shard_1of2.csv its other half:
# `trainsim sweep` of llama3.2-1b on 8 H100 with the axis parallel.tp [1, 2, 4] (seq 1024, global
# batch 16), --shard 0/2 and 1/2. header_b.csv is shard_1of2.csv with its column "model" renamed,
# no_end_record.csv without its last line, other_spec.csv with the spec digest 00000000000000bb.
trainsim_bad_input(merge duplicate "header_a.csv: line 4: shard 0/2 given twice, also in [^\n]*header_a.csv"
  ${data}/header_a.csv ${data}/header_a.csv)
trainsim_bad_input(merge header "header_b.csv: line 1: CSV header column 3 is 'model_name'; expected 'model'"
  ${data}/header_a.csv ${data}/header_b.csv)
trainsim_bad_input(merge missing "missing shard 1/2; expected all 2 shards of the sweep"
  ${data}/header_a.csv)
trainsim_bad_input(merge expect "--expect: the shards are of a sweep of 3 scenarios; expected --expect 3"
  ${data}/header_a.csv ${data}/shard_1of2.csv --expect 4)
trainsim_bad_input(merge no_end_record "no_end_record.csv: line 2: incomplete: no end record"
  ${data}/header_a.csv ${data}/no_end_record.csv)
trainsim_bad_input(merge other_spec "other_spec.csv: line 3: a shard of another sweep .spec 00000000000000bb"
  ${data}/header_a.csv ${data}/other_spec.csv)
# The two halves merge into rows 0, 1, 2 under one header, without end record.
add_test(NAME cli.merge.csv_halves
         COMMAND trainsim merge ${data}/shard_1of2.csv ${data}/header_a.csv --expect 3)
set_tests_properties(cli.merge.csv_halves PROPERTIES PASS_REGULAR_EXPRESSION
  "^index,hardware,model,[^\n]*\n0,h100-dgx,[^\n]*,ok,[^\n]*\n1,h100-dgx,[^\n]*,ok,[^\n]*\n2,h100-dgx,[^\n]*,ok,[^\n]*\n$")
trainsim_bad_input(merge no_file "cannot read the file" ${data}/no_such.csv)
add_test(NAME cli.merge.search_headroom
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=search;--hardware;h100-dgx;--model;llama2-7b;--gpus;16;--global-batch;64;--seq-len;4096;--format;json"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_headroom
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_headroom.cmake)
set_tests_properties(cli.merge.search_headroom PROPERTIES PASS_REGULAR_EXPRESSION "refused")
add_test(NAME cli.merge.search_memory
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=search;--hardware;h100-dgx;--model;llama2-7b;--gpus;16;--global-batch;64;--seq-len;4096;--format;json"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_memory
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_memory.cmake)
set_tests_properties(cli.merge.search_memory PROPERTIES PASS_REGULAR_EXPRESSION "refused")
add_test(NAME cli.merge.search_scenario_values
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=search;--hardware;h100-dgx;--model;llama2-7b;--gpus;16;--global-batch;64;--seq-len;4096;--format;json"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_scenario
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_scenario.cmake)
set_tests_properties(cli.merge.search_scenario_values PROPERTIES PASS_REGULAR_EXPRESSION "refused")
add_test(NAME cli.merge.search_scenario_moe
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> -DMOE=ON
                 "-DRUN=search;--hardware;h100-dgx;--model;qwen3-30b-a3b;--gpus;16;--global-batch;64;--seq-len;4096;--tp;1;--pp;1;--format;json"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_scenario_moe
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_scenario.cmake)
set_tests_properties(cli.merge.search_scenario_moe PROPERTIES PASS_REGULAR_EXPRESSION "refused")
trainsim_bad_input(merge search_missing_shard "missing shard 1/2; expected every shard from 0 to 1"
  ${data}/search_0of2.json)
trainsim_bad_input(merge search_duplicate_shard "search_0of2.json: /shard: shard 0/2 given twice"
  ${data}/search_0of2.json ${data}/search_0of2.json)
trainsim_bad_input(merge search_top "search_1of2_top2.json: /top: differs from [^\n]*search_0of2.json's"
  ${data}/search_0of2.json ${data}/search_1of2_top2.json)
trainsim_bad_input(merge search_and_sweep "header_a.csv: a sweep output, but [^\n]*search_0of2.json is a search output"
  ${data}/header_a.csv ${data}/search_0of2.json)
# A search's table beside its JSON documents is neither kind, and is named so (it was called a
# sweep output).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/search_table.txt
  "Plans for llama2-7b on 16 x h100-dgx GPUs, global batch 64, seq 2048\n")
trainsim_bad_input(merge search_and_table "search_table.txt: not a search document \\(it starts 'Plans for llama2-7b on 16 x h100-dgx GPU'\\), but [^\n]*search_0of2.json is one"
  ${data}/search_0of2.json ${CMAKE_CURRENT_BINARY_DIR}/search_table.txt)
# Found by fuzzing: a row repeated at the largest index once overflowed computing the row
# expected next. index_max.csv: the header and two "invalid" rows of that index, whose first is
# out of place in the end record's shard 0/1.
trainsim_bad_input(merge index_max "index_max.csv: line 2: row 9223372036854775807 out of place in shard 0/1; expected row 0 "
  ${data}/index_max.csv)
# More shards than the soft limit on open files (tests/cli/merge_open_files.cmake).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/merge_open_files_spec.json
  "{\"base\": {\"hardware\": \"h100-dgx\", \"model\": \"llama3.2-1b\", \"cluster\": {\"gpus\": 8}, \"training\": {\"seq_len\": 1024}},
    \"axes\": {\"training.global_batch\": {\"from\": 8, \"to\": 320, \"step\": 8}}}\n")
add_test(NAME cli.merge.more_shards_than_open_files
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DSPEC=${CMAKE_CURRENT_BINARY_DIR}/merge_open_files_spec.json
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_open_files
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_open_files.cmake)
# Shards of both simulation modes (tests/cli/merge_modes.cmake).
add_test(NAME cli.merge.simulation_modes_apart
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DSPEC=${CMAKE_CURRENT_BINARY_DIR}/merge_open_files_spec.json
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_modes
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_modes.cmake)
# A shard saved with a byte-order mark is named as such (a JSON-lines one was called CSV).
string(ASCII 239 187 191 merge_bom)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/merge_bom.jsonl "${merge_bom}{\"index\": 0}\n")
trainsim_bad_input(merge byte_order_mark
  "merge_bom.jsonl: starts with a UTF-8 byte-order mark \\(bytes EF BB BF\\)\\; expected a sweep or search output as trainsim writes it, without one"
  ${CMAKE_CURRENT_BINARY_DIR}/merge_bom.jsonl)
add_test(NAME cli.merge.file_content
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_file_content
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_file_content.cmake)
set_tests_properties(cli.merge.file_content PROPERTIES PASS_REGULAR_EXPRESSION "refused")
# A run report given beside sweep shards is the file named: it was taken for a search output,
# and the line called the first sweep shard the odd one out.
add_test(NAME cli.merge.run_report_beside_shards COMMAND ${CMAKE_COMMAND}
         -DEXPECTED_EXIT=2 "-DEXPECTED_STDERR=^error: [^\n]*run_report\\.json: "
         "-DCOMMAND=$<TARGET_FILE:trainsim>;merge;${CMAKE_CURRENT_BINARY_DIR}/run_report.json;${data}/header_a.csv;${data}/shard_1of2.csv"
         -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/run_report.json "{\n  \"bubble_s\": 0.0,\n  \"collectives\": []\n}\n")
# An impossible plan's default global batch, 0, through both of the sweep's paths, its shards
# and merge (tests/cli/merge_impossible_batch.cmake).
add_test(NAME cli.merge.impossible_default_batch
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_impossible_batch
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/merge_impossible_batch.cmake)
set_tests_properties(cli.merge.impossible_default_batch PROPERTIES PASS_REGULAR_EXPRESSION
  "impossible rows agree")
