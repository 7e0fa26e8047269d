"""The report page (results/report.html, `mtbench.report`): its size and how fast it is ready in Chromium.

Two runs: FastChat's six Mamba-in-Llama checkpoints with GPT-4's 960 judgments (../shared/fastchat_runs/mamba-in-llama),
and a synthetic run the size of FastChat's published one (30 models x 80 questions, 4,800 judgments; with --pairs also
29 x 160 pairwise lines against the first model), made of the shared run's real answers and judgments (text lengths
as real ones), their scores shifted at random. For each: the time to write the report and the page, the page's size,
and in headless Chromium (Playwright; Debian's chromium or Playwright's own): the time from navigation to a page
ready to use (its script's performance.now() when it is done: JSON parsed, the first view drawn), and the time the
questions tab, the side-by-side tab and one filter change take to draw (measured in the page), median of --repeat loads.
Targets (issue 34): the shared run's page under 5 MB and ready within a second; the 30-model page under 30 MB and usable.

    python bench/report_html.py [--pairs] [--repeat 3] [--screenshot nbs/files/report/page.png]
"""
import argparse, json, os, random, shutil, statistics, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

def synthetic_run(src, folder, n_models=30, pairs=False, seed=0):
    "A run of `n_models` models made from the run at `src`: model k has model (k mod 6)'s answers and GPT-4's judgments of them, scores shifted by -2..2."
    rng, folder = random.Random(seed), Path(folder)
    (folder/'model_answer').mkdir(parents=True); (folder/'model_judgment').mkdir()
    files = sorted((Path(src)/'model_answer').glob('*.jsonl'))
    judged = [json.loads(l) for l in open(Path(src)/'model_judgment'/'gpt-4_single.jsonl')]
    names = [f'model-{k:02d}' for k in range(n_models)]
    with open(folder/'model_judgment'/'gpt-4_single.jsonl', 'w') as out:
        for k, m in enumerate(names):
            base = files[k % len(files)].stem
            with open(folder/'model_answer'/f'{m}.jsonl', 'w') as f:
                for line in open(files[k % len(files)]): f.write(json.dumps({**json.loads(line), 'model_id': m}) + '\n')
            for r in judged:
                if r['model'] == base: out.write(json.dumps({**r, 'model': m, 'score': min(10, max(1, r['score'] + rng.choice([-2, -1, 0, 0, 1, 2])))}) + '\n')
    if pairs:
        texts = [r['judgment'] for r in judged]
        with open(folder/'model_judgment'/'gpt-4_pair.jsonl', 'w') as out:
            for m in names[1:]:
                for r in judged[:160]:
                    out.write(json.dumps(dict(question_id=r['question_id'], model_1=m, model_2=names[0], g1_winner=rng.choice(['model_1', 'model_2', 'tie']),
                                              g2_winner=rng.choice(['model_1', 'model_2', 'tie']), judge=['gpt-4', 'pair-v2'], g1_user_prompt='', g1_judgment=rng.choice(texts),
                                              g2_user_prompt='', g2_judgment=rng.choice(texts), turn=r['turn'], tstamp=0.0)) + '\n')
    return folder

def build(folder):
    "Write the report (report.md, plots, the page); (seconds for the whole report, seconds for the page alone, the page)."
    from mtbench.tables import write_report
    from mtbench.report import write_page
    from mtbench.registry import get_benchmark
    t0 = time.perf_counter(); s = write_report(folder); total = time.perf_counter() - t0
    t0 = time.perf_counter(); page = write_page(folder, s, get_benchmark('mt-bench')); alone = time.perf_counter() - t0
    return total, alone, page

def measure(page_path, repeat, screenshot=None):
    "Median over `repeat` fresh loads: ready (ms, from navigation start), questions tab, side-by-side tab, one filter (ms to draw); requests and problems seen."
    from mtbench.testing import in_chromium
    def drive(page, seen):
        rows = []
        for _ in range(repeat):
            page.goto('about:blank'); page.goto(Path(page_path).as_uri())
            page.wait_for_function('document.body.dataset.ready === "1"')
            ready = float(page.evaluate('document.body.dataset.readyMs'))
            page.locator('nav.tabs a[data-view=questions]').click(); q = float(page.evaluate('document.body.dataset.renderMs'))
            page.locator('.controls [name=cat]').select_option('math'); f = float(page.evaluate('document.body.dataset.renderMs'))
            page.locator('nav.tabs a[data-view=side]').click(); s = float(page.evaluate('document.body.dataset.renderMs'))
            rows.append((ready, q, s, f))
        if screenshot:
            page.locator('.card.side summary').first.click(); page.locator('.card.side .qbody').first.wait_for(); page.wait_for_timeout(200)
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
        return [statistics.median(c) for c in zip(*rows)]
    got, seen = in_chromium(drive)
    return got, sorted(set(seen.requests)), seen.problems

def shrink_png(path, colors=128):
    "Quantize a screenshot to a palette PNG: a fraction of the size, still sharp for text."
    from PIL import Image
    Image.open(path).convert('RGB').quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--shared', default=str(ROOT.parent/'shared'/'fastchat_runs'/'mamba-in-llama'), help='the six-model FastChat run')
    p.add_argument('--models', type=int, default=30, help="the synthetic run's models")
    p.add_argument('--pairs', action='store_true', help='also give the synthetic run pairwise lines against its first model')
    p.add_argument('--repeat', type=int, default=3, help='page loads per run (the median is printed)')
    p.add_argument('--screenshot', help="save a screenshot of the shared run's page (side by side, one question open) here")
    a = p.parse_args()
    os.environ.setdefault('MTBENCH_DATA_DIR', str(ROOT.parent/'shared'/'mt_bench'))
    if not Path(a.shared).exists(): raise SystemExit(f"{a.shared}: no such run; give --shared")
    tmp = Path(tempfile.mkdtemp(prefix='mtbench_report_bench_'))
    try:
        runs = [('shared run: 6 models, 960 judgments', shutil.copytree(a.shared, tmp/'shared'), 5e6, a.screenshot),
                (f"synthetic: {a.models} models, {a.models*160} judgments" + (f", {(a.models-1)*160} pair lines" if a.pairs else ''),
                 synthetic_run(a.shared, tmp/'synthetic', a.models, a.pairs), 30e6, None)]
        print(f"{'run':<52} {'report s':>8} {'page s':>7} {'MB':>6} {'MB/target':>9} {'ready ms':>9} {'ready/1 s':>9} {'questions ms':>12} {'side ms':>8} {'filter ms':>9}  requests, problems")
        for name, folder, target, shot in runs:
            total, alone, page = build(folder)
            (ready, q, s, f), reqs, problems = measure(page, a.repeat, shot)
            mb = page.stat().st_size/1e6
            print(f"{name:<52} {total:8.1f} {alone:7.1f} {mb:6.2f} {mb*1e6/target:9.2f} {ready:9.0f} {ready/1000:9.2f} {q:12.1f} {s:8.1f} {f:9.1f}  "
                  f"{len(reqs)} ({'the page only' if reqs == [page.as_uri()] else reqs}), {len(problems)}", flush=True)
            if shot: shrink_png(shot); print(f"  screenshot: {shot} ({Path(shot).stat().st_size//1024} KB)")
    finally: shutil.rmtree(tmp, ignore_errors=True)

if __name__ == '__main__': main()
