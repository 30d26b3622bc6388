# Shards of one search state one memory budget (search's "memory_per_gpu", which follows from the
# scenario and --memory-headroom that the spec digests). A shard whose budget was edited by hand
# is refused (exit 2), naming the key; unedited shards merge and keep the budget.
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 0/2 OUTPUT_FILE ${WORK}-0.json RESULT_VARIABLE rc0)
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 1/2 OUTPUT_FILE ${WORK}-1.json RESULT_VARIABLE rc1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "the sharded searches failed (${rc0}, ${rc1})")
endif()
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0.json ${WORK}-1.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\n  \"memory_per_gpu\": {\n    \"capacity_bytes\": 85899345920,")
  message(FATAL_ERROR "merge of one search's shards: exit ${rc}, ${err}, ${out}")
endif()
# A first shard rewritten by another JSON tool (0.0 written 0) merges to the same bytes: merge
# writes the budget's fraction as search does.
file(READ ${WORK}-0.json text0)
string(REPLACE "\"headroom_fraction\": 0.0" "\"headroom_fraction\": 0" rewritten "${text0}")
if(rewritten STREQUAL text0)
  message(FATAL_ERROR "no headroom_fraction 0.0 in the first shard to rewrite")
endif()
file(WRITE ${WORK}-0r.json "${rewritten}")
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0r.json ${WORK}-1.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out_rewritten ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out_rewritten STREQUAL out)
  message(FATAL_ERROR "merge of a rewritten first shard differs: exit ${rc}, ${err}")
endif()
file(READ ${WORK}-1.json text)
string(REPLACE "\"capacity_bytes\": 85899345920,\n    \"headroom_fraction\""
               "\"capacity_bytes\": 85899345921,\n    \"headroom_fraction\"" edited "${text}")
if(edited STREQUAL text)
  message(FATAL_ERROR "the shard's memory_per_gpu was not found to edit")
endif()
file(WRITE ${WORK}-1e.json "${edited}")
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0.json ${WORK}-1e.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*-1e\\.json: /memory_per_gpu: differs from [^\n]*-0\\.json's")
  message(FATAL_ERROR "merge of a shard with an edited memory budget: exit ${rc}, ${err}")
endif()
message("refused")
