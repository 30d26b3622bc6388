# Bad cases of `trainsim validate --scenarios DIR`, each exit 2 with one error line and no
# scenario left behind: two rows whose ids map to one file name ("clash/1" and "clash_1", copies
# of the shipped file's first row; not even the folder is created), or to names differing in case
# only, a file name taken by a folder,
# an id too long for a file name, and an empty folder name.
# cmake -DTRAINSIM=... -DRUNS=... -DWORK=... -P validate_clash.cmake
file(READ ${RUNS} text)
string(JSON row GET "${text}" 0)
string(JSON first SET "${row}" id "\"clash/1\"")
string(JSON second SET "${row}" id "\"clash_1\"")
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/runs.json "[${first}, ${second}]\n")
execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs.json --scenarios ${WORK}/scenarios
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "expected exit 2, got ${rc}\nstderr: ${err}")
endif()
if(NOT err MATCHES "^error: --scenarios [^\n]*/scenarios: rows 'clash/1' and 'clash_1' would both be written to clash_1.json[^\n]*\n$")
  message(FATAL_ERROR "unexpected stderr:\n${err}")
endif()
if(EXISTS ${WORK}/scenarios)
  message(FATAL_ERROR "${WORK}/scenarios was created")
endif()

# Ids that differ in case only ("Case" and "case"): one file on macOS's and Windows' file
# systems, where the second would replace the first. Refused before anything is written.
string(JSON first SET "${row}" id "\"Case\"")
string(JSON second SET "${row}" id "\"case\"")
file(WRITE ${WORK}/runs_case.json "[${first}, ${second}]\n")
execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs_case.json --scenarios ${WORK}/cased
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: --scenarios [^\n]*/cased: rows 'Case' and 'case' would be written to Case.json and case.json, one file where names ignore case[^\n]*\n$"
   OR EXISTS ${WORK}/cased)
  message(FATAL_ERROR "expected exit 2, one error line and no folder, got ${rc}:\n${err}")
endif()

# A target that is a folder (rows "a", "b" and "z", a folder already named z.json in DIR, and
# a b.json from an earlier run): exit 2 and one error line naming z.json before anything is
# written. a.json is not created, and b.json keeps its content (it was overwritten, then removed
# by the cleanup of the files the run had written).
string(JSON first SET "${row}" id "\"a\"")
string(JSON middle SET "${row}" id "\"b\"")
string(JSON second SET "${row}" id "\"z\"")
file(WRITE ${WORK}/runs_az.json "[${first}, ${middle}, ${second}]\n")
file(MAKE_DIRECTORY ${WORK}/existing/z.json)
file(WRITE ${WORK}/existing/b.json "old\n")
execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs_az.json --scenarios ${WORK}/existing
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: [^\n]*existing/z.json: is a folder; expected a file path to write \\(row 'z'\\)\n$")
  message(FATAL_ERROR "expected exit 2 and one error line naming z.json, got ${rc}:\n${err}")
endif()
if(EXISTS ${WORK}/existing/a.json OR NOT IS_DIRECTORY ${WORK}/existing/z.json)
  message(FATAL_ERROR "a failed write left a.json behind, or removed what was there")
endif()
file(READ ${WORK}/existing/b.json kept)
if(NOT kept STREQUAL "old\n")
  message(FATAL_ERROR "a failed write changed or removed b.json, which was there before")
endif()
file(GLOB leftovers ${WORK}/existing/.*.tmp.*)
if(leftovers)
  message(FATAL_ERROR "temporaries left behind: ${leftovers}")
endif()

# A folder that cannot be written (read-only, skipped as root, who writes anyway): nothing
# changes in it, b.json keeps its content.
file(REMOVE_RECURSE ${WORK}/existing/z.json)
file(CHMOD ${WORK}/existing PERMISSIONS OWNER_READ OWNER_EXECUTE)
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT uid STREQUAL "0")
  execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs_az.json --scenarios ${WORK}/existing
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(READ ${WORK}/existing/b.json kept)
  if(NOT rc EQUAL 2 OR EXISTS ${WORK}/existing/a.json OR NOT kept STREQUAL "old\n")
    message(FATAL_ERROR "an unwritable folder: expected exit 2 and nothing changed, got ${rc}:\n${err}")
  endif()
endif()
file(CHMOD ${WORK}/existing PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)

# An id too long for a file name (300 bytes): refused before anything is written.
string(REPEAT "x" 300 long_id)
string(JSON second SET "${row}" id "\"${long_id}\"")
file(WRITE ${WORK}/runs_long.json "[${second}]\n")
execute_process(COMMAND ${TRAINSIM} validate ${WORK}/runs_long.json --scenarios ${WORK}/long
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: --scenarios [^\n]*: row 'x+\\.\\.\\.' would be written to a file name of 305 bytes[^\n]*\n$"
   OR EXISTS ${WORK}/long)
  message(FATAL_ERROR "expected exit 2, one error line and no folder, got ${rc}:\n${err}")
endif()

# An empty folder name: one error line, exit 2 (every empty argument is refused before the
# subcommand runs).
execute_process(COMMAND ${TRAINSIM} validate --source BLOOM --scenarios ""
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^error: command line \\(--scenarios\\): empty value; expected a value\n$")
  message(FATAL_ERROR "expected exit 2 and one error line, got ${rc}:\n${err}")
endif()
