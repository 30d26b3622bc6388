# Installs the build tree into a scratch prefix and checks what a user gets: the program runs
# from there, the man page has a section per subcommand, and the built-in data and docs are
# copied. cmake -DBUILD_DIR=... -DPREFIX=... -P install_check.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${PREFIX}/bin/trainsim --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^trainsim [0-9]")
  message(FATAL_ERROR "installed trainsim --version: exit ${rc}, '${out}'")
endif()
file(GLOB page ${PREFIX}/share/man/man1/trainsim.1)
if(NOT page)
  message(FATAL_ERROR "no man page at share/man/man1/trainsim.1")
endif()
file(READ ${page} text)
# Every subcommand of the top-level help has its section (cmake/man_page.cmake).
foreach(c describe run collective sweep search merge calibrate compare validate diff)
  if(NOT text MATCHES "\\.SH \"trainsim ${c}\"\n")
    message(FATAL_ERROR "the man page has no section for '${c}'")
  endif()
endforeach()
foreach(f share/trainsim/hardware_profiles/h100-dgx.json share/trainsim/models/llama2-7b.json
          share/trainsim/stacks/pytorch-2.3-fsdp.json share/trainsim/examples/paper_fsdp_128.json
          share/doc/trainsim/README.md share/doc/trainsim/docs/sources.md
          share/doc/trainsim/docs/fig4_scaling.png)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
# The plotting script runs by its #! line, as in the source tree (it was installed 0644).
# (if(IS_EXECUTABLE) needs CMake 3.29.)
execute_process(COMMAND test -x ${PREFIX}/share/trainsim/examples/plot_sweep.py
                RESULT_VARIABLE not_executable)
if(NOT not_executable EQUAL 0)
  message(FATAL_ERROR "share/trainsim/examples/plot_sweep.py is installed without execute permission")
endif()
# Every docs/ link of the installed README resolves beside it.
file(READ ${PREFIX}/share/doc/trainsim/README.md readme)
# (Matched from the parenthesis: a ']' in a list element stops CMake splitting the list there.)
string(REGEX MATCHALL "\\(docs/[A-Za-z0-9_./-]+" links "${readme}")
foreach(link IN LISTS links)
  string(SUBSTRING "${link}" 1 -1 target)
  if(NOT EXISTS "${PREFIX}/share/doc/trainsim/${target}")
    message(FATAL_ERROR "the installed README links ${target}, which is not installed beside it")
  endif()
endforeach()
if(EXISTS ${PREFIX}/share/trainsim/models/files.cmake)
  message(FATAL_ERROR "build lists (files.cmake) must not be installed")
endif()
# An installed copy of a built-in profile is a valid input, as the docs promise.
execute_process(COMMAND ${PREFIX}/bin/trainsim describe
                --hardware ${PREFIX}/share/trainsim/hardware_profiles/h100-dgx.json
                --model llama2-7b --gpus 8 --seq-len 4096
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "describe with the installed h100-dgx.json: exit ${rc}: ${err}")
endif()
file(REMOVE_RECURSE ${PREFIX})
