#!/usr/bin/env python3
"""Fused attention timings as a trainsim measurement document (attention records).

The simulator prices attention as a fused kernel (FlashAttention-2 style); this measures the
fused kernels PyTorch calls, torch.nn.functional.scaled_dot_product_attention with one back end
at a time: cuDNN's fused attention (built through cuDNN's graph API) and FlashAttention-2, and
records each (median of trials of back-to-back calls timed by CUDA events) in the schema of
docs/calibration-measurements.md. The cases are the attention lines of `trainsim-calib --list`
so that the C++ suite and this script measure the same shapes.

    trainsim-calib --list -o x --scenario s.json | python3 attention.py -o attention.json

With --backward each case is also timed forward and backward together (the inputs requiring
gradients, torch.autograd.grad so that nothing accumulates), and the backward's time, that less
the forward's with the same inputs, goes under "_attention_<back end>_backward" (comments: the
schema's attention records are forward calls) with "backward_ratio", 2.5 x forward time over
backward time: the backward's efficiency over the forward's when the backward counts 2.5 times
the forward's FLOPs (FlashAttention-2's count, Dao 2023 section 4.1; the hardware profiles'
attention backward_ratio).
"""
import argparse
import json
import re
import socket
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

LINE = re.compile(r"^attention b(\d+) h(\d+) s(\d+) d(\d+)( causal)? (\w+)\s+\((.*)\)\s*$")
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def time_calls(fn, trials=7, target=0.02, warmups=3):
    for _ in range(warmups):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def trial(calls):
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e-3 / calls

    calls = max(1, min(2000, int(target / max(trial(1), 1e-7)) + 1))
    return [trial(calls) for _ in range(trials)]


def backward_record(name, q, k, v, causal, what, origin, env, max_cv, rejected):
    """The backward of one case under back end `name`, or None when it did not run or varied."""
    qg, kg, vg = (t.detach().clone().requires_grad_() for t in (q, k, v))
    dout = torch.randn_like(q)

    def forward():
        return F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)

    def both():
        torch.autograd.grad(forward(), (qg, kg, vg), dout)

    try:
        with sdpa_kernel([BACKENDS[name]]):
            fwd = time_calls(forward)
            fb = time_calls(both)
    except RuntimeError as e:
        rejected.append({"what": what + " backward", "reason": str(e).splitlines()[0]})
        return None
    cvs = [statistics.stdev(x) / statistics.mean(x) for x in (fwd, fb)]
    if max(cvs) > max_cv:
        rejected.append({"what": what + " backward",
                         "reason": f"coefficient of variation {max(cvs):.3f}"})
        return None
    t_fwd = statistics.median(fwd)
    t_bwd = statistics.median(fb) - t_fwd
    if not t_bwd > 0:
        rejected.append({"what": what + " backward", "reason": "backward time not positive"})
        return None
    b, h, s, d = q.shape
    return {"batch": b, "heads": h, "seq_len": s, "head_dim": d, "causal": causal,
            "dtype": "bf16", "time": f"{t_bwd * 1e6:.6g} us",
            "time_forward": f"{t_fwd * 1e6:.6g} us",
            "backward_ratio": round(2.5 * t_fwd / t_bwd, 4),
            "notes": f"{origin}; forward and backward (torch.autograd.grad) less forward, "
                     f"{name} back end",
            "environment": dict(env, timestamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            "_stats": {"trials": len(fb), "forward_cv": cvs[0], "both_cv": cvs[1]}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--backends", default="cudnn,flash")
    ap.add_argument("--max-cv", type=float, default=0.05)
    ap.add_argument("--backward", action="store_true",
                    help="also time each case's backward (comment records)")
    args = ap.parse_args()
    cases = []
    for line in sys.stdin:
        mt = LINE.match(line.strip())
        if mt:
            b, h, s, d = (int(mt.group(i)) for i in range(1, 5))
            cases.append((b, h, s, d, mt.group(5) is not None, mt.group(6), mt.group(7)))
    if not cases:
        sys.exit("attention.py: no attention lines on stdin (pipe `trainsim-calib --list` in)")
    dev = torch.device("cuda")
    env = {"device": torch.cuda.get_device_name(), "cuda": torch.version.cuda,
           "host": socket.gethostname(),
           "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    records, rejected, notes = {}, [], []
    for name in args.backends.split(","):
        records[name] = []
        for b, h, s, d, causal, dtype, origin in cases:
            if dtype != "bf16":
                continue
            q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
                       for _ in range(3))
            what = f"{name} attention b{b} h{h} s{s} d{d}{' causal' if causal else ''}"
            try:
                with sdpa_kernel([BACKENDS[name]]):
                    samples = time_calls(
                        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            except RuntimeError as e:
                notes.append(f"{what}: not run: {str(e).splitlines()[0]}")
                continue
            med = statistics.median(samples)
            cv = statistics.stdev(samples) / statistics.mean(samples)
            if cv > args.max_cv:
                rejected.append({"what": what, "reason": f"coefficient of variation {cv:.3f}"})
                continue
            records[name].append({
                "batch": b, "heads": h, "seq_len": s, "head_dim": d, "causal": causal,
                "dtype": "bf16", "time": f"{med * 1e6:.6g} us",
                "notes": f"{origin}; torch.nn.functional.scaled_dot_product_attention, {name} back end",
                "environment": dict(env, timestamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
                "_stats": {"trials": len(samples), "median": med, "min": min(samples),
                           "max": max(samples), "cv": cv}})
            if args.backward:
                record = backward_record(name, q, k, v, causal, what, origin, env, args.max_cv,
                                         rejected)
                if record:
                    records.setdefault(name + "_backward", []).append(record)
            del q, k, v
    # The cuDNN back end is the fitted one (the graph-API fused kernel); FlashAttention-2's
    # timings are kept beside it for comparison.
    # (The first key is always a forward one: each back end's list is made before its backward's.)
    fitted = "cudnn" if records.get("cudnn") else next(iter(records))
    doc = {"schema": "trainsim-measurements", "schema_version": 1,
           "source": f"calib/torch/attention.py, torch {torch.__version__}",
           "environment": env, "attention": records[fitted]}
    for name, recs in records.items():
        if name != fitted:
            doc[f"_attention_{name}"] = recs
    if notes:
        doc["notes"] = notes
    if rejected:
        doc["_rejected"] = rejected
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"attention.py: {sum(len(r) for r in records.values())} records "
          f"({len(records[fitted])} fitted, {fitted}), {len(rejected)} rejected", file=sys.stderr)


if __name__ == "__main__":
    main()
