"""Every seed model inside a 6 GB GPU, measured without downloading its weights.

Memory and speed depend on a model's shapes, not on its values. For each model of mtbench's registry
(`mtbench.models.MODELS`, whose figures are those of the model's config.json on the hub, checked
against transformers' own parameter count) plus the few config.json fields in `HUB_FIELDS` below that
change the cache or the checkpoint, this script builds the model with random weights
(`AutoModelForCausalLM.from_config`), saves it as an ordinary transformers folder beside a tokenizer
(SmolLM2's: any tokenizer will do, and its 49k-word vocabulary spells prompts in more tokens than the
128k-256k vocabularies of Llama, Qwen and Gemma, so prompts err long), and then, in a fresh child
process per model, does what `mtbench answers` does:

- loads it with `mtbench.models.load_model`, whose memory plan picks the dtype, 8-bit or 4-bit, the
  attention kernel and the batch for the budget (`--cap-gb`, 6 by default on a GPU);
- on a GPU, caps PyTorch's allocator at the budget less the runtime allowance in mtbench's estimate
  (`torch.cuda.set_per_process_memory_fraction`), so an 80 GB card behaves like a 6 GB one;
- generates turn 1, then turn 2, of the longest MT-bench questions (one batch of them) with `HFBackend`
  at the protocol's length (`--max-new-tokens`, 1024), every row to its full length (the end-of-turn
  and padding tokens are suppressed); turn 2 holds the turn-1 question, an answer exactly as many tokens
  long as the one generated (English text: random weights write tokens the stand-in tokenizer cannot
  spell) and the turn-2 question;
- generates the first `--batch1-rows` of those turn-1 prompts again one at a time, FastChat's way.

Per model it reports the plan, mtbench's estimate (`estimate_memory` at the batch that ran, runtime
included, computed as `load_model` computes it), the measured peak, new tokens/s batched and at batch 1,
and the decode roofline: the bytes one decoding step must read (the weights, plus the KV cache at the
mean length) over the memory bandwidth, measured here by a copy (`--bandwidth` overrides it) and, for
the card the claim is about, at `--target-bandwidth` (336 GB/s: a 6 GB RTX 3060 Laptop GPU).

The measured peak. GPU: the allocator's peak reserved memory plus what the process holds outside the
allocator (CUDA context, loaded kernels, library handles), read per process from NVML where it can be,
else as the device's used memory less the allocator's. CPU: the child's peak resident set size,
the kernel's high-water mark of its resident set (`VmHWM`, read after the load and, reset there, after
the generation; and `ru_maxrss` from `os.wait4`): the larger of the load's and the generation's peaks,
no sampling. A model passes when peak <= estimate, no batch ran out of memory and every
row ran to its length; the exit status is 1 when one did not.

    # here, on a CPU (a few minutes; the lengths are short by flag)
    python bench/gpu_memory.py --device cpu --models smollm2-135m gpt2-large --max-new-tokens 32 --json out.json
    # each architecture's activations and logits at full width, with 2 layers each (fits in RAM)
    python bench/gpu_memory.py --device cpu --layers 2 --max-new-tokens 32
    # on a GPU: the 6 GB card, all seven models, bf16 (or --dtype float16 as on a T4), attention compared
    python bench/gpu_memory.py --cap-gb 6 --attn sdpa flash_attention_2 --json out.json

On the device machine (no network, no fastcore, no SmolLM2 GGUF): carry the tokenizer, the questions and
the wheels the GPU image lacks (fastcore; bitsandbytes for the 8-bit and 4-bit plans), e.g. from the
repository root here:

    echo /.gpu/ >> .git/info/exclude; mkdir -p .gpu/tok .gpu/data .gpu/whl
    cp $MTBENCH_CACHE_DIR/models/smollm2-135m/{tokenizer.json,tokenizer_config.json,chat_template.jinja} .gpu/tok/
    cp $MTBENCH_DATA_DIR/question.jsonl .gpu/data/
    pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_24_x86_64 \
        --platform manylinux_2_17_x86_64 -d .gpu/whl 'fastcore>=1.12,<2' bitsandbytes     # 43 MB: the tree stays under 64 MiB

and there (carry: [".gpu"]):

    pip install -q --no-index --no-deps --target /tmp/site .gpu/whl/*.whl; export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    python bench/gpu_memory.py --tokenizer .gpu/tok --data-dir .gpu/data --work-dir /tmp/gm --cap-gb 6 --json $OUT/gpu.json
"""
import argparse, json, os, resource, subprocess, sys, tempfile, time
from pathlib import Path

GB = 2**30
SEEDS = ['gpt2-large', 'llama-3.2-1b', 'llama-3.2-3b', 'phi-3-mini', 'qwen2.5-3b', 'gemma-2b', 'smollm2-135m']

# config.json fields beyond the registry's shapes that matter here: the checkpoint's dtype (what
# from_pretrained converts from) and Phi-3-mini's sliding window, which gives it a sliding-window
# cache (and so the padded prefill, not the row-by-row one). From each repository's config.json:
# openai-community/gpt2-large (no torch_dtype: fp32 weights), meta-llama/Llama-3.2-1B-Instruct and
# -3B-Instruct, microsoft/Phi-3-mini-4k-instruct ("sliding_window": 2047), Qwen/Qwen2.5-3B-Instruct
# ("use_sliding_window": false), google/gemma-2b-it; smollm2-135m is what mtbench loads it from, the
# fp32 folder converted from the bundled GGUF.
HUB_FIELDS = {
    'gpt2-large': dict(dtype='float32'),
    'llama-3.2-1b': dict(dtype='bfloat16'),
    'llama-3.2-3b': dict(dtype='bfloat16'),
    'phi-3-mini': dict(dtype='bfloat16', sliding_window=2047),
    'qwen2.5-3b': dict(dtype='bfloat16', use_sliding_window=False),
    'gemma-2b': dict(dtype='bfloat16'),
    'smollm2-135m': dict(dtype='float32'),
}
TARGET = ('RTX 3060 Laptop 6 GB', 336.0) # GB/s: 192-bit GDDR6 at 14 Gbps

def log(*a): print(*a, file=sys.stderr, flush=True)

def _status():
    "VmRSS, VmHWM, RssAnon and RssFile of this process, in GiB (Linux)."
    try: lines = Path('/proc/self/status').read_text().splitlines()
    except OSError: return {}
    keys = ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile')
    return {l.split(':')[0]: int(l.split()[1])*1024/GB for l in lines if l.split(':')[0] in keys}

# ---------------------------------------------------------------- the random-weight model folders

def model_config(name, layers=None):
    "The model's config.json as a dict: the registry's shapes, `HUB_FIELDS`, and `layers` blocks if given."
    from mtbench.models import MODELS
    cfg = {**MODELS[name].config(), **{k: v for k, v in HUB_FIELDS[name].items() if k != 'dtype'}}
    if layers: cfg['n_layer' if cfg['model_type'] == 'gpt2' else 'num_hidden_layers'] = layers
    return cfg

def build_folder(name, dest, tokenizer, layers=None, device='cpu'):
    "Write model `name` with random weights (seeded) and `tokenizer` to folder `dest` (once)."
    from mtbench.models import MODELS, MARKER, build_once
    def build(tmp):
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
        spec, dtype = MODELS[name], getattr(torch, HUB_FIELDS[name]['dtype'])
        config = AutoConfig.for_model(**model_config(name, layers))
        torch.manual_seed(0)
        t0 = time.perf_counter()
        with torch.device(device): model = AutoModelForCausalLM.from_config(config, dtype=dtype)
        n = sum(p.numel() for p in model.parameters())
        if not layers and n != spec.params: raise SystemExit(f"{name}: built {n:,} parameters, the registry says {spec.params:,}")
        model.save_pretrained(tmp)
        tok = AutoTokenizer.from_pretrained(tokenizer)
        if not spec.chat_template: tok.chat_template = None # a base model: mtbench's plain template
        tok.save_pretrained(tmp)
        if len(tok) > config.get_text_config().vocab_size: # Phi-3 has 32,064 words: keep the tokenizer's first ones
            fit_tokenizer(tmp, config.get_text_config().vocab_size)
            if len(AutoTokenizer.from_pretrained(tmp)) > config.get_text_config().vocab_size: raise SystemExit(f"{name}: tokenizer too large")
        (Path(tmp)/MARKER).write_text(json.dumps({'random_weights': name, 'layers': layers, 'params': n}))
        log(f"  built {name}{f' ({layers} layers)' if layers else ''}: {n/1e9:.2f}B parameters, "
            f"{HUB_FIELDS[name]['dtype']}, in {time.perf_counter()-t0:.0f} s")
    return build_once(Path(dest), build)

def fit_tokenizer(folder, vocab):
    "Cut the byte-level BPE tokenizer in `folder` to ids below `vocab`: its earliest merges, as if trained to that size."
    p = Path(folder)/'tokenizer.json'
    t = json.loads(p.read_text())
    keep = {w: i for w, i in t['model']['vocab'].items() if i < vocab}
    pair = lambda m: m.split(' ') if isinstance(m, str) else m
    t['model']['merges'] = [m for m in t['model']['merges'] if all(x in keep for x in pair(m)) and ''.join(pair(m)) in keep]
    t['model']['vocab'] = keep
    p.write_text(json.dumps(t, ensure_ascii=False))

def default_tokenizer():
    "SmolLM2's tokenizer folder, converted from the bundled GGUF on first use."
    from mtbench.models import local_folder
    return str(local_folder('smollm2-135m'))

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

def longest_questions(qs, n):
    "The `n` questions with the longest two turns (the widest turn-2 prompts)."
    return sorted(qs, key=lambda q: len(q.turns[0]) + len(q.turns[1]), reverse=True)[:n]

def filler(tok, qs, n):
    "English text of exactly `n` tokens (as `tok` spells it): MT-bench's questions, repeated."
    ids = tok(' '.join(t for q in qs for t in q.turns), add_special_tokens=False)['input_ids']
    ids = (ids * (n//len(ids) + 1))[:n]
    return tok.decode(ids)

def _rooms(widths, batch, context, max_new):
    "The new tokens each row should get: HFBackend's batches of length-sorted prompts stop where their longest fills the context."
    order = sorted((w, i) for i, w in enumerate(widths) if not context or w < context)
    rooms = [0]*len(widths)
    for j in range(0, len(order), batch):
        chunk = order[j:j+batch]
        for w, i in chunk: rooms[i] = min(max_new, context - chunk[-1][0]) if context else max_new
    return rooms

class _Gpu:
    "Peak and outside-the-allocator memory of this process on a CUDA device."
    def __init__(self, device):
        import torch
        self.torch, self.device = torch, torch.device(device)
        torch.zeros(1, device=self.device) # the context
        self.total = torch.cuda.mem_get_info(self.device)[1]
        self.nvml = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml, pynvml.nvmlDeviceGetHandleByIndex(self.device.index or 0)
        except Exception: pass
    def process_used(self):
        "Bytes this process holds on the device (NVML), else the device's used bytes."
        if self.nvml:
            nv, h = self.nvml
            try:
                for p in nv.nvmlDeviceGetComputeRunningProcesses(h):
                    if p.pid == os.getpid() and p.usedGpuMemory: return p.usedGpuMemory, 'nvml per process'
            except Exception: pass
        free, total = self.torch.cuda.mem_get_info(self.device)
        return total - free, 'device used (mem_get_info)'
    def snapshot(self):
        c = self.torch.cuda
        used, how = self.process_used()
        res = c.memory_reserved(self.device)
        return {'allocated_gb': c.memory_allocated(self.device)/GB, 'reserved_gb': res/GB,
                'peak_allocated_gb': c.max_memory_allocated(self.device)/GB, 'peak_reserved_gb': c.max_memory_reserved(self.device)/GB,
                'outside_allocator_gb': (used - res)/GB, 'outside_how': how}

def measure(s):
    "The child: load, plan, generate both turns batched and turn 1 at batch 1; returns the record."
    import torch
    from mtbench.data import load_questions, category_temperature, MTBenchError
    from mtbench.memory import estimate_memory, runtime_gb
    from mtbench.models import load_model, model_arch
    from mtbench.settings import Generation
    from mtbench.backends import HFBackend
    from mtbench.answers import longest_prompt
    base = _status() # Python with torch, transformers and mtbench imported
    dev, cuda = s['device'], s['device'].startswith('cuda')
    rec = {'model': s['name'], 'device': dev, 'layers': s['layers'], 'attn_asked': s['attn'], 'phases': {}}
    gpu = _Gpu(dev) if cuda else None
    if cuda:
        rec['gpu'] = torch.cuda.get_device_name(gpu.device)
        if s['cap_gb']:
            frac = (s['cap_gb'] - runtime_gb(dev))*GB/gpu.total
            torch.cuda.set_per_process_memory_fraction(frac, gpu.device)
            rec['allocator_cap_gb'] = round(frac*gpu.total/GB, 3)
    pre_load = _status().get('VmHWM')
    def phase(name, t0, **kw):
        d = {'seconds': round(time.perf_counter()-t0, 2), **kw}
        if cuda: d.update({k: (round(v, 3) if isinstance(v, float) else v) for k, v in gpu.snapshot().items()})
        st = _status()
        if st: d.update(rss_gb=round(st['VmRSS'], 3), peak_rss_gb=round(st['VmHWM'], 3))
        rec['phases'][name] = d
        log(f"  {s['name']} {name}: " + ', '.join(f'{k} {v}' for k, v in d.items()))
    all_qs = load_questions(s['data_dir'])
    prompt_tokens = longest_prompt(all_qs, s['max_new_tokens']) # what `mtbench answers` plans a full run with
    t0 = time.perf_counter()
    try:
        gen = Generation(dtype=s['dtype'], quantization=s['quantization'], memory_limit=s['cap_gb'], attn=s['attn'],
                         batch_size='auto' if s['batch_size'] is None else s['batch_size'], max_new_tokens=s['max_new_tokens'])
        lm = load_model(s['folder'], gen, device=dev, prompt_tokens=prompt_tokens, model_id=s['name'])
    except MTBenchError as e:
        rec['error'] = str(e); return rec
    phase('load', t0)
    load_peak = max(_status().get('VmHWM', 0), pre_load or 0)
    try: Path('/proc/self/clear_refs').write_text('5') # the generation's own peak from here (the load's is kept above)
    except OSError: pass
    be = HFBackend(lm, 'auto' if s['batch_size'] is None else s['batch_size'])
    B = be.batch_size
    arch = model_arch(s['folder'])
    est = estimate_memory(arch, lm.dtype, lm.quantization, B, prompt_tokens, s['max_new_tokens'], device=dev)
    rec.update(plan=str(lm.plan), dtype=lm.dtype, quantization=lm.quantization, attn=lm.attn_implementation,
               planned_batch=lm.plan.batch_size, batch_size=B, prompt_tokens_planned=prompt_tokens,
               max_new_tokens=s['max_new_tokens'], estimated_gb=est.total_gb, estimate=vars(est) | {'total_gb': est.total_gb},
               planned_estimate_gb=lm.plan.estimate.total_gb)
    stop = sorted(be.stop_ids | {be.pad_id})
    lm.model.generation_config.suppress_tokens = stop # every row runs to its full length
    qs = longest_questions(all_qs, s['questions'] or B)
    temps = [category_temperature(q.category) for q in qs]
    timing = {'prefill_s': 0.0, 'row_prefill': None}
    orig = be._prefill
    def timed_prefill(prompts, width):
        t = time.perf_counter(); c = orig(prompts, width)
        if cuda: torch.cuda.synchronize()
        timing['prefill_s'] += time.perf_counter() - t; timing['row_prefill'] = c is not None
        return c
    be._prefill = timed_prefill
    def run_turn(name, backend, convs, ts):
        timing['prefill_s'] = 0.0
        t0 = time.perf_counter()
        out = backend.generate(convs, ts, s['max_new_tokens'])
        dt = time.perf_counter() - t0
        widths = [len(backend.encode(c)) for c in convs]
        errs = [c.error for c in out if c.error and "model's context is" not in c.error]
        over = sum(1 for c in out if c.error and "model's context is" in c.error) # turn 2 of gpt2-large at 1024 tokens
        new = sum(c.new_tokens for c in out)
        short = sum(1 for c, r in zip(out, _rooms(widths, backend.batch_size, be.context, s['max_new_tokens']))
                    if not c.error and c.new_tokens < r)
        prefill = timing['prefill_s'] if timing['row_prefill'] else None
        phase(name, t0, rows=len(convs), prompt_tokens=[min(widths), max(widths)], new_tokens=new,
              tokens_per_s=round(new/dt, 2), row_prefill=timing['row_prefill'], prefill_s=round(prefill, 2) if prefill else None,
              decode_tokens_per_s=round(new/(dt - prefill), 2) if prefill else None, errors=errs[:3], n_errors=len(errs),
              over_context=over,
              rows_cut_short=short, batch_after=backend.batch_size)
        return out, new, dt
    convs1 = [[{'role': 'user', 'content': q.turns[0]}] for q in qs]
    c1, n1, dt1 = run_turn('turn 1', be, convs1, temps)
    convs2 = [[{'role': 'user', 'content': q.turns[0]}, {'role': 'assistant', 'content': filler(lm.tokenizer, all_qs, c.new_tokens)},
               {'role': 'user', 'content': q.turns[1]}] for q, c in zip(qs, c1)]
    c2, n2, dt2 = run_turn('turn 2', be, convs2, temps)
    oom = be.batch_size < B
    k = min(s['batch1_rows'], len(qs))
    be1 = HFBackend(lm, 1); be1._prefill = timed_prefill
    _, nb1, dtb1 = run_turn('batch 1', be1, convs1[:k], temps[:k]) if k else (None, 0, 0)
    # the decode roofline: bytes read per step over bandwidth
    wbytes = sum(p.numel()*p.element_size() for p in lm.model.parameters()) + sum(b.numel()*b.element_size() for b in lm.model.buffers())
    kv_tok = 2*arch.layers*arch.kv_heads*arch.head_dim*torch.finfo(getattr(torch, lm.dtype)).bits//8
    mean_ctx = lambda ph: sum(rec['phases'][ph]['prompt_tokens'])/2 + s['max_new_tokens']/2
    bw = s['bandwidth']
    rec.update(weight_bytes=wbytes, kv_bytes_per_token=kv_tok)
    peak = {}
    if cuda:
        g = gpu.snapshot()
        peak = dict(peak_allocated_gb=round(g['peak_allocated_gb'], 3), peak_reserved_gb=round(g['peak_reserved_gb'], 3),
                    outside_allocator_gb=round(g['outside_allocator_gb'], 3), outside_how=g['outside_how'],
                    peak_gb=round(g['peak_reserved_gb'] + g['outside_allocator_gb'], 3))
    else:
        st = _status()
        peak = dict(baseline_rss_gb=round(base.get('VmRSS', 0), 3), rss_end_gb=round(st.get('VmRSS', 0), 3),
                    rss_anon_end_gb=round(st.get('RssAnon', 0), 3), rss_file_end_gb=round(st.get('RssFile', 0), 3),
                    load_peak_rss_gb=round(load_peak, 3), generation_peak_rss_gb=round(st.get('VmHWM', 0), 3),
                    peak_rss_gb=round(max(st.get('VmHWM', 0), load_peak), 3))
    rec.update(peak, oom=oom, tokens_per_s=round((n1 + n2)/(dt1 + dt2), 2), tokens_per_s_batch1=round(nb1/dtb1, 2) if k else None,
               new_tokens=n1 + n2, rows=len(qs), batch1_rows=k, _mean_ctx=(mean_ctx('turn 1') + mean_ctx('turn 2'))/2,
               _mean_ctx1=mean_ctx('batch 1') if k else None, bandwidth_gbs=bw)
    return rec

def roofline(rec, bw, target_bw):
    "Decode roofline tokens/s at batch 1 and at the run's batch, on this device and on the target card."
    if 'weight_bytes' not in rec or not bw: return {}
    W, kv, B = rec['weight_bytes'], rec['kv_bytes_per_token'], rec['batch_size']
    step = lambda b, ctx, g: (W + b*ctx*kv)/(g*1e9)
    ctx1 = rec['_mean_ctx1'] or rec['_mean_ctx']
    out = {'roofline_step_ms': round(1e3*step(B, rec['_mean_ctx'], bw), 3),
           'roofline_tokens_per_s': round(B/step(B, rec['_mean_ctx'], bw), 1), 'roofline_tokens_per_s_batch1': round(1/step(1, ctx1, bw), 1)}
    if target_bw: out.update(target_roofline_tokens_per_s=round(B/step(B, rec['_mean_ctx'], target_bw), 1),
                             target_roofline_tokens_per_s_batch1=round(1/step(1, ctx1, target_bw), 1))
    return out

# ---------------------------------------------------------------- the parent

def child(args, env):
    "Run this script as a child with `args`; returns (its JSON answer, its peak RSS in GiB from wait4)."
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen([sys.executable, __file__, *args], stdout=out, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        out.seek(0)
        text = out.read().decode()
    code = os.waitstatus_to_exitcode(status)
    ans = None
    for line in reversed(text.splitlines()):
        if line.startswith('{'): ans = json.loads(line); break
    if ans is None: ans = {'error': f'child exited with status {code} and no answer (see above)'}
    return ans, ru.ru_maxrss*1024/GB

def check(rec):
    "Why model record `rec` fails the claim (empty when it passes)."
    if 'error' in rec: return [rec['error']]
    why = []
    if rec['peak_gb'] > rec['estimated_gb']: why.append(f"peak {rec['peak_gb']:.2f} GB > estimate {rec['estimated_gb']:.2f} GB")
    if rec['oom']: why.append(f"out of memory at batch {rec['batch_size']}")
    for ph in ('turn 1', 'turn 2', 'batch 1'):
        p = rec['phases'].get(ph, {})
        if p.get('n_errors'): why.append(f"{ph}: {p['n_errors']} rows failed ({p['errors'][0]})")
        if p.get('rows_cut_short'): why.append(f"{ph}: {p['rows_cut_short']} rows stopped before their length")
    return why

def table(recs, device):
    cols = ['model', 'plan', 'batch', 'est GB', 'peak GB', 'alloc/res GB' if device != 'cpu' else 'rss base/load/gen GB',
            'tok/s', 'tok/s b1', 'roof tok/s', 'roof b1', f'roof b1 {TARGET[0].split()[0]} {TARGET[0].split()[1]}', 'ok']
    rows = []
    for r in recs:
        if 'error' in r and 'estimated_gb' not in r:
            rows.append([r['model'], r['error'][:80]] + ['']*(len(cols)-2)); continue
        plan = f"{r['dtype'].replace('float', 'fp').replace('bfp16', 'bf16')}{'' if r['quantization'] == 'none' else ' ' + r['quantization']} {r['attn']}"
        mem = (f"{r['peak_allocated_gb']:.2f}/{r['peak_reserved_gb']:.2f}" if 'peak_reserved_gb' in r
               else f"{r['baseline_rss_gb']:.2f}/{r['load_peak_rss_gb']:.2f}/{r['generation_peak_rss_gb']:.2f}")
        f = lambda v: '' if v is None else f'{v:.1f}'
        rows.append([r['model'] + (f" ({r['layers']}L)" if r.get('layers') else ''), plan,
                     f"{r['batch_size']}" + ('' if r['batch_size'] == r['planned_batch'] else f" (plan {r['planned_batch']})"),
                     f"{r['estimated_gb']:.2f}", f"{r['peak_gb']:.2f}", mem, f(r['tokens_per_s']), f(r['tokens_per_s_batch1']),
                     f(r.get('roofline_tokens_per_s')), f(r.get('roofline_tokens_per_s_batch1')),
                     f(r.get('target_roofline_tokens_per_s_batch1')), ('yes' if not r['why'] else 'NO: ' + '; '.join(r['why']))
                     + ''.join(f"; {ph}: {p['over_context']} prompts over the context" for ph, p in r['phases'].items() if p.get('over_context'))])
    w = [max(len(str(x)) for x in [c] + [row[i] for row in rows]) for i, c in enumerate(cols)]
    fmt = lambda row: '  '.join(str(x).ljust(w[i]) for i, x in enumerate(row)).rstrip()
    return '\n'.join([fmt(cols), fmt(['-'*n for n in w])] + [fmt(r) for r in rows])

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog='\n'.join(__doc__.splitlines()[1:]))
    p.add_argument('--device', default=None, help='cuda, cuda:N or cpu (default: cuda if there is one)')
    p.add_argument('--models', nargs='+', default=SEEDS, choices=SEEDS, metavar='MODEL', help=f"default: all ({', '.join(SEEDS)})")
    p.add_argument('--cap-gb', type=float, default=None, help='the memory budget in GB (GiB): the card size (default: 6 on a GPU, the free RAM on a CPU)')
    p.add_argument('--max-new-tokens', type=int, default=1024, help="new tokens per answer (the protocol's 1024)")
    p.add_argument('--batch-size', default=None, help="auto (mtbench's plan) or a number (default: auto on a GPU, 4 on a CPU)")
    p.add_argument('--questions', type=int, default=None, help='the N longest questions (default: one batch)')
    p.add_argument('--batch1-rows', type=int, default=None, help='turn-1 rows to generate one at a time (default: 2 on a GPU, 1 on a CPU)')
    p.add_argument('--dtype', default=None, help="compute dtype (default: the plan's: bf16 where the GPU has it, fp32 on a CPU); float16 as on a T4")
    p.add_argument('--quantization', default='auto', choices=['auto', 'none', '8bit', '4bit'])
    p.add_argument('--attn', nargs='+', default=['auto'], help='attention implementations to run each model with: auto, sdpa, flash_attention_2, eager')
    p.add_argument('--layers', type=int, default=None, help='build each model with this many blocks (widths unchanged): to check the per-layer terms of big models on a small machine')
    p.add_argument('--bandwidth', type=float, default=None, help='memory bandwidth in GB/s for the roofline (default: measured by a copy)')
    p.add_argument('--target-bandwidth', type=float, default=TARGET[1], help=f'bandwidth of the card the claim is about (default {TARGET[1]:g}, {TARGET[0]})')
    p.add_argument('--tokenizer', default=None, help="a tokenizer folder (default: SmolLM2's, from the bundled GGUF)")
    p.add_argument('--data-dir', default=None, help='folder with question.jsonl (default: MTBENCH_DATA_DIR or the cache)')
    p.add_argument('--work-dir', default=None, help='where the random-weight folders go (default: MTBENCH_CACHE_DIR/random-models)')
    p.add_argument('--json', default=None, help='write one object per model (and attention) to this file')
    p.add_argument('--child', default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        kind, spec = a.child.split(':', 1)
        spec = json.loads(spec)
        if kind == 'build': ans = {'folder': str(build_folder(**spec))}
        elif kind == 'bandwidth': ans = {'bandwidth_gbs': bandwidth_gbs(spec['device'])}
        else:
            ans = measure(spec)
        print(json.dumps(ans), flush=True)
        return 0
    from mtbench.data import cache_dir
    if a.device is None:
        import importlib.util
        a.device = 'cuda' if importlib.util.find_spec('torch') and __import__('torch').cuda.is_available() else 'cpu'
    cuda = a.device.startswith('cuda')
    if a.cap_gb is None and cuda: a.cap_gb = 6.0
    bs = a.batch_size if a.batch_size is not None else ('auto' if cuda else '4')
    if bs != 'auto' and (not bs.isdigit() or int(bs) < 1): p.error(f"--batch-size {bs!r}: auto or a positive whole number")
    b1 = a.batch1_rows if a.batch1_rows is not None else (2 if cuda else 1)
    work = Path(a.work_dir or cache_dir()/'random-models')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get('PYTHONPATH', '')])}
    tokenizer = a.tokenizer or default_tokenizer()
    bw = a.bandwidth
    if bw is None:
        bw = child(['--child', 'bandwidth:' + json.dumps({'device': a.device})], env)[0].get('bandwidth_gbs')
        log(f"memory bandwidth of {a.device}: {bw:.0f} GB/s (copy, read + write)")
    recs = []
    for name in a.models:
        dest = work/(name + (f'-{a.layers}l' if a.layers else ''))
        built, _ = child(['--child', 'build:' + json.dumps({'name': name, 'dest': str(dest), 'tokenizer': tokenizer,
                                                            'layers': a.layers, 'device': a.device if cuda else 'cpu'})], env)
        if 'error' in built: recs.append({'model': name, 'error': f"build failed: {built['error']}", 'why': [built['error']]}); continue
        for attn in a.attn:
            spec = dict(name=name, folder=built['folder'], device=a.device, cap_gb=a.cap_gb, max_new_tokens=a.max_new_tokens,
                        batch_size=None if bs == 'auto' else int(bs), questions=a.questions, batch1_rows=b1, dtype=a.dtype,
                        quantization=a.quantization, attn=None if attn == 'auto' else attn, layers=a.layers,
                        data_dir=a.data_dir, bandwidth=bw)
            log(f"{name} ({attn}) on {a.device}" + (f", {a.cap_gb:g} GB" if a.cap_gb else ''))
            rec, maxrss = child(['--child', 'measure:' + json.dumps(spec)], env)
            rec.setdefault('model', name)
            if not cuda and 'estimated_gb' in rec:
                rec['peak_rss_wait4_gb'] = round(maxrss, 3)
                rec['peak_gb'] = round(max(maxrss, rec['peak_rss_gb']), 3)
            rec.update(roofline(rec, bw, a.target_bandwidth))
            rec['why'] = check(rec)
            for k in ('_mean_ctx', '_mean_ctx1'): rec.pop(k, None)
            recs.append(rec)
            log('  ' + ('ok' if not rec['why'] else 'FAILS: ' + '; '.join(rec['why'])))
    print(table(recs, a.device))
    print(f"\n{a.device}{', ' + recs[0].get('gpu', '') if recs and recs[0].get('gpu') else ''}; budget "
          f"{f'{a.cap_gb:g} GB' if a.cap_gb else 'free RAM'}; max_new_tokens {a.max_new_tokens}; bandwidth {bw:.0f} GB/s "
          f"(target {a.target_bandwidth:g} GB/s, {TARGET[0]}). peak GB: " +
          ("allocator's peak reserved + memory held outside it" if cuda else "the child's peak RSS (VmHWM at load and after generation, ru_maxrss from wait4)") +
          "; est GB: mtbench's estimate at the batch that ran, runtime included; roof: decode roofline tokens/s")
    if a.json: Path(a.json).write_text(json.dumps(recs, indent=1) + '\n')
    return 1 if any(r['why'] for r in recs) else 0

if __name__ == '__main__': sys.exit(main())
