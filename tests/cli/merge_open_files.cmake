# `trainsim merge` of more shards than the soft limit on open files (40 shards, ulimit -Sn 24):
# their rows interleave, so every shard is open at once, and the merge raises the soft limit to
# the hard one; the result is the unsharded sweep's bytes. With the hard limit that low too, one
# error line names the limit, not a healthy shard as unreadable ("cannot read the file").
# cmake -DTRAINSIM=... -DSPEC=... -DWORK=... -P merge_open_files.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} -o ${WORK}/whole.csv RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the unsharded sweep failed: ${rc}")
endif()
set(shards "")
foreach(k RANGE 39)
  execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --shard ${k}/40 -o ${WORK}/${k}.csv
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "shard ${k}/40 failed: ${rc}")
  endif()
  list(APPEND shards ${WORK}/${k}.csv)
endforeach()
string(REPLACE ";" " " shard_args "${shards}")
execute_process(COMMAND sh -c "ulimit -Sn 24 && exec \"$0\" merge ${shard_args} -o \"$1\""
                        ${TRAINSIM} ${WORK}/merged.csv
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "merge under a soft limit of 24 open files: exit ${rc}\n${err}")
endif()
file(READ ${WORK}/whole.csv whole)
file(READ ${WORK}/merged.csv merged)
if(NOT whole STREQUAL merged)
  message(FATAL_ERROR "the merge of 40 shards differs from the unsharded sweep")
endif()
execute_process(COMMAND sh -c "ulimit -n 24 && exec \"$0\" merge ${shard_args} -o \"$1\""
                        ${TRAINSIM} ${WORK}/merged2.csv
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*: cannot read the file \\(Too many open files\\): merge holds every shard open at once; expected a limit on open files \\(ulimit -n\\) above the number of shards\n$")
  message(FATAL_ERROR "merge under a hard limit of 24 open files: expected exit 2 and one line naming the limit, got ${rc}:\n${err}")
endif()
