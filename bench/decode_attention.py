"""Decode attention of rows of unequal lengths on a CPU: one masked SDPA call over the longest row's width (what
`mtbench.decoding` runs) against one SDPA call per row over its own positions (what mtbench ran before, `sdpa_rows`).

One decoding step's attention for one layer, on the shapes of the quick look's judge batch (16 prompts of 306 to
2,279 tokens, SmolLM2-135M's 9 query and 3 key/value heads of 64; `--written` tokens already generated), the keys
laid out as the decoder's slots hold them (each row from position 0, the longest one's width for all). The one call
reads every row's keys across that width, the positions past a row's end masked away; the calls per row read only
each row's own but cost a dispatch (a kernel launch, on a GPU) each, and `batch` of them per layer and step. Prints
each one's time per call, their ratio, aten ops per call, and the largest difference between their outputs. The two
take turns, `--repeats` times.

    python bench/decode_attention.py
    python bench/decode_attention.py --dtype float32 --written 0
"""
import argparse, os, platform, time
import torch
import torch.nn.functional as F
from torch.profiler import profile

QUICK_LOOK = [1204, 306, 491, 505, 1211, 540, 628, 950, 1363, 1375, 693, 930, 2279, 997, 906, 1893] # its 16 judge prompts, tokens

def timed(f, n):
    for _ in range(3): f()
    t0 = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t0)/n*1e3

def ops(f):
    with profile() as prof: f()
    return sum(e.name.startswith('aten::') for e in prof.events())

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--dtype', default='bfloat16'); p.add_argument('--written', type=int, default=128)
    p.add_argument('--calls', type=int, default=50); p.add_argument('--repeats', type=int, default=3)
    a = p.parse_args()
    dt, lens = getattr(torch, a.dtype), [n + a.written for n in QUICK_LOOK]
    W, B = max(lens), len(lens)
    torch.manual_seed(0)
    k, v = torch.randn(B, 3, W, 64, dtype=dt), torch.randn(B, 3, W, 64, dtype=dt)
    q = torch.randn(B, 3, 3, 64, dtype=dt) # each key/value head's 3 query heads as its rows (grouped-query attention, one token)
    mask = (torch.arange(W) < torch.tensor(lens)[:, None])[:, None, None, :] # each row's own positions
    masked = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.125)
    rows = lambda: torch.cat([F.scaled_dot_product_attention(q[b:b+1], k[b:b+1, :, :n], v[b:b+1, :, :n], scale=0.125) for b, n in enumerate(lens)])
    diff = (masked().float() - rows().float()).abs().max().item()
    t = {'one masked call': [], 'a call per row': []}
    for _ in range(a.repeats):
        t['one masked call'].append(timed(masked, a.calls)); t['a call per row'].append(timed(rows, a.calls))
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"{a.dtype}; load average {os.getloadavg()[0]:.2f}")
    print(f"batch {B}, width {W}, tokens held {sum(lens)} ({B*W/sum(lens):.2f}x in the width)")
    for (name, ts), f in zip(t.items(), (masked, rows)): print(f"  {name:<16} {min(ts):6.2f} ms a call (best of {a.repeats}), {ops(f)} aten ops")
    print(f"a call per row / one masked call: {min(t['a call per row'])/min(t['one masked call']):.2f}; largest difference {diff:.2e}")

if __name__ == '__main__': main()
