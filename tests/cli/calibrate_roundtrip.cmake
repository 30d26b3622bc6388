# Calibrates on one log twice into two files, requires them byte-identical, then simulates the
# paper's FSDP setting on the written profile. Prints one line the test matches.
foreach(i 1 2)
  execute_process(COMMAND ${TRAINSIM} calibrate --base h100-dgx ${LOG} -o ${OUT}-${i}.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calibrate failed (${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}-1.json ${OUT}-2.json
                RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "two calibrations of the same log wrote different profiles")
endif()
execute_process(COMMAND ${TRAINSIM} run --hardware ${OUT}-1.json --model llama2-7b --gpus 128
                        --sharding shard_grad_op --micro-batch 2 --seq-len 4096 --format json
                RESULT_VARIABLE rc OUTPUT_VARIABLE report ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run on the calibrated profile failed (${rc}): ${err}")
endif()
string(JSON tokens GET "${report}" tokens_per_s)
message("identical profiles; run: ${tokens} tokens/s")
