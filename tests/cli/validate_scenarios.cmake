# `trainsim validate --scenarios DIR` writes each compared row's scenario; `trainsim run` on the
# file must reproduce the row's prediction to the last digit (both print the same double).
# Here the BLOOM-176B row (tokens/s per GPU, one compared row; the source's other rows are
# skipped, so the folder holds one file) and an llm-foundry H100 row, whose stack is inlined with
# the row's fp32 gradient reduction.
# cmake -DTRAINSIM=... -DOUT=... -P validate_scenarios.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_trainsim.cmake)

file(REMOVE_RECURSE ${OUT})
foreach(case "BLOOM;bloom176b-384gpu" "llm-foundry MPT benchmarks, H100;foundry-h100-80g-mpt-13b-s2048-g8-mb2")
  list(GET case 0 source)
  list(GET case 1 id)
  # The folder named with a trailing separator, missing the first time: created.
  run_trainsim(json validate --source ${source} --format json --scenarios ${OUT}/)
  string(JSON n LENGTH "${json}" rows)
  math(EXPR last "${n} - 1")
  set(predicted "")
  foreach(i RANGE ${last})
    string(JSON row_id GET "${json}" rows ${i} id)
    if(row_id STREQUAL id)
      string(JSON predicted GET "${json}" rows ${i} predicted)
    endif()
  endforeach()
  if(predicted STREQUAL "")
    message(FATAL_ERROR "validate --source ${source}: no compared row ${id}")
  endif()
  if(NOT EXISTS ${OUT}/${id}.json)
    message(FATAL_ERROR "validate --scenarios ${OUT}: no file ${id}.json")
  endif()
  run_trainsim(report run ${OUT}/${id}.json --format json)
  string(JSON simulated GET "${report}" tokens_per_s_per_gpu)
  if(NOT simulated STREQUAL predicted)
    message(FATAL_ERROR "${id}: trainsim run gives ${simulated} tokens/s per GPU, validate ${predicted}")
  endif()
endforeach()
file(GLOB written ${OUT}/*.json)
list(LENGTH written count)
if(NOT count EQUAL 71)
  message(FATAL_ERROR "expected 71 scenario files (1 BLOOM row, 70 H100 rows), got ${count}")
endif()
