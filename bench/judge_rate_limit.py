"""How close mtbench's judge gets to a server's rate limit, and how close FastChat's way of calling gets.

A stand-in for OpenAI (`mtbench.testing.FakeChatServer`, on 127.0.0.1) accepts at most CAP requests per
minute (never more than CAP/60 within any one second), refuses a random tenth of requests with
429 + Retry-After, and takes LATENCY seconds per accepted call. Each variant judges the same N
judgments into a fresh folder; the figure printed is

    ratio = wall time / (accepted calls / (CAP/60))

where the denominator is the shortest time the server allows for the calls it accepted. The random
refusals alone cost about 10% there, since each takes a slot of the pace (refused requests count
against the limit, as at OpenAI), and no client can avoid them. So the figure the goal is set on is

    pacing = wall time / bound,  bound = (accepted + refused at random) / (CAP/60) + LATENCY

the shortest time in which the server lets through every request it made the client send, the last
one answered. 1.0 is the ideal; 429s over the cap (the `429 cap` column) should be 0.

Variants:
- mtbench: concurrent calls paced evenly at --judge-rpm CAP (the default way).
- mtbench --judge-concurrency 1: the same client, one call at a time.
- FastChat-style: one call at a time (gen_judgment.py's default --parallel 1), the openai client,
  and FastChat's fixed 10 s sleep after any error (API_RETRY_SLEEP), up to 16 tries.

Usage: python bench/judge_rate_limit.py [--cap 240] [--n 40] [--latency 0.3] [--p429 0.1] [--seeds 0 1 2] [--no-fastchat]
Needs MTBENCH_DATA_DIR (or the download cache) for the questions and reference texts.
"""
import argparse, logging, tempfile, time
import openai # imported before any timing: a one-time cost of about a second, not part of pacing
from pathlib import Path
from mtbench.records import Answer, load_judge_prompts, load_questions, load_reference_answers, new_answer_id
from mtbench.store import RecordFile
from mtbench.judging import judge_answers
from mtbench.judge import plan_judgments
from mtbench.settings import JudgeSettings, Selection
from mtbench.testing import FakeChatServer

def write_answers(out, n_judgments):
    "A model's answers to n_judgments/2 writing and roleplay questions, texts from GPT-4's reference answers."
    refs = load_reference_answers()
    qids = list(range(81, 81 + n_judgments//2))
    texts = [r.texts() for r in refs.values()]
    f = RecordFile(Path(out)/'model_answer'/'m1.jsonl', Answer)
    for i, q in enumerate(qids): f.append(Answer(q, new_answer_id(), 'm1', [{'index': 0, 'turns': texts[i % len(texts)]}], time.time()))
    return qids

def run_mtbench(srv, cap, n, concurrency=None):
    out = tempfile.mkdtemp()
    qids = write_answers(out, n)
    t0 = time.monotonic()
    s = judge_answers(out, ['m1'], JudgeSettings(judge='gpt-4.1-nano', judge_base_url=srv.base_url, judge_rpm=cap, judge_concurrency=concurrency),
                      Selection(question_ids=qids))
    assert s['total']['judgments'] == n and not s['total'].get('failed'), s['total']
    return time.monotonic() - t0

def run_fastchat_style(srv, cap, n, sleep=10.0):
    "FastChat's chat_compeletion_openai loop (16 tries, fixed sleep after an error), one judgment at a time."
    import openai
    out = tempfile.mkdtemp()
    qids = write_answers(out, n)
    answers = {'m1': RecordFile(Path(out)/'model_answer'/'m1.jsonl', Answer).load()}
    tasks = plan_judgments(load_questions(question_ids=qids), answers, load_judge_prompts(), {})
    client = openai.OpenAI(api_key='none', base_url=srv.base_url, max_retries=0)
    t0 = time.monotonic()
    for t in tasks:
        for _ in range(16):
            try:
                client.chat.completions.create(model='gpt-4', messages=t.messages[0], n=1, temperature=0, max_tokens=2048)
                break
            except openai.OpenAIError: time.sleep(sleep)
    return time.monotonic() - t0

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--cap', type=float, default=240, help='server limit, requests per minute')
    p.add_argument('--n', type=int, default=40, help='judgments per run (even)')
    p.add_argument('--latency', type=float, default=0.3, help='seconds per accepted call')
    p.add_argument('--p429', type=float, default=0.1, help='fraction refused at random')
    p.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2], help="seeds of the server's random refusals")
    p.add_argument('--fastchat-sleep', type=float, default=10.0, help="FastChat's sleep after an error")
    p.add_argument('--no-fastchat', action='store_true', help='skip the FastChat-style run (it takes about a minute)')
    a = p.parse_args()
    logging.getLogger('mtbench').setLevel(logging.WARNING)
    import os; os.environ.setdefault('OPENAI_API_KEY', 'none-needed-on-loopback')
    variants = [('mtbench (concurrent, paced)', lambda s: run_mtbench(s, a.cap, a.n)),
                ('mtbench --judge-concurrency 1', lambda s: run_mtbench(s, a.cap, a.n, concurrency=1))]
    if not a.no_fastchat: variants.append((f'FastChat-style (1 at a time, {a.fastchat_sleep:g} s sleep)',
                                           lambda s: run_fastchat_style(s, a.cap, a.n, a.fastchat_sleep)))
    print(f"server: {a.cap:g} requests/min (at most {a.cap/60:g} in any second), {a.p429:.0%} refused at random, "
          f"{a.latency} s per call; {a.n} judgments per run")
    print(f"{'variant':<42} {'seed':>4} {'wall s':>7} {'accepted':>8} {'429 cap':>7} {'429 rand':>8} {'bound s':>7} {'ratio':>6} {'pacing':>6}")
    for name, fn in variants:
        for seed in (a.seeds if 'mtbench (' in name else a.seeds[:1]):
            with FakeChatServer(rpm=a.cap, p_429=a.p429, latency=a.latency, seed=seed) as srv:
                wall = fn(srv)
                ok, bound = srv.count(200), srv.count(200)/(a.cap/60)
                must = (ok + srv.count(429, 'random'))/(a.cap/60) + a.latency
                print(f"{name:<42} {seed:>4} {wall:>7.1f} {ok:>8} {srv.count(429, 'cap'):>7} {srv.count(429, 'random'):>8} "
                      f"{bound:>7.1f} {wall/bound:>6.2f} {wall/must:>6.2f}", flush=True)

if __name__ == '__main__': main()
