# `trainsim validate --scenarios DIR` on two rows whose ids map to one file name ("clash/1" and
# "clash_1", copies of the shipped file's first row): exit 2, one error line naming both rows,
# and nothing written, not even the folder (names are checked before it is created).
# cmake -DTRAINSIM=... -DRUNS=... -DWORK=... -P validate_clash.cmake
file(READ ${RUNS} text)
string(JSON row GET "${text}" 0)
string(JSON first SET "${row}" id "\"clash/1\"")
string(JSON second SET "${row}" id "\"clash_1\"")
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/runs.json "[${first}, ${second}]\n")
execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs.json --scenarios ${WORK}/scenarios
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}\nstderr: ${err}")
endif()
if(NOT err MATCHES "^error: --scenarios [^\n]*/scenarios: rows 'clash/1' and 'clash_1' would both be written to clash_1.json[^\n]*\n$")
  message(FATAL_ERROR "unexpected stderr:\n${err}")
endif()
if(EXISTS ${WORK}/scenarios)
  message(FATAL_ERROR "${WORK}/scenarios was created")
endif()
