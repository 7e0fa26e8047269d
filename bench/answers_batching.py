"""Answer-generation throughput: one question at a time, as FastChat does, against mtbench's batching.

Generates the same MT-bench questions (both turns) twice in one process with the bundled SmolLM2-135M:
with batch size 1 (each question's turn 1, then its turn 2, then the next question) and with the
default batching (waves of questions, turn 1 of the wave in one batch, then turn 2). Prints new tokens
per second and questions per second for both, and their ratio. The runs alternate when --repeats > 1,
so a neighbour's load on a shared machine hits both alike.

    python bench/answers_batching.py                      # 16 questions, 128 new tokens
    python bench/answers_batching.py --max-questions 80 --max-new-tokens 1024
"""
import argparse, os, platform, tempfile, time
from mtbench.records import load_questions
from mtbench.models import load_model
from mtbench.conversation import generate_answers
from mtbench.backends import auto_batch_size
from mtbench.settings import Generation

def run(lm, qs, batch_size, max_new_tokens):
    "Answer `qs` into a fresh folder; returns generate_answers' summary."
    with tempfile.TemporaryDirectory() as d:
        return generate_answers(lm, qs, d, Generation(max_new_tokens=max_new_tokens, batch_size=batch_size), progress=False)

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--model', default='smollm2-135m')
    p.add_argument('--max-questions', type=int, default=16)
    p.add_argument('--max-new-tokens', type=int, default=128)
    p.add_argument('--batch-size', default='auto', help="the batched run's batch size (default: auto)")
    p.add_argument('--repeats', type=int, default=1, help='alternate the two runs this many times each')
    a = p.parse_args()
    lm = load_model(a.model, Generation(max_new_tokens=a.max_new_tokens))
    qs = load_questions(max_questions=a.max_questions)
    bs = a.batch_size if a.batch_size == 'auto' else int(a.batch_size)
    import torch
    print(f"{a.model} on {lm.device} ({lm.dtype}), torch threads {torch.get_num_threads()}, {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}; {len(qs)} questions x 2 turns, max_new_tokens {a.max_new_tokens}; "
          f"batched run: batch_size {bs} (= {auto_batch_size(lm) if bs == 'auto' else bs}); "
          f"load average before {os.getloadavg()[0]:.2f}")
    run(lm, qs[:2], 2, 8) # warm-up: first calls pay for lazy initialisation
    res = {1: [], bs: []}
    for _ in range(a.repeats):
        for b in (1, bs):
            info = run(lm, qs, b, a.max_new_tokens)
            res[b].append(info)
            print(f"  batch {str(b):>4}: {info['seconds']:7.1f} s, {info['new_tokens']:5d} new tokens, "
                  f"{info['tokens_per_s']:6.1f} tokens/s, {info['questions_per_s']:.3f} questions/s "
                  f"(load average {os.getloadavg()[0]:.2f})", flush=True)
    tok = {b: sum(i['new_tokens'] for i in r)/sum(i['seconds'] for i in r) for b,r in res.items()}
    qps = {b: sum(i['questions'] for i in r)/sum(i['seconds'] for i in r) for b,r in res.items()}
    print(f"one at a time (batch 1): {tok[1]:.1f} new tokens/s, {qps[1]:.3f} questions/s")
    print(f"batched (batch {bs}):    {tok[bs]:.1f} new tokens/s, {qps[bs]:.3f} questions/s")
    print(f"ratio: {tok[bs]/tok[1]:.2f}x new tokens/s, {qps[bs]/qps[1]:.2f}x questions/s")

if __name__ == '__main__': main()
