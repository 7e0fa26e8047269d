"""Run the notebooks' tests as `nbdev_test` does and report line coverage of mtbench/*.py per module.

`nbdev_test` runs each notebook's cells in an execnb shell, so the library's functions are defined from the
exported cells' own text: a coverage tool sees `<ipython-input>` code and never mtbench/*.py. This runner
calls nbdev's own `test_nb` on each notebook (same `tst_flags` skips, `#| eval: false`, working folder and
shell, one process per notebook, as many at a time as `nbdev_test`), with one change: an exported cell runs
from its text in the module file that `nbdev_export` wrote for it, compiled under that file's name at the
same line numbers and executed in the notebook's namespace, exactly where and as the cell itself would run.
(CI checks that the module files are in step with the notebooks before this runs.) So a line of
mtbench/*.py counts as covered only when a test really executed it: in the notebook's own process, in a
later notebook that imports the module, or in a subprocess a test starts (coverage's `patch = subprocess`).

Usage, from the repository root: `python .ci/nbcov.py [NOTEBOOK ...]` (default: every notebook).
It prints each notebook's result as it ends (with the traceback of a failure), the coverage table, and
last 'notebooks: N passed, N failed'; it exits 1 if a notebook failed.

Each notebook's process gets `OMP_NUM_THREADS` = cores / workers (unless it is set): PyTorch's threads of two
notebooks at once would otherwise oversubscribe the cores (two notebooks, idle, 129 s -> 119 s; more where both
start model servers). The notebooks start longest first, by the seconds each took last time (`.ci/nb_seconds.json`; a notebook not
listed there starts first, as it may be long): with two workers, a long notebook started last would run alone
at the end. `--times FILE` writes this run's seconds there (`--times .ci/nb_seconds.json` after a full run, to
keep the order current).
"""
import __future__, argparse, ast, json, math, os, re, shutil, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
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

def run_one(nb):
    "Test notebook `nb` with nbdev's `test_nb`, its exported cells run from the module files; exit 1 on failure."
    from execnb.shell import CaptureShell
    from nbdev.config import get_config
    from nbdev.test import test_nb
    cfg = get_config()
    nb = Path(nb).resolve()
    chunks = {cid: v for (path, cid), v in exported_chunks(cfg.lib_path).items() if path == nb}
    pkg = cfg.lib_path.name
    plain_cell = CaptureShell.cell

    def cell(self, c, *args, **kwargs):
        chunk = chunks.get(c.get('id')) if c.cell_type == 'code' else None
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

    CaptureShell.cell = cell
    os.chdir(cfg.nbs_path)  # where nbdev_test runs from
    ok, secs = test_nb(nb, skip_flags=cfg.tst_flags.split(), basepath=cfg.config_path)
    sys.exit(0 if ok else 1)

# --- issue 42, #4: how many flagged cells CI skipped (a function of its own; the runner above is another issue's) ---
def flagged_cells(nbs, flags) -> dict:
    "{flag: code cells carrying it} in notebooks `nbs`, for settings.ini's tst_flags (which nbdev_test skips) and `eval: false`."
    counts = dict.fromkeys([*flags, 'eval: false'], 0)
    for nb in nbs:
        for c in json.loads(Path(nb).read_text())['cells']:
            if c['cell_type'] != 'code': continue
            d = {m.group(1): m.group(2).strip() for m in re.finditer(r'^#\s*\|\s*([\w-]+):?\s*(.*)$', ''.join(c['source']), re.M)}
            for f in flags: counts[f] += f in d
            counts['eval: false'] += d.get('eval') == 'false'
    return {k: v for k, v in counts.items() if v}

def coverage(*args, data_file):
    return subprocess.run([sys.executable, '-m', 'coverage', *args, f'--rcfile={RCFILE}', f'--data-file={data_file}'],
                          capture_output=True, text=True)

def main():
    os.environ.setdefault('MTBENCH_CACHE_DIR', tempfile.mkdtemp(prefix='mtbench-cache-')) # the judge cache (mtbench.cache): empty for each test run, never the user's
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('notebooks', nargs='*', help='notebooks to test (default: all that nbdev_test runs)')
    p.add_argument('--n-workers', type=int, default=min(os.cpu_count() or 1, 8), help="notebooks at a time (nbdev_test's default)")
    p.add_argument('--data-file', help="keep the coverage data here, e.g. for `coverage report -m --data-file=...`")
    p.add_argument('--times', help="write each notebook's seconds to this JSON file")
    p.add_argument('--one', help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one: return run_one(a.one)

    from nbdev.config import get_config
    from nbdev.doclinks import nbglob
    cfg = get_config()
    nbs = [Path(n).resolve() for n in a.notebooks] or sorted(nbglob(cfg.nbs_path, as_path=True).map(Path.resolve))
    data = Path(a.data_file).resolve() if a.data_file else Path(tempfile.mkdtemp(prefix='nbcov_'))/'.coverage'
    data.parent.mkdir(parents=True, exist_ok=True)
    for f in data.parent.glob(data.name + '*'): f.unlink() # no data of an earlier run

    last = json.loads((HERE/'nb_seconds.json').read_text()) if (HERE/'nb_seconds.json').exists() else {}
    nbs.sort(key=lambda nb: -last.get(nb.name, math.inf)) # longest first (sort is stable: name order among equals)
    took = {}
    # each notebook's PyTorch (and the servers its tests start) gets its share of the cores: two notebooks each running
    # as many threads as there are cores oversubscribe them, and OpenMP's waiting threads then burn the time they wait
    env = {'OMP_NUM_THREADS': str(max(1, (os.cpu_count() or 1)//a.n_workers)), **os.environ}
    def test(nb):
        start = time.time()
        r = subprocess.run([sys.executable, '-m', 'coverage', 'run', f'--rcfile={RCFILE}', f'--data-file={data}',
                            f'--source={cfg.lib_path}', __file__, '--one', str(nb)], capture_output=True, text=True, cwd=cfg.config_path, env=env)
        secs = took[nb.name] = time.time() - start
        print(f"{nb.name}: {'passed' if r.returncode == 0 else 'FAILED'} in {secs:.0f} s", flush=True)
        if r.returncode: print(r.stdout[-20000:] + r.stderr[-20000:], flush=True)
        return r.returncode == 0

    start = time.time()
    with ThreadPoolExecutor(a.n_workers) as ex: ok = list(ex.map(test, nbs))
    secs = time.time() - start
    if a.times: Path(a.times).write_text(json.dumps({k: round(v) for k, v in sorted(took.items())}, indent=0) + '\n')
    r = coverage('combine', data_file=data)
    bad = re.search(r'(\d+) files? errored', r.stdout + r.stderr)
    if r.returncode and not bad: print(r.stdout + r.stderr)
    r = coverage('report', data_file=data)
    print("\nLine coverage of mtbench/ by the notebooks' tests, per module"
          + (f" ({bad.group(1)} data file(s) of processes the tests kill on purpose left out)" if bad else '') + ':')
    print(r.stdout + r.stderr)
    if not a.data_file: shutil.rmtree(data.parent, ignore_errors=True)
    skipped = flagged_cells(nbs, cfg.tst_flags.split()) # issue 42, #4: no flagged cell skipped unnoticed
    print(f"flagged cells skipped: {sum(skipped.values())} ({', '.join(f'{k} {v}' for k, v in skipped.items()) or 'none'}); run them with nbdev_test --flags")
    print(f"tests took {secs:.0f} s")
    print(f"notebooks: {sum(ok)} passed, {len(ok) - sum(ok)} failed")
    sys.exit(0 if all(ok) else 1)

if __name__ == '__main__': main()
