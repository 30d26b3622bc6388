# trainsim merge: sharded-then-merged equals unsharded byte for byte (sweep CSV and JSON lines,
# search JSON), and duplicate rows, missing rows or shards, mismatched headers and outputs of
# different runs are bad input.
add_test(NAME cli.merge.roundtrip
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=sweep;${PROJECT_SOURCE_DIR}/examples/fig9_seq_len.json" "-DFORMATS=csv;json"
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_roundtrip
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)
# A search keeps each shard's best 4; the merged top 4 must be the unsharded top 4, so the space
# (448 plans) must be ranked again across shard borders, ties broken by plan index.
set(search_run search --hardware h100-dgx --model llama2-7b --gpus 64 --global-batch 128
    --seq-len 4096 --sharding shard_grad_op,full_shard --recompute none,selective --top 4)
add_test(NAME cli.merge.search_roundtrip
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim> "-DRUN=${search_run}"
                 -DFORMATS=json -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_roundtrip
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)
add_test(NAME cli.merge.search_roundtrip_usd
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 "-DRUN=${search_run};--objective;usd_per_million_tokens" -DFORMATS=json
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_search_roundtrip_usd
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)

set(data ${PROJECT_SOURCE_DIR}/tests/sweep/data)
trainsim_bad_input(merge duplicate "header_a.csv: line 2: duplicate row 0, also in [^\n]*header_a.csv"
  ${data}/header_a.csv ${data}/header_a.csv)
trainsim_bad_input(merge header "header_b.csv: line 1: CSV header differs"
  ${data}/header_a.csv ${data}/header_b.csv)
trainsim_bad_input(merge missing "missing row 1; expected every index from 0 to 2"
  ${data}/header_a.csv --expect 3)
trainsim_bad_input(merge no_file "cannot read the file" ${data}/no_such.csv)
trainsim_bad_input(merge search_missing_shard "missing shard 1/2; expected every shard from 0 to 1"
  ${data}/search_0of2.json)
trainsim_bad_input(merge search_duplicate_shard "search_0of2.json: /shard: shard 0/2 given twice"
  ${data}/search_0of2.json ${data}/search_0of2.json)
trainsim_bad_input(merge search_top "search_1of2_top2.json: /top: differs from [^\n]*search_0of2.json's"
  ${data}/search_0of2.json ${data}/search_1of2_top2.json)
trainsim_bad_input(merge search_and_sweep "header_a.csv: a sweep output, but [^\n]*search_0of2.json is a search output"
  ${data}/header_a.csv ${data}/search_0of2.json)
