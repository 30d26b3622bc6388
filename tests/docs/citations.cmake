# Citations in the repository must resolve inside it. Run as
#   cmake -DSOURCE_DIR=<repository root> -P citations.cmake
#
# The rule, checked over the text files (git's tracked and not-ignored files when git is
# available, else every file) under hardware_profiles/, models/, stacks/, calibration/,
# validation/, docs/ and README.md:
#   1. No file names a reference document that the repository does not ship: seed_claims.md,
#      nccl_and_hardware.md, worked_example.md, formats.md, published_runs.md, anchors.md (each as
#      a whole file name), a path containing shared/reference or shared/data, or an absolute path
#      starting with /work/. Facts and their public sources belong in docs/sources.md.
#   2. Every citation "sources.md <id>" names a section of docs/sources.md. An id is P<n> or
#      <letter>.<n> (P.0, A.5, C.3, W.1) or §<n>[.<m>] (§2.4); a list of ids joined by ", ", "/",
#      "-", "–" or " and " after one "sources.md" is checked id by id. A section exists when a
#      heading of docs/sources.md starts with the id ("### A.5 ...") or a table row of it starts
#      with the id ("| P4 | ..."). This part also covers the comments in sim/, include/, tests/,
#      calib/, bench/, scripts/ and examples/.
cmake_minimum_required(VERSION 3.20)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "citations.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(data_dirs hardware_profiles models stacks calibration validation docs README.md)
set(code_dirs sim include tests calib bench scripts examples)
set(text_ext "\\.(md|json|txt|csv|tsv|yaml|yml|cmake|cpp|hpp|h|cc|py|sh)$")

# Files under `dirs`, relative to SOURCE_DIR.
function(list_files out)
  find_program(GIT_EXECUTABLE git)
  set(files "")
  if(GIT_EXECUTABLE)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} ls-files --cached --others --exclude-standard
              -- ${ARGN}
      OUTPUT_VARIABLE listed RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0)
      string(REPLACE "\n" ";" files "${listed}")
    endif()
  endif()
  if(NOT files)
    foreach(d IN LISTS ARGN)
      if(IS_DIRECTORY ${SOURCE_DIR}/${d})
        file(GLOB_RECURSE found RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${d}/*)
        list(APPEND files ${found})
      elseif(EXISTS ${SOURCE_DIR}/${d})
        list(APPEND files ${d})
      endif()
    endforeach()
  endif()
  set(kept "")
  foreach(f IN LISTS files)
    if(f STREQUAL "")
      continue()
    endif()
    get_filename_component(name "${f}" NAME)
    if(EXISTS ${SOURCE_DIR}/${f} AND NOT IS_DIRECTORY ${SOURCE_DIR}/${f}
       AND (f MATCHES "${text_ext}" OR name MATCHES "^README"))
      list(APPEND kept ${f})
    endif()
  endforeach()
  set(${out} ${kept} PARENT_SCOPE)
endfunction()

# The lines of a file as a list; ; [ ] are replaced so that CMake's list splitting keeps one
# element per line.
function(read_lines path out)
  file(READ ${path} content)
  string(REPLACE ";" "," content "${content}")
  string(REPLACE "[" "(" content "${content}")
  string(REPLACE "]" ")" content "${content}")
  string(REPLACE "\\" "/" content "${content}")
  string(REPLACE "\n" ";" content "${content}")
  set(${out} "${content}" PARENT_SCOPE)
endfunction()

set(id_re "(P[0-9]+|[A-Z]\\.[0-9]+|§[0-9]+(\\.[0-9]+)?)")
set(sep_re "(, |/|-|–| and )")
set(cite_re "sources\\.md\\)? +${id_re}(${sep_re}${id_re})*")

# Section ids of docs/sources.md.
set(sources ${SOURCE_DIR}/docs/sources.md)
if(NOT EXISTS ${sources})
  message(FATAL_ERROR "docs/sources.md is missing")
endif()
read_lines(${sources} lines)
set(known "")
foreach(line IN LISTS lines)
  if(line MATCHES "^#+ +${id_re}( |$)")
    list(APPEND known "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^\\| *(P[0-9]+) *\\|")
    list(APPEND known "${CMAKE_MATCH_1}")
  endif()
endforeach()
list(LENGTH known n_known)
if(n_known LESS 10)
  message(FATAL_ERROR "docs/sources.md: only ${n_known} section ids found: ${known}")
endif()

set(forbidden_re
    "(^|[^A-Za-z0-9_-])(seed_claims|nccl_and_hardware|worked_example|formats|published_runs|anchors)\\.md|shared/(reference|data)|(^|[^A-Za-z0-9_.~/-])/work/")

set(errors "")
set(n_citations 0)
list_files(data_files ${data_dirs})
list_files(code_files ${code_dirs})
foreach(f IN LISTS data_files code_files)
  file(READ ${SOURCE_DIR}/${f} content)
  set(check_forbidden FALSE)
  if(f IN_LIST data_files AND content MATCHES "${forbidden_re}")
    set(check_forbidden TRUE)
  endif()
  if(NOT check_forbidden AND NOT content MATCHES "sources\\.md")
    continue()
  endif()
  read_lines(${SOURCE_DIR}/${f} lines)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(check_forbidden AND line MATCHES "${forbidden_re}")
      list(APPEND errors "${f}:${number}: cites a file outside the repository: '${CMAKE_MATCH_0}'")
    endif()
    string(REGEX MATCHALL "${cite_re}" citations "${line}")
    foreach(citation IN LISTS citations)
      string(REGEX REPLACE "^sources\\.md\\)? +" "" ids "${citation}")
      string(REGEX MATCHALL "${id_re}" ids "${ids}")
      foreach(id IN LISTS ids)
        math(EXPR n_citations "${n_citations} + 1")
        if(NOT id IN_LIST known)
          list(APPEND errors "${f}:${number}: '${citation}': no section ${id} in docs/sources.md")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

if(errors)
  list(JOIN errors "\n" text)
  message(FATAL_ERROR "Citations that do not resolve inside the repository:\n${text}")
endif()
list(LENGTH data_files n_data)
list(LENGTH code_files n_code)
message(STATUS "citations: ${n_citations} ids checked in ${n_data} data/doc and ${n_code} code "
               "files against ${n_known} sections of docs/sources.md")
