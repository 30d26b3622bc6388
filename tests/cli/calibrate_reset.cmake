# Calibrates h100-dgx with --reset on one single-node NVLS log and checks the written profile:
# its measured block holds NVLS terms only, and no record of the built-in's earlier collective
# fit stays; a record of a term --reset keeps does.
execute_process(COMMAND ${TRAINSIM} calibrate --base h100-dgx ${LOG} --reset -o ${OUT}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "calibrate failed (${rc}): ${err}")
endif()
file(READ ${OUT} profile)
string(JSON measured GET "${profile}" collective measured)
string(JSON fitted GET "${profile}" calibration fitted)
foreach(stale nvls_tree ring tree)
  string(JSON value ERROR_VARIABLE missing GET "${measured}" ${stale})
  if(NOT missing)
    message(FATAL_ERROR "--reset kept /collective/measured/${stale}: ${value}")
  endif()
endforeach()
string(FIND "${fitted}" "nvls_tree" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "--reset kept the record of an earlier fit: ${fitted}")
endif()
# The built-in's GEMM contention, fitted to the H200 overlap records and no collective term,
# stays in the profile, and so does its record (it used to lose it).
string(JSON contention ERROR_VARIABLE no_record GET "${fitted}" /gpu/gemm_comm_contention)
if(no_record)
  message(FATAL_ERROR "--reset dropped the record of a value it kept: ${fitted}")
endif()
string(JSON nvls GET "${measured}" nvls Simple)
message("reset kept only nvls terms: ${nvls}")
