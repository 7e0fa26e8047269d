"""Decode attention of a left-padded batch on a CPU: transformers' SDPA against mtbench's `sdpa_rows`.

One decode step's attention for one layer, on the shapes of the quick look's judge batch (16 prompts of
306 to 2,279 tokens, SmolLM2-135M's 9 query and 3 key/value heads of 64; `--written` tokens already
generated): transformers' `sdpa_attention_forward` reads every row across the padded width and masks the
padding away; `sdpa_rows` runs each row over its own tokens. Prints each one's time per call, the ratio,
and the largest difference between their outputs. The two take turns, `--repeats` times.

    python bench/decode_attention.py
    python bench/decode_attention.py --dtype float32 --written 0
"""
import argparse, os, platform, time
from types import SimpleNamespace
import torch
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from mtbench.models import sdpa_rows

QUICK_LOOK = [1204, 306, 491, 505, 1211, 540, 628, 950, 1363, 1375, 693, 930, 2279, 997, 906, 1893] # its 16 judge prompts, tokens

def timed(f, n):
    for _ in range(3): f()
    t0 = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t0)/n*1e3

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--dtype', default='bfloat16'); p.add_argument('--written', type=int, default=128)
    p.add_argument('--calls', type=int, default=50); p.add_argument('--repeats', type=int, default=3)
    a = p.parse_args()
    dt, lens = getattr(torch, a.dtype), [n + a.written for n in QUICK_LOOK]
    W, B = max(lens), len(lens)
    torch.manual_seed(0)
    k, v = torch.randn(B, 3, W, 64, dtype=dt), torch.randn(B, 3, W, 64, dtype=dt)
    q = torch.randn(B, 9, 1, 64, dtype=dt)
    mask = torch.zeros(B, 1, 1, W, dtype=torch.bool)
    for b, n in enumerate(lens): mask[b, ..., W-n:] = True
    mod = SimpleNamespace(num_key_value_groups=3, is_causal=True)
    padded = lambda: sdpa_attention_forward(mod, q, k, v, mask, scaling=0.125)[0]
    rows = lambda: sdpa_rows(mod, q, k, v, mask, scaling=0.125)[0]
    diff = (padded().float() - rows().float()).abs().max().item()
    t = {'sdpa (padded)': [], 'sdpa_rows': []}
    for _ in range(a.repeats):
        t['sdpa (padded)'].append(timed(padded, a.calls)); t['sdpa_rows'].append(timed(rows, a.calls))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), {a.dtype}")
    print(f"batch {B}, padded width {W}, tokens held {sum(lens)} ({B*W/sum(lens):.2f}x in the padded width)")
    for name, ts in t.items(): print(f"  {name:<14} {min(ts):6.2f} ms a call (best of {a.repeats})")
    print(f"sdpa_rows / sdpa: {min(t['sdpa_rows'])/min(t['sdpa (padded)']):.2f}; largest difference {diff:.2e}")

if __name__ == '__main__': main()
