"""`nbdev_test` itself, with the notebooks handed to its workers in another order: reversed, or shuffled by a seed.

`nbdev_test` gives fastcore's `parallel` (a pool of worker processes, each testing one notebook after another) the
notebooks in name order, so the same notebooks tend to share a process in the same sequence. A test that passes only
because of what an earlier notebook left in its process passes there by luck; this runs the very same code (nbdev's
`test_nb` through `parallel`, the same flags, workers, working folder and pause) on the list reversed or shuffled, to
find such tests. Usage, from the repository root:

    python .ci/nbtest_order.py --reverse          # the notebooks last to first
    python .ci/nbtest_order.py --seed 7           # a shuffle
    python .ci/nbtest_order.py --reverse --file-glob '0[0-2]*.ipynb'

It prints the order, 'Success.' or the failed notebooks as `nbdev_test` does, and exits 1 on a failure.
"""
import argparse, random, sys
from fastcore.parallel import parallel, num_cpus
from fastcore.xtras import working_directory
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.test import test_nb, _keep_file

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--reverse', action='store_true', help='the notebooks in reverse name order')
    p.add_argument('--seed', type=int, help='shuffle the notebooks with this seed')
    p.add_argument('--path', help='a notebook or folder (default: the notebooks folder, as nbdev_test)')
    p.add_argument('--file-glob', default='*.ipynb', help="only notebooks whose names match (nbdev_test's --file_glob)")
    p.add_argument('--flags', default='', help="test flags to run too (nbdev_test's --flags)")
    p.add_argument('--n-workers', type=int, help="worker processes (nbdev_test's default: min(cpus, 8))")
    a = p.parse_args()
    cfg = get_config()
    files = [f.absolute() for f in sorted(nbglob(a.path, file_glob=a.file_glob, as_path=True)) if _keep_file(f, '.notest')]
    if not files: sys.exit('no notebooks to test')
    if a.reverse: files.reverse()
    if a.seed is not None: random.Random(a.seed).shuffle(files)
    n_workers = a.n_workers if a.n_workers is not None else 0 if len(files) == 1 else min(num_cpus(), 8)
    print('order: ' + ' '.join(f.stem for f in files), flush=True)
    with working_directory(cfg.nbs_path):
        results = parallel(test_nb, files, skip_flags=cfg.tst_flags.split(), force_flags=a.flags.split(), n_workers=n_workers,
                           basepath=cfg.config_path, pause=0.01, do_print=False)
    passed, times = zip(*results)
    for f, ok, t in zip(files, passed, times): print(f"{f.name}: {'passed' if ok else 'FAILED'} in {t:.0f} s")
    if all(passed): print('Success.')
    else:
        print('\nnbdev Tests Failed On The Following Notebooks:\n' + '\n'.join(f'\t{f.name}' for f, ok in zip(files, passed) if not ok), file=sys.stderr)
        sys.exit(1)

if __name__ == '__main__': main()
