# The table's trace line names the trace file with its control characters escaped, as notes and
# errors do: a file name holding ESC [31m coloured the terminal.
# cmake -DTRAINSIM=... -DSCENARIO=... -DTRACE=... -DWORK=... -P compare_escape.cmake
string(ASCII 27 esc)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(named "${WORK}/ev${esc}[31mil.json")
file(READ ${TRACE} trace)
file(WRITE "${named}" "${trace}")
execute_process(COMMAND ${TRAINSIM} compare ${SCENARIO} --trace "${named}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${out}" "${esc}" raw)
if(NOT rc EQUAL 0 OR NOT raw EQUAL -1 OR NOT out MATCHES "trace        [^\n]*ev\\\\u001b\\[31mil\\.json: ")
  message(FATAL_ERROR "expected exit 0 and the trace named escaped, got ${rc}:\n${out}${err}")
endif()
message("compare escape checks passed")
