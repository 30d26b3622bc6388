# The robustness catalogue: bad and hostile inputs to every subcommand, one case per
# trainsim_robust() call (CMakeLists.txt explains its options). Every case expects exit 2 and one
# line "error: <file or flag>: <key>: <problem>; expected <x>" (DESIGN.md, "Command line"); the
# regexes ask for the file or flag, the key (a JSON pointer, a line, or the flag itself) and the
# "expected" clause where the existing messages settle the wording, and only for the file or flag
# and the key where they do not. run_case adds: no output or temporary file left behind, peak RSS
# under 1 GiB, under 5 s of CPU time (user + system) and under 5 s with every thread asleep
# (blocked on input), killed past 60 s of wall time.
#
# Classes (the test name's first word):
#   corrupt    sharded outputs cut short, mixed or repeated given to merge; -o and --trace
#              that cannot be written or whose run fails (nothing may be left behind)
#   overflow   counts and products past int64 or past a narrower type
#   nonfinite  unit strings that overflow or underflow once scaled to SI
#   exception  library exceptions (JSON number range, invalid UTF-8 in the JSON writer,
#              stod/stoi range, bad_alloc) that must become bad input
#   threads    --jobs values
#   unbounded  endless or huge inputs: /dev/zero, FIFOs, sparse files, deep nesting, huge
#              sweeps, search spaces, batches and layer counts
#   format     CLI11's own errors and the command line's shape
#   reader     other bad values in each reader and flag, as guards on the message shape
#
# Inputs: tests/robustness/inputs/ holds small files; anything derived from the built-in data or
# from trainsim's own outputs is made at test time by PREP steps (so a format change in the
# built-in data or in sharded outputs never leaves a stale copy here).

set(IN ${ROBUST_INPUTS})
# A small scenario (llama3.2-1b on 8 H100): fast to load and simulate.
set(small --hardware h100-dgx --model llama3.2-1b --seq-len 1024)
set(small_hw --hardware h100-dgx --seq-len 1024)      # add --model
set(small_model --model llama3.2-1b --seq-len 1024)   # add --hardware
set(search_small search --hardware h100-dgx --model llama3.2-1b --seq-len 1024 --jobs 1)
set(h100 ${ROBUST_HARDWARE}/h100-dgx.json)
set(llama1b ${ROBUST_MODELS}/llama3.2-1b.json)
set(trace ${ROBUST_TRACES}/tp2_overlap.json)
set(trace_scenario ${ROBUST_TRACES}/compare_scenario.json)
set(nccl_log ${ROBUST_CALIBRATION}/nccl_tests/h100-ndr-2node-all_reduce.txt)
# The published runs; a PREP "set" changes the first row's key, so errors point at /0/<key>.
set(runs ${PROJECT_SOURCE_DIR}/validation/published_runs.json)
# Sharded outputs of inputs/sweep4.json (4 scenarios), made by trainsim itself.
set(csv_shards INPUT ${IN}/sweep4.json
    PREP "trainsim - sweep sweep4.json --shard 0/2 -o s0.csv"
    PREP "trainsim - sweep sweep4.json --shard 1/2 -o s1.csv")
set(json_shards INPUT ${IN}/sweep4.json
    PREP "trainsim - sweep sweep4.json --shard 0/2 --format json -o j0.json"
    PREP "trainsim - sweep sweep4.json --shard 1/2 --format json -o j1.json")
# (One string: a PREP step is one string of words.)
set(search_shard_args "search --hardware h100-dgx --model llama3.2-1b --seq-len 1024 --gpus 8 \
--global-batch 16 --tp 1,2 --pp 1 --micro-batch 1,2 --sharding shard_grad_op --recompute none \
--jobs 1 --format json")

# ------------------------------------------------------------------------------------------------
# corrupt: merge must refuse every incomplete, mixed or repeated shard (exit 0 with a wrong table
# is the worst outcome), and a failed command must leave no output file.

# The end record (the shard's last line) removed: what a shard killed after its last row leaves.
trainsim_robust(corrupt.merge_csv_no_end_record 2
  "^error: s1\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "dropline s1.csv -1"
  -- merge s0.csv s1.csv)
# A shard killed inside its last row: the end record gone and 7 bytes of the last row cut.
trainsim_robust(corrupt.merge_csv_cut_in_last_row 2
  "^error: s1\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "dropline s1.csv -1"
  PREP "cut s1.csv -7" -- merge s0.csv s1.csv)
# Killed exactly at a row's end, before the last row: a whole row and the end record missing.
trainsim_robust(corrupt.merge_csv_cut_at_row_end 2
  "^error: s1\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "dropline s1.csv -1"
  PREP "dropline s1.csv -1" -- merge s0.csv s1.csv)
# Cut inside the end record itself: a partial end record must not pass for one.
trainsim_robust(corrupt.merge_csv_cut_in_end_record 2
  "^error: s0\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "cut s0.csv -12"
  -- merge s0.csv s1.csv)
trainsim_robust(corrupt.merge_csv_cut_mid_file 2
  "^error: s0\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "cut s0.csv 50%"
  -- merge s0.csv s1.csv)
trainsim_robust(corrupt.merge_csv_empty_shard 2
  "^error: s1\\.csv: .*\\bexpected" ${csv_shards} PREP "cut s1.csv 0" -- merge s0.csv s1.csv)
# A data row deleted while the end record stays: the row count no longer matches.
trainsim_robust(corrupt.merge_csv_row_deleted 2
  "^error: s0\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "dropline s0.csv 1"
  -- merge s0.csv s1.csv)
trainsim_robust(corrupt.merge_csv_row_repeated 2
  "^error: s0\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "dupline s0.csv 1"
  -- merge s0.csv s1.csv)
# Two end records: a row written after the end of the shard.
trainsim_robust(corrupt.merge_csv_line_after_end_record 2
  "^error: s0\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} PREP "dupline s0.csv -1"
  -- merge s0.csv s1.csv)
# Shard 1 of sweep4b.json (another global batch, the same columns) with shard 0 of sweep4.json.
trainsim_robust(corrupt.merge_csv_other_spec 2
  "^error: t1\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards} INPUT ${IN}/sweep4b.json
  PREP "trainsim - sweep sweep4b.json --shard 1/2 -o t1.csv" -- merge s0.csv t1.csv)
# Shard 0 of a split in two with shard 1 of a split in three.
trainsim_robust(corrupt.merge_csv_other_split 2
  "^error: t1\\.csv: line [0-9]+: .*\\bexpected" ${csv_shards}
  PREP "trainsim - sweep sweep4.json --shard 1/3 -o t1.csv" -- merge s0.csv t1.csv)
trainsim_robust(corrupt.merge_csv_shard_twice 2
  "^error: again\\.csv: .*\\bexpected" ${csv_shards} PREP "copy s0.csv again.csv"
  -- merge s0.csv s1.csv again.csv)
trainsim_robust(corrupt.merge_csv_missing_shard 2
  "^error: .*missing shard 1/2.*\\bexpected" ${csv_shards} -- merge s0.csv)
# An unsharded output has no end record and needs no merge; it must not pass for a shard.
trainsim_robust(corrupt.merge_csv_unsharded_output 2
  "^error: all\\.csv: line [0-9]+: .*\\bexpected" INPUT ${IN}/sweep4.json
  PREP "trainsim all.csv sweep sweep4.json" -- merge all.csv)
trainsim_robust(corrupt.merge_csv_and_json 2
  "^error: j1\\.json: .*\\bexpected" ${csv_shards}
  PREP "trainsim - sweep sweep4.json --shard 1/2 --format json -o j1.json" -- merge s0.csv j1.json)
trainsim_robust(corrupt.merge_json_no_end_record 2
  "^error: j1\\.json: line [0-9]+: .*\\bexpected" ${json_shards} PREP "dropline j1.json -1"
  -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_json_cut_in_last_line 2
  "^error: j1\\.json: line [0-9]+: .*\\bexpected" ${json_shards} PREP "dropline j1.json -1"
  PREP "cut j1.json -9" -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_json_cut_mid_file 2
  "^error: j0\\.json: line [0-9]+: .*\\bexpected" ${json_shards} PREP "cut j0.json 50%"
  -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_json_row_deleted 2
  "^error: j0\\.json: line [0-9]+: .*\\bexpected" ${json_shards} PREP "dropline j0.json 0"
  -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_json_other_spec 2
  "^error: k1\\.json: line [0-9]+: .*\\bexpected" ${json_shards} INPUT ${IN}/sweep4b.json
  PREP "trainsim - sweep sweep4b.json --shard 1/2 --format json -o k1.json"
  -- merge j0.json k1.json)
trainsim_robust(corrupt.merge_json_shard_twice 2
  "^error: j1\\.json: .*\\bexpected" ${json_shards} -- merge j0.json j1.json j1.json)
trainsim_robust(corrupt.merge_json_missing_shard 2
  "^error: .*missing shard 0/2.*\\bexpected" ${json_shards} -- merge j1.json)
# Cells and keys no sweep writes: a shard edited by hand or damaged in place, complete in shape.
# A negative or non-numeric metric, an unknown status, a renamed column in the only shard.
trainsim_robust(corrupt.merge_csv_negative_metric 2
  "^error: s0\\.csv: line 2: row 0: column iteration_time_s is '-[0-9.e-]+'.*\\bexpected a finite number >= 0"
  ${csv_shards} PREP "subst s0.csv ,none,false, ,none,false,-" -- merge s0.csv s1.csv)
trainsim_robust(corrupt.merge_csv_nan_metric 2
  "^error: s1\\.csv: line 2: row 1: column iteration_time_s is 'nan.*\\bexpected a finite number >= 0"
  ${csv_shards} PREP "subst s1.csv ,none,false, ,none,false,nan" -- merge s0.csv s1.csv)
trainsim_robust(corrupt.merge_csv_status_edited 2
  "^error: s0\\.csv: line 2: row 0: column status is 'fine'.*\\bexpected 'ok'"
  ${csv_shards} PREP "subst s0.csv ,ok, ,fine," -- merge s0.csv s1.csv)
trainsim_robust(corrupt.merge_csv_renamed_column 2
  "^error: one\\.csv: line 1: CSV header column 22 is 'tokens_per_sec'.*\\bexpected 'tokens_per_s'"
  INPUT ${IN}/sweep4.json PREP "trainsim one.csv sweep sweep4.json --shard 0/1"
  PREP "subst one.csv tokens_per_s, tokens_per_sec," -- merge one.csv)
trainsim_robust(corrupt.merge_json_text_metric 2
  "^error: j0\\.json: line 1: row 0: 'mfu' is \"abc\".*\\bexpected a number >= 0"
  ${json_shards} PREP "setstr j0.json mfu abc" -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_json_unknown_key 2
  "^error: j1\\.json: line 1: row 1: unknown key 'extra'.*\\bexpected only the keys"
  ${json_shards} PREP "subst j1.json %22status%22: %22extra%22:1,%22status%22:"
  -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_json_no_scenario 2
  "^error: j0\\.json: line 1: row 0: 'scenario' missing or not an object.*\\bexpected"
  ${json_shards} PREP "subst j0.json %22scenario%22 %22scenari0%22" -- merge j0.json j1.json)
# A key given twice in one object of a row or of a search shard: the parse would keep the last
# value without a word.
trainsim_robust(corrupt.merge_json_repeated_key 2
  "^error: j1\\.json: line 1: row 1: key /mfu given twice in one object.*\\bexpected each key at most once"
  ${json_shards} PREP "subst j1.json %22status%22: %22mfu%22:0.5,%22status%22:"
  -- merge j0.json j1.json)
trainsim_robust(corrupt.merge_search_repeated_key 2
  "^error: q0\\.json: /objective: key given twice in one object. expected each key at most once"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "subst q0.json %22objective%22: %22objective%22:%20%22x%22,%20%22objective%22:"
  -- merge q0.json q1.json)
# A search plan's byte count that is no whole number of bytes: checked as the sweep merge checks
# a row's (it was copied into the merged document).
trainsim_robust(corrupt.merge_search_fraction_bytes 2
  "^error: q0\\.json: /plans/0/memory: 'memory\\.total_bytes' is 1\\.5. expected a count, an integer >= 0"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "set q0.json total_bytes 1.5"
  -- merge q0.json q1.json)
# A file that starts like a search output ("{" and a newline) and then nests 20 million arrays
# (40 MB, within the 64 MiB a search shard may have): refused at its depth before any parse.
# Parsed into a document first, it took 2.4 GB and 12 s at 30 million.
trainsim_robust(unbounded.merge_search_deep 2
  "^error: q0\\.json: JSON nested too deeply at line 2. expected at most 64 levels"
  PREP "nest deep.json 20000000 array" PREP "write q0.json {" PREP "append deep.json q0.json"
  -- merge q0.json)
# search takes one of --gpus and --nodes, worded as run and describe word it.
trainsim_robust(reader.search_gpus_and_nodes 2
  "^error: command line \\(--gpus, --nodes\\): both --gpus and --nodes given. expected one of them"
  -- ${search_small} --gpus 8 --nodes 1 --global-batch 8)
# Search shards (JSON documents): cut short, of two different runs, or one missing.
trainsim_robust(corrupt.merge_search_cut 2
  "^error: q0\\.json: .*\\bexpected" PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2" PREP "cut q0.json 60%"
  -- merge q0.json q1.json)
# Shard 1 of the same search with global batch 32 instead of 16.
string(REPLACE "--global-batch 16" "--global-batch 32" search_other_args "${search_shard_args}")
trainsim_robust(corrupt.merge_search_other_run 2
  "^error: q1\\.json: /" PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_other_args} --shard 1/2" -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_missing_shard 2
  "^error: .*missing shard 1/2.*\\bexpected"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2" -- merge q0.json)
# A search shard edited or damaged in place, complete in shape: a plan of the other shard, a plan
# count its counts do not give, counts that do not add up, a key no search writes (at the top or
# in a plan), an empty shard beside a whole one. merge would have copied them into its output.
trainsim_robust(corrupt.merge_search_plan_of_other_shard 2
  "^error: q0\\.json: /plans/0/index: plan 1 is not one of shard 0/2's.*\\bexpected the shard's own plans"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2" PREP "set q0.json index 1"
  -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_plans_beyond_top 2
  "^error: q0\\.json: /plans: 2 plans with 'simulated' 2 and 'top' 1. expected 1"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2" PREP "set q0.json top 1"
  PREP "set q1.json top 1" -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_counts_do_not_add_up 2
  "^error: q1\\.json: /evaluated: 2, but invalid, out_of_memory, simulated and bounded add up to 1.*\\bexpected"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2" PREP "set q1.json simulated 1"
  -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_unknown_key 2
  "^error: q1\\.json: /extra: unknown key. expected the JSON output of trainsim search"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "subst q1.json %22top%22: %22extra%22:%201,%20%22top%22:" -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_unknown_plan_key 2
  "^error: q0\\.json: /plans/0/extra: unknown key. expected only a plan's keys"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "subst q0.json %22rank%22: %22extra%22:%201,%20%22rank%22:" -- merge q0.json q1.json)
# Keys inside a plan's scenario and its rows are the search's too (an extra one was copied into
# the merged document).
trainsim_robust(corrupt.merge_search_unknown_scenario_key 2
  "^error: q0\\.json: /plans/0/scenario/parallel/tpp: unknown key 'scenario\\.parallel\\.tpp'. expected a scenario's keys. expected the JSON output of trainsim search"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "subst q0.json %22tp%22: %22tpp%22:%201,%20%22tp%22:" -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_collective_renamed_key 2
  "^error: q0\\.json: /plans/0/collectives: unknown key 'collectives\\[\\]\\.algorithn'. expected only the keys trainsim writes there"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "subst q0.json %22algorithm%22: %22algorithn%22:" -- merge q0.json q1.json)
# A plan's figure edited: merge ranks plans by it (-5 dropped the best plan, 1e308 crowned one).
trainsim_robust(corrupt.merge_search_negative_metric 2
  "^error: q1\\.json: /plans/0/tokens_per_s: expected a number >= 0, as trainsim search writes it, got -[0-9]"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2"
  PREP "subst q1.json %22tokens_per_s%22:%20 %22tokens_per_s%22:%20-"
  -- merge q0.json q1.json)
trainsim_robust(corrupt.merge_search_empty_shard 2
  "^error: q1\\.json: empty file .*expected the JSON output of trainsim search.*rerun that shard"
  PREP "trainsim q0.json ${search_shard_args} --shard 0/2"
  PREP "trainsim q1.json ${search_shard_args} --shard 1/2" PREP "cut q1.json 0"
  -- merge q0.json q1.json)
# Outputs: a failed merge, sweep, run or calibrate writes nothing (no partial file, no temporary).
trainsim_robust(corrupt.merge_failure_writes_nothing 2
  "^error: .*missing shard 1/2.*\\bexpected" ${csv_shards} NO_FILE out.csv
  -- merge s0.csv -o out.csv)
trainsim_robust(corrupt.merge_output_folder_missing 2
  "^error: [^ ]*(-o|--output|nodir/out\\.csv)[^ ]*: .*\\bexpected" ${csv_shards}
  -- merge s0.csv s1.csv -o nodir/out.csv)
trainsim_robust(corrupt.merge_output_is_folder 2
  "^error: [^ ]*(-o|--output|outdir)[^ ]*: .*\\bexpected" ${csv_shards} PREP "mkdir outdir"
  -- merge s0.csv s1.csv -o outdir)
trainsim_robust(corrupt.sweep_output_folder_missing 2
  "^error: [^ ]*(-o|--output|nodir/out\\.csv)[^ ]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  -- sweep sweep4.json -o nodir/out.csv)
trainsim_robust(corrupt.sweep_output_is_folder 2
  "^error: [^ ]*(-o|--output|outdir)[^ ]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  PREP "mkdir outdir" -- sweep sweep4.json -o outdir)
# The third scenario's hardware file does not exist: whether that is found before the first row
# or after some rows are written, nothing may be left at -o.
trainsim_robust(corrupt.sweep_failure_writes_nothing 2
  "^error: sweep_missing_hardware\\.json: /axes/hardware/2: .*no_such_profile\\.json" INPUT ${IN}/sweep_missing_hardware.json
  INPUT ${IN}/scenario.json NO_FILE out.csv -- sweep sweep_missing_hardware.json -o out.csv)
trainsim_robust(corrupt.sweep_failure_writes_nothing_sharded 2
  "^error: sweep_missing_hardware\\.json: /axes/hardware/2: .*no_such_profile\\.json" INPUT ${IN}/sweep_missing_hardware.json
  INPUT ${IN}/scenario.json NO_FILE out.csv
  -- sweep sweep_missing_hardware.json --shard 0/1 -o out.csv)
trainsim_robust(corrupt.run_trace_folder_missing 2
  "^error: [^ ]*(--trace|nodir/t\\.json)[^ ]*: .*\\bexpected" INPUT ${IN}/scenario.json
  -- run scenario.json --trace nodir/t.json)
trainsim_robust(corrupt.run_trace_is_folder 2
  "^error: [^ ]*(--trace|outdir)[^ ]*: .*\\bexpected" INPUT ${IN}/scenario.json PREP "mkdir outdir"
  -- run scenario.json --trace outdir)
trainsim_robust(corrupt.run_failure_writes_no_trace 2
  "^error: command line \\(--precision\\): /training/precision: .*\\bexpected"
  INPUT ${IN}/scenario.json NO_FILE t.json -- run scenario.json --precision bf17 --trace t.json)
# An earlier file at the output path survives a failed run untouched (run_case compares the size
# and time of last write of every file placed before the run).
trainsim_robust(corrupt.merge_failure_keeps_earlier_output 2
  "^error: .*missing shard 1/2.*\\bexpected" ${csv_shards} PREP "write out.csv earlier"
  -- merge s0.csv -o out.csv)
trainsim_robust(corrupt.sweep_failure_keeps_earlier_output 2
  "^error: sweep_missing_hardware\\.json: /axes/hardware/2: .*no_such_profile\\.json" INPUT ${IN}/sweep_missing_hardware.json
  INPUT ${IN}/scenario.json PREP "write out.csv earlier"
  -- sweep sweep_missing_hardware.json -o out.csv)
trainsim_robust(corrupt.run_failure_keeps_earlier_trace 2
  "^error: command line \\(--precision\\): /training/precision: .*\\bexpected"
  INPUT ${IN}/scenario.json PREP "write t.json earlier"
  -- run scenario.json --precision bf17 --trace t.json)
trainsim_robust(corrupt.calibrate_failure_keeps_earlier_profile 2
  "^error: garbage\\.txt: line [0-9]+: .*\\bexpected" INPUT ${ROBUST_DATA}/calibration/garbage.txt
  PREP "write p.json earlier" -- calibrate --base h100-dgx garbage.txt -o p.json)
trainsim_robust(corrupt.calibrate_output_folder_missing 2
  "^error: [^ ]*(-o|--output|nodir/p\\.json)[^ ]*: .*\\bexpected"
  -- calibrate --base h100-dgx ${nccl_log} -o nodir/p.json)
trainsim_robust(corrupt.calibrate_failure_writes_nothing 2
  "^error: garbage\\.txt: line [0-9]+: .*\\bexpected" INPUT ${ROBUST_DATA}/calibration/garbage.txt
  NO_FILE p.json -- calibrate --base h100-dgx garbage.txt -o p.json)

# ------------------------------------------------------------------------------------------------
# overflow: every count and product that reaches the simulator is checked; values above a
# documented bound name the flag or key and the bound.

# 2^40 each: the product tp x pp x cp is 2^120.
trainsim_robust(overflow.run_tp_pp_cp 2
  "^error: command line[^:]*: /parallel(/tp|/pp|/cp)?: .*\\bexpected" INPUT ${IN}/scenario.json
  -- run scenario.json --tp 1099511627776 --pp 1099511627776 --cp 1099511627776)
trainsim_robust(overflow.describe_tp_pp_cp 2
  "^error: command line[^:]*: /parallel(/tp|/pp|/cp)?: .*\\bexpected"
  -- describe ${small} --gpus 8 --tp 1099511627776 --pp 1099511627776 --cp 1099511627776)
trainsim_robust(overflow.compare_tp_pp_cp 2
  "^error: command line[^:]*: /parallel(/tp|/pp|/cp)?: .*\\bexpected"
  -- compare ${trace_scenario} --trace ${trace} --tp 1099511627776 --pp 1099511627776
  --cp 1099511627776)
# 2^53 GPUs: the default global batch dp x micro-batch times seq_len 1024 is 2^63 tokens
# (unchecked, it printed negative tokens/s).
trainsim_robust(overflow.run_gpus_times_tokens 2
  "^error: command line[^:]*: /(cluster|training)[a-z_/]*: .*\\bexpected"
  -- run ${small} --gpus 9007199254740992)
# 2^53 sequences of 2^20 tokens: 2^73 tokens per step.
trainsim_robust(overflow.run_global_batch_times_seq_len 2
  "^error: command line[^:]*: /training/(global_batch|seq_len): .*\\bexpected"
  -- run --hardware h100-dgx --model llama3.2-1b --gpus 8 --global-batch 9007199254740992
  --seq-len 1048576)
# dp 2048 x micro-batch 2^53 = 2^64 sequences.
trainsim_robust(overflow.run_dp_times_micro_batch 2
  "^error: command line[^:]*: /training/(micro_batch|global_batch): .*\\bexpected"
  -- run ${small} --gpus 2048 --micro-batch 9007199254740992)
# seq_len 2^32 + 1 was accepted, and describe printed 7.8 GFLOP per token, the figure of
# s = 1024 in 6 N + 12 L h s, not the 1.7 PFLOP of s = 2^32 + 1.
trainsim_robust(overflow.describe_seq_len_narrowed 2
  "^error: command line \\(--seq-len\\): /training/seq_len: .*\\bexpected"
  -- describe --hardware h100-dgx --model llama3.2-1b --gpus 8 --seq-len 4294967297)
trainsim_robust(overflow.sweep_seq_len_in_axis 2
  "^error: sweep4\\.json: /axes/training\\.seq_len/1: 4294967297: out of range.*\\bexpected" INPUT ${IN}/sweep4.json
  PREP "set sweep4.json training.seq_len %5B512,4294967297%5D" -- sweep sweep4.json --list)
trainsim_robust(overflow.model_layers 2
  "^error: llama3\\.2-1b\\.json: /layers: .*\\bexpected" INPUT ${llama1b}
  PREP "set llama3.2-1b.json layers 9007199254740992"
  -- describe ${small_hw} --gpus 8 --model llama3.2-1b.json)
# hidden 2^40: hidden^2 per layer alone is 2^80 parameters.
trainsim_robust(overflow.model_hidden 2
  "^error: llama3\\.2-1b\\.json: /(hidden|head_dim|heads): .*\\bexpected" INPUT ${llama1b}
  PREP "set llama3.2-1b.json hidden 1099511627776"
  -- describe ${small_hw} --gpus 8 --model llama3.2-1b.json)
# vocab 2^52 x hidden 2048 = 2^63 embedding parameters.
trainsim_robust(overflow.model_vocab 2
  "^error: llama3\\.2-1b\\.json: /vocab: .*\\bexpected" INPUT ${llama1b}
  PREP "set llama3.2-1b.json vocab 4503599627370496"
  -- describe ${small_hw} --gpus 8 --model llama3.2-1b.json)
trainsim_robust(overflow.model_ffn_hidden 2
  "^error: llama3\\.2-1b\\.json: /ffn_hidden: .*\\bexpected" INPUT ${llama1b}
  PREP "set llama3.2-1b.json ffn_hidden 4503599627370496"
  -- run ${small_hw} --gpus 8 --model llama3.2-1b.json)
trainsim_robust(overflow.hf_config_layers 2
  "^error: hf_llama3_8b_config\\.json: /num_hidden_layers: .*\\bexpected"
  INPUT ${ROBUST_DATA}/hf_llama3_8b_config.json
  PREP "set hf_llama3_8b_config.json num_hidden_layers 9007199254740992"
  -- describe ${small_hw} --gpus 8 --model hf_llama3_8b_config.json)
# Five axes of 900,000 values: 5.9e29 scenarios; the count must not wrap (it was reported as
# -9223372036854775808).
trainsim_robust(overflow.sweep_size_product 2
  "^error: sweep_size_overflow\\.json: /axes: [^-]*\\bexpected[^-]*$"
  INPUT ${IN}/sweep_size_overflow.json INPUT ${IN}/scenario.json
  -- sweep sweep_size_overflow.json --list)
# Counts read through a 32-bit type would wrap: 2^32 + 1 becomes 1, and shard 4294967297/2
# would pass for shard 1/2 (its rows, exit 0). Each must be read whole and refused.
trainsim_robust(overflow.sweep_shard_narrowed 2
  "^error: [^:]*--shard[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  -- sweep sweep4.json --shard 4294967297/2)
trainsim_robust(overflow.sweep_slurm_task_id_narrowed 2
  "^error: --shard auto[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  ENV SLURM_ARRAY_TASK_ID=4294967297 ENV SLURM_ARRAY_TASK_COUNT=2
  -- sweep sweep4.json --shard auto)
trainsim_robust(overflow.sweep_job_index_narrowed 2
  "^error: --shard auto[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  ENV JOB_COMPLETION_INDEX=4294967297 -- sweep sweep4.json --shard auto --shard-count 2)
trainsim_robust(overflow.search_shard_narrowed 2
  "^error: [^:]*--shard[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --shard 4294967297/2)
trainsim_robust(overflow.sweep_shard_beyond_int64 2
  "^error: [^:]*--shard[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  -- sweep sweep4.json --shard 1/99999999999999999999)
# --expect 2^32 + 4 read as 4 would let the merge of a 4-scenario sweep pass.
trainsim_robust(overflow.merge_expect_narrowed 2
  "^error: [^:]*--expect[^:]*: .*\\bexpected" ${csv_shards}
  -- merge s0.csv s1.csv --expect 4294967300)
trainsim_robust(overflow.run_virtual_stages_narrowed 2
  "^error: command line \\(--virtual-stages\\): /parallel/virtual_stages: .*\\bexpected"
  -- run ${small} --gpus 8 --pp 2 --schedule interleaved --virtual-stages 4294967298)
trainsim_robust(overflow.run_shard_group_narrowed 2
  "^error: command line \\(--shard-group\\): /parallel/shard_group: .*\\bexpected"
  -- run ${small} --gpus 8 --sharding hybrid_shard --shard-group 4294967300)
trainsim_robust(overflow.search_virtual_stages_narrowed 2
  "^error: [^:]*--virtual-stages[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --pp 2 --virtual-stages 4294967298)
# --tp 2^32 + 2 was read as 2.
trainsim_robust(overflow.search_tp_narrowed 2
  "^error: [^:]*--tp[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --tp 4294967298)
trainsim_robust(overflow.search_micro_batch_narrowed 2
  "^error: [^:]*--micro-batch[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --micro-batch 4294967297)
trainsim_robust(overflow.search_global_batch_times_seq_len 2
  "^error: [^:]*(--global-batch|--seq-len)[^:]*: .*\\bexpected"
  -- search --hardware h100-dgx --model llama3.2-1b --gpus 8 --global-batch 9007199254740992
  --seq-len 1048576 --jobs 1)
trainsim_robust(overflow.search_gpus 2
  "^error: [^:]*--gpus[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 9223372036854775807 --global-batch 8)
trainsim_robust(overflow.search_top_narrowed 2
  "^error: [^:]*--top[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --top 4294967297)
trainsim_robust(overflow.collective_nodes 2
  "^error: [^:]*--nodes[^:]*: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 4611686018427387904)
trainsim_robust(overflow.collective_step_factor_narrowed 2
  "^error: [^:]*--step-factor[^:]*: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --step-factor 4294967298)
trainsim_robust(overflow.collective_gpus_per_node_narrowed 2
  "^error: [^:]*--gpus-per-node[^:]*: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --gpus-per-node 4294967304)
trainsim_robust(overflow.collective_max_bytes_int64 2
  "^error: [^:]*--max-bytes[^:]*: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --max-bytes 99999999999999999999)
trainsim_robust(overflow.compare_stage_narrowed 2
  "^error: [^:]*--stage[^:]*: .*\\bexpected"
  -- compare ${trace_scenario} --trace ${trace} --stage 4294967296)
trainsim_robust(overflow.validate_row_gpus 2
  "^error: published_runs\\.json: /0/gpus: .*\\bexpected" INPUT ${runs}
  PREP "set published_runs.json gpus 9223372036854775807" -- validate published_runs.json --jobs 1)
trainsim_robust(overflow.validate_row_seq_len 2
  "^error: published_runs\\.json: /0/seq_len: .*\\bexpected" INPUT ${runs}
  PREP "set published_runs.json seq_len 9223372036854775807"
  -- validate published_runs.json --jobs 1)
trainsim_robust(overflow.calibrate_log_size 2
  "^error: log\\.txt: line [0-9]+: .*\\bexpected" INPUT ${nccl_log}
  PREP "copy h100-ndr-2node-all_reduce.txt log.txt"
  PREP "subst log.txt %2017179869184%20%20%20%204294967296 %2099999999999999999999999%20%20%20%204294967296"
  -- calibrate --base h100-dgx log.txt)

# ------------------------------------------------------------------------------------------------
# nonfinite: a unit string finite as written but infinite, or zero, once scaled to SI units must
# be refused at load, naming the key (1e300 TB/s used to run, with 0 s of memory time).
trainsim_robust(nonfinite.hbm_bandwidth_overflows 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  INPUT ${IN}/scenario.json
  PREP "setstr h100-dgx.json hbm_bandwidth 1e300%20TB/s"
  -- run scenario.json --hardware h100-dgx.json)
# 1e-320 GB/s is 1e-311 B/s: a denormal, positive, and every memory-bound kernel takes inf s.
trainsim_robust(nonfinite.hbm_bandwidth_underflows 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json hbm_bandwidth 1e-320%20GB/s"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
# An efficiency near 0 stretches every kernel past what a double holds: GEMM efficiency 1e-300
# gave a GEMM of infinite time (an internal error, exit 1), HBM efficiency 1e-200 an iteration
# of 1e299 s. Efficiencies are held to [0.05, 1], the bounds calibrate fits them within.
trainsim_robust(nonfinite.gemm_efficiency_tiny 2
  "^error: h100-dgx\\.json: /gpu/gemm/max_efficiency: expected a fraction in \\[0.05, 1\\], got 1e-300"
  INPUT ${h100} PREP "set h100-dgx.json max_efficiency 1e-300"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(nonfinite.memory_efficiency_tiny 2
  "^error: h100-dgx\\.json: /gpu/memory_efficiency: expected a fraction in \\[0.05, 1\\]"
  INPUT ${h100} PREP "set h100-dgx.json memory_efficiency 1e-200"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(nonfinite.hbm_capacity_overflows 2
  "^error: h100-dgx\\.json: /gpu/hbm_capacity: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json hbm_capacity 1e300%20TiB"
  -- describe ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(nonfinite.peak_bf16_overflows 2
  "^error: h100-dgx\\.json: /gpu/peak_dense/bf16: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json bf16 1e300%20PFLOP/s"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(nonfinite.nic_bandwidth_overflows 2
  "^error: h100-dgx\\.json: /fabric/nic_bandwidth: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json nic_bandwidth 1e300%20Tb/s"
  -- run ${small_model} --gpus 16 --hardware h100-dgx.json)
trainsim_robust(nonfinite.nvlink_bandwidth_overflows 2
  "^error: h100-dgx\\.json: /node/nvlink_bandwidth_per_direction: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json nvlink_bandwidth_per_direction 1e300%20TB/s"
  -- collective --hardware h100-dgx.json --op all_reduce --nodes 1)
trainsim_robust(nonfinite.tdp_overflows 2
  "^error: h100-dgx\\.json: /power/tdp: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json tdp 1e308%20kW"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
# 1e306 h is 3.6e309 s: infinite once converted to seconds.
trainsim_robust(nonfinite.launch_overhead_overflows 2
  "^error: h100-dgx\\.json: /gpu/kernel_launch_overhead: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json kernel_launch_overhead 1e306%20h"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(nonfinite.stack_overhead_overflows 2
  "^error: pytorch-2\\.3-fsdp\\.json: /iteration_overhead: .*\\bexpected"
  INPUT ${ROBUST_STACKS}/pytorch-2.3-fsdp.json
  PREP "setstr pytorch-2.3-fsdp.json iteration_overhead 1e306%20h"
  -- run ${small} --gpus 8 --stack pytorch-2.3-fsdp.json)
# 1e308 USD/h is finite, but any sum or product of such prices is not: bounded at load.
trainsim_robust(nonfinite.price_overflows 2
  "^error: h100-dgx\\.json: /price_per_gpu_hour: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json price_per_gpu_hour 1e308%20USD/h"
  -- run ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(nonfinite.sweep_hardware_axis 2
  "^error: [^ ]*h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  INPUT ${IN}/sweep4.json
  PREP "setstr h100-dgx.json hbm_bandwidth 1e300%20TB/s"
  PREP "setstr sweep4.json hardware h100-dgx.json"
  NO_FILE out.csv -- sweep sweep4.json -o out.csv)
trainsim_robust(nonfinite.search_hardware 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json hbm_bandwidth 1e300%20TB/s"
  -- search --hardware h100-dgx.json --model llama3.2-1b --seq-len 1024 --gpus 8
  --global-batch 8 --jobs 1)
trainsim_robust(nonfinite.calibrate_base 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json hbm_bandwidth 1e300%20TB/s"
  -- calibrate --base h100-dgx.json ${nccl_log})
# 1e300 GiB is inf bytes; calibrate used to go on "at or above -9223372036854775808 bytes".
trainsim_robust(nonfinite.calibrate_min_bytes 2
  "^error: [^:]*--min-bytes[^:]*: .*\\bexpected" -- calibrate --base h100-dgx ${nccl_log}
  --min-bytes 1e300GiB)
trainsim_robust(nonfinite.collective_min_bytes 2
  "^error: [^:]*--min-bytes[^:]*: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --min-bytes 1e300GiB)
# 1e-320 GiB is about 1e-311 bytes: not a size of at least one byte (the default --min-bytes 8
# may be named first).
trainsim_robust(nonfinite.collective_max_bytes_underflows 2
  "^error: --(max|min)-bytes: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --max-bytes 1e-320GiB)

# ------------------------------------------------------------------------------------------------
# exception: exceptions from nlohmann, the standard library and allocation on bad input are bad
# input (exit 2, one line), never "internal error" (exit 1).

# A JSON number beyond double range: nlohmann's out_of_range.406 (it escaped as "internal error").
trainsim_robust(exception.scenario_number_overflow 2
  "^error: scenario\\.json: .*1e400.*\\bexpected" INPUT ${IN}/scenario.json
  PREP "set scenario.json seq_len 1e400" -- run scenario.json)
trainsim_robust(exception.model_number_overflow 2
  "^error: llama3\\.2-1b\\.json: .*1e400.*\\bexpected" INPUT ${llama1b}
  PREP "set llama3.2-1b.json layers 1e400"
  -- describe ${small_hw} --gpus 8 --model llama3.2-1b.json)
trainsim_robust(exception.hardware_number_overflow 2
  "^error: h100-dgx\\.json: .*1e400.*\\bexpected" INPUT ${h100}
  PREP "set h100-dgx.json sms 1e400" -- describe ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(exception.stack_number_overflow 2
  "^error: pytorch-2\\.3-fsdp\\.json: .*1e400.*\\bexpected"
  INPUT ${ROBUST_STACKS}/pytorch-2.3-fsdp.json
  PREP "set pytorch-2.3-fsdp.json attention_speed 1e400"
  -- run ${small} --gpus 8 --stack pytorch-2.3-fsdp.json)
trainsim_robust(exception.sweep_number_overflow 2
  "^error: sweep4\\.json: .*1e400.*\\bexpected" INPUT ${IN}/sweep4.json
  PREP "set sweep4.json training.seq_len %5B512,1e400%5D" -- sweep sweep4.json --list)
trainsim_robust(exception.runs_number_overflow 2
  "^error: published_runs\\.json: .*1e400.*\\bexpected" INPUT ${runs}
  PREP "set published_runs.json tflops_per_gpu 1e400" -- validate published_runs.json --jobs 1)
trainsim_robust(exception.trace_number_overflow 2
  "^error: tp2_overlap\\.json: .*1e400.*\\bexpected" INPUT ${trace}
  PREP "set tp2_overlap.json dur 1e400" -- compare ${trace_scenario} --trace tp2_overlap.json)
trainsim_robust(exception.hf_config_number_overflow 2
  "^error: hf_llama3_8b_config\\.json: .*1e400.*\\bexpected"
  INPUT ${ROBUST_DATA}/hf_llama3_8b_config.json
  PREP "set hf_llama3_8b_config.json num_hidden_layers 1e400"
  -- describe ${small_hw} --gpus 8 --model hf_llama3_8b_config.json)
trainsim_robust(exception.measurements_number_overflow 2
  "^error: h100-dgx\\.json: .*1e400.*\\bexpected" INPUT ${ROBUST_CALIBRATION}/h100-dgx.json
  PREP "set h100-dgx.json schema_version 1e400" -- calibrate --base h100-dgx h100-dgx.json)
# A model file whose name holds the byte 0xFF: the name reaches the JSON writer of --format json
# (nlohmann's type_error.316 escaped as "internal error").
trainsim_robust(exception.run_json_invalid_utf8 2
  "^error: [^:]*(--model|m.\\.json)" INPUT ${llama1b} PREP "copy llama3.2-1b.json m%FF.json"
  PERCENT_ARGS -- run ${small_hw} --gpus 8 --model m%FF.json --format json)
trainsim_robust(exception.describe_json_invalid_utf8 2
  "^error: [^:]*(--model|m.\\.json)" INPUT ${llama1b} PREP "copy llama3.2-1b.json m%FF.json"
  PERCENT_ARGS -- describe ${small_hw} --gpus 8 --model m%FF.json --format json)
trainsim_robust(exception.search_json_invalid_utf8 2
  "^error: [^:]*(--model|m.\\.json)" INPUT ${llama1b} PREP "copy llama3.2-1b.json m%FF.json"
  PERCENT_ARGS -- search --hardware h100-dgx --model m%FF.json --seq-len 1024 --jobs 1 --gpus 8
  --global-batch 8 --tp 1 --pp 1 --micro-batch 1 --format json)
trainsim_robust(exception.compare_json_invalid_utf8 2
  "^error: [^:]*(--model|m.\\.json)" INPUT ${llama1b} PREP "copy llama3.2-1b.json m%FF.json"
  PERCENT_ARGS -- compare ${trace_scenario} --trace ${trace} --model m%FF.json --format json)
# stoi/stod out of range in environment variables and number columns.
trainsim_robust(exception.slurm_task_id_out_of_range 2
  "^error: --shard auto \\(SLURM_ARRAY_TASK_ID\\): .*\\bexpected" INPUT ${IN}/sweep4.json
  ENV SLURM_ARRAY_TASK_ID=99999999999999999999 ENV SLURM_ARRAY_TASK_COUNT=2
  -- sweep sweep4.json --shard auto)
trainsim_robust(exception.slurm_task_count_out_of_range 2
  "^error: --shard auto[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  ENV SLURM_ARRAY_TASK_ID=1 ENV SLURM_ARRAY_TASK_COUNT=99999999999999999999
  -- sweep sweep4.json --shard auto)
trainsim_robust(exception.nccl_log_time_out_of_range 2
  "^error: log\\.txt: line [0-9]+: .*\\bexpected" INPUT ${nccl_log}
  PREP "copy h100-ndr-2node-all_reduce.txt log.txt"
  PREP "subst log.txt -1%20%20%201282.8 -1%20%20%201e400" -- calibrate --base h100-dgx log.txt)
# Text inputs are not JSON-checked: bytes that are not UTF-8 in an nccl-tests log must be refused
# before they can reach the JSON writer of --format json.
trainsim_robust(exception.nccl_log_invalid_utf8 2
  "^error: log\\.txt: line [0-9]+: .*\\bexpected" INPUT ${nccl_log}
  PREP "copy h100-ndr-2node-all_reduce.txt log.txt"
  PREP "subst log.txt NVIDIA%20H100%2080GB%20HBM3 NVIDIA%20H100%2080GB%20HBM3%FF"
  -- calibrate --base h100-dgx log.txt --format json)
trainsim_robust(exception.unit_number_out_of_range 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json hbm_bandwidth 1e400%20TB/s"
  -- describe ${small_model} --gpus 8 --hardware h100-dgx.json)
# bad_alloc: 2^53 sequences of one per micro-batch on 8 GPUs is 2^50 micro-batches (it was
# "internal error: std::bad_alloc").
trainsim_robust(exception.run_global_batch_bad_alloc 2
  "^error: command line[^:]*: /training/global_batch: .*\\bexpected"
  -- run ${small} --gpus 8 --global-batch 9007199254740992)
trainsim_robust(exception.search_global_batch_bad_alloc 2
  "^error: [^:]*--global-batch[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 9007199254740992)

# ------------------------------------------------------------------------------------------------
# threads: --jobs is bounded; a huge count is refused, not tried (validate --jobs 10^8 used to
# hang starting threads).

trainsim_robust(threads.sweep_jobs_huge 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  -- sweep sweep4.json --jobs 100000000)
trainsim_robust(threads.sweep_jobs_narrowed 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  -- sweep sweep4.json --jobs 4294967297)
trainsim_robust(threads.sweep_jobs_negative 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json -- sweep sweep4.json --jobs -1)
trainsim_robust(threads.sweep_jobs_not_a_number 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" INPUT ${IN}/sweep4.json
  -- sweep sweep4.json --jobs many)
trainsim_robust(threads.search_jobs_huge 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected"
  -- search ${small} --gpus 8 --global-batch 8 --jobs 99999)
trainsim_robust(threads.search_jobs_negative 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" -- search ${small} --gpus 8 --global-batch 8 --jobs -5)
trainsim_robust(threads.validate_jobs_huge 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" -- validate --source Shoeybi --jobs 99999999)
trainsim_robust(threads.validate_jobs_narrowed 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" -- validate --source Shoeybi --jobs 4294967298)
trainsim_robust(threads.validate_jobs_negative 2
  "^error: [^:]*--jobs[^:]*: .*\\bexpected" -- validate --source Shoeybi --jobs -3)

# ------------------------------------------------------------------------------------------------
# unbounded: endless streams, FIFOs, huge sparse files and deep nesting are refused quickly and
# in bounded memory; huge sweeps, search spaces, batches and layer counts are refused before
# anything is built.

trainsim_robust(unbounded.run_dev_zero 2 "^error: /dev/zero: .*\\bexpected" -- run /dev/zero)
trainsim_robust(unbounded.describe_dev_zero 2 "^error: /dev/zero: .*\\bexpected"
  -- describe /dev/zero)
trainsim_robust(unbounded.sweep_dev_zero 2 "^error: /dev/zero: .*\\bexpected" -- sweep /dev/zero)
trainsim_robust(unbounded.merge_dev_zero 2 "^error: /dev/zero: .*\\bexpected" -- merge /dev/zero)
trainsim_robust(unbounded.validate_dev_zero 2 "^error: /dev/zero: .*\\bexpected"
  -- validate /dev/zero)
trainsim_robust(unbounded.compare_trace_dev_zero 2 "^error: /dev/zero: .*\\bexpected"
  -- compare ${trace_scenario} --trace /dev/zero)
trainsim_robust(unbounded.calibrate_dev_zero 2 "^error: /dev/zero: .*\\bexpected"
  -- calibrate --base h100-dgx /dev/zero)
# An endless standard input, given as /dev/stdin.
trainsim_robust(unbounded.run_stdin_zero 2 "^error: /dev/stdin: .*\\bexpected" STDIN /dev/zero
  -- run /dev/stdin)
trainsim_robust(unbounded.merge_stdin_zero 2 "^error: /dev/stdin: .*\\bexpected" STDIN /dev/zero
  -- merge /dev/stdin)
trainsim_robust(unbounded.validate_stdin_zero 2 "^error: /dev/stdin: .*\\bexpected"
  STDIN /dev/zero -- validate /dev/stdin)
# A FIFO nobody writes to: opening it for reading blocks forever unless the reader first checks
# for a regular file.
trainsim_robust(unbounded.run_fifo 2 "^error: [^ ]*fifo\\.json: .*\\bexpected" PREP "fifo fifo.json"
  -- run fifo.json)
trainsim_robust(unbounded.model_fifo 2 "^error: .*fifo\\.json.*\\bexpected" PREP "fifo fifo.json"
  -- describe ${small_hw} --gpus 8 --model fifo.json)
trainsim_robust(unbounded.sweep_fifo 2 "^error: [^ ]*fifo\\.json: .*\\bexpected"
  PREP "fifo fifo.json" -- sweep fifo.json)
trainsim_robust(unbounded.merge_fifo 2 "^error: [^ ]*fifo\\.csv: .*\\bexpected" PREP "fifo fifo.csv"
  -- merge fifo.csv)
trainsim_robust(unbounded.validate_fifo 2 "^error: [^ ]*fifo\\.json: .*\\bexpected"
  PREP "fifo fifo.json" -- validate fifo.json)
trainsim_robust(unbounded.compare_fifo 2 "^error: [^ ]*fifo\\.json: .*\\bexpected"
  PREP "fifo fifo.json" -- compare ${trace_scenario} --trace fifo.json)
trainsim_robust(unbounded.calibrate_fifo 2 "^error: [^ ]*fifo\\.txt: .*\\bexpected"
  PREP "fifo fifo.txt" -- calibrate --base h100-dgx fifo.txt)
# 4 GiB sparse files of NUL bytes: the size limit must be checked before reading (validate used to
# read all of it: 4 GB of memory and a minute).
trainsim_robust(unbounded.run_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- run big.json)
trainsim_robust(unbounded.model_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- describe ${small_hw} --gpus 8 --model big.json)
trainsim_robust(unbounded.hardware_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- describe ${small_model} --gpus 8 --hardware big.json)
trainsim_robust(unbounded.stack_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- run ${small} --gpus 8 --stack big.json)
trainsim_robust(unbounded.sweep_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- sweep big.json)
trainsim_robust(unbounded.merge_sparse 2 "^error: big\\.csv: .*\\bexpected"
  PREP "sparse big.csv 4096" -- merge big.csv)
trainsim_robust(unbounded.validate_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- validate big.json)
trainsim_robust(unbounded.compare_sparse 2 "^error: big\\.json: .*\\bexpected"
  PREP "sparse big.json 4096" -- compare ${trace_scenario} --trace big.json)
trainsim_robust(unbounded.calibrate_sparse 2 "^error: big\\.txt: .*\\bexpected"
  PREP "sparse big.txt 4096" -- calibrate --base h100-dgx big.txt)
# 100,000 nested arrays or objects: refused at the nesting limit by every JSON reader, before
# any recursion (run used to segfault on the arrays).
trainsim_robust(unbounded.run_deep_arrays 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 array" -- run deep.json)
trainsim_robust(unbounded.run_deep_objects 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 object" -- run deep.json)
trainsim_robust(unbounded.model_deep_objects 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 object" -- describe ${small_hw} --gpus 8 --model deep.json)
trainsim_robust(unbounded.hardware_deep_objects 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 object" -- describe ${small_model} --gpus 8 --hardware deep.json)
trainsim_robust(unbounded.stack_deep_arrays 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 array" -- run ${small} --gpus 8 --stack deep.json)
trainsim_robust(unbounded.sweep_deep_objects 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 object" -- sweep deep.json)
trainsim_robust(unbounded.validate_deep_arrays 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 array" -- validate deep.json)
trainsim_robust(unbounded.compare_deep_objects 2 "^error: deep\\.json: .*nested.*\\bexpected"
  PREP "nest deep.json 100000 object" -- compare ${trace_scenario} --trace deep.json)
trainsim_robust(unbounded.calibrate_deep_arrays 2 "^error: deep\\.json: .*\\bexpected"
  PREP "nest deep.json 100000 array" -- calibrate --base h100-dgx deep.json)
trainsim_robust(unbounded.merge_deep_arrays 2 "^error: deep\\.json: .*\\bexpected"
  PREP "nest deep.json 100000 array" -- merge deep.json)
# 10^10 scenarios: above the documented cap of 10^8, refused before expanding.
trainsim_robust(unbounded.sweep_over_cap 2
  "^error: sweep_too_large\\.json: /axes: .*\\bexpected at most"
  INPUT ${IN}/sweep_too_large.json INPUT ${IN}/scenario.json -- sweep sweep_too_large.json --list)
trainsim_robust(unbounded.sweep_over_cap_run 2
  "^error: sweep_too_large\\.json: /axes: .*\\bexpected at most"
  INPUT ${IN}/sweep_too_large.json INPUT ${IN}/scenario.json NO_FILE out.csv
  -- sweep sweep_too_large.json -o out.csv)
# 1,000 tp values x 1,000 pp values x 1,000 micro-batches: 10^9 plans and more (it used to hang).
set(thousand "1")
foreach(i RANGE 2 1000)
  string(APPEND thousand ",${i}")
endforeach()
trainsim_robust(unbounded.search_space 2
  "^error: [^:]*(--tp|--pp|--micro-batch|search space)[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --tp ${thousand} --pp ${thousand}
  --micro-batch ${thousand})
# 20,000 micro-batch sizes alone: 20,000 x 3 shardings x 3 recomputes x 16 tp/pp plans.
set(twenty_thousand "1")
foreach(i RANGE 2 20000)
  string(APPEND twenty_thousand ",${i}")
endforeach()
trainsim_robust(unbounded.search_micro_batches 2
  "^error: [^:]*(--micro-batch|search space)[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --micro-batch ${twenty_thousand})
# 8 * 10^9 sequences of one per micro-batch: 10^9 micro-batches per step (it used to hang).
trainsim_robust(unbounded.run_micro_batches 2
  "^error: command line[^:]*: /training/global_batch: .*\\bexpected"
  -- run ${small} --gpus 8 --global-batch 8000000000)
# 10^8 layers: an op graph of billions of kernels.
trainsim_robust(unbounded.model_layers 2
  "^error: llama3\\.2-1b\\.json: /layers: .*\\bexpected" INPUT ${llama1b}
  PREP "set llama3.2-1b.json layers 100000000" -- run ${small_hw} --gpus 8 --model llama3.2-1b.json)

# ------------------------------------------------------------------------------------------------
# format: CLI11's own parse errors become one "error:" line naming the flag (they were two lines
# without the prefix), unknown commands get a suggestion, and --gpus with --nodes is refused on
# every subcommand as the scenario file and search refuse it. A wrong value must say what was
# expected; a missing flag or argument is named as such ("command line (--op): missing required
# option").

trainsim_robust(format.no_subcommand 2 "^error: .*subcommand.*\\bexpected" --)
trainsim_robust(format.unknown_subcommand 2 "^error: .*'rnu'.*did you mean 'run'" -- rnu)
trainsim_robust(format.unknown_subcommand_far 2 "^error: .*'frobnicate'.*\\bexpected" -- frobnicate)
trainsim_robust(format.run_unknown_flag 2 "^error: .*--bogus" INPUT ${IN}/scenario.json
  -- run scenario.json --bogus)
trainsim_robust(format.run_flag_not_an_integer 2 "^error: [^:]*--tp[^:]*: .*\\bexpected"
  INPUT ${IN}/scenario.json -- run scenario.json --tp abc)
trainsim_robust(format.run_flag_without_value 2 "^error: .*--gpus"
  -- run ${small} --gpus)
trainsim_robust(format.run_extra_positional 2 "^error: .*extra\\.json" INPUT ${IN}/scenario.json
  -- run scenario.json extra.json)
trainsim_robust(format.run_bad_format 2 "^error: [^:]*--format[^:]*: .*\\bexpected"
  INPUT ${IN}/scenario.json -- run scenario.json --format yaml)
trainsim_robust(format.run_gpus_and_nodes 2 "^error: .*--gpus.*--nodes.*\\bexpected"
  -- run ${small} --gpus 8 --nodes 1)
trainsim_robust(format.describe_gpus_and_nodes 2 "^error: .*--gpus.*--nodes.*\\bexpected"
  -- describe ${small} --gpus 8 --nodes 1)
trainsim_robust(format.compare_gpus_and_nodes 2 "^error: .*--gpus.*--nodes.*\\bexpected"
  -- compare ${trace_scenario} --trace ${trace} --gpus 2 --nodes 1)
trainsim_robust(format.sweep_bad_format 2 "^error: [^:]*--format[^:]*: .*\\bexpected"
  INPUT ${IN}/sweep4.json -- sweep sweep4.json --format xml)
trainsim_robust(format.sweep_missing_spec 2 "^error: .*spec" -- sweep)
trainsim_robust(format.search_bad_objective 2 "^error: [^:]*--objective[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --objective speed)
trainsim_robust(format.search_missing_hardware 2 "^error: .*--hardware"
  -- search --model llama3.2-1b --gpus 8 --global-batch 8 --seq-len 1024)
trainsim_robust(format.collective_missing_op 2 "^error: .*--op"
  -- collective --hardware h100-dgx --nodes 2)
trainsim_robust(format.merge_no_inputs 2 "^error: .*inputs" -- merge)
trainsim_robust(format.calibrate_missing_base 2 "^error: .*--base" -- calibrate ${nccl_log})
trainsim_robust(format.compare_steps_without_value 2 "^error: [^:]*--steps"
  -- compare ${trace_scenario} --trace ${trace} --steps)
trainsim_robust(format.validate_bad_format 2 "^error: [^:]*--format[^:]*: .*\\bexpected"
  -- validate --format yaml)
trainsim_robust(format.validate_source_without_value 2 "^error: [^:]*--source" -- validate --source)

# ------------------------------------------------------------------------------------------------
# reader: hostile but ordinary values in each reader, guarding the message shape
# "<file>: <pointer>: <problem>; expected ...".

trainsim_robust(reader.scenario_empty_file 2 "^error: scenario\\.json: .*\\bexpected"
  INPUT ${IN}/scenario.json PREP "cut scenario.json 0" -- run scenario.json)
trainsim_robust(reader.scenario_nul_bytes 2 "^error: zero\\.json: .*\\bexpected"
  PREP "sparse zero.json 1" -- run zero.json)
trainsim_robust(reader.scenario_is_array 2 "^error: arr\\.json: /: .*\\bexpected"
  PREP "write arr.json %5B1,2,3%5D" -- describe arr.json)
trainsim_robust(reader.scenario_trailing_garbage 2 "^error: scenario\\.json: .*\\bexpected"
  INPUT ${IN}/scenario.json PREP "write tail.txt garbage" PREP "append tail.txt scenario.json"
  -- run scenario.json)
trainsim_robust(reader.scenario_cut_in_half 2 "^error: scenario\\.json: .*\\bexpected"
  INPUT ${IN}/scenario.json PREP "cut scenario.json 50%" -- run scenario.json)
trainsim_robust(reader.scenario_null_seq_len 2
  "^error: scenario\\.json: /training/seq_len: expected an integer" INPUT ${IN}/scenario.json
  PREP "set scenario.json seq_len null" -- run scenario.json)
trainsim_robust(reader.scenario_fractional_gpus 2
  "^error: scenario\\.json: /cluster/gpus: expected an integer" INPUT ${IN}/scenario.json
  PREP "set scenario.json gpus 8.5" -- run scenario.json)
trainsim_robust(reader.scenario_negative_tp 2
  "^error: command line \\(--tp\\): /parallel/tp: expected an integer >= 1"
  INPUT ${IN}/scenario.json
  -- run scenario.json --tp -2)
trainsim_robust(reader.scenario_invalid_utf8 2 "^error: scenario\\.json: .*\\bexpected"
  INPUT ${IN}/scenario.json PREP "setstr scenario.json model llama%FF" -- run scenario.json)
trainsim_robust(reader.scenario_directory 2 "^error: dir: is a directory. expected" PREP "mkdir dir"
  -- describe dir)
trainsim_robust(reader.scenario_missing_file 2 "^error: none\\.json: .*\\bexpected"
  -- describe none.json)
trainsim_robust(reader.model_negative_heads 2
  "^error: llama3\\.2-1b\\.json: /heads: expected an integer" INPUT ${llama1b}
  PREP "set llama3.2-1b.json heads -32" -- describe ${small_hw} --gpus 8 --model llama3.2-1b.json)
trainsim_robust(reader.hardware_unitless_bandwidth 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: expected a bandwidth" INPUT ${h100}
  PREP "set h100-dgx.json hbm_bandwidth 3.35"
  -- describe ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(reader.hardware_nan_bandwidth 2
  "^error: h100-dgx\\.json: /gpu/hbm_bandwidth: .*\\bexpected" INPUT ${h100}
  PREP "setstr h100-dgx.json hbm_bandwidth nan%20TB/s"
  -- describe ${small_model} --gpus 8 --hardware h100-dgx.json)
trainsim_robust(reader.hardware_gpus_per_node_zero 2
  "^error: h100-dgx\\.json: /node/gpus_per_node: .*\\bexpected" INPUT ${h100}
  PREP "set h100-dgx.json gpus_per_node 0" -- run ${small_model} --nodes 2 --hardware h100-dgx.json)
trainsim_robust(reader.stack_unknown_key 2
  "^error: pytorch-2\\.3-fsdp\\.json: /attention_sped: unknown key.*did you mean"
  INPUT ${ROBUST_STACKS}/pytorch-2.3-fsdp.json
  PREP "subst pytorch-2.3-fsdp.json %22attention_speed%22 %22attention_sped%22:%201,%20%22attention_speed%22"
  -- run ${small} --gpus 8 --stack pytorch-2.3-fsdp.json)
# A key given twice in one object: nlohmann would keep the second value without a word; every
# reader of a file the user writes refuses it, naming the key's pointer.
trainsim_robust(reader.scenario_duplicate_key 2
  "^error: scenario\\.json: /parallel/tp: key given twice in one object. expected each key at most once"
  INPUT ${IN}/scenario.json PREP "subst scenario.json %22tp%22:%201 %22tp%22:%201,%20%22tp%22:%204"
  -- run scenario.json)
# Control characters in a key reach the message JSON-escaped: an ESC sequence must not drive the
# terminal, a NUL must not cut the line short.
trainsim_robust(reader.scenario_control_characters_in_key 2
  "^error: scenario\\.json: /parallel/x\\\\u001b.2J\\\\u0000y: unknown key"
  INPUT ${IN}/scenario.json
  PREP "subst scenario.json %22tp%22:%201 %22tp%22:%201,%20%22x%5Cu001b%5B2J%5Cu0000y%22:%201"
  -- run scenario.json)
trainsim_robust(reader.sweep_duplicate_axis 2
  "^error: sweep4\\.json: /axes/training\\.seq_len: key given twice.*\\bexpected"
  INPUT ${IN}/sweep4.json
  PREP "subst sweep4.json %22axes%22:%20%7B %22axes%22:%20%7B%22training.seq_len%22:%20%5B64%5D,%20"
  -- sweep sweep4.json --list)
trainsim_robust(reader.stack_duplicate_key 2
  "^error: pytorch-2\\.3-fsdp\\.json: /attention_speed: key given twice.*\\bexpected"
  INPUT ${ROBUST_STACKS}/pytorch-2.3-fsdp.json
  PREP "subst pytorch-2.3-fsdp.json %22attention_speed%22 %22attention_speed%22:%201,%20%22attention_speed%22"
  -- run ${small} --gpus 8 --stack pytorch-2.3-fsdp.json)
trainsim_robust(reader.runs_duplicate_key 2
  "^error: published_runs\\.json: /0/gpus: key given twice.*\\bexpected" INPUT ${runs}
  PREP "subst published_runs.json %22gpus%22 %22gpus%22:%201,%20%22gpus%22"
  -- validate published_runs.json --jobs 1)
trainsim_robust(reader.sweep_empty_axis 2
  "^error: sweep4\\.json: /axes/training\\.seq_len: .*\\bexpected"
  INPUT ${IN}/sweep4.json PREP "set sweep4.json training.seq_len %5B%5D"
  -- sweep sweep4.json --list)
trainsim_robust(reader.sweep_shard_zero_count 2 "^error: [^:]*--shard[^:]*: .*\\bexpected"
  INPUT ${IN}/sweep4.json -- sweep sweep4.json --shard 0/0)
trainsim_robust(reader.search_list_with_zero 2 "^error: [^:]*--pp[^:]*: .*\\bexpected"
  -- ${search_small} --gpus 8 --global-batch 8 --pp 0,1)
trainsim_robust(reader.collective_bad_op 2 "^error: [^:]*--op[^:]*: .*did you mean"
  -- collective --hardware h100-dgx --op allreduce --nodes 2)
trainsim_robust(reader.collective_size_without_number 2
  "^error: [^:]*--min-bytes[^:]*: .*\\bexpected"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --min-bytes GiB)
trainsim_robust(reader.merge_not_an_output 2 "^error: scenario\\.json: .*\\bexpected"
  INPUT ${IN}/scenario.json -- merge scenario.json)
trainsim_robust(reader.merge_expect_mismatch 2 "^error: [^:]*--expect[^:]*: .*\\bexpected"
  ${csv_shards}
  -- merge s0.csv s1.csv --expect 5)
trainsim_robust(reader.calibrate_binary_log 2 "^error: bin\\.txt: .*\\bexpected"
  PREP "sparse bin.txt 1" -- calibrate --base h100-dgx bin.txt)
trainsim_robust(reader.calibrate_bad_freeze 2 "^error: [^:]*--freeze[^:]*: .*\\bexpected"
  -- calibrate --base h100-dgx ${nccl_log} --freeze /gpu/nope)
trainsim_robust(reader.compare_bad_steps 2 "^error: [^:]*--steps[^:]*: .*\\bexpected"
  -- compare ${trace_scenario} --trace ${trace} --steps first)
trainsim_robust(reader.compare_trace_not_an_object 2 "^error: arr\\.json: /[0-9]*: .*\\bexpected"
  PREP "write arr.json %5B1,2,3%5D" -- compare ${trace_scenario} --trace arr.json)
trainsim_robust(reader.validate_row_wrong_type 2 "^error: published_runs\\.json: /0/gpus: expected"
  INPUT ${runs} PREP "set published_runs.json gpus %2232%22"
  -- validate published_runs.json --jobs 1)
trainsim_robust(reader.validate_not_an_array 2 "^error: obj\\.json: .*\\bexpected"
  PREP "write obj.json {}" -- validate obj.json)
trainsim_robust(reader.validate_stack_mapping 2 "^error: [^:]*--stack[^:]*: .*\\bexpected"
  -- validate --source Shoeybi --stack nonsense)

# A stdout whose writes fail: a full disk (/dev/full) or a reader that closed the pipe
# (`trainsim run ... | head -1`). The report must not end as a silent partial one (exit 0) nor
# as a death by SIGPIPE.
trainsim_robust(corrupt.stdout_full_run 2 "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT full INPUT ${IN}/scenario.json -- run scenario.json)
trainsim_robust(corrupt.stdout_closed_run 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT closed INPUT ${IN}/scenario.json -- run scenario.json)
trainsim_robust(corrupt.stdout_full_describe 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT full INPUT ${IN}/scenario.json -- describe scenario.json)
trainsim_robust(corrupt.stdout_closed_collective 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT closed -- collective --hardware h100-dgx --op all_reduce --nodes 2)
trainsim_robust(corrupt.stdout_full_search 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT full -- ${search_small} --gpus 8 --global-batch 8 --tp 1 --pp 1)
trainsim_robust(corrupt.stdout_closed_sweep 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT closed INPUT ${IN}/sweep4.json -- sweep sweep4.json --jobs 1)
# --help and --version too: their text lost to a full disk exited 0.
trainsim_robust(corrupt.stdout_full_help 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT full -- run --help)
trainsim_robust(corrupt.stdout_full_version 2
  "^error: standard output: .*\\bexpected a writable stdout"
  STDOUT full -- --version)

# A JSON document under the size limit whose values alone would take gigabytes once parsed:
# 2,000,001 empty objects (6 MB of text) and 8,000,001 zeros (16 MB).
trainsim_robust(unbounded.json_many_objects 2
  "^error: many\\.json: JSON with more than 2000000 objects and arrays.*\\bexpected"
  PREP "many many.json 2000001 {}" -- run many.json)
trainsim_robust(unbounded.json_many_values 2
  "^error: many\\.json: JSON with more than 8000000 values.*\\bexpected"
  PREP "many many.json 8000001 0" -- validate many.json)
# Half a million small objects in one array (4 MB): each reader's pass for keys given twice is
# linear in the text (nlohmann's callback parser, tried first, rescanned the array at the end of
# every object in it: about a minute here), so the file is refused for its shape within the limit.
trainsim_robust(unbounded.json_array_of_objects 2 "^error: objects\\.json: /: .*\\bexpected"
  PREP "many objects.json 500000 %7B%22a%22:0%7D" -- run objects.json)
# One object of 400,000 keys, then 300,000 empty objects beside it: the pass keeps one key set per
# depth and reuses it, and a set grown large is replaced rather than cleared (clearing zeroes all
# its buckets each time: cleared, the case ran past its 5 s limit; replaced, it takes 1 s).
# A sweep spec with an object of 20,000 keys: the spec keeps its key order, which costs n^2 / 2
# comparisons to parse (100,000 keys took 17 s); refused past 10,000 keys per object.
trainsim_robust(unbounded.sweep_wide_object 2
  "^error: wide\\.json: /0/k10000: more than 10000 keys in one object. expected at most 10000"
  PREP "wide wide.json 20000 0" -- sweep wide.json --list)
trainsim_robust(unbounded.json_wide_then_small_objects 2 "^error: wide\\.json: /: .*\\bexpected"
  PREP "wide wide.json 400000 300000" -- run wide.json)

# Empty values: CLI11 would read them as absent flags.
trainsim_robust(format.empty_flag_value 2 "^error: command line \\(--tp\\): empty value.*\\bexpected"
  INPUT ${IN}/scenario.json -- run scenario.json --tp=)
trainsim_robust(format.empty_output_path 2
  "^error: command line \\(--output\\): empty value.*\\bexpected"
  INPUT ${IN}/sweep4.json -- sweep sweep4.json --output=)

# Lists with a value twice, which would rank each of its plans twice.
trainsim_robust(reader.search_list_duplicate 2
  "^error: --tp: '1' given twice.*\\bexpected distinct values"
  -- ${search_small} --gpus 8 --global-batch 8 --tp 1,2,1)
trainsim_robust(reader.search_enum_duplicate 2
  "^error: --sharding: 'zero1' given twice.*\\bexpected distinct values"
  -- ${search_small} --gpus 8 --global-batch 8 --sharding zero1,zero1)
trainsim_robust(reader.collective_zero_gpus_per_node 2
  "^error: --gpus-per-node: expected 1 to 8"
  -- collective --hardware h100-dgx --op all_reduce --nodes 2 --gpus-per-node 0)

# A measured value that no run gives: a unit mistake, or one that makes the error infinite.
trainsim_robust(reader.validate_measured_tiny 2
  "^error: published_runs\\.json: /[0-9]+/tflops_per_gpu: expected a measured value from"
  INPUT ${runs} PREP "set published_runs.json tflops_per_gpu 1e-320"
  -- validate published_runs.json --jobs 1)
trainsim_robust(reader.validate_mfu_zeroish 2
  "^error: published_runs\\.json: /[0-9]+/mfu: expected a measured value from"
  INPUT ${runs} PREP "set published_runs.json mfu 1e-300"
  -- validate published_runs.json --jobs 1)
# The GPU's own figures in the wrong unit (bytes or MB for GB, FLOP/s for TFLOP/s) were skipped
# as "a GPU the profile does not model" with exit 0, where a measured value in the wrong unit is
# refused.
trainsim_robust(reader.validate_memory_gb_in_mb 2
  "^error: published_runs\\.json: /0/hardware/memory_gb: expected a GPU's memory from 1 to 1e4 GB, got 80000$"
  INPUT ${runs} PREP "set published_runs.json memory_gb 80000"
  -- validate published_runs.json --jobs 1)
trainsim_robust(reader.validate_peak_in_flops 2
  "^error: published_runs\\.json: /0/hardware/peak_tflops_16bit: expected a GPU's peak from 1 to 1e5 TFLOP/s, got 312000000000000\\.0$"
  INPUT ${runs} PREP "set published_runs.json peak_tflops_16bit 3.12e14"
  -- validate published_runs.json --jobs 1)

# Whole-iteration simulations of the largest allowed step (65,536 micro-batches): 23.6 million
# ops for llama3.2-1b on 8 GPUs, minutes and gigabytes, where the report alone extrapolates.
trainsim_robust(unbounded.run_trace_huge_batch 2
  "^error: command line \\(--trace\\): the whole iteration has [0-9]+ ops.*\\bexpected at most 4000000"
  NO_FILE t.json -- run --hardware h100-dgx --model llama3.2-1b --gpus 8 --seq-len 1024
  --global-batch 524288 --trace t.json)
trainsim_robust(unbounded.run_full_simulation_huge_batch 2
  "^error: command line \\(--full-simulation\\): the whole iteration has [0-9]+ ops.*\\bexpected at most"
  -- run --hardware h100-dgx --model llama3.2-1b --gpus 8 --seq-len 1024
  --global-batch 524288 --full-simulation)
trainsim_robust(unbounded.compare_huge_batch 2
  "^error: command line \\(compare\\): the whole iteration has [0-9]+ ops.*\\bexpected at most"
  -- compare ${trace_scenario} --trace ${trace} --global-batch 20000)

# CLI11's remaining messages in the project's shape, and an option before the command.
trainsim_robust(format.merge_unexpected_flag 2
  "^error: command line \\(--format\\): unexpected argument.*\\bexpected"
  ${csv_shards} -- merge s0.csv s1.csv --format json)
trainsim_robust(format.run_flag_twice 2 "^error: command line \\(--tp\\): given 2 times.*\\bexpected"
  INPUT ${IN}/scenario.json -- run scenario.json --tp 2 --tp 4)
trainsim_robust(format.option_before_command 2
  "^error: command line \\(-x\\): unknown option before the command.*\\bexpected a command"
  -- -x run)
trainsim_robust(reader.calibrate_input_twice 2 "^error: [^:]*h100-ndr-2node-all_reduce\\.txt: given twice.*\\bexpected"
  -- calibrate --base h100-dgx ${nccl_log} ${nccl_log})
# shard_group with a sharding other than hybrid_shard was ignored by run; the key named, not the
# flag whose name it starts with (--recompute for --recompute-layers).
trainsim_robust(reader.run_shard_group_without_hybrid 2
  "^error: command line \\(--shard-group\\): /parallel/shard_group: .*\\bexpected sharding \"hybrid_shard\""
  -- run ${small} --gpus 8 --sharding full_shard --shard-group 4)
trainsim_robust(reader.run_recompute_layers_zero 2
  "^error: command line \\(--recompute-layers\\): /parallel/recompute_layers: .*\\bexpected"
  -- run ${small} --gpus 8 --recompute full --recompute-layers 0)
# A pipeline layout entry the loader refuses (a chunk of no layers), named by its index, and one
# past int64 in the flag's text.
trainsim_robust(reader.run_pipeline_layout_zero 2
  "^error: command line \\(--pipeline-layout\\): /parallel/pipeline_layout/1: .*\\bexpected"
  -- run ${small} --gpus 8 --pp 2 --pipeline-layout 16,0)
trainsim_robust(reader.run_pipeline_layout_overflow 2
  "^error: command line \\(--pipeline-layout\\): .*\\bexpected comma-separated layer counts"
  -- run ${small} --gpus 8 --pp 2 --pipeline-layout 8,99999999999999999999)
# Trace values no profiler writes: a kernel of 1e307 us printed as a 300-digit iteration time,
# and a rank outside its world was shown as "rank 5 of 2".
trainsim_robust(reader.compare_trace_duration_huge 2
  "^error: tp2_overlap\\.json: /traceEvents/[0-9]+/dur: dur too large.*\\bexpected a duration"
  INPUT ${trace} PREP "set tp2_overlap.json dur 1e307"
  -- compare ${trace_scenario} --trace tp2_overlap.json)
trainsim_robust(reader.compare_trace_rank_outside_world 2
  "^error: tp2_overlap\\.json: /distributedInfo/rank: expected a rank from 0 to world_size - 1"
  INPUT ${trace} PREP "set tp2_overlap.json rank 5"
  -- compare ${trace_scenario} --trace tp2_overlap.json)
