#!/usr/bin/env bash
# Runs the whole calibration suite on one node and leaves its measurement documents in OUTDIR:
#   calib/run-node.sh OUTDIR [SCENARIO ...]
# - OUTDIR/suite.json       trainsim-calib: GEMM, unfused attention, memory, launch, power and
#                           the collectives of every GPU of the node
# - OUTDIR/attention.json   calib/torch/attention.py: fused attention through PyTorch, forward
#                           and (comments) backward (when python3 has torch)
# - OUTDIR/trace.json       calib/torch/train_trace.py: a profiler trace of a few training steps
#                           of calib/examples/llama-small.json (when TRAINSIM_CALIB_TRACE=1)
# TRAINSIM_CALIB names the trainsim-calib binary (default: build/release/calib/trainsim-calib).
# Each step runs even when an earlier one failed; the exit status is the worst of them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run-node.sh OUTDIR [SCENARIO ...]}
shift
mkdir -p "$out"
calib=${TRAINSIM_CALIB:-build/release/calib/trainsim-calib}
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=("$here/examples/h200-llama-small.json")
args=()
for s in "${scenarios[@]}"; do args+=(--scenario "$s"); done
status=0

echo "== trainsim-calib ${args[*]}"
"$calib" "${args[@]}" -o "$out/suite.json" || status=$?

if python3 -c 'import torch' 2>/dev/null; then
  echo "== calib/torch/attention.py"
  "$calib" --list -o /dev/null "${args[@]}" | python3 "$here/torch/attention.py" \
    --backward -o "$out/attention.json" || status=$?
  if [ "${TRAINSIM_CALIB_TRACE:-0}" = 1 ]; then
    echo "== calib/torch/train_trace.py"
    python3 "$here/torch/train_trace.py" --model "$here/examples/llama-small.json" \
      --seq-len 2048 --batch 4 -o "$out/trace.json" || status=$?
  fi
else
  echo "== python3 has no torch: fused attention and the training trace are not measured"
fi
exit $status
