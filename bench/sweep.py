"""A sweep of LoRA checkpoints against separate runs, in one run on this machine (issue 43).

The bundled SmolLM2-135M and N adapters of it with random weights (`mtbench.sweeps.random_loras`): the base and
its checkpoints answered in one run (the base loaded once, each adapter attached, every model's rows in one pass of
the decoder), then the base alone and each checkpoint alone (its own load, the adapter merged). Prints the base
loads counted, the decoding steps that held rows of several models, each checkpoint's turns equal between the sweep
and its run alone, the turns equal to the base's, and the answering times side by side with the load average.
Greedy questions (reasoning, math, coding, extraction) so the answers can be compared turn by turn.

float32 by default: an adapter run alone is merged into its base, and in bf16 the merge rounds the LoRA's sum
into the weights, so greedy answers part from the sweep's unmerged ones within a few tokens.

    python bench/sweep.py [--adapters 3] [--questions 8] [--max-new-tokens 64] [--dtype float32]
"""
import argparse, os, tempfile, time
from pathlib import Path
from unittest import mock
import mtbench.models
from mtbench.evaluator import MTBenchEvaluator
from mtbench.models import local_folder
from mtbench.sweeps import random_loras, answers_alike

GREEDY = [101, 111, 121, 131, 102, 112, 122, 132, 103, 113]

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--adapters', type=int, default=3); ap.add_argument('--questions', type=int, default=8)
    ap.add_argument('--max-new-tokens', type=int, default=64); ap.add_argument('--dtype', default='float32')
    a = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix='mtbench_sweep_bench_'))
    ckpts = random_loras(local_folder('smollm2-135m'), [out/'runs'/f'checkpoint-{100*(i+1)}' for i in range(a.adapters)])
    kw = dict(question_ids=GREEDY[:a.questions], max_new_tokens=a.max_new_tokens, engine='transformers', dtype=a.dtype)
    loads, real = [], mtbench.models._load
    def counted(src, *x, **k): loads.append(src.location); return real(src, *x, **k)
    with mock.patch.object(mtbench.models, '_load', counted):
        ev = MTBenchEvaluator(['smollm2-135m', *map(str, ckpts)], output_dir=out/'sweep', **kw)
        t0 = time.monotonic(); infos = [ev.answer(m) for m in ev.models]; t_sweep, sweep_loads = time.monotonic() - t0, len(loads)
        dec = infos[0]['model'].get('decoding', {})
        files = {p.model_id: p.answers.path for p in ev.resolve().models}
        t_alone, rows, t_own = 0.0, [], {}
        for c in ['smollm2-135m', *ckpts]:
            e = MTBenchEvaluator([str(c)], output_dir=out/'alone', **kw); t1 = time.monotonic(); e.answer(str(c)); t_own[str(c)] = time.monotonic() - t1; t_alone += t_own[str(c)]
            p = e.resolve().models[0]
            if c != 'smollm2-135m': rows.append((p.model_id, answers_alike(files[p.model_id], p.answers.path), answers_alike(files['smollm2-135m'], files[p.model_id])))
    print(f"base loads: {sweep_loads} for the base and {a.adapters} adapters in the sweep; {len(loads) - sweep_loads} for {a.adapters + 1} separate runs")
    print(f"the sweep's pass: {dec.get('mixed_steps', 0)} of {dec.get('steps')} decoding steps held rows of several models; {dec.get('rows')} rows")
    for mid, (eq, n), (be, bn) in rows: print(f"{mid}: sweep vs alone {eq}/{n} turns equal; vs the base {be}/{bn} equal")
    print(f"alone, each load included: " + ', '.join(f"{Path(m).name} {t:.1f} s" for m, t in t_own.items()))
    print(f"answering, loads included: the sweep (base + {a.adapters} adapters, one pass) {t_sweep:.1f} s; {a.adapters + 1} separate runs {t_alone:.1f} s"
          f" (ratio {t_alone/t_sweep:.2f}); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")

if __name__ == '__main__': main()
