# trainsim compare: a hand-written torch.profiler trace (tests/data/traces/tp2_overlap.json, its
# numbers derived in tests/io/kineto_reader_test.cpp) against a small TP-2 scenario; the
# simulated side must be exactly what `trainsim run` reports. Bad input: one line, exit 2.
set(TRACE_DATA ${CMAKE_CURRENT_SOURCE_DIR}/../data/traces)

add_test(NAME cli.compare.table_and_json
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DSCENARIO=${TRACE_DATA}/compare_scenario.json
                 -DTRACE=${TRACE_DATA}/tp2_overlap.json
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/compare_check.cmake)
set_tests_properties(cli.compare.table_and_json PROPERTIES PASS_REGULAR_EXPRESSION
  "compare checks passed")

# A gzip-compressed trace, made at configure time (no binary file in the source tree).
set(GZIP_TRACE ${CMAKE_CURRENT_BINARY_DIR}/array_time.json.gz)
file(ARCHIVE_CREATE OUTPUT ${GZIP_TRACE} PATHS ${TRACE_DATA}/array_time.json FORMAT raw
     COMPRESSION GZip)

set(compare_scenario ${TRACE_DATA}/compare_scenario.json)
trainsim_bad_input(compare missing_trace "--trace: missing; expected a PyTorch profiler trace"
  ${compare_scenario})
# A trace that cannot be read is named before a plan that cannot run: bad input exits 2
# (docs/compare.md), where the plan's exit 3 hid the trace. A readable trace with that plan: 3.
trainsim_bad_input(compare bad_trace_before_plan "no_such_trace.json: cannot open file"
  ${CMAKE_CURRENT_SOURCE_DIR}/../data/diff_paper_tp3.json --trace no_such_trace.json)
trainsim_expect_exit(cli.compare.impossible_plan 3 "^error: [^\n]*diff_paper_tp3.json: /parallel: gpus 128 do not split"
  compare ${CMAKE_CURRENT_SOURCE_DIR}/../data/diff_paper_tp3.json --trace ${TRACE_DATA}/tp2_overlap.json)
trainsim_bad_input(compare no_such_file "no_such_trace.json: cannot open file"
  ${compare_scenario} --trace ${TRACE_DATA}/no_such_trace.json)
trainsim_bad_input(compare gzip
  "array_time.json.gz: gzip-compressed data; expected an uncompressed JSON trace"
  ${compare_scenario} --trace ${GZIP_TRACE})
trainsim_bad_input(compare not_json "bad_truncated.json: invalid JSON at line [0-9]+"
  ${compare_scenario} --trace ${TRACE_DATA}/bad_truncated.json)
trainsim_bad_input(compare not_a_trace
  "compare_scenario.json: /: not a Chrome trace: no \"traceEvents\" key"
  ${compare_scenario} --trace ${compare_scenario})
trainsim_bad_input(compare no_kernels "bad_no_kernels.json: /traceEvents: no GPU kernels"
  ${compare_scenario} --trace ${TRACE_DATA}/bad_no_kernels.json)
trainsim_bad_input(compare no_steps "bad_no_steps.json: /traceEvents: no ProfilerStep#N ranges"
  ${compare_scenario} --trace ${TRACE_DATA}/bad_no_steps.json)
trainsim_bad_input(compare negative_dur
  "bad_negative_dur.json: /traceEvents/1/dur: negative dur; expected a duration in microseconds >= 0, got -3"
  ${compare_scenario} --trace ${TRACE_DATA}/bad_negative_dur.json)
trainsim_bad_input(compare bad_steps "--steps: unknown value 'first'; expected skip-first or all"
  ${compare_scenario} --trace ${TRACE_DATA}/tp2_overlap.json --steps first)
trainsim_bad_input(compare bad_format "--format: unknown format 'csv'; expected table or json"
  ${compare_scenario} --trace ${TRACE_DATA}/tp2_overlap.json --format csv)
trainsim_bad_input(compare bad_stage "--stage\\): no such pipeline stage; expected 0 to 0, got 1"
  ${compare_scenario} --trace ${TRACE_DATA}/tp2_overlap.json --stage 1)
# Named before the trace is read and the plan simulated: a trace that cannot be opened is not
# reached (the stage came last, below the notes of the trace and the plan).
trainsim_bad_input(compare bad_stage_first "--stage\\): no such pipeline stage; expected 0 to 0, got 1"
  ${compare_scenario} --trace no_such_trace.json --stage 1)
# With pp 1 the pipeline bubble row showed the stack's host time per step (llm-foundry-torch21's
# 171 ms, all of the stage's idle time) as a bubble; it is the idle time less that host time.
add_test(NAME cli.compare.bubble_less_host_time
         COMMAND trainsim compare ${compare_scenario} --trace ${TRACE_DATA}/tp2_overlap.json
                 --stack llm-foundry-torch21)
set_tests_properties(cli.compare.bubble_less_host_time PROPERTIES PASS_REGULAR_EXPRESSION
  "\nGPU idle \\(nothing runs\\) +100 us +171 ms[^\n]*\npipeline bubble +n/a +0\\.00 s +n/a +n/a +not measurable from one rank's trace. simulated: idle less the stack's host time per step\n")
# Steps without kernels are listed up to ten, then counted: 30,000 empty steps made a note of
# 199 KB. Here step 1 holds the only kernel and steps 2 to 15 hold none.
set(many_steps "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 20}")
foreach(i RANGE 1 15)
  math(EXPR ts "(${i} - 1) * 100")
  string(APPEND many_steps ", {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#${i}\", \"pid\": 1, \"tid\": 1, \"ts\": ${ts}, \"dur\": 100}")
endforeach()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/many_empty_steps.json "${many_steps}]}\n")
add_test(NAME cli.compare.empty_steps_counted
         COMMAND trainsim compare ${compare_scenario} --trace ${CMAKE_CURRENT_BINARY_DIR}/many_empty_steps.json)
set_tests_properties(cli.compare.empty_steps_counted PROPERTIES PASS_REGULAR_EXPRESSION
  "profiler steps 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 4 more hold no GPU kernel")
trainsim_bad_input(compare bad_scenario "bad_scenario.json: /parallel/sharding: unknown value"
  ${CMAKE_CURRENT_SOURCE_DIR}/../data/bad_scenario.json --trace ${TRACE_DATA}/tp2_overlap.json)

# scripts/trace-kernel-bandwidth (standard Python only) on the H200 trace: the HBM rate of each
# class of eager memory-bound kernel, as docs/calibration.md quotes it (contiguous 0.86 of peak,
# strided 0.40, the step's memory-bound kernels 36.46 ms per step).
find_program(TRAINSIM_PYTHON3 python3)
if(TRAINSIM_PYTHON3)
  add_test(NAME cli.compare.trace_kernel_bandwidth
           COMMAND ${TRAINSIM_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/trace-kernel-bandwidth
                   ${TRACE_DATA}/h200-llama-small.json)
  set_tests_properties(cli.compare.trace_kernel_bandwidth PROPERTIES PASS_REGULAR_EXPRESSION
    "\nstrided +293 +14\\.60 +27\\.98 +0\\.40\ncontiguous +344 +8\\.10 +33\\.41 +0\\.86\n.*\nmemory-bound +36\\.46 +97\\.76\n")
endif()
# A trace of a job of another size (tp2_overlap.json's world_size 2 against 4 GPUs): compared
# all the same, with a note that its collectives ran on other groups.
add_test(NAME cli.compare.world_size_note
         COMMAND trainsim compare ${compare_scenario} --trace ${TRACE_DATA}/tp2_overlap.json
                 --gpus 4 --global-batch 2)
set_tests_properties(cli.compare.world_size_note PROPERTIES PASS_REGULAR_EXPRESSION
  "note: [^\n]*tp2_overlap\\.json was recorded in a job of 2 ranks \\(distributedInfo\\.world_size\\)\; the scenario has 4 GPUs")

# A trace whose kernels ran on two GPUs (the first GEMM moved to device 1): read as one timeline,
# with a note on stderr naming the devices, where the table said nothing of it.
file(READ ${TRACE_DATA}/tp2_overlap.json two_devices)
string(JSON two_devices SET "${two_devices}" traceEvents 17 args device 1)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/two_devices.json "${two_devices}")
add_test(NAME cli.compare.two_devices_note
         COMMAND trainsim compare ${compare_scenario} --trace ${CMAKE_CURRENT_BINARY_DIR}/two_devices.json)
set_tests_properties(cli.compare.two_devices_note PROPERTIES PASS_REGULAR_EXPRESSION
  "note: [^\n]*two_devices.json holds kernels of 2 GPUs \\(devices 0, 1\\), read as one timeline")
# distributedInfo with a world but no rank: the table names the world, where it said "no
# distributedInfo".
file(READ ${TRACE_DATA}/tp2_overlap.json world_only)
string(JSON world_only REMOVE "${world_only}" distributedInfo rank)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/world_only.json "${world_only}")
add_test(NAME cli.compare.world_without_rank
         COMMAND trainsim compare ${compare_scenario} --trace ${CMAKE_CURRENT_BINARY_DIR}/world_only.json)
set_tests_properties(cli.compare.world_without_rank PROPERTIES PASS_REGULAR_EXPRESSION
  "world_only.json: rank unknown of 2 \\(distributedInfo has no rank\\)")
# A step whose kernels were cut from the trace (empty_step.json: tp2_overlap.json without step
# 5's launches and kernels) is left out of the average with a note, not averaged in as zeros.
add_test(NAME cli.compare.step_without_kernels
         COMMAND ${CMAKE_COMMAND} -DEXPECTED_EXIT=0
                 "-DEXPECTED_STDERR=^note: [^\n]*empty_step.json: profiler step 5 holds no GPU kernel"
                 "-DEXPECTED_STDOUT=steps +averaged 6\; skipped 4 \\(warm-up\\)\; without kernels 5"
                 "-DCOMMAND=$<TARGET_FILE:trainsim>;compare;${compare_scenario};--trace;${TRACE_DATA}/empty_step.json"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.cmake)

# A plan that does not fit in memory is compared, with the warning `run` gives (llama3-70b on
# the scenario's 2 GPUs: 539 GiB per GPU); it was compared in silence.
add_test(NAME cli.compare.unfit_warns
         COMMAND trainsim compare ${compare_scenario} --model llama3-70b
                 --trace ${TRACE_DATA}/tp2_overlap.json --format json)
set_tests_properties(cli.compare.unfit_warns PROPERTIES
  PASS_REGULAR_EXPRESSION "warning: the plan does not fit in memory \\([0-9.]+ GiB of [0-9.]+ GiB usable per GPU\\)")

# A trace in absolute Unix-epoch microseconds (older Kineto; 1.7e15 us) reads each time to 0.25
# us: a note says so. The repository's traces (relative times) get none (cli.compare.*).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/absolute_ts.json
  "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 0, \"tid\": 1, \"ts\": 1700000000000000, \"dur\": 1000},\n"
  "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_gemm\", \"pid\": 0, \"tid\": 1, \"ts\": 1700000000000100.1, \"dur\": 0.2, \"args\": {\"stream\": 7}}]}\n")
add_test(NAME cli.compare.absolute_timestamps
         COMMAND trainsim compare ${compare_scenario}
                 --trace ${CMAKE_CURRENT_BINARY_DIR}/absolute_ts.json --format json)
set_tests_properties(cli.compare.absolute_timestamps PROPERTIES
  PASS_REGULAR_EXPRESSION "note: [^\n]*absolute_ts.json: its timestamps are large \\(absolute microseconds\\?\\) and read as doubles to 0.25 us")
add_test(NAME cli.compare.relative_timestamps_no_note
         COMMAND trainsim compare ${compare_scenario} --trace ${TRACE_DATA}/tp2_overlap.json)
set_tests_properties(cli.compare.relative_timestamps_no_note PROPERTIES
  FAIL_REGULAR_EXPRESSION "timestamps are large")

# The trace line of the table escapes the file name's control characters.
add_test(NAME cli.compare.trace_name_escaped
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DSCENARIO=${compare_scenario} -DTRACE=${TRACE_DATA}/tp2_overlap.json
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}/compare-escape
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/compare_escape.cmake)
set_tests_properties(cli.compare.trace_name_escaped PROPERTIES PASS_REGULAR_EXPRESSION
  "compare escape checks passed")
# A file name with a newline is named with it escaped, as notes and tables print it: the error
# line joined the two halves with "; " ('no; exist.json'), a file that does not exist either.
trainsim_bad_input(compare newline_in_name "no.u000aexist.json: cannot open file"
  ${compare_scenario} --trace "no\nexist.json")
