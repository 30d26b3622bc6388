# trainsim run --seq-len "4096 " and " 4096": read as 4096, as a number on its own is. The
# leading space was taken and the trailing one refused ("cannot convert '4096 '"); a value still
# not a number is quoted without its outer spaces.
set(args run --hardware h100-dgx --model llama2-7b --gpus 8 --format json --seq-len)
execute_process(COMMAND ${TRAINSIM} ${args} 4096 RESULT_VARIABLE rc OUTPUT_VARIABLE plain)
foreach(spaced "4096 " " 4096" "\t4096 ")
  execute_process(COMMAND ${TRAINSIM} ${args} "${spaced}"
                  RESULT_VARIABLE rc2 OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc2 EQUAL rc OR NOT out STREQUAL plain)
    message(FATAL_ERROR "'${spaced}': exit ${rc2} (plain ${rc}): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${TRAINSIM} ${args} "40 96 "
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: --seq-len: cannot convert '40 96'; expected an integer")
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
message("spaces around a number read as the number")
