"""The GPU claims, proved in minutes on any GPU with nothing but the repository: the six seed models at their true
size, with random weights (`mtbench.random_weights`), under a 6 GB cap.

Memory, for each of gpt2-large, llama-3.2-1b, llama-3.2-3b, phi-3-mini, qwen2.5-3b and gemma-2b, in a child process
of its own (several at once, `--jobs`: each caps its own allocator and the GPU is far from busy):

- caps PyTorch's allocator at the budget less the runtime allowance in mtbench's estimate
  (`torch.cuda.set_per_process_memory_fraction`), so a 141 GB card behaves like a 6 GB one;
- asks mtbench's memory plan for the budget (dtype, 8-bit or 4-bit, attention, batch) and builds the model with
  random weights on the device, as planned ("random weights" in every record and table);
- generates turn 1 and then turn 2 of the longest MT-bench questions, a batch of the planned size, through
  `HFBackend` (what `mtbench answers` uses) at the protocol's 1,024 new tokens, every row to its full length (the
  end-of-turn tokens are suppressed: a random model does not stop); turn 2 holds turn 1's question, an answer
  exactly as long as the one generated (English text) and turn 2's question, so its prompts have MT-bench's real
  lengths (in SmolLM2's tokenizer, which errs long);
- records what the run needed (the allocator's peak allocated memory plus what the process holds outside it:
  CUDA context, kernels, library handles, read per process from NVML) against mtbench's estimate at the batch
  that ran, and what it held (peak reserved plus outside) against the card: under a cap, PyTorch's caching
  allocator keeps freed blocks until the cap is reached, so reserved memory reaches the cap whatever the need.

Beside them: `mtbench run --max-questions 8` end to end on the device (a random-weight SmolLM2-135M answers and
judges as a local judge, under the same cap; 256 new tokens an answer by default, `--e2e-new-tokens`), so every
device path of the real command runs; the T4 path of each model (a compute capability 7.5 GPU, emulated: the plan
must choose fp16 by itself; turn 2, the larger, at full length); each model in 8-bit and 4-bit (bitsandbytes)
where its plan did not choose them (turn 2 at full length).

Speed, afterwards, alone on the GPU, one model after another in one process: `--speed-tokens` new tokens for the
planned batch of turn-2 prompts, then for one of them alone (batch 1): new tokens/s of each, and each one's decoding
step time (the decoder's own clock: its steps, the prompts' prefill and the CUDA graph's capture left out) against
its roofline, the time the bytes a step must read (the weights, and the KV cache at the run's mean length) take at
the memory bandwidth measured by a copy, and at 336 GB/s, an RTX 3060 Laptop GPU's. The time to capture the CUDA
graph (`mtbench.decoding`, where the plan chose one) is reported apart, and counted in the run's time.

`--budget-s` bounds the whole run; what it would not fit is stopped or not started, and listed. A model passes
when its run needed no more than its estimate, held no more than the card, no batch ran out of memory and every
row ran to its length. Results go to --out as proof.csv, proof.md and proof.json after every row (a run cut
short keeps what it has), with the end-to-end run's log and run.json beside them. The exit status is 1 when a main
row or the end-to-end run failed.

Here, on a CPU (CI runs this; shrunken two-block configs, short answers):

    python bench/gpu_proof.py --device cpu --tiny --out /tmp/proof

On a GPU machine without network: bench/README.md (`python bench/gpu_proof.py --prepare .gpu`, then one command).
"""
import argparse, concurrent.futures, csv, json, os, shutil, subprocess, sys, tempfile, threading, time
from pathlib import Path

GB = 2**30
SEEDS = ['gpt2-large', 'llama-3.2-1b', 'llama-3.2-3b', 'phi-3-mini', 'qwen2.5-3b', 'gemma-2b']
E2E_MODEL = 'smollm2-135m'
VARIANTS = ['main', 'e2e', 'speed', 't4', '8bit', '4bit']
TARGET = ('RTX 3060 Laptop 6 GB', 336.0) # GB/s: 192-bit GDDR6 at 14 Gbps
ROOT = Path(__file__).resolve().parents[1]
WHEELS = ['fastcore', 'openai', 'pydantic', 'pydantic-core', 'jiter', 'distro', 'sniffio', 'annotated-types', 'typing-inspection',
          'typing-extensions', 'httpx2', 'httpcore2', 'truststore', 'tenacity', 'aiolimiter', 'gguf', 'filelock', 'bitsandbytes']

def log(*a): print(*a, file=sys.stderr, flush=True)

# ---------------------------------------------------------------- preparation, here

def prepare(dest:Path):
    "Put into `dest` (an ignored folder) what the GPU machine lacks: wheels, SmolLM2's tokenizer, the MT-bench files."
    from importlib.metadata import version
    from mtbench.pins import data_dir
    from mtbench.models import local_folder
    dest = Path(dest); (dest/'whl').mkdir(parents=True, exist_ok=True)
    exclude = Path(subprocess.run(['git', 'rev-parse', '--git-path', 'info/exclude'], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip())
    exclude = exclude if exclude.is_absolute() else ROOT/exclude
    rel = '/' + str(dest.resolve().relative_to(ROOT)) + '/' # the folder travels only when carried, and is never committed
    exclude.parent.mkdir(parents=True, exist_ok=True)
    if rel not in (exclude.read_text() if exclude.exists() else ''): open(exclude, 'a').write(rel + '\n')
    pins = [f'{w}=={version(w)}' for w in WHEELS]
    plats = [a for n in ('manylinux_2_28', 'manylinux_2_27', 'manylinux_2_24', 'manylinux_2_17', 'manylinux2014') for a in ('--platform', n + '_x86_64')]
    subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:', '--python-version', '3.12',
                    '--implementation', 'cp', *plats, '--platform', 'any', '-d', str(dest/'whl'), *pins], check=True)
    tok = local_folder(E2E_MODEL)
    (dest/'tok').mkdir(exist_ok=True)
    for f in ('tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'special_tokens_map.json'):
        if (tok/f).exists(): shutil.copy(tok/f, dest/'tok'/f)
    src = data_dir()[0]
    for f in ('question.jsonl', 'judge_prompts.jsonl', 'reference_answer/gpt-4.jsonl'):
        (dest/'data'/f).parent.mkdir(parents=True, exist_ok=True); shutil.copy(Path(src)/f, dest/'data'/f)
    size = sum(p.stat().st_size for p in dest.rglob('*') if p.is_file())
    print(f"{dest}: {size/2**20:.1f} MiB ({len(list((dest/'whl').glob('*.whl')))} wheels, the tokenizer, the MT-bench files)")
    print(f"on the GPU machine (carry: [\"{dest}\"]):\n  {device_command(dest)}")

def device_command(dest='.gpu', budget=420):
    "The command to run on a GPU machine without network, from the repository root, with `dest` carried beside it."
    return (f"python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site {dest}/whl/*.whl && "
            f"export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 MTBENCH_CACHE_DIR=/tmp/mtc && "
            f"python3 bench/gpu_proof.py --tokenizer {dest}/tok --data-dir {dest}/data --budget-s {budget} --out $OUT 2>$OUT/proof.log")

# ---------------------------------------------------------------- what a child measures

def bandwidth_gbs(device):
    "Memory bandwidth in GB/s (1e9 bytes), bytes read plus written by a large device copy."
    import torch
    n = (1 << 30) if device.startswith('cuda') else (256 << 20)
    x = torch.ones(n, dtype=torch.uint8, device=device); y = torch.empty_like(x)
    sync = torch.cuda.synchronize if device.startswith('cuda') else (lambda: None)
    for _ in range(3): y.copy_(x)
    sync(); t0, reps = time.perf_counter(), 20
    for _ in range(reps): y.copy_(x)
    sync()
    return 2*n*reps/(time.perf_counter()-t0)/1e9

def emulate_t4():
    "Make this process's CUDA device report a T4's compute capability (7.5), as mtbench's plan and attention choice read it."
    import torch
    name = f"Tesla T4 (emulated on {torch.cuda.get_device_name(0)})"
    torch.cuda.get_device_capability = lambda device=None: (7, 5)
    torch.cuda.get_device_name = lambda device=None: name
    torch.cuda.is_bf16_supported = lambda *a, **k: False

def longest_questions(qs, n):
    "The `n` questions with the longest two turns (the widest turn-2 prompts)."
    return sorted(qs, key=lambda q: len(q.turns[0]) + len(q.turns[1]), reverse=True)[:n]

def filler(tok, qs, n):
    "English text of exactly `n` tokens (as `tok` spells it): MT-bench's questions, repeated."
    ids = tok(' '.join(t for q in qs for t in q.turns), add_special_tokens=False)['input_ids']
    return tok.decode((ids * (n//len(ids) + 1))[:n])

class Gpu:
    "Peak and outside-the-allocator memory of this process on a CUDA device."
    def __init__(self, device):
        import torch
        self.torch, self.device = torch, torch.device(device)
        if self.device.index is None: self.device = torch.device('cuda', torch.cuda.current_device()) # the allocator's cap wants an index
        torch.zeros(1, device=self.device) # the context
        self.total = torch.cuda.mem_get_info(self.device)[1]
        self.nvml = None
        try:
            import pynvml
            pynvml.nvmlInit(); self.nvml = pynvml, pynvml.nvmlDeviceGetHandleByIndex(self.device.index or 0)
        except Exception: pass
    def process_used(self):
        "Bytes this process holds on the device (NVML), else the device's used bytes (right only when it runs alone)."
        if self.nvml:
            nv, h = self.nvml
            try:
                for p in nv.nvmlDeviceGetComputeRunningProcesses(h):
                    if p.pid == os.getpid() and p.usedGpuMemory: return p.usedGpuMemory, 'NVML, this process'
            except Exception: pass
        free, total = self.torch.cuda.mem_get_info(self.device)
        return total - free, 'the device (mem_get_info)'
    def cap(self, gb:float):
        "Cap this process's allocator so that it and the runtime allowance make `gb`; returns the allocator's GB."
        from mtbench.memory import runtime_gb
        frac = (gb - runtime_gb('cuda'))*GB/self.total
        self.torch.cuda.set_per_process_memory_fraction(frac, self.device)
        return round(frac*self.total/GB, 3)
    def snapshot(self):
        c = self.torch.cuda
        used, how = self.process_used()
        res = c.memory_reserved(self.device)
        return dict(peak_allocated_gb=c.max_memory_allocated(self.device)/GB, peak_reserved_gb=c.max_memory_reserved(self.device)/GB,
                    outside_allocator_gb=(used - res)/GB, outside_how=how)

def _rooms(widths, batch, context, max_new):
    "The new tokens each row should get: HFBackend's batches of length-sorted prompts stop where their longest fills the context."
    order = sorted((w, i) for i, w in enumerate(widths) if not context or w < context)
    rooms = [0]*len(widths)
    for j in range(0, len(order), batch):
        chunk = order[j:j+batch]
        for w, i in chunk: rooms[i] = min(max_new, context - chunk[-1][0]) if context else max_new
    return rooms

class Setup:
    "A model planned and built with random weights for the budget, its backend, and what the plan estimated; `error` when it could not be."
    def __init__(self, s, gpu):
        import torch
        from mtbench.records import load_questions
        from mtbench.errors import MTBenchError
        from mtbench.memory import estimate_memory, Arch
        from mtbench.settings import Generation
        from mtbench.backends import HFBackend
        from mtbench.conversation import longest_prompt
        from mtbench.models import MODELS
        from mtbench.random_weights import random_model, seed_config, tiny_config
        self.s, self.gpu, self.error, self.rec = s, gpu, None, {}
        self.qs = load_questions(s['data_dir'])
        self.prompt_tokens = longest_prompt(self.qs, s['max_new_tokens']) # what `mtbench answers` plans a full run with
        gen = Generation(memory_limit=s['cap_gb'], quantization={'8bit': '8bit', '4bit': '4bit'}.get(s['variant'], 'auto'),
                         max_new_tokens=s['max_new_tokens'], batch_size='auto')
        t0 = time.perf_counter()
        try: self.lm = random_model(s['name'], gen, s['device'], self.prompt_tokens, s['tokenizer'], s['tiny'])
        except MTBenchError as e: self.error = str(e); return
        except Exception as e:
            if 'out of memory' not in str(e).lower(): raise
            self.error = f"out of memory while building: {str(e).splitlines()[0]}"; return
        if gpu: torch.cuda.synchronize(); self.rec['build_peak_gb'] = round(torch.cuda.max_memory_reserved()/GB, 3)
        self.rec['build_s'] = round(time.perf_counter() - t0, 2)
        self.be = HFBackend(self.lm, 'auto')
        cfg = tiny_config(seed_config(s['name'])) if s['tiny'] else seed_config(s['name'])
        self.arch = Arch.from_config(cfg) if s['tiny'] else MODELS[s['name']].arch
        lm, B = self.lm, self.be.batch_size
        est = estimate_memory(self.arch, lm.dtype, lm.quantization, B, self.prompt_tokens, s['max_new_tokens'], device=s['device'])
        self.rec.update(dtype=lm.dtype, dtype_reason=lm.plan.dtype_reason, quantization=lm.quantization, attn=lm.attn_implementation,
                        batch_size=B, plan=str(lm.plan), prompt_tokens_planned=self.prompt_tokens, max_new_tokens=s['max_new_tokens'],
                        estimated_gb=est.total_gb, estimate={**vars(est), 'total_gb': est.total_gb})
        lm.model.generation_config.suppress_tokens = sorted(self.be.stop_ids | {self.be.pad_id}) # every row runs to its full length
        self.rows = longest_questions(self.qs, B)
        from mtbench.records import category_temperature
        self.temps = [category_temperature(q.category) for q in self.rows]

    def turn2(self, answers:list|None=None):
        "Turn-2 conversations of the rows: turn 1's question, an answer as long as `answers`' (default: a full-length one), turn 2's question."
        n = lambda a: a.new_tokens if a is not None and not a.error else self.s['max_new_tokens']
        return [[{'role': 'user', 'content': q.turns[0]}, {'role': 'assistant', 'content': filler(self.lm.tokenizer, self.qs, n(a))},
                 {'role': 'user', 'content': q.turns[1]}] for q, a in zip(self.rows, answers or [None]*len(self.rows))]

    def turn(self, name, backend, convs, temps, max_new):
        "Generate `convs` with `backend`; the phase's record (time, tokens, rows cut short, errors, memory)."
        import torch
        cuda = self.gpu is not None
        if cuda: torch.cuda.synchronize()
        t = time.perf_counter()
        out = backend.generate(convs, temps, max_new)
        if cuda: torch.cuda.synchronize()
        dt = time.perf_counter() - t
        widths = [len(backend.encode(c)) for c in convs]
        over = sum(1 for c in out if c.error and "model's context is" in c.error) # GPT-2 large's 1,024-token context
        errs = [c.error for c in out if c.error and "model's context is" not in c.error]
        new = sum(c.new_tokens for c in out)
        short = sum(1 for c, r in zip(out, _rooms(widths, backend.batch_size, self.be.context, max_new)) if not c.error and c.new_tokens < r)
        ph = dict(seconds=round(dt, 2), rows=len(convs), prompt_tokens=[min(widths), max(widths)], new_tokens=new,
                  tokens_per_s=round(new/dt, 2) if dt else None, over_context=over, errors=errs[:2], n_errors=len(errs),
                  rows_cut_short=short, batch_after=backend.batch_size)
        if cuda: ph.update({k: round(x, 3) if isinstance(x, float) else x for k, x in self.gpu.snapshot().items()})
        log(f"  {self.s['name']} {self.s['variant']} {name}: " + ', '.join(f'{k} {x}' for k, x in ph.items()))
        return out, ph

def memory(s):
    "The memory child: cap, plan and build, generate the turns at full length; the record."
    import torch
    dev, v = s['device'], s['variant']
    rec = {'model': s['name'], 'variant': v, 'weights': 'random weights', 'device': dev, 'tiny': s['tiny'], 'phases': {}}
    gpu = None
    if dev.startswith('cuda'):
        if v == 't4': emulate_t4()
        gpu = Gpu(dev)
        rec.update(gpu=torch.cuda.get_device_name(gpu.device), allocator_cap_gb=gpu.cap(s['cap_gb']))
    m = Setup(s, gpu)
    if m.error: return {**rec, 'error': m.error}
    rec.update(m.rec)
    if gpu: torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    answers = None
    if 1 in s['turns']:
        answers, rec['phases']['turn 1'] = m.turn('turn 1', m.be, [[{'role': 'user', 'content': q.turns[0]}] for q in m.rows], m.temps, s['max_new_tokens'])
    _, rec['phases']['turn 2'] = m.turn('turn 2', m.be, m.turn2(answers), m.temps, s['max_new_tokens'])
    rec['oom'] = m.be.batch_size < rec['batch_size']
    if gpu:
        g = gpu.snapshot()
        rec.update(peak_allocated_gb=round(g['peak_allocated_gb'], 3), peak_reserved_gb=round(g['peak_reserved_gb'], 3),
                   outside_allocator_gb=round(g['outside_allocator_gb'], 3), outside_how=g['outside_how'],
                   needed_gb=round(g['peak_allocated_gb'] + g['outside_allocator_gb'], 3),
                   held_gb=round(g['peak_reserved_gb'] + g['outside_allocator_gb'], 3))
    else: # the process's peak resident set, whole: a check of the kit, not of the claim
        hwm = [int(l.split()[1])*1024/GB for l in Path('/proc/self/status').read_text().splitlines() if l.startswith('VmHWM')]
        rec['needed_gb'] = rec['held_gb'] = round(hwm[0], 3) if hwm else None
    return rec

def speed(s):
    "The speed child: for each model in turn, `speed_tokens` new tokens for the planned batch of turn-2 prompts, then for one alone."
    import torch
    from mtbench.backends import HFBackend
    from mtbench.memory import release
    recs = []
    gpu = Gpu(s['device']) if s['device'].startswith('cuda') else None
    if gpu: cap = gpu.cap(s['cap_gb'])
    for name in s['names']:
        t0 = time.perf_counter()
        m = Setup({**s, 'name': name, 'variant': 'speed'}, gpu)
        rec = {'model': name, 'variant': 'speed', 'weights': 'random weights', 'device': s['device'], 'tiny': s['tiny'], 'phases': {}}
        if m.error: recs.append({**rec, 'error': m.error}); continue
        rec.update(m.rec)
        convs, n = m.turn2(), s['speed_tokens']
        alone = HFBackend(m.lm, 1)
        _, rec['phases']['batched'] = m.turn('batched', m.be, convs, m.temps, n)
        _, rec['phases']['batch 1'] = m.turn('batch 1', alone, convs[:1], m.temps[:1], n)
        b, one = rec['phases']['batched'], rec['phases']['batch 1']
        rec.update(tokens_per_s=b['tokens_per_s'], tokens_per_s_batch1=one['tokens_per_s'], **steps(m.be, ''), **steps(alone, '_batch1'))
        # the decode roofline: the bytes a step reads (the weights, and the KV cache at the run's mean length) over the bandwidth
        wbytes = sum(p.numel()*p.element_size() for p in m.lm.model.parameters()) + sum(x.numel()*x.element_size() for x in m.lm.model.buffers())
        kv = 2*m.arch.layers*m.arch.kv_heads*m.arch.head_dim*torch.finfo(getattr(torch, m.lm.dtype)).bits//8
        ctx = lambda p: sum(p['prompt_tokens'])/2 + n/2
        step = lambda rows, c, g: (wbytes + rows*c*kv)/(g*1e9)
        B, bw = rec['batch_size'], s['bandwidth']
        if bw: rec.update(roofline_tokens_per_s=round(B/step(B, ctx(b), bw), 1), roofline_tokens_per_s_batch1=round(1/step(1, ctx(one), bw), 1),
                          roof_ms=round(1e3*step(B, ctx(b), bw), 3), roof_ms_batch1=round(1e3*step(1, ctx(one), bw), 3))
        rec.update(weight_bytes=wbytes, kv_bytes_per_token=kv, bandwidth_gbs=bw, seconds=round(time.perf_counter() - t0, 1),
                   target_roofline_tokens_per_s_batch1=round(1/step(1, ctx(one), TARGET[1]), 1), target_roof_ms_batch1=round(1e3*step(1, ctx(one), TARGET[1]), 3))
        recs.append(rec)
        print(json.dumps(rec), flush=True) # what is done so far, should the budget stop this process
        release(m.lm); del m
        if gpu: torch.cuda.empty_cache()
    return recs

def steps(backend, suffix:str) -> dict:
    "The decoding step time of `backend`'s last run, by the decoder's own clock (its prefills and its CUDA graph's capture apart), and how it decoded."
    d = backend.last_decoder
    if d is None or not d.stats.steps: return {}
    st = d.stats
    return {f'step_ms{suffix}': round(1e3*(st.decode_seconds - st.graph_seconds)/st.steps, 3), f'graph_s{suffix}': round(st.graph_seconds, 2),
            f'prefill_s{suffix}': round(st.prefill_seconds, 2), f'cuda_graph{suffix}': d.graph is not None, f'steps{suffix}': st.steps}

def check(rec, card_gb):
    "Why record `rec` fails the claim (empty when it passes)."
    if 'error' in rec: return [rec['error']]
    why = []
    if not rec['tiny'] and rec.get('needed_gb') is not None and rec['needed_gb'] > rec['estimated_gb']:
        why.append(f"needed {rec['needed_gb']:.2f} GB > estimate {rec['estimated_gb']:.2f} GB")
    if rec['device'].startswith('cuda') and rec.get('held_gb', 0) > card_gb: why.append(f"held {rec['held_gb']:.2f} GB > the {card_gb:g} GB card")
    if rec.get('oom'): why.append(f"out of memory at batch {rec['batch_size']}")
    for name, p in rec['phases'].items():
        if p['n_errors']: why.append(f"{name}: {p['n_errors']} rows failed ({p['errors'][0]})")
        if p['rows_cut_short']: why.append(f"{name}: {p['rows_cut_short']} rows stopped before their length")
    return why

# ---------------------------------------------------------------- the end-to-end run

WRAPPER = """import sys, torch
cap = float(sys.argv.pop(1))
if cap and torch.cuda.is_available():
    from mtbench.memory import runtime_gb
    torch.cuda.set_per_process_memory_fraction((cap - runtime_gb('cuda'))*2**30/torch.cuda.mem_get_info()[1], torch.cuda.current_device())
from mtbench.cli import main
sys.exit(main())
"""

def end_to_end(a, out:Path, work:Path, env:dict, deadline:float) -> dict:
    "`mtbench run --max-questions 8` on the device, a random-weight SmolLM2-135M answering and judging locally; its record."
    rec = {'model': f'{E2E_MODEL} (mtbench run)', 'variant': 'e2e', 'weights': 'random weights', 'device': a.device}
    t0 = time.perf_counter()
    mk = (f"from mtbench.random_weights import save_random; print(save_random({E2E_MODEL!r}, {str(work/'e2e-model')!r}, "
          f"{a.tokenizer!r}, tiny={a.tiny}))")
    try: folder = subprocess.run([sys.executable, '-c', mk], env=env, capture_output=True, text=True, timeout=max(1, deadline - time.time()))
    except subprocess.TimeoutExpired: return {**rec, 'error': 'stopped: time budget'}
    if folder.returncode: return {**rec, 'error': 'building the model folder failed: ' + folder.stderr.strip().splitlines()[-1]}
    folder = folder.stdout.strip().splitlines()[-1]
    run_dir = work/'e2e_run' # beside the model, not in --out (few files come back from a device machine)
    shutil.rmtree(run_dir, ignore_errors=True)
    cmd = ['run', '--models', folder, '--judge', f'local:{folder}', '--max-questions', '8', '--output-dir', str(run_dir),
           '--memory-limit', str(a.cap_gb), '--max-new-tokens', str(a.e2e_new_tokens)]
    if a.tiny: cmd += ['--judge-max-tokens', str(a.e2e_new_tokens)]
    with open(out/'e2e.log', 'w') as f:
        try: p = subprocess.run([sys.executable, '-c', WRAPPER, str(a.cap_gb), *cmd], env=env, stdout=f, stderr=subprocess.STDOUT,
                                timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired: return {**rec, 'error': 'stopped: time budget', 'seconds': round(time.perf_counter() - t0, 1)}
    rec.update(seconds=round(time.perf_counter() - t0, 1), exit=p.returncode, command='mtbench ' + ' '.join(cmd))
    info = json.loads((run_dir/'run.json').read_text()) if (run_dir/'run.json').exists() else {}
    if info: shutil.copy(run_dir/'run.json', out/'e2e_run.json')
    answers = [json.loads(l) for f in (run_dir/'model_answer').glob('*.jsonl') for l in f.read_text().splitlines() if l.strip()]
    judged = [json.loads(l) for f in (run_dir/'model_judgment').glob('*.jsonl') for l in f.read_text().splitlines() if l.strip()]
    run = next(iter(info.get('models', {}).values()), {})
    m = run.get('model', {})
    rec.update(answers=len(answers), answer_turns=sum(len(x['choices'][0]['turns']) for x in answers),
               judgments=len(judged), scored=sum(1 for j in judged if j.get('score', -1) not in (-1, None)),
               score_sources=sorted({str(j.get('score_source')) for j in judged}), revision=m.get('revision'), device_ran=m.get('device'),
               engine=run.get('backend'), dtype=m.get('dtype'), quantization=m.get('quantization'), attn=m.get('attn_implementation'),
               batch_size=run.get('batch_size'), new_tokens=run.get('new_tokens'), tokens_per_s=run.get('tokens_per_s'),
               load_memory=m.get('memory'), status=info.get('status'), timing=info.get('timing'), judge=info.get('judge'))
    why = []
    if p.returncode: why.append(f"exit {p.returncode} (see e2e.log)")
    if rec['answer_turns'] != 16: why.append(f"{rec['answer_turns']} answer turns of 16")
    if rec['scored'] != 16: why.append(f"{rec['scored']} turns scored of 16")
    if rec['device_ran'] not in (a.device, a.device.split(':')[0]): why.append(f"answered on {rec['device_ran']}, not {a.device}")
    if rec['revision'] != 'random weights': why.append(f"run.json's revision is {rec['revision']!r}, not 'random weights'")
    if why: rec['error'] = '; '.join(why)
    return rec

# ---------------------------------------------------------------- the parent

def child(args, env, timeout):
    "Run this script as a child with `args`; its JSON answers, one a line (an error record last when it died or ran out of time)."
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([sys.executable, __file__, *args], stdout=out, env=env)
        try: code, err = p.wait(timeout=max(1, timeout)), None
        except subprocess.TimeoutExpired: p.kill(); p.wait(); code, err = None, 'stopped: time budget'
        out.seek(0)
        answers = [json.loads(l) for l in out.read().decode().splitlines() if l.startswith('{')]
    if err or not answers: answers.append({'error': err or f'child exited with status {code} and no answer (see its log)'})
    return answers

COLUMNS = ['model', 'variant', 'weights', 'plan', 'batch', 'est GB', 'needed GB', 'held GB', 'tok/s', 'ms/step', 'roof ms',
           'tok/s b1', 'ms/step b1', 'roof ms b1', '3060 ms b1', 'graph s', 'ok']

def row(r, sp=None):
    "One table row of record `r` (with its model's speed record `sp`, for a main row)."
    f = lambda x, d=1: '' if x is None else f'{x:.{d}f}'
    if r['variant'] == 'e2e':
        plan = f"{r.get('engine')}, {r.get('dtype')}, {r.get('attn')}" if r.get('engine') else ''
        detail = (f"{r.get('answer_turns')} answer turns ({r.get('new_tokens')} tokens), {r.get('scored')}/16 judged "
                  f"({', '.join(r.get('score_sources', []))}), {r.get('seconds')} s") if 'answers' in r else ''
        return [r['model'], 'e2e', r['weights'], plan, r.get('batch_size', ''), '', '', '', f(r.get('tokens_per_s'))] + ['']*7 + [
                ('yes: ' + detail) if not r['why'] else 'NO: ' + '; '.join(r['why'])]
    if 'estimated_gb' not in r:
        return [r['model'], r['variant'], r['weights']] + ['']*(len(COLUMNS) - 4) + ['NO: ' + r.get('error', '?')[:200]]
    plan = (f"{r['dtype'].replace('float', 'fp').replace('bfp16', 'bf16')}{'' if r['quantization'] == 'none' else ' ' + r['quantization']}, {r['attn']}"
            + (', CUDA graph' if (sp or {}).get('cuda_graph') else ''))
    sp = sp if sp and 'tokens_per_s' in sp else {}
    notes = ''.join(f"; {n}: {p['over_context']} rows over the context" for n, p in r['phases'].items() if p.get('over_context'))
    ok = ('yes' if not r['why'] else 'NO: ' + '; '.join(r['why'])) + notes
    if sp.get('why'): ok += '; speed: ' + '; '.join(sp['why'])
    graph = ' + '.join(f(sp.get(k)) for k in ('graph_s', 'graph_s_batch1') if sp.get(k)) or ''
    return [r['model'], r['variant'], r['weights'], plan, r['batch_size'], f"{r['estimated_gb']:.2f}", f(r.get('needed_gb')) if r.get('needed_gb') is None else f"{r['needed_gb']:.2f}",
            '' if r.get('held_gb') is None else f"{r['held_gb']:.2f}", f(sp.get('tokens_per_s')), f(sp.get('step_ms'), 2), f(sp.get('roof_ms'), 2),
            f(sp.get('tokens_per_s_batch1')), f(sp.get('step_ms_batch1'), 2), f(sp.get('roof_ms_batch1'), 2), f(sp.get('target_roof_ms_batch1'), 2), graph, ok]

def row_order(r):
    "Where a record goes: the six main rows first, the end-to-end run, the other memory variants, the speed rows; each in the seed models' order."
    return (['main', 'e2e', 't4', '8bit', '4bit', 'speed'].index(r['variant']), SEEDS.index(r['model']) if r['model'] in SEEDS else 0)

def table_rows(recs):
    "The table: the memory rows (main ones with their model's speed), the end-to-end run, then speed rows with no memory row."
    speeds = {r['model']: r for r in recs if r['variant'] == 'speed'}
    mains = {r['model'] for r in recs if r['variant'] == 'main'}
    rows = [row(r, speeds.get(r['model']) if r['variant'] == 'main' else None) for r in sorted((r for r in recs if r['variant'] != 'speed'), key=row_order)]
    return rows + [row({**r, 'variant': 'speed', 'phases': {}, 'why': []}, r) for m, r in speeds.items() if m not in mains and 'estimated_gb' in r]

def write(out:Path, recs:list, header:str, notes:list=()):
    "proof.json, proof.csv and proof.md in `out`, from the records so far."
    (out/'proof.json').write_text(json.dumps(recs, indent=1) + '\n')
    rows = table_rows(recs)
    with open(out/'proof.csv', 'w', newline='') as f: w = csv.writer(f); w.writerow(COLUMNS); w.writerows(rows)
    md = [header, '', '| ' + ' | '.join(COLUMNS) + ' |', '|' + '---|'*len(COLUMNS)] + ['| ' + ' | '.join(map(str, r)) + ' |' for r in rows]
    (out/'proof.md').write_text('\n'.join(md + ([''] + list(notes) if notes else [])) + '\n')
    return rows

def text_table(rows):
    w = [max(len(str(x)) for x in [c] + [r[i] for r in rows]) for i, c in enumerate(COLUMNS)]
    fmt = lambda r: '  '.join(str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip()
    return '\n'.join([fmt(COLUMNS), fmt(['-'*n for n in w])] + [fmt(r) for r in rows])

def default_jobs(device, cap_gb):
    "Children at once: 1 on a CPU; on a GPU, as many 6 GB budgets as its memory holds, at most 8 and half the CPU cores."
    if not device.startswith('cuda'): return 1
    try:
        import pynvml
        pynvml.nvmlInit()
        total = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(int(device.split(':')[1]) if ':' in device else 0)).total/GB
    except Exception: return 1
    return max(1, min(8, (os.cpu_count() or 2)//2, int(total//(cap_gb + 1))))

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog='\n'.join(__doc__.splitlines()[1:]))
    p.add_argument('--out', help='folder for proof.csv, proof.md, proof.json and the end-to-end run')
    p.add_argument('--prepare', metavar='DIR', help='here: put the wheels, the tokenizer and the MT-bench files the GPU machine lacks into DIR, and print its command')
    p.add_argument('--device', default=None, help='cuda, cuda:N or cpu (default: cuda if there is one)')
    p.add_argument('--tiny', action='store_true', help='shrunken two-block configs, short answers: the kit checked on a CPU')
    p.add_argument('--models', nargs='+', default=SEEDS, choices=SEEDS, metavar='MODEL', help=f"default: the six ({', '.join(SEEDS)})")
    p.add_argument('--variants', nargs='+', default=VARIANTS, choices=VARIANTS,
                   help='main (memory) rows, the end-to-end run, speed rows, the T4 path, 8-bit, 4-bit (default: all)')
    p.add_argument('--cap-gb', type=float, default=None, help='the card size in GB (GiB) (default: 6 on a GPU, 4 on a CPU)')
    p.add_argument('--jobs', type=int, default=None, help='memory children at once (default: 1 on a CPU; on a GPU as many 6 GB budgets as it holds, at most 8)')
    p.add_argument('--max-new-tokens', type=int, default=None, help="new tokens per answer (default: the protocol's 1024; 16 with --tiny)")
    p.add_argument('--speed-tokens', type=int, default=None, help='new tokens per row of the speed runs (default 128; 8 with --tiny)')
    p.add_argument('--e2e-new-tokens', type=int, default=None, help='--max-new-tokens of the end-to-end run (default 256; 16 with --tiny)')
    p.add_argument('--budget-s', type=float, default=420, help='seconds for the whole run (default 420)')
    p.add_argument('--bandwidth', type=float, default=None, help='memory bandwidth in GB/s for the roofline (default: measured by a copy)')
    p.add_argument('--tokenizer', default=None, help="a tokenizer folder (default: SmolLM2's, from the bundled GGUF)")
    p.add_argument('--data-dir', default=None, help='folder with the MT-bench files (default: MTBENCH_DATA_DIR or the cache)')
    p.add_argument('--work-dir', default=None, help='where the end-to-end model folder and run go (default: a temporary folder)')
    p.add_argument('--child', default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        kind, spec = a.child.split(':', 1)
        spec = json.loads(spec)
        if kind == 'memory': print(json.dumps(memory(spec)), flush=True)
        elif kind == 'speed': speed(spec)
        else: print(json.dumps({'bandwidth_gbs': bandwidth_gbs(spec['device'])}), flush=True)
        return 0
    if a.prepare: prepare(Path(a.prepare)); return 0
    if not a.out: p.error('--out DIR is needed (or --prepare DIR)')
    start = time.time(); deadline = start + a.budget_s
    if a.device is None:
        import torch
        a.device = 'cuda' if torch.cuda.is_available() else 'cpu'
    cuda = a.device.startswith('cuda')
    a.cap_gb = a.cap_gb or (6.0 if cuda else 4.0)
    a.max_new_tokens = a.max_new_tokens or (16 if a.tiny else 1024)
    a.speed_tokens = a.speed_tokens or (8 if a.tiny else 128)
    a.e2e_new_tokens = a.e2e_new_tokens or (16 if a.tiny else 256)
    a.jobs = a.jobs or default_jobs(a.device, a.cap_gb)
    if a.data_dir: os.environ['MTBENCH_DATA_DIR'] = str(Path(a.data_dir).resolve())
    from mtbench.pins import data_dir
    a.data_dir = str(data_dir()[0])
    if a.tokenizer: a.tokenizer = str(Path(a.tokenizer).resolve())
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    work = Path(a.work_dir) if a.work_dir else Path(tempfile.mkdtemp(prefix='gpu_proof_'))
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')]), 'HF_HUB_OFFLINE': '1',
           'TOKENIZERS_PARALLELISM': 'false'}
    env.pop('OPENAI_API_KEY', None) # the end-to-end run judges locally
    bw = a.bandwidth or child(['--child', 'bandwidth:' + json.dumps({'device': a.device})], env, 120)[0].get('bandwidth_gbs')
    log(f"memory bandwidth of {a.device}: {bw:.0f} GB/s (a copy, read + write); {a.jobs} memory children at once")
    recs, notes, lock = [], [], threading.Lock()
    header = ''
    def record(rec):
        nonlocal header
        with lock:
            rec.setdefault('weights', 'random weights')
            rec['why'] = check(rec, a.cap_gb) if rec['variant'] != 'e2e' else ([rec['error']] if rec.get('error') else [])
            recs.append(rec); recs.sort(key=row_order) # proof.json in the table's order, whichever child ends first (--jobs)
            gpu = next((r['gpu'] for r in recs if r.get('gpu') and 'emulated' not in r['gpu']), a.device)
            header = (f"{gpu}; random weights; cap {a.cap_gb:g} GB; {a.max_new_tokens} new tokens a turn; speed: {a.speed_tokens} new tokens a row; "
                      f"bandwidth {bw:.0f} GB/s; {a.jobs} memory children at once; {time.time() - start:.0f} s")
            write(out, recs, header, notes)
            log(f"  -> {rec['model']} {rec['variant']}: " + ('ok' if not rec['why'] else 'FAILS: ' + '; '.join(rec['why'])))
    spec = lambda **kw: dict(device=a.device, cap_gb=a.cap_gb, tiny=a.tiny, max_new_tokens=a.max_new_tokens, tokenizer=a.tokenizer,
                             data_dir=a.data_dir, bandwidth=bw, speed_tokens=a.speed_tokens, **kw)
    # the speed runs come last, alone on the device: what they need is kept from the memory runs' share of the budget
    speed_s = (12 + 2*a.speed_tokens*0.1)*len(a.models) if 'speed' in a.variants and cuda else (8*len(a.models) if 'speed' in a.variants else 0)
    mem_deadline = deadline - speed_s
    jobs = []
    if 'main' in a.variants: jobs += [('main', n) for n in a.models]
    if 'e2e' in a.variants: jobs.append(('e2e', E2E_MODEL))
    for v in [x for x in ('t4', '8bit', '4bit') if x in a.variants]:
        if not cuda: notes.append(f"not run: {v} rows (they need a CUDA GPU)"); continue
        jobs += [(v, n) for n in a.models]
    def run_job(job):
        v, name = job
        if v == 'e2e': return record(end_to_end(a, out, work, env, mem_deadline))
        if v in ('8bit', '4bit', 't4'): # a variant its main row already is adds nothing
            m = next((r for r in recs if r['model'] == name and r['variant'] == 'main'), {})
            if m.get('quantization') == v or (v == 't4' and m.get('dtype') == 'float16'):
                with lock: notes.append(f"not run: {name} {v} (its main row already is)")
                return
        if time.time() > mem_deadline - 20:
            with lock: notes.append(f"not run: {name} {v} (time budget)")
            return
        log(f"{name} {v} on {a.device}, {a.cap_gb:g} GB")
        turns = [1, 2] if v == 'main' else [2]
        for r in child(['--child', 'memory:' + json.dumps(spec(name=name, variant=v, turns=turns))], env, mem_deadline - time.time()):
            record({'model': name, 'variant': v, **r})
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex: list(ex.map(run_job, jobs))
    if 'speed' in a.variants:
        log(f"speed, alone on {a.device}: {', '.join(a.models)}")
        done = set()
        for r in child(['--child', 'speed:' + json.dumps(spec(names=a.models))], env, deadline - time.time()):
            if 'model' in r: done.add(r['model']); record(r)
            else: notes.append(f"speed runs: {r.get('error')} after {len(done)} of {len(a.models)}")
    print(text_table(table_rows(recs)))
    print(f"\n{header}")
    for n in notes: print(n)
    write(out, recs, header, notes)
    failed = [r for r in recs if r['variant'] in ('main', 'e2e') and r['why']]
    return 1 if failed else 0

if __name__ == '__main__': sys.exit(main())
