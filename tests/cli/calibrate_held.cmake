# A value the points do not determine is held at the base's value, and keeps the base's record
# in /calibration/fitted: h100-dgx's record of /collective/measured/nvls_tree/Simple/fill_saturation
# names the six sets it was fitted to, and a fit to the 2-node ring log alone (no NVLS tree
# point) rewrote it as fitted to that log, with no standard error.
# Runs calibrate on h100-dgx with the given arguments, writing ${OUT}-<name>.json; fails the
# test on a non-zero exit; leaves stderr in `err` and the written profile's /calibration/inputs
# in `inputs`.
function(calibrate name)
  execute_process(COMMAND ${TRAINSIM} calibrate --base h100-dgx ${ARGN} -o ${OUT}-${name}.json
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calibrate failed (${rc}): ${e}")
  endif()
  file(READ ${OUT}-${name}.json written)
  string(JSON listed GET "${written}" calibration inputs)
  set(err "${e}" PARENT_SCOPE)
  set(inputs "${listed}" PARENT_SCOPE)
endfunction()

set(pointer /collective/measured/nvls_tree/Simple/fill_saturation)
calibrate(held ${LOGS}/h100-ndr-2node-all_reduce-ring.txt)
if(NOT err MATCHES "warning: ${pointer} is not determined by the points \\(no standard error\\); it keeps the base's value")
  message(FATAL_ERROR "the held value was not reported held: ${err}")
endif()
file(READ ${PROFILES}/h100-dgx.json base)
file(READ ${OUT}-held.json written)
string(JSON before GET "${base}" calibration fitted ${pointer})
string(JSON after GET "${written}" calibration fitted ${pointer})
string(JSON before_sets LENGTH "${before}" fitted_to)
if(before_sets LESS 2)
  message(FATAL_ERROR "the base's record is not the one this test expects: ${before}")
endif()
string(JSON equal EQUAL "${before}" "${after}")
if(NOT equal)
  message(FATAL_ERROR "the held value's record changed:\n${before}\n->\n${after}")
endif()

# Two inputs of one file name are two inputs: /calibration/inputs named all_reduce.txt once,
# where fitted_to named both sets (the second by its path).
file(MAKE_DIRECTORY ${OUT}-a ${OUT}-b)
configure_file(${LOGS}/h100-ndr-2node-all_reduce.txt ${OUT}-a/all_reduce.txt COPYONLY)
configure_file(${LOGS}/h100-ndr-2node-all_reduce-ring.txt ${OUT}-b/all_reduce.txt COPYONLY)
calibrate(two --reset ${OUT}-a/all_reduce.txt ${OUT}-b/all_reduce.txt)
if(NOT inputs MATCHES "\"all_reduce\\.txt\"" OR NOT inputs MATCHES "\"${OUT}-b/all_reduce\\.txt\"")
  message(FATAL_ERROR "the inputs do not name both logs: ${inputs}")
endif()
# A document's log counts: doc.json names logs/all_reduce.txt (labelled all_reduce.txt), so
# the command line's b/all_reduce.txt is labelled by its path, and /calibration/inputs names it
# so (it named it all_reduce.txt, the document's log's label).
file(MAKE_DIRECTORY ${OUT}-doc/logs)
configure_file(${LOGS}/h100-ndr-2node-all_reduce.txt ${OUT}-doc/logs/all_reduce.txt COPYONLY)
file(WRITE ${OUT}-doc/doc.json "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1,
 \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
 \"nccl_tests\": [{\"file\": \"logs/all_reduce.txt\", \"status\": \"healthy\"}]}")
calibrate(doc --reset ${OUT}-doc/doc.json ${OUT}-b/all_reduce.txt)
if(NOT inputs MATCHES "\"doc\\.json\"" OR NOT inputs MATCHES "\"${OUT}-b/all_reduce\\.txt\"")
  message(FATAL_ERROR "the inputs do not name the log by its label: ${inputs}")
endif()
message("held records kept, inputs named apart")
