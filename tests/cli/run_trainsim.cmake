# run_trainsim(OUT args...): runs ${TRAINSIM} with the arguments, stops the script with its exit
# code and stderr when it fails, and leaves its stdout in OUT. Included by the -P scripts here.
function(run_trainsim out)
  execute_process(COMMAND ${TRAINSIM} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout
                  ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "trainsim ${ARGN}: exit ${rc}\n${stderr}")
  endif()
  set(${out} "${stdout}" PARENT_SCOPE)
endfunction()
