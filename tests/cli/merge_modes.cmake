# Shards run with and without --full-simulation do not merge: its rows differ in their last
# digits, and past the whole-iteration bound it makes plans invalid. Both end records (sweep) and
# search documents carried the same digest, and merge joined them into a file neither run writes.
# cmake -DTRAINSIM=... -DSPEC=... -DWORK=... -P merge_modes.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(run_ok)
  execute_process(COMMAND ${TRAINSIM} ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN}: exit ${rc}\n${err}")
  endif()
endfunction()
run_ok(sweep ${SPEC} --shard 0/2 -o ${WORK}/s0.csv)
run_ok(sweep ${SPEC} --shard 1/2 --full-simulation -o ${WORK}/s1_full.csv)
execute_process(COMMAND ${TRAINSIM} merge ${WORK}/s0.csv ${WORK}/s1_full.csv
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*s1_full.csv: line [0-9]+: a shard of another sweep [^\n]*all run with --full-simulation or all without\n$")
  message(FATAL_ERROR "sweep shards of both modes: expected exit 2 and one error line, got ${rc}:\n${err}")
endif()
set(search search --hardware h100-dgx --model llama3.2-1b --gpus 8 --global-batch 32
    --seq-len 1024 --format json)
execute_process(COMMAND ${TRAINSIM} ${search} --shard 1/2 --full-simulation
                OUTPUT_FILE ${WORK}/q1_full.json RESULT_VARIABLE rc)
execute_process(COMMAND ${TRAINSIM} ${search} --shard 0/2
                OUTPUT_FILE ${WORK}/q0.json RESULT_VARIABLE rc)
execute_process(COMMAND ${TRAINSIM} merge ${WORK}/q0.json ${WORK}/q1_full.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*q1_full.json: /spec: differs from [^\n]*--full-simulation or not\\)\n$")
  message(FATAL_ERROR "search shards of both modes: expected exit 2 and one error line, got ${rc}:\n${err}")
endif()
