"""Answer-generation speed of each installed engine against the transformers backend, on the same questions.

Runs `generate_answers` (what `mtbench answers` and `mtbench run` do) on the same MT-bench questions, both
turns, once per engine: the transformers backend in-process (in fp32, and in its default dtype: bf16 on a CPU that has it),
llama.cpp's `llama-server` (mtbench starts it, sized by the memory plan: 16 slots on a CPU),
llama-cpp-python's server (one request at a time), vLLM where there is a GPU, and `--engine auto`.
Only installed engines run. Prints new tokens per second per engine (generation only: a server's start and
a model's load are timed apart) and each engine's ratio to the transformers backend. With --repeats > 1 the
engines take turns, so a neighbour's load on a shared machine hits them alike.

    python bench/engines.py                                   # 16 questions, 64 new tokens, 2 repeats
    python bench/engines.py --model my-model.Q4_K_M.gguf --max-new-tokens 256
"""
import argparse, os, platform, tempfile, time
from mtbench.records import load_questions
from mtbench.conversation import generate_answers
from mtbench.settings import Generation
from mtbench import engines as E

def engines_here(model:str) -> list:
    "The (label, engine, environment) rows that can run here: the transformers backend in fp32 and in its default dtype (bf16 where the CPU has it), then the engines."
    inst, rows = E.installed_engines(), [('transformers fp32', 'transformers:float32', {}), ('transformers', 'transformers', {})]
    if inst['llama.cpp'] and inst['llama.cpp'] != 'llama-cpp-python': rows.append(('llama.cpp llama-server', 'llama.cpp', {}))
    if E.has_llama_cpp_python(): rows.append(('llama.cpp llama-cpp-python', 'llama.cpp', {E.LLAMA_SERVER_ENV: 'off'}))
    if inst['vllm'] and E.default_device().startswith('cuda'): rows.append(('vllm', 'vllm', {}))
    rows.append(('auto -> ' + E.choose_engine('auto', model)[0], 'auto', {}))
    return rows

def run(model, qs, engine, env, max_new_tokens):
    "Answer `qs` into a fresh folder with `engine`; returns generate_answers' summary and the wall time."
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            engine, _, dtype = engine.partition(':')
            info = generate_answers(model, qs, d, Generation(engine=engine, max_new_tokens=max_new_tokens, dtype=dtype or None), progress=False)
            return info, time.perf_counter() - t0
    finally:
        for k,v in old.items():
            if v is None: os.environ.pop(k, None)
            else: os.environ[k] = v

def _batch(info):
    e = info.get('engine')
    return f"{e['slots']} slots, {e['command'][e['command'].index('-t')+1]} threads" if e and '-t' in e['command'] else \
           f"{e['slots']} slots" if e else f"batch {info['batch_size']}"

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--model', default='smollm2-135m', help='a GGUF file or registry name (llama.cpp needs GGUF)')
    p.add_argument('--max-questions', type=int, default=16)
    p.add_argument('--max-new-tokens', type=int, default=64)
    p.add_argument('--repeats', type=int, default=2)
    a = p.parse_args()
    qs = load_questions(max_questions=a.max_questions)
    rows = engines_here(a.model)
    print(f"{a.model}; {len(qs)} questions x 2 turns, max_new_tokens {a.max_new_tokens}; {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}; engines: {', '.join(r[0] for r in rows)}; "
          f"load average before {os.getloadavg()[0]:.2f}", flush=True)
    res = {r[0]: [] for r in rows}
    for k in range(a.repeats):
        for label, engine, env in rows:
            info, wall = run(a.model, qs, engine, env, a.max_new_tokens)
            res[label].append(info)
            print(f"  {label:<28} {info['tokens_per_s']:7.1f} new tokens/s ({info['new_tokens']} in {info['seconds']:.1f} s; "
                  f"{wall - info['seconds']:.1f} s to load or start; {_batch(info)}; load average {os.getloadavg()[0]:.2f})", flush=True)
    tps = {l: sum(i['new_tokens'] for i in r)/sum(i['seconds'] for i in r) for l,r in res.items()}
    base = tps['transformers']
    print(f"\n{'engine':<28} {'new tokens/s':>12}  {'per repeat':<20} {'x transformers':>14}")
    for l,r in res.items():
        each = ', '.join(f"{i['tokens_per_s']:.1f}" for i in r)
        print(f"{l:<28} {tps[l]:12.1f}  {each:<20} {tps[l]/base:14.2f}")
    if 'llama.cpp llama-server' in tps: print(f"transformers / llama-server: {tps['transformers']/tps['llama.cpp llama-server']:.2f} (goal: 0.85 or more)")
    roofline(a.model, res['transformers'][0], tps['transformers'])
    print(f"load average after {os.getloadavg()[0]:.2f}")

def bandwidth_gbs(gb:float=1.0) -> float:
    "Memory bandwidth, GB/s: a 1 GB tensor copied (read and written) five times, the best taken."
    import torch
    a = torch.ones(int(gb*2**30)//4); b = torch.empty_like(a); best = 1e9
    for _ in range(5):
        t0 = time.perf_counter(); b.copy_(a); best = min(best, time.perf_counter() - t0)
    return 2*gb*2**30/best/1e9

def roofline(model, info, tps):
    "The transformers backend against the memory roofline: every step reads the weights once for the whole batch."
    from mtbench.models import resolve_model, model_arch
    from mtbench.memory import DTYPE_BYTES
    src = resolve_model(model)
    arch, dtype, batch = src.spec.arch if src.spec else model_arch(src.location), info['model']['dtype'], info['batch_size']
    step_gb, bw = arch.params*DTYPE_BYTES[dtype]/1e9, bandwidth_gbs()
    top = batch * bw / step_gb
    print(f"roofline: {arch.params/1e6:.0f}M parameters in {dtype} = {step_gb:.2f} GB read per step; memory {bw:.1f} GB/s; "
          f"batch {batch}: at most {top:.0f} new tokens/s; the transformers backend reached {tps:.1f} = {tps/top:.2f} of it")

if __name__ == '__main__': main()
