#!/usr/bin/env python3
"""Record a torch.profiler trace of a few training steps of a Llama-style model on one GPU.

The network is built from a trainsim model file (calib/examples/llama-small.json) so that the
trace and `trainsim compare` see the same kernels: fused QKV and gate/up projections (the
shapes of sim/model/kernels.cpp), grouped-query attention through
torch.nn.functional.scaled_dot_product_attention (causal), SwiGLU, RMSNorm, RoPE, untied
embeddings, bf16 autocast over fp32 weights, fused AdamW.

    python3 train_trace.py --model llama-small.json --seq-len 2048 --batch 4 -o trace.json

Writes the Chrome trace (torch.profiler's export_chrome_trace) and, beside it, a summary with
the per-step times measured by CUDA events over every step, profiled or not.
"""
import argparse
import json
import math
import platform
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    # Zhang and Sennrich 2019.
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight).to(x.dtype)


def rope_tables(seq_len, head_dim, device, base=10000.0):
    # Su et al. 2021 (RoFormer), rotate-half form as in Llama.
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    t = torch.arange(seq_len, device=device).float()
    freqs = torch.outer(t, inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos()[None, None], emb.sin()[None, None]


def apply_rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos.to(x.dtype) + rotated * sin.to(x.dtype)


class Block(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = m["heads"], m["kv_heads"], m["head_dim"]
        hidden, ffn = m["hidden"], m["ffn_hidden"]
        qkv = (self.heads + 2 * self.kv_heads) * self.head_dim
        self.attn_norm = RMSNorm(hidden)
        self.qkv = nn.Linear(hidden, qkv, bias=False)
        self.out = nn.Linear(self.heads * self.head_dim, hidden, bias=False)
        self.mlp_norm = RMSNorm(hidden)
        self.up_gate = nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        h = self.qkv(self.attn_norm(x))
        q, k, v = h.split([self.heads * self.head_dim, self.kv_heads * self.head_dim,
                           self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, -1))
        gate, up = self.up_gate(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Model(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.embed = nn.Embedding(m["vocab"], m["hidden"])
        self.blocks = nn.ModuleList(Block(m) for _ in range(m["layers"]))
        self.norm = RMSNorm(m["hidden"])
        self.head = nn.Linear(m["hidden"], m["vocab"], bias=False)

    def forward(self, tokens, cos, sin):
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, cos, sin)
        return self.head(self.norm(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--wait", type=int, default=2, help="steps before the profiler warms up")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--active", type=int, default=3, help="profiled steps")
    ap.add_argument("--extra", type=int, default=10, help="unprofiled steps timed after")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    with open(args.model) as f:
        m = json.load(f)
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Model(m).to(dev)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    cos, sin = rope_tables(args.seq_len, m["head_dim"], dev)
    tokens = torch.randint(0, m["vocab"], (args.batch, args.seq_len + 1), device=dev)
    inputs, labels = tokens[:, :-1], tokens[:, 1:]

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(inputs, cos, sin)
        loss = F.cross_entropy(logits.float().view(-1, m["vocab"]), labels.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    times = []

    def timed_step():
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
        return loss

    from torch.profiler import ProfilerActivity, profile, schedule
    total = args.wait + args.warmup + args.active
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active),
                 record_shapes=False) as prof:
        for _ in range(total):
            loss = timed_step()
            prof.step()
    prof.export_chrome_trace(args.output)
    profiled = times[args.wait + args.warmup:]
    for _ in range(args.extra):
        loss = timed_step()
    unprofiled = times[total:]

    tokens_per_step = args.batch * args.seq_len
    median = sorted(unprofiled)[len(unprofiled) // 2] if unprofiled else float("nan")
    summary = {
        "model_file": args.model, "parameters": params, "seq_len": args.seq_len,
        "batch": args.batch, "loss_last": float(loss),
        "step_seconds_all": times, "profiled_steps_seconds": profiled,
        "unprofiled_median_seconds": median,
        "tokens_per_second": tokens_per_step / median if unprofiled else None,
        "device": torch.cuda.get_device_name(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
        "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "python": platform.python_version(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with open(args.output.rsplit(".", 1)[0] + ".summary.json", "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps({k: summary[k] for k in ("parameters", "unprofiled_median_seconds",
                                              "tokens_per_second", "torch", "device")}))


if __name__ == "__main__":
    sys.exit(main())
