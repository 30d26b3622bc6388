# Shards of one search run with different memory headroom count different plans as fitting, so
# merging them would report out_of_memory counts no search had: the second shard's spec digest
# differs, and merge refuses it (exit 2) naming the key. A headroom of -0 is the default's 0.
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 0/2 OUTPUT_FILE ${WORK}-0.json RESULT_VARIABLE rc0)
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 1/2 --memory-headroom 0.2
                OUTPUT_FILE ${WORK}-1.json RESULT_VARIABLE rc1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "the sharded searches failed (${rc0}, ${rc1})")
endif()
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0.json ${WORK}-1.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*-1\\.json: /spec: differs from [^\n]*-0\\.json's")
  message(FATAL_ERROR "merge of shards with different headroom: exit ${rc}, ${err}")
endif()
# "-0" is no headroom, as the default: those shards merge (the digest wrote "-0" and refused them).
execute_process(COMMAND ${TRAINSIM} ${RUN} --shard 1/2 --memory-headroom -0
                OUTPUT_FILE ${WORK}-1z.json RESULT_VARIABLE rc1z)
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0.json ${WORK}-1z.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc1z EQUAL 0 OR NOT rc EQUAL 0)
  message(FATAL_ERROR "shards with --memory-headroom -0 and none did not merge: exit ${rc}, ${err}")
endif()
# A memory budget edited in both shards (so they agree) is refused as search never writes it:
# merge copied it into its output.
foreach(shard 0 1z)
  file(READ ${WORK}-${shard}.json text)
  string(JSON text SET "${text}" memory_per_gpu headroom_fraction 1.5)
  file(WRITE ${WORK}-${shard}-edited.json "${text}")
endforeach()
execute_process(COMMAND ${TRAINSIM} merge ${WORK}-0-edited.json ${WORK}-1z-edited.json
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*-0-edited\\.json: /memory_per_gpu/headroom_fraction: expected a fraction from 0 to below 1")
  message(FATAL_ERROR "merge of shards with an edited memory budget: exit ${rc}, ${err}")
endif()
message("refused")
