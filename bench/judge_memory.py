"""Peak memory of a long judging run: does it grow with the number of judgments?

Each variant judges the 80 MT-bench questions (160 judgments per model) for M models in one
`judge_answers` call, in a child process, against a stand-in OpenAI server on 127.0.0.1
(`mtbench.testing.FakeChatServer`, in this process, answering at once). The answers are realistic in
length: two turns of about LEN characters each (GPT-4's reference answers, repeated), so a judge
prompt is about 2*LEN to 4*LEN characters. The figure printed is the child's peak resident set
size (`ru_maxrss` from `os.wait4`), for 1 model (160 judgments) and for 10 (1,600), then

    growth = peak(1,600) - peak(160)

which is what holding every prompt, answer or reply would add; the rest is Python and the
libraries it imports. With --compare DIR the same runs use another checkout's mtbench (e.g. the main
branch before this change) for a before/after in one run.

Usage: python bench/judge_memory.py [--models 1 10] [--len 4000] [--concurrency 32] [--compare /work/main]
Needs MTBENCH_DATA_DIR (or the download cache) for the questions and reference texts.
"""
import argparse, json, os, subprocess, sys, tempfile, time
from pathlib import Path
from mtbench.records import load_questions, load_reference_answers, new_answer_id
from mtbench.testing import FakeChatServer

CHILD = """import sys, json
from mtbench.judging import judge_answers
from mtbench.settings import JudgeSettings
s = judge_answers(sys.argv[1], None, JudgeSettings(judge='gpt-4.1-nano', judge_base_url=sys.argv[2], judge_concurrency=int(sys.argv[3])))
import mtbench; print(json.dumps(dict(judgments=s['total']['judgments'], calls=s.get('calls_made'), seconds=s['seconds'], mtbench=mtbench.__file__)))
"""

def write_answers(out, models, length):
    "Answer files of `models` models to the 80 questions, each turn about `length` characters of GPT-4's reference texts."
    refs = [r.texts() for r in load_reference_answers().values()]
    (Path(out)/'model_answer').mkdir(parents=True)
    for m in range(models):
        with open(Path(out)/'model_answer'/f'm{m}.jsonl', 'w') as f:
            for i, q in enumerate(load_questions()):
                t1, t2 = refs[(i + m) % len(refs)]
                turns = [(t1 + '\n\n') * (length // max(len(t1), 1) + 1), (t2 + '\n\n') * (length // max(len(t2), 1) + 1)]
                rec = dict(question_id=q.question_id, answer_id=new_answer_id(), model_id=f'm{m}',
                           choices=[{'index': 0, 'turns': [t[:length] + f' (m{m})' for t in turns]}], tstamp=time.time())
                f.write(json.dumps(rec) + '\n')

def peak_rss(models, length, concurrency, pythonpath):
    "Judge `models` models in a child process; returns (its peak RSS in MiB, what it reported)."
    out = tempfile.mkdtemp(prefix='mtbench_mem_')
    write_answers(out, models, length)
    with FakeChatServer() as srv, tempfile.TemporaryFile() as log: # stderr (the progress bar) to a file, as `2> log` would
        env = {**os.environ, 'PYTHONPATH': pythonpath}
        p = subprocess.Popen([sys.executable, '-c', CHILD, out, srv.base_url, str(concurrency)], env=env, cwd=out, # not a checkout's root:
                             stdout=subprocess.PIPE, stderr=log, text=True)                             # PYTHONPATH picks the mtbench
        report = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        srv.log.clear()
    assert status == 0, f'judging failed with status {status}'
    subprocess.run(['rm', '-rf', out])
    return usage.ru_maxrss / 1024, json.loads(report)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models', type=int, nargs='+', default=[1, 10])
    ap.add_argument('--len', type=int, default=4000, help='characters per answer turn')
    ap.add_argument('--concurrency', type=int, default=32)
    ap.add_argument('--compare', default=None, help='another checkout whose mtbench to measure the same way')
    a = ap.parse_args()
    here = str(Path(__file__).resolve().parents[1])
    trees = [('this tree', here)] + ([(f'{a.compare}', a.compare)] if a.compare else [])
    for name, tree in trees:
        peaks = {}
        for m in a.models:
            peaks[m], rep = peak_rss(m, a.len, a.concurrency, tree)
            assert rep['mtbench'].startswith(tree), rep['mtbench']
            print(f"{name}: {rep['judgments']:>5} judgments ({m} models, {rep['calls']} calls, {rep['seconds']:.1f} s): peak RSS {peaks[m]:.0f} MiB")
        if len(peaks) > 1:
            lo, hi = min(a.models), max(a.models)
            print(f"{name}: growth from {160*lo} to {160*hi} judgments: {peaks[hi] - peaks[lo]:+.0f} MiB (x{peaks[hi]/peaks[lo]:.2f})")

if __name__ == '__main__': main()
