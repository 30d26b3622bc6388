# Runs a sweep or a search unsharded and in 3 shards, merges the shards (in reverse order) and
# requires the merged file to equal the unsharded one byte for byte, in each format.
# Usage: cmake -DTRAINSIM=<exe> "-DRUN=sweep;spec.json" "-DFORMATS=csv;json" -DWORK=<dir>
#              -P merge_roundtrip.cmake
# RUN is the trainsim command line without --format and --shard.
file(MAKE_DIRECTORY ${WORK})
foreach(format ${FORMATS})
  execute_process(COMMAND ${TRAINSIM} ${RUN} --format ${format} --jobs 2
                  OUTPUT_FILE ${WORK}/all.${format} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "unsharded run failed: ${rc}")
  endif()
  set(parts)
  foreach(k 2 1 0)
    execute_process(COMMAND ${TRAINSIM} ${RUN} --format ${format} --shard ${k}/3
                    OUTPUT_FILE ${WORK}/part${k}.${format} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "shard ${k}/3 failed: ${rc}")
    endif()
    list(APPEND parts ${WORK}/part${k}.${format})
  endforeach()
  execute_process(COMMAND ${TRAINSIM} merge ${parts} -o ${WORK}/merged.${format}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "merge failed: ${rc}")
  endif()
  file(READ ${WORK}/all.${format} all)
  file(READ ${WORK}/merged.${format} merged)
  if(NOT all STREQUAL merged)
    message(FATAL_ERROR "merged ${format} differs from the unsharded output")
  endif()
endforeach()
message(STATUS "merged outputs equal the unsharded ones")
