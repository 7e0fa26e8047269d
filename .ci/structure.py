"""The structure figures of mtbench, read with ast and json only (nothing is imported), printed as a table.

For issue 21 ("one shape for everything mtbench does"):
- import cycles between mtbench's modules: an import anywhere in a module counts, inside functions too;
- private names (`_x`) imported from another mtbench module;
- functions and methods with more than 8 parameters (self and cls not counted; *args and **kw count one each);
- signatures with a parameter named `memory_limit` (the memory setting should travel inside `Generation`);
- exported notebook cells: their median length in lines, and how many are longer than 40 lines.

Usage, from the repository root: `python .ci/structure.py [--check]`; with --check it exits 1 when a figure is
over its goal.
"""
import ast, json, statistics, sys
from pathlib import Path

GOALS = dict(cycles=0, private_imports=0, wide_functions=3, memory_limit_signatures=3, cell_median=12, cells_over_40=0)

def modules(root):
    "{module name: its syntax tree} of the library, generated helpers left out."
    skip = {'_modidx', '__init__', '__main__'}
    return {p.stem: ast.parse(p.read_text()) for p in sorted((root/'mtbench').glob('*.py')) if p.stem not in skip}

def imports(name, tree, mods):
    "[(module imported, names imported)] of one module, for imports of other mtbench modules."
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            full = ('mtbench.' + (n.module or '')).rstrip('.') if n.level else (n.module or '')
            parts = full.split('.')
            if parts[0] != 'mtbench': continue
            if len(parts) > 1 and parts[1] in mods: out.append((parts[1], [a.name for a in n.names]))
            elif len(parts) == 1: out += [(a.name, []) for a in n.names if a.name in mods]
        elif isinstance(n, ast.Import):
            out += [(a.name.split('.')[1], []) for a in n.names if a.name.startswith('mtbench.') and a.name.split('.')[1] in mods]
    return [(m, ns) for m, ns in out if m != name]

def cycles(graph):
    "The groups of modules that import each other, directly or around a loop (Tarjan's strongly connected components)."
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in graph[v]:
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while (w := stack.pop()) != v: on.discard(w); comp.append(w)
            on.discard(v); comp.append(v)
            if len(comp) > 1: found.append(sorted(comp))
    for v in graph:
        if v not in index: visit(v)
    return found

def params(f):
    "The parameters of a function that count: self and cls left out, *args and **kw one each."
    a = f.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ('self', 'cls')]
    return names + (['*' + a.vararg.arg] if a.vararg else []) + (['**' + a.kwarg.arg] if a.kwarg else [])

def exported_cells(root):
    "The line counts of the notebooks' exported code cells."
    sizes = []
    for nb in sorted((root/'nbs').glob('*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            s = ''.join(c['source'])
            if c['cell_type'] == 'code' and s.lstrip().startswith('#| export'): sizes.append((s.count('\n') + 1, nb.name))
    return sizes

def figures(root):
    "The figures, and the details behind them."
    mods = modules(root)
    edges = {m: imports(m, t, mods) for m, t in mods.items()}
    graph = {m: sorted({t for t, _ in e}) for m, e in edges.items()}
    private = [f"{m} <- {t}.{x}" for m, e in edges.items() for t, ns in e for x in ns if x.startswith('_') and not x.startswith('__')]
    funcs = [(m, f) for m, t in mods.items() for f in ast.walk(t) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    wide = sorted(((len(params(f)), f"{m}.{f.name}") for m, f in funcs if len(params(f)) > 8), reverse=True)
    mem = [f"{m}.{f.name}" for m, f in funcs if 'memory_limit' in params(f)]
    cells = exported_cells(root)
    fig = dict(cycles=len(cycles(graph)), private_imports=len(private), wide_functions=len(wide), memory_limit_signatures=len(mem),
               cell_median=statistics.median(s for s, _ in cells) if cells else 0, cells_over_40=sum(s > 40 for s, _ in cells))
    return fig, dict(cycles=cycles(graph), private=private, wide=wide, memory_limit=mem, big_cells=sorted((s, nb) for s, nb in cells if s > 40))

if __name__ == '__main__':
    import signal; signal.signal(signal.SIGPIPE, signal.SIG_DFL) # quiet when piped into head
    root = Path(__file__).resolve().parents[1]
    fig, why = figures(root)
    print(f"{'figure':<26}{'now':>8}{'goal':>8}")
    for k, v in fig.items(): print(f"{k:<26}{v:>8}{GOALS[k]:>8}" + ('   over' if v > GOALS[k] else ''))
    for c in why['cycles']: print('  cycle:', ' <-> '.join(c))
    for p in why['private']: print('  private import:', p)
    for k, f in why['wide']: print(f'  {k} parameters: {f}')
    print('  memory_limit in:', ', '.join(why['memory_limit']) or 'none')
    for s, nb in why['big_cells']: print(f'  exported cell of {s} lines in {nb}')
    if '--check' in sys.argv and any(v > GOALS[k] for k, v in fig.items()): sys.exit(1)
