# trainsim run --seq-len "4096 ": exit 2, and the value quoted with its space.
execute_process(COMMAND ${TRAINSIM} run --hardware h100-dgx --model llama2-7b --gpus 8
                        --seq-len "4096 "
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: --seq-len: cannot convert '4096 '; expected an integer")
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
message("refused as given")
