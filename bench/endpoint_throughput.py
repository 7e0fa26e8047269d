"""How close mtbench's answers and judge steps come to the throughput a server allows.

A loopback stand-in (`mtbench.testing.FakeChatServer`, run in a process of its own so that it does not
share mtbench's interpreter) works on at most S requests at once (its parallel slots) and takes LATENCY
seconds for each; the others wait for a slot. The most such a server can do is S / LATENCY requests per
second. Each step runs into a fresh folder with `--concurrency S` (answers) or `--judge-concurrency S`
(judge), and the figure printed is

    efficiency = (requests the server answered / wall seconds) / (S / LATENCY)

1.00 is the server's bound. `answers (waves)` is the way mtbench answered through a server before: each
wave's turn 2 waited for the whole wave's turn 1; `answers` is today's (each question on its own, its
turn 2 sent when its turn 1 lands). `first 0.25 s` is how many requests reached the server in the first
quarter second of the step (S at most).

The work grows with S so that every row lasts about the same: `--rounds` rounds of S requests each
(answers: questions x choices x 2 turns; judge: answer files x questions x 2 turns). A step's fixed
costs (reading the questions, checking the files, and for the judge its first call, which goes alone so
that a wrong key or model costs one call and one line) weigh less the longer it runs: at 24 rounds
they are one round or so of 24.

Usage: python bench/endpoint_throughput.py [--slots 1 8 64] [--latency 1] [--rounds 24]
Needs MTBENCH_DATA_DIR (or the download cache) for the questions.
"""
import argparse, asyncio, json, logging, math, os, platform, subprocess, sys, tempfile, time
from pathlib import Path
from mtbench.records import Answer, load_questions, new_answer_id
from mtbench.store import RecordFile
from mtbench.conversation import generate_answers
from mtbench.backends import EndpointBackend, listify
from mtbench.judging import judge_answers, Watch
from mtbench.settings import Generation, JudgeSettings, Selection

SERVER = """import json, sys, time
from mtbench.testing import FakeChatServer
srv = FakeChatServer(slots=int(sys.argv[1]), latency=float(sys.argv[2])).__enter__()
print(srv.base_url, flush=True)
for line in sys.stdin: # 'log': the times requests arrived, since the last 'log'
    print(json.dumps([r['t'] for r in srv.log]), flush=True); srv.log.clear()
"""

class Server:
    "A FakeChatServer in a child process: `base_url`, and `arrivals()` (monotonic times of the requests since the last call)."
    def __init__(self, slots, latency):
        self.p = subprocess.Popen([sys.executable, '-c', SERVER, str(slots), str(latency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.base_url = self.p.stdout.readline().strip()
    def arrivals(self):
        self.p.stdin.write('log\n'); self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())
    def close(self): self.p.kill(); self.p.wait()

class Waves(EndpointBackend):
    "The endpoint backend as it was: no `run_asking`, so the answers go in waves, one per turn (each wave sent all at once)."
    run_asking = None
    def generate(self, conversations, temperature, max_new_tokens=1024, seed=0):
        asks = list(zip(conversations, listify(temperature, len(conversations)), listify(seed, len(conversations))))
        return list(EndpointBackend.run_asking(self, lambda ask: asyncio.gather(*[ask(c, t, s) for c, t, s in asks]), max_new_tokens))

def answers_step(srv, slots, n_req, waves=False):
    "Answer n_req/2 two-turn conversations (questions x choices); returns (requests, seconds)."
    per_q = 2
    nq = min(80, max(1, n_req // per_q))
    choices = max(1, math.ceil(n_req / (per_q*nq)))
    qs = load_questions()[:nq]
    with tempfile.TemporaryDirectory() as d:
        be = (Waves if waves else EndpointBackend)(srv.base_url, 'served', concurrency=slots, model_id='m')
        t0 = time.perf_counter()
        info = generate_answers(be, qs, d, Generation(concurrency=slots, num_choices=choices, max_new_tokens=64), progress=False)
        dt = time.perf_counter() - t0
    assert info['failed'] == 0, info
    return nq*choices*per_q, dt

class _Quiet:
    "A progress bar that shows nothing."
    def __init__(self, *a, **kw): pass
    def __enter__(self): return self
    def __exit__(self, *a): pass
    def __getattr__(self, k): return lambda *a, **kw: None

def judge_step(srv, slots, n_req):
    "Judge n_req single judgments (answer files x questions x 2 turns); returns (requests, seconds)."
    nq = min(80, max(1, n_req // 2)); files = max(1, math.ceil(n_req / (2*nq)))
    qs = load_questions()[:nq]
    with tempfile.TemporaryDirectory() as d:
        for k in range(files):
            f = RecordFile(Path(d)/'model_answer'/f'm{k}.jsonl', Answer)
            for q in qs: f.append(Answer(q.question_id, new_answer_id(), f'm{k}', [{'index': 0, 'turns': [f'answer {k} to turn 1', f'answer {k} to turn 2']}], time.time()))
        t0 = time.perf_counter()
        s = judge_answers(d, None, JudgeSettings(judge='served-judge', judge_base_url=srv.base_url, judge_concurrency=slots, judge_price=(0, 0)),
                          Selection(question_ids=[q.question_id for q in qs]), watch=Watch(progress=_Quiet))
        dt = time.perf_counter() - t0
    assert s['total']['judgments'] == files*nq*2 and not s['total'].get('failed'), s['total']
    return files*nq*2, dt

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--slots', type=int, nargs='+', default=[1, 8, 64])
    p.add_argument('--latency', type=float, default=1.0, help="seconds the server takes per request")
    p.add_argument('--rounds', type=int, default=24, help='requests per step, in rounds of S')
    p.add_argument('--no-waves', action='store_true', help='skip the old way of answering')
    a = p.parse_args()
    logging.getLogger('mtbench').setLevel(logging.WARNING)
    os.environ.setdefault('OPENAI_API_KEY', 'none-needed-on-loopback')
    print(f"{platform.node()}: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; server latency {a.latency} s")
    print(f"{'step':<16} {'slots':>5} {'requests':>8} {'wall s':>7} {'bound s':>7} {'first 0.25 s':>12} {'efficiency':>10}")
    steps = [('answers', lambda s, S, n: answers_step(s, S, n)), ('judge', judge_step)]
    if not a.no_waves: steps.insert(0, ('answers (waves)', lambda s, S, n: answers_step(s, S, n, waves=True)))
    for S in a.slots:
        for name, fn in steps:
            srv = Server(S, a.latency)
            try:
                srv.arrivals()
                n, dt = fn(srv, S, a.rounds*S)
                t = sorted(srv.arrivals())
            finally: srv.close()
            bound = n * a.latency / S
            first = sum(1 for x in t if x - t[0] <= 0.25)
            print(f"{name:<16} {S:>5} {n:>8} {dt:>7.2f} {bound:>7.2f} {first:>12} {bound/dt:>10.2f}", flush=True)

if __name__ == '__main__': main()
