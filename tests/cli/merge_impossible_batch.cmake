# An impossible plan without a global batch (128 GPUs do not split into tp 3) has none: its
# row gives 0, as its dp. The sweep's fast path (the rows after a hardware/model/stack's first)
# wrote max(1, dp) x micro_batch = 1 where the loader writes 0, so a row's value depended on
# which thread resolved its hardware and model first, and merge refused the shards (0 "expected
# a count, an integer >= 1"). Each shard, the whole sweep and their merge now agree, in CSV and
# in JSON lines, in either axis order.
file(MAKE_DIRECTORY ${WORK})
# Under hybrid_shard its default shard group is none as well: 0 in JSON lines, as its dp, where
# hybrid_shard_size's floor wrote a group of 1 (the CSV leaves the column blank).
foreach(sharding none hybrid_shard)
file(WRITE ${WORK}/base.json "{\"hardware\": \"h100-dgx\", \"cluster\": {\"gpus\": 128},
 \"model\": \"llama2-7b\", \"training\": {\"seq_len\": 4096},
 \"parallel\": {\"tp\": 2, \"sharding\": \"${sharding}\"}}")
foreach(order "2, 3" "3, 2")
  file(WRITE ${WORK}/spec.json "{\"base\": \"base.json\", \"axes\": {\"parallel.tp\": [${order}]}}")
  foreach(format csv json)
    execute_process(COMMAND ${TRAINSIM} sweep ${WORK}/spec.json --format ${format} -j 1
                    OUTPUT_VARIABLE whole RESULT_VARIABLE rc0)
    execute_process(COMMAND ${TRAINSIM} sweep ${WORK}/spec.json --format ${format} --shard 0/2
                    OUTPUT_FILE ${WORK}/s0 RESULT_VARIABLE rc1)
    execute_process(COMMAND ${TRAINSIM} sweep ${WORK}/spec.json --format ${format} --shard 1/2
                    OUTPUT_FILE ${WORK}/s1 RESULT_VARIABLE rc2)
    execute_process(COMMAND ${TRAINSIM} merge ${WORK}/s0 ${WORK}/s1
                    OUTPUT_VARIABLE merged RESULT_VARIABLE rc3 ERROR_VARIABLE err)
    if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT rc3 EQUAL 0)
      message(FATAL_ERROR "tp [${order}], ${format}: exit ${rc0} ${rc1} ${rc2} ${rc3}: ${err}")
    endif()
    if(NOT merged STREQUAL whole)
      message(FATAL_ERROR "tp [${order}], ${format}: the merged shards differ from the sweep")
    endif()
    if(format STREQUAL "csv")
      # index,hardware,model,gpus,nodes,tp,pp,cp,dp,micro_batch,global_batch: tp 3, dp 0, 0.
      if(NOT whole MATCHES "\n[01],h100-dgx,llama2-7b,128,16,3,1,1,0,1,0,4096,bf16,adamw,${sharding},,")
        message(FATAL_ERROR "tp [${order}]: the impossible row's global batch is not 0:\n${whole}")
      endif()
    elseif(sharding STREQUAL "hybrid_shard" AND NOT whole MATCHES "\"shard_group\":0")
      message(FATAL_ERROR "tp [${order}]: the impossible row's shard group is not 0:\n${whole}")
    endif()
  endforeach()
endforeach()
endforeach()
message("impossible rows agree")
