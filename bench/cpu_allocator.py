"""CPU generation with glibc's default malloc against mtbench's `keep_freed_memory`.

A judge-shaped workload on the bundled SmolLM2-135M: a batch of conversations with long prompts
(~2,000 tokens, as a turn-2 judge prompt is), generated greedily. Each variant runs in its own
process (the allocator setting is per process): `MTBENCH_MALLOC=default` leaves glibc as it is, the
other applies `keep_freed_memory` (what `load_model` does on a CPU). The variants alternate when
--repeats > 1, so a neighbour's load on a shared machine hits both alike. Prints, per run, the wall
time, user and kernel CPU seconds, minor page faults and peak resident memory, then the ratios.

    python bench/cpu_allocator.py                         # batch 8, 192 new tokens, 2 repeats
    python bench/cpu_allocator.py --new-tokens 512 --repeats 3
"""
import argparse, json, os, statistics, subprocess, sys

CHILD = r'''
import json, os, resource, sys, time
from mtbench.models import load_model
from mtbench.backends import HFBackend
from mtbench.settings import Generation
from mtbench.records import load_questions
batch, new, chars = map(int, sys.argv[1:4])
lm = load_model('smollm2-135m', Generation(max_new_tokens=new), prompt_tokens=3072)
b = HFBackend(lm, batch_size=batch)
text = ' '.join(q.turns[0] for q in load_questions())[:chars]
convs = [[{'role': 'user', 'content': f'{i}: ' + text}] for i in range(batch)]
b.generate(convs[:1], temperature=0.0, max_new_tokens=4) # warm-up
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
out = b.generate(convs, temperature=0.0, max_new_tokens=new)
r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
print(json.dumps(dict(prompt_tokens=len(b.encode(convs[0])), wall=t1-t0, user=r1.ru_utime-r0.ru_utime, sys=r1.ru_stime-r0.ru_stime,
                      faults=r1.ru_minflt-r0.ru_minflt, peak_gb=r1.ru_maxrss/2**20, tokens=sum(c.new_tokens for c in out))))
'''

def run(variant, a):
    env = {**os.environ, 'MTBENCH_MALLOC': 'default' if variant == 'glibc default' else ''}
    r = subprocess.run([sys.executable, '-c', CHILD, str(a.batch), str(a.new_tokens), str(a.prompt_chars)],
                       env=env, capture_output=True, text=True)
    if r.returncode: sys.exit(f"{variant} run failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--batch', type=int, default=8)
    p.add_argument('--new-tokens', type=int, default=192)
    p.add_argument('--prompt-chars', type=int, default=9000, help='prompt length in characters (~2,000 tokens)')
    p.add_argument('--repeats', type=int, default=2)
    a = p.parse_args()
    print(f"{os.cpu_count()} CPUs, load average before {os.getloadavg()[0]:.2f}; batch {a.batch}, {a.new_tokens} new tokens")
    res = {'glibc default': [], 'keep_freed_memory': []}
    for _ in range(a.repeats):
        for v in res:
            r = run(v, a); res[v].append(r)
            print(f"{v:18} prompt {r['prompt_tokens']} tok  wall {r['wall']:6.1f} s  user {r['user']:6.1f} s  kernel {r['sys']:5.1f} s  "
                  f"faults {r['faults']:>10,}  peak {r['peak_gb']:.2f} GB  ({r['tokens']} tokens)")
    m = {v: {k: statistics.median(r[k] for r in rs) for k in ('wall', 'sys', 'faults', 'peak_gb')} for v, rs in res.items()}
    d, t = m['glibc default'], m['keep_freed_memory']
    print(f"median wall: {d['wall']:.1f} s -> {t['wall']:.1f} s (speed-up x{d['wall']/t['wall']:.2f}); kernel CPU {d['sys']:.1f} s -> {t['sys']:.1f} s; "
          f"page faults x{d['faults']/max(t['faults'], 1):.0f} fewer; peak memory {d['peak_gb']:.2f} -> {t['peak_gb']:.2f} GB")

if __name__ == '__main__': main()
