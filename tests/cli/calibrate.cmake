# trainsim calibrate: fits on the logs of calibration/, residual tables, the fitted profile,
# determinism, reported-problem logs and bad input.
set(CALIBRATION_DIR ${PROJECT_SOURCE_DIR}/calibration)
set(CALIBRATION_TEST_DATA ${CMAKE_CURRENT_SOURCE_DIR}/../data/calibration)

# The H100 document: seven healthy logs fitted, three reported-problem logs skipped with a note.
add_test(NAME cli.calibrate.h100
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/h100-dgx.json)
set_tests_properties(cli.calibrate.h100 PROPERTIES PASS_REGULAR_EXPRESSION
  "h100-ndr-8node-all_reduce.txt +14 +[0-9.]+% +[0-9.]+% +[0-9.]+%"
  # Its logs of 1 to 32 nodes hold the multi-node terms: no call priced past the line rate.
  FAIL_REGULAR_EXPRESSION "the fitted profile prices")
# Fitting the reported-problem logs on purpose: the command says how badly they fit.
add_test(NAME cli.calibrate.problem_logs
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/h100-dgx.json
                 --include-problem-logs)
set_tests_properties(cli.calibrate.problem_logs PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: h100-ndr-2node-all_reduce-lowbw.txt is marked reported_problem: mean \\|error\\| [0-9.]+%")
# A log given directly, then the written profile used by `run`; two runs write the same bytes.
add_test(NAME cli.calibrate.writes_profile
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DLOG=${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/calibrated
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/calibrate_roundtrip.cmake)
set_tests_properties(cli.calibrate.writes_profile PROPERTIES PASS_REGULAR_EXPRESSION
  "identical profiles\; run: [0-9.]+ tokens/s")

trainsim_bad_input(calibrate no_input "calibrate: expected at least one input" --base h100-dgx)
trainsim_bad_input(calibrate garbage "garbage.txt: line 2: no nccl-tests table rows"
  --base h100-dgx ${CALIBRATION_TEST_DATA}/garbage.txt)
trainsim_bad_input(calibrate out_of_order "out_of_order.txt: line 48: sizes out of order"
  --base h100-dgx ${CALIBRATION_TEST_DATA}/out_of_order.txt)
# A row whose size only starts like a number is named on its line: '4194304x' and '4,194,304'
# were read as chatter, the row dropped without a word and the fit run on 14 of the 15 points.
file(READ ${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt ndr_log)
foreach(size 4194304x 4,194,304)
  string(REPLACE "\n     4194304       1048576 " "\n     ${size}       1048576 " typo_log "${ndr_log}")
  string(REPLACE "," "_" typo_name "${size}")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/size_${typo_name}.txt "${typo_log}")
  trainsim_bad_input(calibrate size_${typo_name} "size_${typo_name}\\.txt: line 46: size \\(B\\): expected an integer >= 0, got ${size}\n$"
    --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/size_${typo_name}.txt)
endforeach()
# -o - is refused: calibrate's stdout carries the fit's tables (a file named '-' was written).
trainsim_bad_input(calibrate output_dash "command line \\(-o\\): '-' would be standard output, which carries the fit's tables\\; expected a file path"
  --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt -o -)
# The op the document's entry claims is named at the entry, with the log's line (the log and
# line alone used to be).
trainsim_bad_input(calibrate wrong_op "wrong_op.json: /nccl_tests/0/op: the claimed op all_gather does not fit the table[^\n]*h100-ndr-2node-all_reduce.txt, line 58\\)"
  --base h100-dgx ${CALIBRATION_TEST_DATA}/wrong_op.json)
trainsim_bad_input(calibrate no_ranks "cannot tell the ranks and nodes of the run"
  --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/h200-ib-2node-all_reduce-partial.txt)
trainsim_bad_input(calibrate missing_file "cannot open the file"
  --base h100-dgx ${CALIBRATION_TEST_DATA}/no_such_log.txt)
# The profile to start from is named by its flag: an unknown id, a missing file.
trainsim_bad_input(calibrate unknown_base "command line \\(--base\\): unknown hardware profile 'h100'; did you mean 'h100-dgx'"
  --base h100 ${CALIBRATION_DIR}/h100-dgx.json)
trainsim_bad_input(calibrate missing_base "command line \\(--base\\): no such file 'no_such_profile.json'; expected a hardware profile JSON file"
  --base no_such_profile.json ${CALIBRATION_DIR}/h100-dgx.json)
trainsim_bad_input(calibrate bad_freeze "--freeze: unknown parameter '/gpu/gemm/max'"
  --base h100-dgx --freeze /gpu/gemm/max ${CALIBRATION_DIR}/h100-dgx.json)
trainsim_bad_input(calibrate bad_min_bytes "--min-bytes: "
  --base h100-dgx --min-bytes 1MB/s ${CALIBRATION_DIR}/h100-dgx.json)

# --format json: the same residuals in SI for scripts.
add_test(NAME cli.calibrate.json
         COMMAND trainsim calibrate --base a100-dgx ${CALIBRATION_DIR}/a100-dgx.json --format json)
set_tests_properties(cli.calibrate.json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"set\": \"a100-1node-all_reduce.txt\",[^}]*\"unit\": \"bytes_per_s\",[^}]*\"error\"")
trainsim_bad_input(calibrate bad_format "--format: unknown format 'xml'; expected table or json"
  --base h100-dgx --format xml ${CALIBRATION_DIR}/a100-dgx.json)

# --reset: a refit of the built-in h100-dgx on the one-node log alone keeps none of the
# multi-node terms the built-in was fitted to, nor their records.
add_test(NAME cli.calibrate.reset
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DLOG=${CALIBRATION_DIR}/nccl_tests/h100-1node-all_reduce-nvls.txt
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/reset.json
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/calibrate_reset.cmake)
set_tests_properties(cli.calibrate.reset PROPERTIES PASS_REGULAR_EXPRESSION
  "reset kept only nvls terms")

# An output path that cannot be written fails before the fit: one line, no tables on stdout
# (expect_exit.cmake requires one stderr line; a folder is no file to write).
trainsim_bad_input(calibrate output_is_folder ": is a folder; expected a file path to write\n$"
  --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt -o ${CMAKE_CURRENT_BINARY_DIR})
# A measurement document that lists one nccl-tests log twice (the same file spelled two ways):
# its points would count twice, as the command line already refuses.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_twice.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"x\"},
    \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/a100-1node-all_reduce.txt\"},
                     {\"file\": \"${CALIBRATION_DIR}/nccl_tests/../nccl_tests/a100-1node-all_reduce.txt\"}]}\n")
trainsim_bad_input(calibrate log_twice "log_twice.json: /nccl_tests/1/file: the nccl-tests log [^\n]* is already an input"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_twice.json)
# A document's log that is not there: the document and its entry are named (the log's path alone
# used to be), with the folder a relative path is taken from.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_missing.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"x\"},
    \"nccl_tests\": [{\"file\": \"no_such_log.txt\"}]}\n")
trainsim_bad_input(calibrate log_missing "log_missing.json: /nccl_tests/0/file: no nccl-tests log at [^\n]*no_such_log.txt \\(a relative path is taken from the document's folder\\); expected an existing log file"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_missing.json)
# A log given alone whose rank lines are cut short (the first 100 ranks of a 1,024-rank run,
# the 13th host with 4 of 8): its group cannot be read off them; it used to be fitted as 13x8.
trainsim_bad_input(calibrate uneven_hosts "h100-128node-all_reduce-ring-ll128.txt: the rank lines list 100 ranks on 13 hosts, 4 to 8 per host: a list cut short, or an uneven run; expected the log named in a measurement document"
  --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/h100-128node-all_reduce-ring-ll128.txt)

# A fit that stops at its iteration limit says so on stderr (only the table's header said it):
# the h200-sxm suite fitted from the documented start values alone (--reset: the base's values
# are those) takes all 200 (Ceres lists 201, the start being its iteration 0). Without --reset
# the fit from the committed profile's values converges and is kept.
add_test(NAME cli.calibrate.not_converged
         COMMAND trainsim calibrate --base h200-sxm ${CALIBRATION_DIR}/h200-sxm/suite.json --reset)
set_tests_properties(cli.calibrate.not_converged PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: the fit did not converge in 200 iterations\; its values are where it stopped")
# Points of another GPU are fitted as the profile's, with a warning naming both.
add_test(NAME cli.calibrate.other_gpu
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/a100-1node-all_reduce.txt)
set_tests_properties(cli.calibrate.other_gpu PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: [^\n]*a100-1node-all_reduce.txt was measured on NVIDIA A100[^\n]*, not the H100 of profile 'h100-dgx'")
# Parameter pointers are printed whole (they were cut at 58 characters, which --freeze refused);
# --min-bytes takes a bare count of bytes; --reset keeps a frozen term at the base's value and
# lists it (it was held at NCCL's 1 and not shown).
add_test(NAME cli.calibrate.freeze_after_reset
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/h100-dgx.json --reset
                 --min-bytes 1048576
                 --freeze /collective/measured/ring/Simple/efficiency_per_doubling)
set_tests_properties(cli.calibrate.freeze_after_reset PROPERTIES PASS_REGULAR_EXPRESSION
  "/collective/measured/nvls_tree/Simple/bandwidth_factor_multi_node +1 .*/collective/measured/ring/Simple/efficiency_per_doubling +0\\.9073 +frozen")
# A document that names one run's log twice, under two names: refused (its points count twice).
configure_file(${CALIBRATION_DIR}/nccl_tests/a100-1node-all_reduce.txt
               ${CMAKE_CURRENT_BINARY_DIR}/log_copy_a.txt COPYONLY)
configure_file(${CALIBRATION_DIR}/nccl_tests/a100-1node-all_reduce.txt
               ${CMAKE_CURRENT_BINARY_DIR}/log_copy_b.txt COPYONLY)
# A measurement document of the A100 log copies: `entries` is its nccl_tests array's content.
function(a100_log_document name entries)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.json
    "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA A100-SXM4-40GB\"},
      \"nccl_tests\": [${entries}]}\n")
endfunction()
a100_log_document(log_copies "{\"file\": \"log_copy_a.txt\"}, {\"file\": \"log_copy_b.txt\"}")
trainsim_bad_input(calibrate log_copies "log_copies.json: /nccl_tests/1/file: the nccl-tests log [^\n]*log_copy_b.txt has the same content as [^\n]*log_copy_a.txt"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_copies.json)
# So is a copy of a measurement document under another name: it was fitted twice without a
# word (62 -> 124 points on the h200-sxm suite's max_efficiency), and leave-one-out predicted
# each copy from the other at 0.0% error.
configure_file(${CALIBRATION_DIR}/h200-sxm/suite.json ${CMAKE_CURRENT_BINARY_DIR}/suite_a.json COPYONLY)
configure_file(${CALIBRATION_DIR}/h200-sxm/suite.json ${CMAKE_CURRENT_BINARY_DIR}/suite_b.json COPYONLY)
trainsim_bad_input(calibrate document_copies "suite_b.json: the measurement document has the same content as [^\n]*suite_a.json\; expected each run once, or its points count twice"
  --base h200-sxm ${CMAKE_CURRENT_BINARY_DIR}/suite_a.json ${CMAKE_CURRENT_BINARY_DIR}/suite_b.json)
# The same run in other bytes (CRLF line endings, the footer cut off) is refused too: the two
# tables print the same time for every size. It was fitted twice without a word.
file(READ ${CALIBRATION_DIR}/nccl_tests/a100-1node-all_reduce.txt a100_log_text)
string(REPLACE "\n" "\r\n" a100_log_crlf "${a100_log_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_copy_crlf.txt "${a100_log_crlf}")
string(REGEX REPLACE "# Out of bounds[^\n]*\n.*$" "" a100_log_cut "${a100_log_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_copy_cut.txt "${a100_log_cut}")
trainsim_bad_input(calibrate log_copy_crlf "log_copy_crlf.txt: the nccl-tests log [^\n]*log_copy_crlf.txt has the same table as [^\n]*log_copy_a.txt \\(every size and time\\)"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_copy_a.txt ${CMAKE_CURRENT_BINARY_DIR}/log_copy_crlf.txt)
trainsim_bad_input(calibrate log_copy_cut "log_copy_cut.txt: the nccl-tests log [^\n]*log_copy_cut.txt has the same table as [^\n]*log_copy_a.txt"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_copy_a.txt ${CMAKE_CURRENT_BINARY_DIR}/log_copy_cut.txt)
# An all_gather table without the test line fits all_to_all's columns too (nccl-tests before
# 2.16.7 prints no test line): read as all_gather with a note, where an alltoall_perf log was
# fitted as all_gather without a word; a file named for all_to_all is read as that, whose points
# calibration refuses.
configure_file(${CALIBRATION_DIR}/nccl_tests/b200-roce-2node-all_gather.txt
               ${CMAKE_CURRENT_BINARY_DIR}/gather_or_a2a.txt COPYONLY)
configure_file(${CALIBRATION_DIR}/nccl_tests/b200-roce-2node-all_gather.txt
               ${CMAKE_CURRENT_BINARY_DIR}/alltoall_perf.txt COPYONLY)
add_test(NAME cli.calibrate.op_inferred_note
         COMMAND trainsim calibrate --base b200-dgx ${CMAKE_CURRENT_BINARY_DIR}/gather_or_a2a.txt)
set_tests_properties(cli.calibrate.op_inferred_note PROPERTIES PASS_REGULAR_EXPRESSION
  "note: [^\n]*gather_or_a2a.txt: no '# Collective test starting:' line, and its table fits all_to_all as well as all_gather: read as all_gather. where it measured all_to_all, say \"op\" in its entry of a measurements document")
trainsim_bad_input(calibrate op_from_file_name "alltoall_perf.txt: line 35: all_to_all is priced from link bandwidths, which calibration does not fit"
  --base b200-dgx ${CMAKE_CURRENT_BINARY_DIR}/alltoall_perf.txt)
# A log whose every size is below --min-bytes (the 4-node H100 VM log's rows to 512 KiB) beside a
# whole one: said, where it was left out in silence ("15 points from 1 measurement sets").
file(READ ${CALIBRATION_DIR}/nccl_tests/h100-ndr-4node-vm-all_reduce.txt h100_4node_text)
string(REGEX REPLACE "\n +1048576 [^\n]*\n.*$" "\n" h100_4node_small "${h100_4node_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/small_sizes.txt "${h100_4node_small}")
add_test(NAME cli.calibrate.all_below_min_bytes_note
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt
                 ${CMAKE_CURRENT_BINARY_DIR}/small_sizes.txt)
set_tests_properties(cli.calibrate.all_below_min_bytes_note PROPERTIES PASS_REGULAR_EXPRESSION
  "note: [^\n]*small_sizes.txt: all its 17 collective sizes are below --min-bytes \\(1MiB\\), so none is fitted\n")
# A document's entry at fault is named at its key: a folder for a log ("error: .: cannot read:
# it is a directory" named neither the document nor the entry), an algorithm NCCL cannot run
# there (named at the log's line 44).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/entry_folder.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"}, \"nccl_tests\": [{\"file\": \".\", \"status\": \"healthy\"}]}\n")
trainsim_bad_input(calibrate entry_folder "entry_folder.json: /nccl_tests/0/file: the nccl-tests log [^\n]*: cannot read: it is a directory"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/entry_folder.json)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/entry_nvls.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"}, \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt\", \"status\": \"healthy\", \"algorithm\": \"nvls\"}]}\n")
trainsim_bad_input(calibrate entry_algorithm "entry_nvls.json: /nccl_tests/0/algorithm: NCCL could not run all_reduce on 16 ranks over 2 nodes with NCCL_ALGO=nvls on profile 'h100-dgx' \\([^\n]*h100-ndr-2node-all_reduce.txt, line 44\\). expected an algorithm and protocol it has"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/entry_nvls.json)
# A protocol the declared algorithm does not run with (NVLS with LL) is the protocol key's fault,
# where the algorithm key was named.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/entry_nvls_ll.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"}, \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h100-1node-all_reduce-nvls.txt\", \"status\": \"healthy\", \"algorithm\": \"nvls\", \"protocol\": \"ll\"}]}\n")
trainsim_bad_input(calibrate entry_protocol "entry_nvls_ll.json: /nccl_tests/0/protocol: NCCL could not run all_reduce on 8 ranks over 1 nodes with NCCL_ALGO=nvls NCCL_PROTO=LL"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/entry_nvls_ll.json)
# A copy cut short in its table (a job killed mid-run: the rows of the 2-node H100 log up to
# 128 MiB, sizes from 1 MiB among them), in either order: its points were fitted twice without a
# word.
file(READ ${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt h100_log_text)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_whole.txt "${h100_log_text}")
string(REGEX REPLACE "\n +268435456 [^\n]*\n.*$" "\n" h100_log_short "${h100_log_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_copy_short.txt "${h100_log_short}")
trainsim_bad_input(calibrate log_copy_short "log_copy_short.txt: the nccl-tests log [^\n]*log_copy_short.txt holds the first [0-9]+ rows of [^\n]*log_whole.txt's table, every size and time \\(a copy cut short\\)"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_whole.txt ${CMAKE_CURRENT_BINARY_DIR}/log_copy_short.txt)
trainsim_bad_input(calibrate log_copy_short_first "log_whole.txt: the nccl-tests log [^\n]*log_whole.txt's table holds [^\n]*log_copy_short.txt's [0-9]+ rows as its first ones"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_copy_short.txt ${CMAKE_CURRENT_BINARY_DIR}/log_whole.txt)
# A copy cut to its tail (the rows from 1 MiB to 16 GiB of the same log, a paste of the large
# sizes without the footer, whose mean busbw would not hold): "30 points from 2 measurement
# sets", the same 15 twice.
string(REGEX REPLACE "\n +(8|16|32|64|128|256|512|1024|2048|4096|8192|16384|32768|65536|131072|262144|524288) +[0-9]+ +float[^\n]*" "" h100_log_tail "${h100_log_text}")
string(REGEX REPLACE "# Out of bounds[^\n]*\n.*$" "" h100_log_tail "${h100_log_tail}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_copy_tail.txt "${h100_log_tail}")
trainsim_bad_input(calibrate log_copy_tail "log_copy_tail.txt: the nccl-tests log [^\n]*log_copy_tail.txt holds the last 15 rows of [^\n]*log_whole.txt's table, every size and time \\(a copy cut short\\)"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_whole.txt ${CMAKE_CURRENT_BINARY_DIR}/log_copy_tail.txt)
# A log faster than the algorithm its document declares names the declaration: the NVLS-tree
# 2-node log of nccl-tests#309 declared ring (the documentation's example did this) was blamed
# on the time's unit, sizes and dtype only.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/nvls_as_ring.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt\", \"algorithm\": \"ring\", \"protocol\": \"Simple\"}]}\n")
trainsim_bad_input(calibrate declared_algorithm "h100-ndr-2node-all_reduce.txt: line 53: [^\n]*above what its NVLink and NICs carry for NCCL's ring[^\n]*the algorithm [^\n]*nvls_as_ring.json: /nccl_tests/0/algorithm declares: NCCL may have run another"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/nvls_as_ring.json)
# -o may not replace a log a document names (those on the command line were already guarded).
a100_log_document(log_named "{\"file\": \"log_copy_a.txt\"}")
trainsim_bad_input(calibrate output_is_named_log "command line \\(-o\\)[^\n]*log_copy_a.txt"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_named.json -o ${CMAKE_CURRENT_BINARY_DIR}/log_copy_a.txt)
# ... nor a log the document marks reported_problem, which is skipped but still an input.
a100_log_document(log_problem
  "{\"file\": \"log_copy_a.txt\"}, {\"file\": \"log_copy_b.txt\", \"status\": \"reported_problem\"}")
trainsim_bad_input(calibrate output_is_problem_log "command line \\(-o\\)[^\n]*log_copy_b.txt"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_problem.json -o ${CMAKE_CURRENT_BINARY_DIR}/log_copy_b.txt)
# A document whose only log is marked reported_problem leaves no point: that is the cause named
# (the fit's own message blamed the minimum size, and the skip note was lost).
a100_log_document(log_only_problem "{\"file\": \"log_copy_b.txt\", \"status\": \"reported_problem\"}")
trainsim_bad_input(calibrate only_problem_logs "calibrate: the one log of the inputs is marked reported_problem and skipped, which leaves no point to fit \\(log_copy_b.txt [^\n]*--include-problem-logs"
  --base a100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_only_problem.json)
# A log of another NCCL release than the profile mimics is fitted with a warning (NCCL's choice
# of algorithm and protocol is the profile's), and a version that is no version is refused.
add_test(NAME cli.calibrate.other_nccl
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt)
set_tests_properties(cli.calibrate.other_nccl PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: [^\n]*h100-ndr-2node-all_reduce.txt ran NCCL 2\\.26\\.2\; profile 'h100-dgx' prices NCCL 2\\.20's algorithm and protocol choices")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/nccl_garbage.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1,
    \"environment\": {\"device\": \"NVIDIA H100\", \"nccl\": \"garbage\"},
    \"launch\": [{\"time\": \"5 us\"}]}\n")
trainsim_bad_input(calibrate nccl_garbage "nccl_garbage.json: /environment/nccl: expected an NCCL version like \"2.21.5\" \\(as NCCL prints it\\), got \"garbage\""
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/nccl_garbage.json)
# A document that gives the cut-short log's ranks but not its nodes: the hosts still come from
# the rank lines, so it is refused as the bare log is, at the entry's missing key.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/log_ranks_only.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h100-128node-all_reduce-ring-ll128.txt\", \"ranks\": 1024}]}\n")
trainsim_bad_input(calibrate uneven_hosts_ranks_only "log_ranks_only.json: /nccl_tests/0/nodes: missing required key: the rank lines of [^ ]*h100-128node-all_reduce-ring-ll128.txt list 100 ranks on 13 hosts"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/log_ranks_only.json)
# GPU names: a GH200 is not an H200, an H100 PCIe not the SXM module of h100-dgx.
foreach(case "gh200;NVIDIA GH200 480GB;h200-sxm;GH200;H200" "h100pcie;NVIDIA H100 PCIe;h100-dgx;H100 PCIe;H100")
  list(GET case 0 name)
  list(GET case 1 device)
  list(GET case 2 profile)
  list(GET case 3 measured)
  list(GET case 4 expected)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/device_${name}.json
    "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"${device}\"},
      \"launch\": [{\"time\": \"5 us\"}, {\"time\": \"6 us\"}]}\n")
  add_test(NAME cli.calibrate.device_${name}
           COMMAND trainsim calibrate --base ${profile} ${CMAKE_CURRENT_BINARY_DIR}/device_${name}.json)
  set_tests_properties(cli.calibrate.device_${name} PROPERTIES PASS_REGULAR_EXPRESSION
    "warning: [^\n]*device_${name}.json was measured on ${device}, not the ${expected} of profile '${profile}'")
endforeach()
# A GPU of no model calibrate knows is no longer fitted in silence: its whole name differs from
# the profile's GPU.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/device_unknown.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA GeForce RTX 4090\"},
    \"launch\": [{\"time\": \"5 us\"}, {\"time\": \"6 us\"}]}\n")
add_test(NAME cli.calibrate.device_unknown
         COMMAND trainsim calibrate --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/device_unknown.json)
set_tests_properties(cli.calibrate.device_unknown PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: [^\n]*device_unknown.json was measured on NVIDIA GeForce RTX 4090, a GPU calibrate does not recognise, not the H100 of profile 'h100-dgx'")
# The same unknown GPU spelled with and without the vendor's words is not another GPU.
file(READ ${PROJECT_SOURCE_DIR}/hardware_profiles/h100-dgx.json rtx_profile)
string(JSON rtx_profile SET "${rtx_profile}" id "\"rtx\"")
string(JSON rtx_profile SET "${rtx_profile}" gpu name "\"RTX 4090\"")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/rtx_profile.json "${rtx_profile}")
add_test(NAME cli.calibrate.device_unknown_same_gpu
         COMMAND trainsim calibrate --base ${CMAKE_CURRENT_BINARY_DIR}/rtx_profile.json
                 ${CMAKE_CURRENT_BINARY_DIR}/device_unknown.json)
set_tests_properties(cli.calibrate.device_unknown_same_gpu PROPERTIES
  PASS_REGULAR_EXPRESSION "# 2 points from 2 measurement sets\; 1 parameters (fitted|kept)"
  FAIL_REGULAR_EXPRESSION "was measured on")
# A frozen LL128 term that inherits Simple's value is pinned at it (2.693 on h100-dgx), not left
# to follow Simple's refit.
add_test(NAME cli.calibrate.freeze_inherited
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/h100-dgx.json
                 --freeze /collective/measured/ring/LL128/latency_scale
                 --freeze /collective/measured/ring/LL128/latency_scale)
set_tests_properties(cli.calibrate.freeze_inherited PROPERTIES PASS_REGULAR_EXPRESSION
  "\n  /collective/measured/ring/LL128/latency_scale +2\\.693 +frozen\n[^ ]")
# A record given twice field for field is fitted twice, so a pasted copy weighs double: a
# warning names both (two runs may agree, so it is not refused); a third launch record at
# another time is not a repeat.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/repeated_record.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"launch\": [{\"time\": \"5 us\"}, {\"time\": \"6 us\"}, {\"time\": \"5 us\"}]}\n")
add_test(NAME cli.calibrate.repeated_record
         COMMAND trainsim calibrate --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/repeated_record.json)
set_tests_properties(cli.calibrate.repeated_record PROPERTIES
  PASS_REGULAR_EXPRESSION "warning: [^\n]*repeated_record\\.json: /launch/2 repeats /launch/0 field for field\; both are fitted \\(remove one if it is a copy\\)\n"
  FAIL_REGULAR_EXPRESSION "/launch/1 repeats")
# A fit that changes a value marks the notes that quote it, once (calibrate_notes.cmake).
add_test(NAME cli.calibrate.notes_marked
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/notes_marked
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/calibrate_notes.cmake)
set_tests_properties(cli.calibrate.notes_marked PROPERTIES PASS_REGULAR_EXPRESSION "notes marked once\n[^\n]*sources marked")
# A record's own environment may name another GPU than its document's: the GPU check reads it
# (it read the document's device only), one line for the first record of that device.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/record_device.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"launch\": [{\"time\": \"5 us\"},
                 {\"time\": \"6 us\", \"environment\": {\"device\": \"NVIDIA A100-SXM4-80GB\"}},
                 {\"time\": \"7 us\", \"environment\": {\"device\": \"NVIDIA A100-SXM4-80GB\"}}]}\n")
add_test(NAME cli.calibrate.record_device
         COMMAND trainsim calibrate --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/record_device.json)
set_tests_properties(cli.calibrate.record_device PROPERTIES
  PASS_REGULAR_EXPRESSION "warning: [^\n]*record_device\\.json \\(/launch/1\\) was measured on NVIDIA A100-SXM4-80GB, not the H100 of profile 'h100-dgx'"
  FAIL_REGULAR_EXPRESSION "/launch/2\\) was measured")
# Records the model cannot fit are refused at their key: a GEMM beside the holder faster than
# alone (1.2 ms against 1.6 ms alone, 0.75 of it; 8192^3 bf16 at 1.2 ms is 916 TFLOP/s, under
# the H100's 989), a holder of all 132 SMs, and a launch time above the parameter's 100 us bound
# (a 200 us record was fitted to 97 us and pulled the GEMM terms with it).
foreach(case "overlap_faster;\"overlap\": [{\"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\", \"kernel\": \"gemm\", \"held_sms\": 24, \"holder\": \"copy\", \"time_alone\": \"1.6 ms\", \"time\": \"1.2 ms\"}];/overlap/0/time: measured time 0\\.0012 s beside the holder is 0\\.75 of the 0\\.0016 s alone; expected at least 0\\.9 of time_alone"
             "overlap_all_sms;\"overlap\": [{\"m\": 8192, \"n\": 8192, \"k\": 8192, \"dtype\": \"bf16\", \"kernel\": \"gemm\", \"held_sms\": 132, \"holder\": \"copy\", \"time_alone\": \"1.6 ms\", \"time\": \"2.0 ms\"}];/overlap/0/held_sms: 132 SMs on a GPU of 132 \\(profile 'h100-dgx'\\); expected at most 131"
             "launch_above_bound;\"launch\": [{\"time\": \"5 us\"}, {\"time\": \"200 us\"}];/launch/1/time: measured launch time 200 us, above the most /gpu/kernel_launch_overhead may be \\(100 us\\)")
  list(GET case 0 name)
  list(GET case 1 records)
  list(GET case 2 message)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/unfittable_${name}.json
    "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"}, ${records}}\n")
  trainsim_bad_input(calibrate ${name} "unfittable_${name}\\.json: ${message}"
    --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/unfittable_${name}.json)
endforeach()
# A --min-bytes past int64 is refused as collective's size flags are (the error that no point
# was left gave it as -9223372036854775808 bytes).
trainsim_bad_input(calibrate min_bytes_huge "--min-bytes: out of range; expected at most 9e18 bytes, got '9000000000TiB'"
  --base h100-dgx ${CALIBRATION_DIR}/h100-dgx.json --min-bytes 9000000000TiB)
# A document's points have no line: null in the JSON, "-" in the table; a point's description is
# not cut ("gemm 16384x16384x16384 bf16" was "gemm 16384x16384x16384 bf").
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/long_point.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"gemm\": [{\"m\": 16384, \"n\": 16384, \"k\": 16384, \"dtype\": \"bf16\", \"time\": \"12 ms\"}]}\n")
add_test(NAME cli.calibrate.document_point_row
         COMMAND trainsim calibrate --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/long_point.json)
set_tests_properties(cli.calibrate.document_point_row PROPERTIES PASS_REGULAR_EXPRESSION
  "long_point\\.json:gemm\\[0\\] +-  gemm 16384x16384x16384 bf16 ")
add_test(NAME cli.calibrate.document_point_json
         COMMAND trainsim calibrate --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/long_point.json --format json)
set_tests_properties(cli.calibrate.document_point_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"set\": \"long_point\\.json:gemm\\[0\\]\",\n *\"source\": \"[^\"]*\",\n *\"line\": null,")
# The 2-node NVLS-tree log claimed as a forced Ring: its 427-466 GB/s busbw is over what the
# NICs carry for a ring (400 GB/s), so a point is refused. The log ran NCCL 2.26.2 where
# h100-dgx prices 2.20, a warning that used to precede the error: notes and warnings on the
# inputs now wait for the fit, and the refusal is stderr's one line.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/forced_ring.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt\", \"algorithm\": \"ring\"}]}\n")
trainsim_bad_input(calibrate forced_ring_over_the_nics "h100-ndr-2node-all_reduce.txt: line 53: measured time 0.002355 s is 427.4 busbw GB/s, above what its NVLink and NICs carry for NCCL's ring \\(400 busbw GB/s\\)"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/forced_ring.json)
# A latency fitted to messages at or above the fill's saturation only (the cut-short H200 log:
# 1, 3 and 9 GiB; the profile's nvls_tree fill saturates at 64 MiB): the points cannot tell it
# from NCCL's pipeline fill, which adds a constant time there too, and it prices smaller messages
# by extrapolation (375.5 us across nodes, where h200-sxm has 0: a 2-node 8 MiB all-reduce went
# from 101 to 491 us). The fit still writes it; calibrate says so.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/h200_partial.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H200\"},
    \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h200-ib-2node-all_reduce-partial.txt\", \"ranks\": 16, \"nodes\": 2}]}\n")
add_test(NAME cli.calibrate.latency_above_fill
         COMMAND trainsim calibrate --base h200-sxm ${CMAKE_CURRENT_BINARY_DIR}/h200_partial.json)
set_tests_properties(cli.calibrate.latency_above_fill PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: /collective/measured/nvls_tree/Simple/latency_offset_multi_node = [0-9.]+ us is fitted to messages from 1 GiB, all at or above the fill's saturation \\(64 MiB\\)")

# An entry's nccl_version is for a log that prints none; one that contradicts the version the
# log prints (2.26.2 here) replaced it, and the warning that the log ran another NCCL than the
# profile prices was not given.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/nccl_version_clash.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"nccl_tests\": [{\"file\": \"${CALIBRATION_DIR}/nccl_tests/h100-ndr-2node-all_reduce.txt\", \"nccl_version\": \"2.20.3\"}]}\n")
trainsim_bad_input(calibrate nccl_version_clash "nccl_version_clash.json: /nccl_tests/0/nccl_version: NCCL 2.20.3 [^\n]*prints NCCL version 2.26.2\; expected the version the log prints, or none"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/nccl_version_clash.json)

# A message no GPU holds (nccl-tests keeps the whole buffer on every rank): "10 PB" in a
# record was fitted, pushing the ring latency offset to its bound and the genuine 1 GiB point
# to -24%. Refused at its bytes.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/petabyte.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"collectives\": [{\"op\": \"all_reduce\", \"ranks\": 16, \"nodes\": 2, \"bytes\": \"10 PB\", \"time\": \"20 h\", \"algorithm\": \"ring\"},
                      {\"op\": \"all_reduce\", \"ranks\": 16, \"nodes\": 2, \"bytes\": \"1 GiB\", \"time\": \"5.6 ms\", \"algorithm\": \"ring\"}]}\n")
trainsim_bad_input(calibrate petabyte "petabyte.json: /collectives/0/bytes: 9.31323e\\+06 GiB per rank, more than the 80 GiB of HBM of a GPU of profile 'h100-dgx'\\; expected a message one GPU holds"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/petabyte.json)

# A record that forces LL moves its bytes at half the links' rate at best (LL stores 4 B of
# data with each 4 B flag): 8 GiB in 50 ms on 2 H100 nodes, 322 GB/s busbw, was fitted with
# LL's factor at its bound, where the same time forcing ring was refused.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/fast_ll.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"collectives\": [{\"op\": \"all_reduce\", \"ranks\": 16, \"nodes\": 2, \"bytes\": \"8 GiB\", \"time\": \"50 ms\", \"protocol\": \"LL\"}]}\n")
trainsim_bad_input(calibrate fast_ll "fast_ll.json: /collectives/0/time: measured time 0.05 s is 322.1 busbw GB/s, above what its NVLink and NICs carry for the most lenient algorithm NCCL runs there, [a-z_]+ with LL's payload per line"
  --base h100-dgx ${CMAKE_CURRENT_BINARY_DIR}/fast_ll.json)

# One GEMM point fitted exactly: its error after the fit is -3.3e-16, printed "-0.0%"; an error
# that rounds to zero prints "+0.0%".
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/one_gemm.json
  "{\"schema\": \"trainsim-measurements\", \"schema_version\": 1, \"environment\": {\"device\": \"NVIDIA H100 80GB HBM3\"},
    \"gemm\": [{\"m\": 4096, \"n\": 4096, \"k\": 4096, \"dtype\": \"bf16\", \"time\": \"200 us\"}]}\n")
add_test(NAME cli.calibrate.zero_error_unsigned COMMAND trainsim calibrate --base h100-dgx
         ${CMAKE_CURRENT_BINARY_DIR}/one_gemm.json)
set_tests_properties(cli.calibrate.zero_error_unsigned PROPERTIES PASS_REGULAR_EXPRESSION
  "gemm 4096x4096x4096 bf16 +687\\.2 +678\\.5 +687\\.2 +\\+0\\.0%  TFLOP/s")

# The 4-node log's one tree/LL128 point cannot tell that protocol's multi-node bandwidth factor
# from its latency offset: the factor keeps the base's value, and the header and the JSON say so
# (calibration_test derives the values).
add_test(NAME cli.calibrate.held_counted COMMAND trainsim calibrate --base h100-dgx
         ${CALIBRATION_DIR}/nccl_tests/h100-ndr-4node-all_reduce.txt)
set_tests_properties(cli.calibrate.held_counted PROPERTIES PASS_REGULAR_EXPRESSION
  "# 14 points from 1 measurement sets\\; 6 parameters fitted in [0-9]+ iterations, 1 held at the base's value \\(not determined\\)\n")
add_test(NAME cli.calibrate.held_json COMMAND trainsim calibrate --base h100-dgx
         ${CALIBRATION_DIR}/nccl_tests/h100-ndr-4node-all_reduce.txt --format json)
set_tests_properties(cli.calibrate.held_json PROPERTIES PASS_REGULAR_EXPRESSION
  "\"pointer\": \"/collective/measured/tree/LL128/bandwidth_factor_multi_node\",[^}]*\"sigma\": null,[^}]*\"held\": true")

# The skip note names the document and the entry's pointer apart: joined, they read as a path
# ("calibration/h100-dgx.json/nccl_tests/7") that does not exist.
add_test(NAME cli.calibrate.skip_note_pointer
         COMMAND trainsim calibrate --base h100-dgx ${CALIBRATION_DIR}/h100-dgx.json)
set_tests_properties(cli.calibrate.skip_note_pointer PROPERTIES PASS_REGULAR_EXPRESSION
  "note: skipped h100-ndr-2node-all_reduce-lowbw\\.txt \\([^\n]*h100-dgx\\.json: /nccl_tests/7\\): marked reported_problem")
# A ring factor fitted to one 8-node log prices 2 nodes above their NICs (8 x 400 Gb/s = 400 GB/s
# of busbw for a ring AllGather, docs/calibration.md): the fit says so, naming the call, the
# excess and the node counts the points hold. The committed fit (calibration/h100-dgx.json, 1 to
# 32 nodes) says nothing of it (cli.calibrate.h100).
add_test(NAME cli.calibrate.extrapolated_past_line_rate COMMAND trainsim calibrate --base h100-dgx
         ${CALIBRATION_DIR}/nccl_tests/h100-ndr-8node-all_reduce-min_ctas24-qps2.txt)
set_tests_properties(cli.calibrate.extrapolated_past_line_rate PROPERTIES PASS_REGULAR_EXPRESSION
  "warning: the fitted profile prices all_gather 2x8 1 GiB \\(ring/Simple\\) at 501.7 busbw GB/s, 25.4% above what its NVLink and NICs carry \\(400.0. the base: within\\). the points are of 8 nodes")

# A held value keeps the base's record; two inputs of one file name are named apart
# (calibrate_held.cmake).
add_test(NAME cli.calibrate.held_record
         COMMAND ${CMAKE_COMMAND} -DTRAINSIM=$<TARGET_FILE:trainsim>
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/held_record
                 -DLOGS=${CALIBRATION_DIR}/nccl_tests
                 -DPROFILES=${PROJECT_SOURCE_DIR}/hardware_profiles
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/calibrate_held.cmake)
set_tests_properties(cli.calibrate.held_record PROPERTIES PASS_REGULAR_EXPRESSION
  "held records kept, inputs named apart")
# A held value gets one warning: the fill-saturation one said it was fitted to large messages
# and to keep the base's value, which it already was (a 4-node ReduceScatter log of 1 MiB and
# up, whose ring latency offset the points cannot determine).
add_test(NAME cli.calibrate.held_one_warning COMMAND trainsim calibrate --base h100-dgx
         ${PROJECT_SOURCE_DIR}/tests/data/calibration/synthetic-4node-reduce_scatter.txt)
set_tests_properties(cli.calibrate.held_one_warning PROPERTIES
  PASS_REGULAR_EXPRESSION "warning: /collective/measured/ring/Simple/latency_offset_multi_node is not determined by the points \\(no standard error\\)\; it keeps the base's value"
  FAIL_REGULAR_EXPRESSION "ring/Simple/latency_offset_multi_node = [^\n]* is fitted to messages from")
# A dtype's GEMM ceiling reports its own dtype's points: the suite's 6 FP8 GEMMs of 62 (each
# ceiling was listed by every GEMM, 62 points and the document's error for each).
add_test(NAME cli.calibrate.ceiling_points COMMAND trainsim calibrate --base h200-sxm
         ${CALIBRATION_DIR}/h200-sxm/suite.json --format json)
set_tests_properties(cli.calibrate.ceiling_points PROPERTIES PASS_REGULAR_EXPRESSION
  "\"pointer\": \"/gpu/gemm/max_efficiency_by_dtype/fp8\",[^}]*\"points\": 6,")
