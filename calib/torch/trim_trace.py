#!/usr/bin/env python3
"""Trim a torch.profiler Chrome trace to what `trainsim compare` reads, for a small fixture.

Keeps GPU kernels, copies and sets, the CUDA runtime and driver launch events (their
correlation ids place kernels in steps), the ProfilerStep annotations and the metadata
events; drops CPU operator, Python and flow events. Every kept event is unchanged.

    python3 trim_trace.py trace.json trimmed.json
"""
import json
import sys

KEEP = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
        "gpu_user_annotation"}


def keep(event):
    return (event.get("cat") in KEEP or event.get("ph") == "M"
            or str(event.get("name", "")).startswith("ProfilerStep#"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: trim_trace.py trace.json trimmed.json")
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    trace["traceEvents"] = [e for e in trace["traceEvents"] if keep(e)]
    trace.pop("traceName", None)  # the path the trace was written to on the recording machine
    with open(sys.argv[2], "w") as f:
        json.dump(trace, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
