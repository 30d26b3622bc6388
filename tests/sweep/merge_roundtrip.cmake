# Runs a sweep or a search unsharded (on 1 and on 2 threads, which must agree) and in 3 shards
# (on 1, 2 and 3 threads), merges the shards (in reverse order) and requires the merged file to
# equal the unsharded one byte for byte, in each format.
# Usage: cmake -DTRAINSIM=<exe> "-DRUN=sweep;spec.json" "-DFORMATS=csv;json" -DWORK=<dir>
#              [-DREWRITE=ON] -P merge_roundtrip.cmake
# RUN is the trainsim command line without --format and --shard. With REWRITE (a search's JSON
# document), shard 1 is first written again as another JSON tool would: CMake's JSON writer
# (jsoncpp) sorts every object's keys, spaces them (" : ") and writes doubles in 17 digits, and
# each 0.0 is then written 0, as jq writes it; merge must still write the search's own bytes.
file(MAKE_DIRECTORY ${WORK})
foreach(format ${FORMATS})
  execute_process(COMMAND ${TRAINSIM} ${RUN} --format ${format} --jobs 2
                  OUTPUT_FILE ${WORK}/all.${format} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "unsharded run failed: ${rc}")
  endif()
  execute_process(COMMAND ${TRAINSIM} ${RUN} --format ${format} --jobs 1
                  OUTPUT_FILE ${WORK}/all1.${format} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "unsharded run on one thread failed: ${rc}")
  endif()
  file(READ ${WORK}/all.${format} all)
  file(READ ${WORK}/all1.${format} all1)
  if(NOT all STREQUAL all1)
    message(FATAL_ERROR "${format} on one thread differs from two threads")
  endif()
  set(parts)
  foreach(k 2 1 0)
    math(EXPR jobs "${k} + 1")
    execute_process(COMMAND ${TRAINSIM} ${RUN} --format ${format} --shard ${k}/3 --jobs ${jobs}
                    OUTPUT_FILE ${WORK}/part${k}.${format} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "shard ${k}/3 failed: ${rc}")
    endif()
    list(APPEND parts ${WORK}/part${k}.${format})
  endforeach()
  if(REWRITE)
    file(READ ${WORK}/part1.${format} doc)
    string(JSON objective GET "${doc}" objective)
    string(JSON doc SET "${doc}" objective "\"${objective}\"")  # the whole document written again
    string(REGEX REPLACE ": 0\\.0([,\n])" ": 0\\1" rewritten "${doc}")
    if(rewritten STREQUAL doc OR NOT rewritten MATCHES "\"bubble_s\" : 0,")
      message(FATAL_ERROR "the rewrite of shard 1 wrote no 0.0 as 0:\n${doc}")
    endif()
    file(WRITE ${WORK}/part1.${format} "${rewritten}\n")
  endif()
  execute_process(COMMAND ${TRAINSIM} merge ${parts} -o ${WORK}/merged.${format}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "merge failed: ${rc}")
  endif()
  file(READ ${WORK}/merged.${format} merged)
  if(NOT all STREQUAL merged)
    message(FATAL_ERROR "merged ${format} differs from the unsharded output")
  endif()
endforeach()
message(STATUS "merged outputs equal the unsharded ones")
