# Writes trainsim's man page from its own --help texts, so that the page never disagrees with
# the program: cmake -DTRAINSIM=path/to/trainsim -DVERSION=x.y.z -DOUTPUT=trainsim.1
# -P man_page.cmake. One section per subcommand, its --help verbatim (no-fill).
execute_process(COMMAND ${TRAINSIM} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TRAINSIM} --help failed (${rc})")
endif()

# roff: a line starting with '.' or '\'' is a request, and '\' starts an escape.
function(roff_escape text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The usage line names the program as it was called: the page names it trainsim.
string(REPLACE "${TRAINSIM}" "trainsim" top "${top}")
# The subcommands are the lines of the Subcommands block of the top-level help.
string(REGEX MATCH "Subcommands:\n(.*)" block "${top}")
string(REGEX MATCHALL "\n  ([a-z]+)" names "\n${CMAKE_MATCH_1}")
set(commands "")
foreach(n IN LISTS names)
  string(STRIP "${n}" n)
  list(APPEND commands ${n})
endforeach()

roff_escape("${top}" top_roff)
set(page ".TH TRAINSIM 1 \"\" \"trainsim ${VERSION}\" \"User Commands\"
.SH NAME
trainsim \\- performance simulator for distributed LLM training
.SH SYNOPSIS
.B trainsim
.I command
[\\fIoptions\\fR]
.SH DESCRIPTION
trainsim predicts the step time, throughput, MFU, memory, power and cost of a training run
from a hardware profile, a model, a software stack and a parallel plan, without a GPU.
Exit status: 0 success, 2 bad input (one line on stderr naming the file or flag, the key and
what was expected), 3 a valid plan that cannot run, 1 an internal error.
.PP
.nf
${top_roff}
.fi
")
foreach(c IN LISTS commands)
  execute_process(COMMAND ${TRAINSIM} ${c} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TRAINSIM} ${c} --help failed (${rc})")
  endif()
  string(REPLACE "${TRAINSIM}" "trainsim" help "${help}")
  roff_escape("${help}" help_roff)
  string(APPEND page ".SH \"trainsim ${c}\"\n.nf\n${help_roff}\n.fi\n")
endforeach()
string(APPEND page ".SH SEE ALSO
The README and docs/ of the source distribution (installed under share/doc/trainsim).
")
file(WRITE ${OUTPUT} "${page}")
