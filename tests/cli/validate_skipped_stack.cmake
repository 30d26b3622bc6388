# A stack replaced with --stack that only a skipped row chose runs nothing: the header named it
# replaced. Narayanan Table 1's first row (megatron-lm), its stated peak set to 250 TFLOP/s,
# which a100-dgx does not have, is skipped after its mapping picked megatron-lm (beside a
# torchtitan row that runs); the note says
# the file changes nothing and the header names no replaced stack. The JSON's skipped row gives
# the assumptions the CSV gives.
file(READ ${RUNS} runs)
string(JSON count LENGTH "${runs}")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON id GET "${runs}" ${i} id)
  if(id STREQUAL "narayanan21-t1-1.7B-32gpu")
    string(JSON row GET "${runs}" ${i})
  elseif(id STREQUAL "torchtitan-2024-a100-llama3-8b-64gpu-selective-op")
    string(JSON compared GET "${runs}" ${i})  # a row that runs, on torchtitan-fsdp2
  endif()
endforeach()
string(JSON row SET "${row}" hardware peak_tflops_16bit 250)
file(WRITE ${OUT}.json "[${row}, ${compared}]\n")
execute_process(COMMAND ${TRAINSIM} validate ${OUT}.json --stack megatron-lm=${STACK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "validate failed (${rc}): ${err}")
endif()
if(out MATCHES "replaced")
  message(FATAL_ERROR "the header names a stack no row ran:\n${out}")
endif()
if(NOT err MATCHES "note: --stack megatron-lm: no validated row runs stack 'megatron-lm', so the file changes nothing\; the rows' stacks: torchtitan-fsdp2")
  message(FATAL_ERROR "no note that the file changes nothing: ${err}")
endif()
execute_process(COMMAND ${TRAINSIM} validate ${OUT}.json --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_QUIET)
string(JSON status GET "${json}" rows 0 status)
string(JSON assumptions LENGTH "${json}" rows 0 assumptions)
if(NOT status STREQUAL "skipped" OR assumptions EQUAL 0)
  message(FATAL_ERROR "the skipped row's JSON has no assumptions: ${json}")
endif()
message("skipped row's stack not replaced")
