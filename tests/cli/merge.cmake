# trainsim merge: sharded-then-merged equals unsharded byte for byte (CSV and JSON lines), and
# duplicate rows, missing rows and mismatched headers are bad input.
add_test(NAME cli.merge.roundtrip
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DSPEC=${PROJECT_SOURCE_DIR}/examples/fig9_seq_len.json
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/merge_roundtrip
                 -P ${PROJECT_SOURCE_DIR}/tests/sweep/merge_roundtrip.cmake)

function(trainsim_merge_bad_input name message)
  add_test(NAME cli.merge.bad.${name} COMMAND trainsim merge ${ARGN})
  set_tests_properties(cli.merge.bad.${name} PROPERTIES PASS_REGULAR_EXPRESSION "^error: [^\n]*${message}")
  add_test(NAME cli.merge.bad.${name}.exit_code COMMAND trainsim merge ${ARGN})
  set_tests_properties(cli.merge.bad.${name}.exit_code PROPERTIES WILL_FAIL TRUE)
endfunction()
set(data ${PROJECT_SOURCE_DIR}/tests/sweep/data)
trainsim_merge_bad_input(duplicate "header_a.csv: line 2: duplicate row 0, also in [^\n]*header_a.csv"
  ${data}/header_a.csv ${data}/header_a.csv)
trainsim_merge_bad_input(header "header_b.csv: line 1: CSV header differs"
  ${data}/header_a.csv ${data}/header_b.csv)
trainsim_merge_bad_input(missing "missing row 1; expected every index from 0 to 2"
  ${data}/header_a.csv --expect 3)
trainsim_merge_bad_input(no_file "cannot read the file" ${data}/no_such.csv)
