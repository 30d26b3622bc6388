# Runs a command and checks its exit code and its stderr: cmake -DEXPECTED_EXIT=2
# -DEXPECTED_STDERR=regex [-DEXPECTED_STDOUT=regex] -DCOMMAND="prog;arg;..." -P expect_exit.cmake. CTest's
# PASS_REGULAR_EXPRESSION ignores the exit code and WILL_FAIL only says "non-zero", so bad-input
# tests that must exit with exactly 2 or 3 go through this script.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECTED_EXIT)
  message(FATAL_ERROR "expected exit ${EXPECTED_EXIT}, got ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED EXPECTED_STDERR AND NOT err MATCHES "${EXPECTED_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECTED_STDERR}':\n${err}")
endif()
if(DEFINED EXPECTED_STDOUT AND NOT out MATCHES "${EXPECTED_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECTED_STDOUT}':\n${out}")
endif()
string(REGEX MATCHALL "\n" lines "${err}")
list(LENGTH lines num_lines)
if(DEFINED EXPECTED_STDERR AND num_lines GREATER 1)
  message(FATAL_ERROR "expected one line on stderr, got ${num_lines}:\n${err}")
endif()
