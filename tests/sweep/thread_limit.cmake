# Runs a sweep with --jobs 8 where the system can start only a few threads, and requires exit 0
# and the bytes of --jobs 1. Usage: cmake -DTRAINSIM=<exe> -DSPEC=<spec> -DWORK=<dir>
#                                          -P thread_limit.cmake
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TRAINSIM} sweep ${SPEC} --jobs 1 OUTPUT_FILE ${WORK}/one.csv
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--jobs 1 failed: ${rc}")
endif()
# glibc sizes new threads' stacks by RLIMIT_STACK; each of 1 GiB under a 3.5 GiB address space
# leaves room for two or three (three on Debian 12's glibc 2.36: the fourth fails with EAGAIN),
# and enough for the rows' heap.
execute_process(COMMAND sh -c "ulimit -s 1048576 && ulimit -v 3670016 && exec \"$0\" sweep \"$1\" --jobs 8"
                        ${TRAINSIM} ${SPEC}
                OUTPUT_FILE ${WORK}/eight.csv ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--jobs 8 under a thread limit exited ${rc}: ${err}")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "expected nothing on stderr, got: ${err}")
endif()
file(READ ${WORK}/one.csv one)
file(READ ${WORK}/eight.csv eight)
if(NOT one STREQUAL eight)
  message(FATAL_ERROR "--jobs 8 with fewer threads differs from --jobs 1")
endif()
message(STATUS "a refused thread is survived; output unchanged")
