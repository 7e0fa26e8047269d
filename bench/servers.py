"""Several servers for one model or judge, and the judge cache across runs, measured in one run (issue 35).

Loopback stand-ins (`mtbench.testing.FakeChatServer`, each in a process of its own so that it does not share
mtbench's interpreter) work on at most SLOTS requests at once and take LATENCY seconds for each. N of them
together can do at most N x SLOTS / LATENCY requests per second: the joint bound. With 1, 2 and 4 servers the
script sends

- answers through the endpoint backend (`EndpointBackend` with all N URLs, `concurrency` SLOTS per server), and
- judgments through `judge_answers` (`judge_base_url` all N URLs, `judge_concurrency` SLOTS per server, cache off),

ROUNDS rounds of N x SLOTS requests each, and prints

    efficiency = (requests answered / wall seconds) / (N x SLOTS / LATENCY)

(target: 0.90 or more). The stand-ins list the judge at `GET /models`, as OpenAI, vLLM and llama-server do, so the judge's
first call is proven by that free listing and all slots start at once (a server without the listing sees its
first call alone, so that a wrong key costs one call: one round of ROUNDS).
Then, with 2 servers, one is killed after it received KILL requests: the run must complete with every
judgment made and none paid twice (the servers' paid requests = the judgments). Last, that finished run's
answers are judged again in a new folder (cache on, in a temporary cache folder): 0 requests reach the servers.

Usage: python bench/servers.py [--slots 8] [--latency 1] [--rounds 10] [--kill 12]
Needs MTBENCH_DATA_DIR (or the download cache) for the questions. About a minute.
"""
import argparse, json, logging, math, os, platform, shutil, subprocess, sys, tempfile, time
from pathlib import Path
from mtbench.records import Answer, load_questions
from mtbench.store import RecordFile
from mtbench.backends import EndpointBackend
from mtbench.judging import judge_answers
from mtbench.settings import JudgeSettings, Selection

SERVER = """import json, sys
from mtbench.testing import FakeChatServer
srv = FakeChatServer(slots=int(sys.argv[1]), latency=float(sys.argv[2]), models=['stand-in']).__enter__()
if int(sys.argv[3]): srv.kill_after(int(sys.argv[3]))
print(srv.base_url, flush=True)
for line in sys.stdin: # 'count': requests received, paid (answered) and killed, and model listings, since the last 'count'
    print(json.dumps(dict(received=len(srv.log), paid=srv.paid, killed=srv.count(reason='killed'), listed=srv.listed)), flush=True); srv.log.clear(); srv.listed = 0
"""

class Servers:
    "N stand-in servers, each in its own process; `count()` their requests since the last count."
    def __init__(self, n, slots, latency, kill_first=0): self.args = [(slots, latency, kill_first if i == 0 else 0) for i in range(n)]
    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, '-c', SERVER, *map(str, a)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                      for a in self.args]
        self.urls = [p.stdout.readline().strip() for p in self.procs]
        return self
    def count(self) -> list:
        for p in self.procs: p.stdin.write('count\n'); p.stdin.flush()
        return [json.loads(p.stdout.readline()) for p in self.procs]
    def __exit__(self, *exc):
        for p in self.procs: p.kill(); p.wait()

def write_answers(folder, models, qids):
    for m in models:
        f = RecordFile(Path(folder)/'model_answer'/f'{m}.jsonl', Answer)
        for q in qids: f.append(Answer(q, f'{m}-{q}', m, [{'index': 0, 'turns': [f'{m} answers {q}, turn one.', f'{m} answers {q}, turn two.']}], time.time()))

def plan(judgments, qids):
    "Models and questions for about `judgments` single judgments (2 turns a question)."
    models = math.ceil(judgments/(2*len(qids)))
    return [f'model{i}' for i in range(models)], qids[:math.ceil(judgments/(2*models))]

def answers_step(srv, slots, n_req):
    be = EndpointBackend(' '.join(srv.urls), 'stand-in', concurrency=slots, timeout=60)
    t0 = time.monotonic(); out = be.generate([[{'role': 'user', 'content': f'question {i}'}] for i in range(n_req)], 0.0, 64)
    dt = time.monotonic() - t0
    assert sum(c.error is None for c in out) == n_req, [c.error for c in out if c.error][:3]
    return n_req, dt, be.served

def judge_step(srv, slots, n_req, qids, work, cache='off'):
    models, q = plan(n_req, qids)
    folder = Path(tempfile.mkdtemp(dir=work)); write_answers(folder, models, q)
    j = JudgeSettings(judge='stand-in', judge_base_url=' '.join(srv.urls), judge_concurrency=slots, judge_price=(0.0, 0.0), cache=cache)
    t0 = time.monotonic(); s = judge_answers(folder, models, j, Selection(question_ids=q))
    return s, time.monotonic() - t0, folder

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--slots', type=int, default=8); ap.add_argument('--latency', type=float, default=1.0)
    ap.add_argument('--rounds', type=int, default=10); ap.add_argument('--kill', type=int, default=12)
    a = ap.parse_args()
    logging.getLogger('mtbench').setLevel(logging.WARNING); os.environ.setdefault('TQDM_DISABLE', '1')
    work = Path(tempfile.mkdtemp(prefix='mtbench-bench-servers-'))
    os.environ['MTBENCH_CACHE_DIR'] = str(work/'cache') # never the user's cache
    qids = sorted(q.question_id for q in load_questions())
    print(f"{platform.node()}, {os.cpu_count()} CPUs; stand-ins of {a.slots} slots and {a.latency:g} s a request, {a.rounds} rounds")
    print(f"{'servers':>7}  {'bound req/s':>11}  {'answers req/s':>13}  {'efficiency':>10}  {'judging req/s':>13}  {'efficiency':>10}  calls per server (judging)")
    ok = True
    try:
        for n in (1, 2, 4):
            bound, n_req = n*a.slots/a.latency, a.rounds*n*a.slots
            with Servers(n, a.slots, a.latency) as srv:
                na, dta, _ = answers_step(srv, a.slots, n_req); srv.count()
                s, dtj, _ = judge_step(srv, a.slots, n_req, qids, work)
                got = srv.count()
            ea, ej = na/dta/bound, s['calls_made']/dtj/bound
            ok &= min(ea, ej) >= 0.9 and s['total']['judgments'] == s['judgments'] and sum(g['paid'] for g in got) == s['calls_made']
            print(f"{n:>7}  {bound:>11.1f}  {na/dta:>13.1f}  {ea:>10.2f}  {s['calls_made']/dtj:>13.1f}  {ej:>10.2f}  {list(s['servers'].values())}")
        with Servers(2, a.slots, a.latency, kill_first=a.kill) as srv: # one server dies mid-run
            s, dt, folder = judge_step(srv, a.slots, 4*2*a.slots, qids, work, cache='use')
            got = srv.count()
            paid, done = sum(g['paid'] for g in got), s['total']['judgments'] - s['total'].get('failed', 0)
            print(f"server killed after {a.kill} requests: {s['total']['judgments']} of {s['judgments']} judgments made, {s['total'].get('failed', 0)} failed, "
                  f"{paid} requests paid for {done} judgments, {got[0]['killed']} dropped by the killed server; calls per server {list(s['servers'].values())}")
            ok &= done == s['judgments'] and paid == done and got[0]['killed'] > 0
            again = Path(tempfile.mkdtemp(dir=work)); shutil.copytree(folder/'model_answer', again/'model_answer') # the finished run judged again, in a new folder
            models = sorted(p.stem for p in (again/'model_answer').glob('*.jsonl'))
            qs = sorted({json.loads(l)['question_id'] for l in (again/'model_answer'/f'{models[0]}.jsonl').open()})
            j = JudgeSettings(judge='stand-in', judge_base_url=' '.join(srv.urls), judge_concurrency=a.slots, judge_price=(0.0, 0.0))
            s2 = judge_answers(again, models, j, Selection(question_ids=qs))
            calls = sum(g['received'] + g['listed'] for g in srv.count())
        print(f"the finished run judged again in a new folder: {s2['total']['judgments']} judgments, {s2['from_cache']} from the cache, {calls} requests reached the servers (calls or model listings)")
        ok &= calls == 0 and s2['from_cache'] == s2['judgments']
    finally: shutil.rmtree(work, ignore_errors=True)
    print('all checks met' if ok else 'SOME CHECKS NOT MET (efficiency below 0.90, a judgment missing or paid twice, or calls on the re-judge)')
    sys.exit(0 if ok else 1)

if __name__ == '__main__': main()
