"""Run the notebooks' tests as `nbdev_test` does and report line coverage of mtbench/*.py per module.

`nbdev_test` runs each notebook's cells in an execnb shell, so the library's functions are defined from the
exported cells' own text: a coverage tool sees `<ipython-input>` code and never mtbench/*.py. This runner
calls nbdev's own `test_nb` on each notebook (same `tst_flags` skips, `#| eval: false`, working folder and
shell), with one change: an exported cell runs from its text in the module file that `nbdev_export` wrote for
it, compiled under that file's name at the same line numbers and executed in the notebook's namespace, exactly
where and as the cell itself would run. (CI checks that the module files are in step with the notebooks before
this runs.) So a line of mtbench/*.py counts as covered only when a test really executed it: in the notebook's
own process, in a later notebook that imports the module, or in a subprocess a test starts (coverage's
`patch = subprocess`).

The process model is `nbdev_test`'s, which README tells people to run: a pool of worker processes (fastcore's
`parallel`), each running one notebook after another, the next one from a common queue whenever it is free. A
notebook's tests therefore run after whatever its worker ran before, and anything one notebook leaves in the
process (a logging filter, a module's registry or cache, an environment variable, a patched class) meets the
next: a test that depends on it fails here as it would under `nbdev_test`. The queue's order is a seeded
shuffle, a new one every run (`--seed` repeats one), kept to orders whose schedule, simulated with the seconds
each notebook took last time (`.ci/nb_seconds.json`), ends within 5% of longest-first's, so the shuffle costs
no time. The end lists what each worker ran, in order, and a failure prints the command that replays its
worker's sequence in one process (`--in-order --n-workers 1`).

Usage, from the repository root: `python .ci/nbcov.py [NOTEBOOK ...]` (default: every notebook).
It prints each notebook's result as it ends (with the traceback of a failure), the coverage table, and
last 'notebooks: N passed, N failed'; it exits 1 if a notebook failed. `--flags FLAGS` runs the cells of those
flags too, as `nbdev_test --flags` does; `--force NOTEBOOK=FLAGS` does so in one notebook only (CI runs
02d_engines' `slow` cells, the real llama-server's, this way).

Each worker gets `OMP_NUM_THREADS` = cores / workers (unless it is set): PyTorch's threads of two notebooks at
once would otherwise oversubscribe the cores (two notebooks, idle, 129 s -> 119 s; more where both start model
servers). `--times FILE` writes this run's seconds there (`--times .ci/nb_seconds.json` after a full run, to
keep the simulated schedule current).
`--cell-times FILE` appends each code cell's seconds there (JSON lines) and lists the slowest cells at the end: where a
slow CI spends its time. `--no-coverage` runs the workers without coverage (as `nbdev_test` does): faster where tests start Python subprocesses
(coverage's `patch = subprocess` traces each of them, llama.cpp's converter and `transformers serve` included).
"""
import __future__, argparse, ast, heapq, json, math, os, random, re, shlex, shutil, subprocess, sys, tempfile, threading, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RCFILE = HERE/'coveragerc'
_HEADER = re.compile(r'^# %% (\S+\.ipynb) #(\S+)\s*$')

def exported_chunks(lib_path):
    "{(notebook path, cell id): (module file, first line, text)} for every exported cell in `lib_path`."
    chunks = {}
    for py in sorted(Path(lib_path).rglob('*.py')):
        lines = py.read_text(encoding='utf-8').splitlines(True)
        heads = [(i, m) for i, l in enumerate(lines) if (m := _HEADER.match(l)) or l.startswith('# %% ')]
        for k, (i, m) in enumerate(heads):
            if not m: continue  # nbdev's own `# %% auto` cell (`__all__`)
            end = heads[k+1][0] if k+1 < len(heads) else len(lines)
            nb = (py.parent/m.group(1)).resolve()
            chunks[(nb, m.group(2))] = (py.resolve(), i+2, ''.join(lines[i+1:end]))
    return chunks

def _future_flags(tree):
    "Compiler flags of the `from __future__ import ...` statements in `tree`."
    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == '__future__':
            for a in node.names: flags |= getattr(__future__, a.name).compiler_flag
    return flags

def _patch_shell(current):
    "Make execnb's shell run an exported cell of the notebook under test from its module file; `current` holds that notebook's chunks."
    from execnb.shell import CaptureShell
    plain_cell, times = CaptureShell.cell, os.environ.get('NBCOV_CELL_TIMES')
    def cell(self, c, *args, **kwargs):
        t0 = time.monotonic()
        try: return run_cell(self, c, *args, **kwargs)
        finally:
            if times and c.cell_type == 'code':
                with open(times, 'a') as f: f.write(json.dumps({'notebook': current_nb[0], 'cell': c.get('id'), 'secs': round(time.monotonic() - t0, 2),
                                                                 'first_line': (c.source.splitlines() or [''])[0][:100]}) + '\n')
    def run_cell(self, c, *args, **kwargs):
        chunk = current.get(c.get('id')) if c.cell_type == 'code' else None
        if chunk is None: return plain_cell(self, c, *args, **kwargs)
        fn, first, text = chunk
        tree = ast.parse('\n'*(first-1) + text, str(fn))  # the module file's own line numbers
        flags = self.compile.flags | _future_flags(tree)   # `from __future__` carries over, as between cells
        self.compile.flags = flags
        code = compile(tree, str(fn), 'exec', flags=flags, dont_inherit=True)
        def run_chunk():
            ns = self.user_ns
            had, old = '__package__' in ns, ns.get('__package__')
            ns['__package__'] = pkg  # nbdev_export made the cell's `from mtbench.data import ...` relative
            try: exec(code, ns)
            finally:
                if had: ns['__package__'] = old
                else: ns.pop('__package__', None)
        self.user_ns['__nbcov_run__'] = run_chunk
        src, c.source = c.source, '__nbcov_run__()'
        try: return plain_cell(self, c, *args, **kwargs)
        finally: c.source = src
    from nbdev.config import get_config
    pkg = get_config().lib_path.name
    CaptureShell.cell = cell

current_nb = [''] # the notebook a worker is testing, for --cell-times

def run_worker(cmd_fd, result_fd):
    "A worker process: test the notebooks named on `cmd_fd`, one a line (`path<TAB>flags to force`), in turn; one JSON line of result each on `result_fd`."
    from nbdev.config import get_config
    from nbdev.test import test_nb
    cfg = get_config()
    chunks, current = exported_chunks(cfg.lib_path), {}
    _patch_shell(current)
    os.chdir(cfg.nbs_path)  # where nbdev_test's workers run from (test_nb goes into the notebook's folder and back)
    for fd in (cmd_fd, result_fd): os.set_inheritable(fd, False) # not the tests' subprocesses' (their stdin is /dev/null, as in a pool's worker)
    cmds, results = os.fdopen(cmd_fd), os.fdopen(result_fd, 'w')
    for line in cmds:
        path, _, force = line.rstrip('\n').partition('\t')
        nb = Path(path)
        current.clear(); current.update({cid: v for (p, cid), v in chunks.items() if p == nb}); current_nb[0] = nb.name
        print(f"\n===== nbcov: {nb.name} =====", flush=True)
        ok, secs = test_nb(nb, skip_flags=cfg.tst_flags.split(), force_flags=force.split(), basepath=cfg.config_path)
        sys.stdout.flush(); sys.stderr.flush()
        results.write(json.dumps({'ok': bool(ok), 'secs': secs}) + '\n'); results.flush()

# --- issue 42, #4: how many flagged cells CI skipped (a function of its own; the runner above is another issue's) ---
def flagged_cells(nbs, flags, force=None) -> dict:
    "{flag: code cells carrying it} in notebooks `nbs`, for settings.ini's tst_flags (which nbdev_test skips, less those `force` runs: {notebook: flags}) and `eval: false`."
    counts = dict.fromkeys([*flags, 'eval: false'], 0)
    for nb in nbs:
        ran = (force or {}).get(Path(nb).name, '').split()
        for c in json.loads(Path(nb).read_text())['cells']:
            if c['cell_type'] != 'code': continue
            d = {m.group(1): m.group(2).strip() for m in re.finditer(r'^#\s*\|\s*([\w-]+):?\s*(.*)$', ''.join(c['source']), re.M)}
            for f in flags: counts[f] += f in d and not any(g in d for g in ran)
            counts['eval: false'] += d.get('eval') == 'false'
    return {k: v for k, v in counts.items() if v}

def coverage(*args, data_file):
    return subprocess.run([sys.executable, '-m', 'coverage', *args, f'--rcfile={RCFILE}', f'--data-file={data_file}'],
                          capture_output=True, text=True)

def report_coverage(data, keep=False):
    "Combine the workers' (and their subprocesses') data and print the line coverage of mtbench/ per module."
    r = coverage('combine', data_file=data)
    bad = re.search(r'(\d+) files? errored', r.stdout + r.stderr)
    if r.returncode and not bad: print(r.stdout + r.stderr)
    r = coverage('report', data_file=data)
    print("\nLine coverage of mtbench/ by the notebooks' tests, per module"
          + (f" ({bad.group(1)} data file(s) of processes the tests kill on purpose left out)" if bad else '') + ':')
    print(r.stdout + r.stderr)
    if not keep: shutil.rmtree(data.parent, ignore_errors=True)

def makespan(order, n_workers, secs):
    "When the last worker would finish `order`, each taking the next notebook when free, with `secs(nb)` each."
    free = [0.0]*n_workers
    for nb in order: heapq.heappush(free, heapq.heappop(free) + secs(nb))
    return max(free)

def shuffled(nbs, n_workers, last, seed, slack=0.05, tries=20000):
    "`nbs` in a random order (from `seed`) whose simulated schedule ends within `slack` of longest-first's (longest-first if none is found)."
    known = [v for v in last.values() if v]
    secs = lambda nb: last.get(nb.name) or max(known, default=60) # a notebook not timed yet: taken for a long one
    lpt = sorted(nbs, key=lambda nb: -secs(nb))
    best, rng = makespan(lpt, n_workers, secs), random.Random(seed)
    for _ in range(tries):
        order = list(nbs); rng.shuffle(order)
        if makespan(order, n_workers, secs) <= best*(1 + slack): return order
    return lpt

class Worker:
    "One worker process (under coverage) and what it ran."
    def __init__(self, k, data, lib_path, root, env, logdir):
        self.k, self.ran = k, []
        cov = [] if data is None else ['-m', 'coverage', 'run', f'--rcfile={RCFILE}', f'--data-file={data}', f'--source={lib_path}']
        (cr, cw), (rr, rw) = os.pipe(), os.pipe()
        self.log_path = Path(logdir)/f'worker{k}.log'
        self.log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen([sys.executable, *cov, __file__, '--worker', f'{cr},{rw}'], stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                     pass_fds=(cr, rw), cwd=root, env=env)
        os.close(cr); os.close(rw)
        self.cmds, self.results = os.fdopen(cw, 'w'), os.fdopen(rr)
    def test(self, nb, force):
        "Test `nb` in this worker: (passed, seconds, its output), or None if the worker died (its output in `self.died`)."
        start = self.log_path.stat().st_size
        self.ran.append(nb)
        try: self.cmds.write(f'{nb}\t{force}\n'); self.cmds.flush(); line = self.results.readline()
        except (BrokenPipeError, OSError): line = ''
        self.log.flush()
        with open(self.log_path, 'rb') as f: f.seek(start); out = f.read().decode('utf-8', 'replace')
        if not line: self.proc.wait(); return None, out + f'\n(the worker process ended with status {self.proc.returncode})'
        r = json.loads(line)
        return (r['ok'], r['secs']), out
    def close(self, timeout=120):
        "End the worker (its coverage data is written as it exits)."
        try: self.cmds.close()
        except OSError: pass
        try: self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            print(f"worker {self.k} did not exit within {timeout} s of its last notebook (a thread a test left running?): killed, its coverage data lost", flush=True)
            self.proc.kill(); self.proc.wait()
        self.results.close(); self.log.close()

def main():
    os.environ.setdefault('MTBENCH_CACHE_DIR', tempfile.mkdtemp(prefix='mtbench-cache-')) # the judge cache (mtbench.cache): empty for each test run, never the user's
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('notebooks', nargs='*', help='notebooks to test (default: all that nbdev_test runs)')
    p.add_argument('--n-workers', type=int, default=min(os.cpu_count() or 1, 8), help="worker processes (nbdev_test's default)")
    p.add_argument('--seed', type=int, help='seed of the shuffled order (default: a new one, printed)')
    p.add_argument('--in-order', action='store_true', help='take the notebooks in the order given (to replay a sequence)')
    p.add_argument('--flags', default='', help="space-separated test flags whose cells run too, in every notebook (nbdev_test's --flags)")
    p.add_argument('--force', action='append', default=[], metavar='NOTEBOOK=FLAGS', help="flags whose cells run too in one notebook, e.g. 02d_engines.ipynb=slow")
    p.add_argument('--data-file', help="keep the coverage data here, e.g. for `coverage report -m --data-file=...`")
    p.add_argument('--no-coverage', action='store_true', help="run the tests without measuring coverage (as nbdev_test does)")
    p.add_argument('--times', help="write each notebook's seconds to this JSON file")
    p.add_argument('--cell-times', help="append each code cell's seconds to this file (JSON lines: notebook, cell, secs, first_line); the slowest are listed at the end")
    p.add_argument('--worker', help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker: return run_worker(*map(int, a.worker.split(',')))

    from nbdev.config import get_config
    from nbdev.doclinks import nbglob
    cfg = get_config()
    nbs = [Path(n).resolve() for n in a.notebooks] or sorted(nbglob(cfg.nbs_path, as_path=True).map(Path.resolve))
    force = {}
    for f in a.force:
        name, _, flags = f.partition('=')
        if not any(nb.name == name for nb in nbs): p.error(f"--force {f}: no notebook {name} in this run")
        force[name] = flags
    data = Path(a.data_file).resolve() if a.data_file else Path(tempfile.mkdtemp(prefix='nbcov_'))/'.coverage'
    data.parent.mkdir(parents=True, exist_ok=True)
    for f in data.parent.glob(data.name + '*'): f.unlink() # no data of an earlier run
    logdir = Path(tempfile.mkdtemp(prefix='nbcov_logs_'))
    cov = None if a.no_coverage else data

    last = json.loads((HERE/'nb_seconds.json').read_text()) if (HERE/'nb_seconds.json').exists() else {}
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(10**6)
    n_workers = max(1, min(a.n_workers, len(nbs)))
    order = nbs if a.in_order else shuffled(nbs, n_workers, last, seed)
    print(f"{len(order)} notebooks, {n_workers} worker processes, " + ('in the order given' if a.in_order else f'order of seed {seed} (--seed {seed} repeats it)')
          + ': ' + ' '.join(nb.stem for nb in order), flush=True)
    # each worker's PyTorch (and the servers its tests start) gets its share of the cores: two notebooks each running
    # as many threads as there are cores oversubscribe them, and OpenMP's waiting threads then burn the time they wait
    env = {'OMP_NUM_THREADS': str(max(1, (os.cpu_count() or 1)//n_workers)), **os.environ, **({'NBCOV_CELL_TIMES': str(Path(a.cell_times).resolve())} if a.cell_times else {})}
    queue, lock, took, ok, workers = list(order), threading.Lock(), {}, {}, []

    def replay(w):
        names = ' '.join(shlex.quote(os.path.relpath(nb, cfg.config_path)) for nb in w.ran)
        fl = ''.join(f' --force {shlex.quote(n + "=" + f)}' for n, f in force.items() if any(nb.name == n for nb in w.ran))
        return f"python .ci/nbcov.py --in-order --n-workers 1{fl}{' --flags ' + shlex.quote(a.flags) if a.flags else ''} {names}"

    def run(k):
        w = Worker(k, cov, cfg.lib_path, cfg.config_path, env, logdir); workers.append(w)
        while True:
            with lock:
                if not queue: break
                nb = queue.pop(0)
            res, out = w.test(nb, ' '.join([a.flags, force.get(nb.name, '')]).strip())
            secs = res[1] if res else math.nan
            passed = bool(res and res[0])
            took[nb.name], ok[nb] = secs, passed
            before = [x.stem for x in w.ran[:-1]]
            print(f"{nb.name}: {'passed' if passed else 'FAILED'} in {secs:.0f} s (worker {k}" + (f", after {', '.join(before)})" if before else ', first)'), flush=True)
            if not passed:
                print(out[-20000:], flush=True)
                print(f"replay this worker's sequence in one process: {replay(w)}", flush=True)
            if res is None: # the worker died: a fresh one for the rest
                w.close(); w = Worker(k, cov, cfg.lib_path, cfg.config_path, env, logdir); workers.append(w)
        w.close()

    start = time.time()
    threads = [threading.Thread(target=run, args=(k,)) for k in range(1, n_workers+1)]
    for t in threads: t.start()
    for t in threads: t.join()
    secs = time.time() - start
    print('\nEach worker process ran, in order:')
    for w in sorted(workers, key=lambda w: w.k): print(f"  worker {w.k}: {' '.join(nb.stem for nb in w.ran)}")
    if a.times: Path(a.times).write_text(json.dumps({k: round(v) for k, v in sorted(took.items()) if not math.isnan(v)}, indent=0) + '\n')
    if a.cell_times and Path(a.cell_times).exists():
        cells = sorted((json.loads(l) for l in Path(a.cell_times).read_text().splitlines()), key=lambda r: -r['secs'])
        print(f"\nThe slowest cells (of {len(cells)}, {sum(r['secs'] for r in cells):.0f} s in all; every cell in {a.cell_times}):")
        for r in cells[:12]: print(f"  {r['secs']:6.1f} s  {r['notebook']} cell {r['cell']}: {r['first_line']}")
    if cov is not None: report_coverage(data, keep=bool(a.data_file))
    else: print("\nLine coverage: not measured (--no-coverage)")
    skipped = flagged_cells(nbs, cfg.tst_flags.split(), force) # issue 42, #4: no flagged cell skipped unnoticed
    print(f"flagged cells skipped: {sum(skipped.values())} ({', '.join(f'{k} {v}' for k, v in skipped.items()) or 'none'}); run them with nbdev_test --flags")
    shutil.rmtree(logdir, ignore_errors=True)
    print(f"tests took {secs:.0f} s")
    n_ok = sum(ok.values())
    print(f"notebooks: {n_ok} passed, {len(ok) - n_ok} failed")
    sys.exit(0 if n_ok == len(ok) == len(order) else 1)

if __name__ == '__main__': main()
