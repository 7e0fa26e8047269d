"""The newcomer's first command, timed: `mtbench run --models smollm2-135m --max-questions 8`.

Runs the command as a user would (a fresh output folder, no key: the local judge), once per variant, and
prints its wall time from start to exit and the split that run.json records: answering (model load
included) and judging (judge load included). The goal is 3 minutes on a 2-core CPU. Variants are extra
flags; the default runs today's defaults and FastChat's budgets for the local judge side by side:

    python bench/quick_look.py                                  # defaults, and --judge-max-tokens 2048 --engine transformers
    python bench/quick_look.py --variant "" --variant "--engine transformers"
    python bench/quick_look.py --as-avx2 --variant "--engine transformers"   # as a CPU without AVX512-BF16 runs it

`--as-avx2` runs the command as a CPU without AVX512-BF16 (and without AVX512 at all) would, on one that has them, and
says so in its output: PyTorch's kernels, oneDNN's and MKL's limited to AVX2 (`ATEN_CPU_CAPABILITY=avx2`,
`ONEDNN_MAX_CPU_ISA=AVX2`, `MKL_ENABLE_INSTRUCTIONS=AVX2`), and fp32 (`--dtype float32`: what mtbench chooses on a
CPU without native bf16, asked for here since this CPU has it). The quick look's goal is 3 minutes on such a 2-core CPU.

Take the figures on an idle machine: with 2 cores, anything else running is measured too.
"""
import argparse, json, os, platform, shlex, subprocess, tempfile, time
from collections import Counter
from pathlib import Path

AVX2 = {'ATEN_CPU_CAPABILITY': 'avx2', 'ONEDNN_MAX_CPU_ISA': 'AVX2', 'MKL_ENABLE_INSTRUCTIONS': 'AVX2'} # as a CPU without AVX512 runs

def run(flags:str, max_questions:int, avx2:bool=False) -> dict:
    out = Path(tempfile.mkdtemp(prefix='quick_look_'))
    cmd = ['mtbench', 'run', '--models', 'smollm2-135m', '--max-questions', str(max_questions), '--output-dir', str(out), *shlex.split(flags)]
    env = {k: v for k, v in os.environ.items() if k != 'OPENAI_API_KEY'} # no key: the local judge, as for a newcomer offline
    if avx2: env, cmd = {**env, **AVX2}, cmd + ['--dtype', 'float32']
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode: raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    info = json.loads((out/'run.json').read_text())
    m = info['models']['smollm2-135m']
    judged = [json.loads(l) for l in next((out/'model_judgment').glob('*single.jsonl')).read_text().splitlines()]
    t = info.get('timing', {}) # run.json: seconds per step, model load included
    return dict(wall=wall, answer_s=t.get('answers:smollm2-135m'), judge_s=t.get('judge:smollm2-135m'),
                tokens=m.get('new_tokens'), engine=m.get('backend'), judge=info['judge'], sources=dict(Counter(j.get('score_source') for j in judged)), out=out,
                dtype=(m.get('model') or {}).get('dtype'))

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--variant', action='append', help='extra flags for one run (repeatable); default: today\'s defaults, then FastChat\'s budget in-process')
    p.add_argument('--max-questions', type=int, default=8)
    p.add_argument('--as-avx2', action='store_true', help='run as a CPU without AVX512-BF16: kernels limited to AVX2, fp32')
    a = p.parse_args()
    variants = a.variant if a.variant is not None else ['', '--judge-max-tokens 2048 --engine transformers']
    print(f"{platform.node()}: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    if a.as_avx2: print("run as a CPU without AVX512-BF16 would: " + ' '.join(f'{k}={v}' for k, v in AVX2.items()) + ", --dtype float32 (fp32: "
                        "what mtbench chooses there; asked for here, as this CPU has native bf16)")
    rows = []
    for v in variants:
        r = run(v, a.max_questions, a.as_avx2)
        rows.append(r)
        print(f"flags {v or '(defaults)'!r}: {r['wall']:.0f} s end to end = {r['wall']/60:.2f} min; answers {r['answer_s']:.0f} s "
              f"({r['tokens']} new tokens, {r['engine']}), judge {r['judge_s']:.0f} s "
              f"({r['judge']['params']}); {r['dtype']}; scores from {r['sources']}; goal 180 s: ratio {r['wall']/180:.2f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")

if __name__ == '__main__': main()
