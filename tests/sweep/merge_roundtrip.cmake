# Runs a sweep unsharded and in 3 shards, merges the shards (in reverse order) and requires the
# merged file to equal the unsharded one byte for byte, for CSV and JSON lines.
# Usage: cmake -DTRAINSIM=<exe> -DSPEC=<spec.json> -DWORK=<dir> -P merge_roundtrip.cmake
file(MAKE_DIRECTORY ${WORK})
foreach(format csv json)
  execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --format ${format} --jobs 2
                          -o ${WORK}/all.${format} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "unsharded sweep failed: ${rc}")
  endif()
  set(parts)
  foreach(k 2 1 0)
    execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --format ${format} --shard ${k}/3
                            -o ${WORK}/part${k}.${format} RESULT_VARIABLE rc)
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
