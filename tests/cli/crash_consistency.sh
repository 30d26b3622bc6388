#!/bin/sh
# Crash consistency of sharded sweeps: a shard killed with SIGKILL while writing (to stdout
# redirected into a file, as Slurm does, or to -o) never passes for a complete one.
#   1. `trainsim merge` of a killed shard's partial file and the other shard exits 2 with one
#      `error:` line and writes nothing;
#   2. a killed `-o` run leaves no file at the target (its temporary .out.csv.tmp.XXXXXX stays:
#      nothing can clean up after SIGKILL, and merge refuses it too); one stopped by SIGTERM or
#      SIGHUP (standing for SIGINT, below) removes its temporary and ends by the signal;
#   3. rerunning the shard and merging gives exactly the unsharded run's bytes.
# Usage: crash_consistency.sh <trainsim executable> <scratch folder>
set -u
trainsim=$1
work=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"
cd "$work" || fail "cannot enter $work"

# 4 models x 7 cluster sizes x 3 sequence lengths x 3 pipeline degrees x 4 micro-batches x 3
# sharding modes x 2 recompute policies = 6,048 scenarios, three quarters of which simulate
# (about 1 ms each), so that one thread takes seconds for a shard while each complete run below
# takes a few seconds on two threads.
cat > spec.json <<'SPEC'
{"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
          "training": {"seq_len": 4096, "global_batch": 512, "micro_batch": 1},
          "parallel": {"tp": 2, "pp": 2, "sharding": "shard_grad_op"}},
 "axes": {"model": ["llama2-7b", "llama3-8b", "llama2-13b", "mistral-7b"],
          "cluster.gpus": [16, 32, 64, 128, 256, 512, 1024],
          "training.seq_len": [2048, 4096, 8192],
          "parallel.pp": [1, 2, 4],
          "training.micro_batch": [1, 2, 4, 8],
          "parallel.sharding": ["zero1", "shard_grad_op", "full_shard"],
          "parallel.recompute": ["none", "selective"]}}
SPEC

"$trainsim" sweep spec.json --jobs 2 > all.csv || fail "the unsharded run failed"
"$trainsim" sweep spec.json --jobs 2 --shard 1/2 > shard1.csv || fail "shard 1/2 failed"

# Lines in a file (0 while it does not exist).
lines() {
  if [ -e "$1" ]; then wc -l < "$1"; else echo 0; fi
}

# 1. Shard 0 on one thread into redirected stdout, killed once some rows are on disk (stdout
# to a file is block-buffered: rows arrive 4 KiB at a time, so the cut is mid-row).
"$trainsim" sweep spec.json --jobs 1 --shard 0/2 > shard0.csv &
pid=$!
tries=0
while [ "$(lines shard0.csv)" -lt 3 ]; do
  kill -0 "$pid" 2> /dev/null || fail "shard 0/2 ended before it could be killed; enlarge the sweep"
  tries=$((tries + 1))
  [ "$tries" -lt 600 ] || fail "no rows after 30 s"
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2> /dev/null
grep -q '^# trainsim shard' shard0.csv && fail "the killed shard has an end record"
"$trainsim" merge shard0.csv shard1.csv -o merged.csv 2> merge.err
rc=$?
[ "$rc" -eq 2 ] || fail "merge of a killed shard exited $rc, expected 2"
[ "$(lines merge.err)" -eq 1 ] || fail "expected one line on stderr, got: $(cat merge.err)"
grep -q '^error: shard0.csv: line [0-9]*: incomplete' merge.err ||
  fail "unexpected message: $(cat merge.err)"
[ -e merged.csv ] && fail "a failed merge wrote merged.csv"

# Waits until the -o run `pid` has its temporary, and 0.3 s more for rows to reach it; `what` is
# the stop it must not end before.
await_temporary() {
  tries=0
  until ls .out.csv.tmp.* > /dev/null 2>&1; do
    kill -0 "$1" 2> /dev/null || fail "the -o run ended before $2"
    tries=$((tries + 1))
    [ "$tries" -lt 600 ] || fail "no temporary file after 30 s"
    sleep 0.05
  done
  sleep 0.3
}

# 2. The same shard with -o, killed: the target never appears.
"$trainsim" sweep spec.json --jobs 1 --shard 0/2 -o out.csv &
pid=$!
await_temporary "$pid" "it could be killed"
kill -9 "$pid"
wait "$pid" 2> /dev/null
[ -e out.csv ] && fail "a killed -o run left out.csv"
for temp in .out.csv.tmp.*; do
  "$trainsim" merge "$temp" shard1.csv > /dev/null 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || fail "merge took the temporary $temp (exit $rc)"
done

# 2b. SIGTERM (a batch system's time limit), SIGINT (Ctrl-C) and SIGHUP remove the temporary
# before the process ends by the signal: they left .out.csv.tmp.XXXXXX behind, as SIGKILL must.
rm -f .out.csv.tmp.*
# SIGHUP stands for SIGINT, which a non-interactive shell's background job ignores (POSIX, 2.11)
# and the handler then leaves alone. POSIX fixes their numbers: SIGHUP 1, SIGTERM 15; a shell
# reports an end by signal n as 128 + n.
for pair in TERM:143 HUP:129; do
  sig=${pair%%:*}
  expected=${pair#*:}
  "$trainsim" sweep spec.json --jobs 2 --shard 0/2 -o out.csv &
  pid=$!
  await_temporary "$pid" "SIG$sig"
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq "$expected" ] || fail "SIG$sig: exit $rc, expected $expected (ended by the signal)"
  [ -e out.csv ] && fail "SIG$sig: a stopped -o run left out.csv"
  ls .out.csv.tmp.* > /dev/null 2>&1 && fail "SIG$sig left its temporary: $(ls -a)"
done

# 3. Rerun the shard (with -o this time) and merge: the unsharded bytes.
"$trainsim" sweep spec.json --jobs 2 --shard 0/2 -o shard0.csv || fail "rerunning shard 0/2 failed"
"$trainsim" merge shard1.csv shard0.csv -o merged.csv || fail "merge of complete shards failed"
cmp -s all.csv merged.csv || fail "merged output differs from the unsharded run"
echo "crash consistency: killed shards refused, rerun merged equals the unsharded run"
