"""The structure figures of mtbench, read with ast and json only (nothing is imported), printed as a table.

For issue 21 ("one shape for everything mtbench does"):
- import cycles between mtbench's modules: an import anywhere in a module counts, inside functions too, and so does a
  string constant that is a whole module path (`'mtbench.engines'`, `'mtbench.engines:llama_cpp_backend'`), the form
  `importlib.import_module` and lazy 'module:attr' targets take (issue 32);
- private names (`_x`) imported from another mtbench module;
- functions and methods with more than 8 parameters (self and cls not counted; *args and **kw count one each);
- signatures with a parameter named `memory_limit` (the memory setting should travel inside `Generation`);
- exported notebook cells: their median length in lines, and how many are longer than 40 lines.

For issue 32 ("one resolved run"):
- untested_run: the longest run of exported cells with no example or test between them. Cells count in file order;
  markdown does not break a run; a code cell breaks it when it is not exported, holds more than imports and `show_doc`
  calls, and runs under `nbdev_test` (no `#| eval: false`, no flag of settings.ini's `tst_flags`);
- module_lines: the longest module of mtbench/ in lines (`_modidx`, `__init__`, `__main__` left out);
- shims: compatibility code kept for old callers: a module that only re-exports other modules' names, a module
  `__getattr__` (but the package's own, mtbench/__init__.py's: its lazy Python API, issue 42), a DeprecationWarning (or Pending-/FutureWarning), a function that only calls an imported one with its
  own parameters (an alias), a parameter documented as deprecated, a module-level name for old names
  (legacy, old_*, *_moved, *_renamed, deprecat*);
- readme_lines: README.md's lines.

For issue 42 ("one way through"):
- split_module_lines: the longest of the modules `data.py` and `analysis.py` were split into (`SPLIT`), in lines;
- layout_literals: a run folder's layout spelled out outside `RunFolder` (mtbench/runfolder.py): a string constant that is, or
  starts, `model_answer`, `model_judgment`, `results` or `run.json` (then `/`), not a docstring, a dict key or a subscript;
- silent_test_guards: test cells (code cells not exported) with a line `if [not] PATH.exists():`, which test nothing when the
  path is missing; a test gets its data the way users do (`mtbench.testing.fastchat_run`, `mtbench.pins`), or fails saying what is missing.

Usage, from the repository root: `python .ci/structure.py [--check]`; with --check it exits 1 when a figure is
over its goal.
"""
import ast, io, json, re, statistics, sys, tokenize
from pathlib import Path

GOALS = dict(cycles=0, private_imports=0, wide_functions=3, memory_limit_signatures=3, cell_median=12, cells_over_40=0,
             untested_run=4, module_lines=800, shims=0, readme_lines=300, split_module_lines=450, layout_literals=0, silent_test_guards=0)

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

_PATH = re.compile(r'mtbench\.([a-z_][a-z_0-9]*)(?:[.:][A-Za-z_][\w.]*)?')

def string_imports(name, tree, mods):
    "[(module, [])] of the modules named by a whole string constant of `tree`, as importlib (or a 'module:attr' target) would load them."
    return [(m.group(1), []) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and (m := _PATH.fullmatch(n.value.strip())) and m.group(1) in mods and m.group(1) != name]

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

def _directives(s): return {m.group(1): m.group(2).strip() for m in re.finditer(r'^#\s*\|\s*([\w-]+):?\s*(.*)$', s, re.M)}

def _cell_kind(c, skip) -> str:
    "'export', 'test' (an example or test nbdev_test runs) or 'other' (markdown, imports, show_doc, skipped tests)."
    if c['cell_type'] != 'code': return 'other'
    s = ''.join(c['source']); d = _directives(s)
    if 'export' in d or 'exporti' in d: return 'export'
    body = '\n'.join(l for l in s.splitlines() if not l.lstrip().startswith('#')).strip()
    if 'default_exp' in d or not body or d.get('eval') == 'false' or skip & set(d): return 'other'
    if all(re.match(r'(from \S+ )?import |show_doc\(|$', l.strip()) for l in body.splitlines()): return 'other'
    return 'test'

def untested_runs(root) -> list:
    "[(length, notebook, first cell id)] of every run of exported cells with no example or test between them."
    ini = (root/'settings.ini').read_text()
    skip = set((re.search(r'^tst_flags\s*=\s*(.*)$', ini, re.M) or [None, ''])[1].split())
    runs = []
    for nb in sorted((root/'nbs').glob('*.ipynb')):
        cur = []
        for c in json.loads(nb.read_text())['cells'] + [{'cell_type': 'code', 'source': ['x'], 'id': 'END'}]:
            k = _cell_kind(c, skip)
            if k == 'export': cur.append(c)
            elif k == 'test':
                if cur: runs.append((len(cur), nb.name, cur[0].get('id')))
                cur = []
    return runs

_COMPAT = re.compile(r'(?i)legacy|^_?old_|_moved$|_renamed$|deprecat')
_WARNINGS = ('DeprecationWarning', 'PendingDeprecationWarning', 'FutureWarning')

def shims(root, mods) -> list:
    "Each piece of compatibility code, as 'module: what' (see the module's docstring)."
    out = []
    # mtbench/__init__.py is read too, but its module __getattr__ is not a shim: it is the package's Python API (issue 42, #5), a table
    # of the names a notebook calls (`mtbench.evaluate`, `mtbench.show` ...) imported on first use so that `import mtbench` stays as
    # fast as before. It keeps no old name alive; an alias, a deprecation or an old name there still counts.
    init = root/'mtbench'/'__init__.py'
    for name, t in {**mods, **({'__init__': ast.parse(init.read_text())} if init.exists() else {})}.items():
        src = (root/'mtbench'/f'{name}.py').read_text()
        top = [n for n in t.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        defs = [n for n in top if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        reexp = [n for n in top if isinstance(n, ast.ImportFrom) and (n.level or (n.module or '').startswith('mtbench'))]
        if not defs and reexp: out.append(f"{name}: re-exports other modules' names only")
        imported = {a.asname or a.name for n in reexp for a in n.names}
        for n in t.body:
            if isinstance(n, ast.FunctionDef) and n.name == '__getattr__' and name != '__init__': out.append(f"{name}: module __getattr__ (line {n.lineno})")
            if isinstance(n, ast.FunctionDef):
                body = [b for b in n.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
                if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(c := body[0].value, ast.Call) and isinstance(c.func, ast.Name) \
                   and c.func.id in imported and [getattr(a, 'id', None) for a in c.args] == [a.arg for a in n.args.args] and not c.keywords:
                    out.append(f"{name}: {n.name} is an alias of {c.func.id} (line {n.lineno})")
            targets = [x for a in ([n] if isinstance(n, (ast.Assign, ast.AnnAssign)) else []) for x in (a.targets if isinstance(a, ast.Assign) else [a.target])]
            for x in targets + ([n] if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else []):
                nm = getattr(x, 'id', None) or getattr(x, 'name', None)
                if nm and _COMPAT.search(nm): out.append(f"{name}: {nm}, kept for old names (line {n.lineno})")
        for n in ast.walk(t):
            if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id in _WARNINGS for a in n.args + [k.value for k in n.keywords]):
                out.append(f"{name}: a deprecation warning (line {n.lineno})")
        fdefs = [(n.lineno, n.body[0].lineno, n.name) for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for tk in tokenize.generate_tokens(io.StringIO(src).readline):
            if tk.type == tokenize.COMMENT and 'deprecated' in tk.string.lower():
                f = next((nm for a, b, nm in fdefs if a <= tk.start[0] < b), None)
                if f: out.append(f"{name}: {f} takes a deprecated parameter (line {tk.start[0]})")
    return out

def module_lines(root) -> list:
    "[(lines, module)] of the library's modules, longest first (generated helpers left out)."
    skip = {'_modidx', '__init__', '__main__'}
    return sorted(((len(p.read_text().splitlines()), p.stem) for p in (root/'mtbench').glob('*.py') if p.stem not in skip), reverse=True)

SPLIT = ['errors', 'pins', 'records', 'store', 'data', 'judgments', 'stats', 'compare', 'scores', 'notes', 'analysis'] # issue 42, #1

def split_module_lines(root) -> list:
    "[(lines, module)] of the modules `data.py` and `analysis.py` were split into (and of those two, where they are back), longest first."
    return sorted((n, m) for n, m in module_lines(root) if m in SPLIT)[::-1]

_LAYOUT = re.compile(r'^(model_answer|model_judgment|results|run\.json)(/.*)?$')

def layout_literals(root) -> list:
    "'module:line: literal' for each string constant of a run folder's layout outside mtbench/runfolder.py (see the module's docstring)."
    out = []
    for p in sorted((root/'mtbench').glob('*.py')):
        if p.stem in ('runfolder', '_modidx'): continue
        t = ast.parse(p.read_text())
        skip = {id(n.body[0].value) for n in ast.walk(t) if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)} # docstrings
        for n in ast.walk(t): # dict keys and subscripts: run.json's keys, a summary's 'results', not paths
            if isinstance(n, ast.Subscript): skip.add(id(n.slice))
            if isinstance(n, ast.Dict): skip |= {id(k) for k in n.keys if k is not None}
            if isinstance(n, ast.Call) and getattr(n.func, 'attr', None) in ('get', 'pop', 'setdefault'): skip |= {id(a) for a in n.args[:1]}
        out += sorted({f"{p.stem}:{n.lineno}: {n.value!r}" for n in ast.walk(t)
                       if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip and _LAYOUT.match(n.value)})
    return out

_GUARD = re.compile(r'^\s*if\s+(not\s+)?[\w.()\'"/\[\]]+\.exists\(\)\s*:', re.M)

def silent_test_guards(root) -> list:
    "[(notebook, cell id)] of test cells guarded by a path's existence."
    return [(nb.name, c.get('id')) for nb in sorted((root/'nbs').glob('*.ipynb')) for c in json.loads(nb.read_text())['cells']
            if c['cell_type'] == 'code' and 'export' not in _directives(''.join(c['source'])) and _GUARD.search(''.join(c['source']))]

def figures(root):
    "The figures, and the details behind them."
    mods = modules(root)
    edges = {m: imports(m, t, mods) for m, t in mods.items()}
    graph = {m: sorted({t for t, _ in e + string_imports(m, mods[m], mods)}) for m, e in edges.items()}
    private = [f"{m} <- {t}.{x}" for m, e in edges.items() for t, ns in e for x in ns if x.startswith('_') and not x.startswith('__')]
    funcs = [(m, f) for m, t in mods.items() for f in ast.walk(t) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    wide = sorted(((len(params(f)), f"{m}.{f.name}") for m, f in funcs if len(params(f)) > 8), reverse=True)
    mem = [f"{m}.{f.name}" for m, f in funcs if 'memory_limit' in params(f)]
    cells, runs, sizes, shim = exported_cells(root), untested_runs(root), module_lines(root), shims(root, mods)
    readme = root/'README.md'
    fig = dict(cycles=len(cycles(graph)), private_imports=len(private), wide_functions=len(wide), memory_limit_signatures=len(mem),
               cell_median=statistics.median(s for s, _ in cells) if cells else 0, cells_over_40=sum(s > 40 for s, _ in cells),
               untested_run=max((n for n, _, _ in runs), default=0), module_lines=sizes[0][0] if sizes else 0, shims=len(shim),
               readme_lines=len(readme.read_text().splitlines()) if readme.exists() else 0,
               split_module_lines=max((n for n, _ in split_module_lines(root)), default=0), layout_literals=len(layout_literals(root)),
               silent_test_guards=len(silent_test_guards(root)))
    return fig, dict(cycles=cycles(graph), private=private, wide=wide, memory_limit=mem, big_cells=sorted((s, nb) for s, nb in cells if s > 40),
                     runs=sorted((r for r in runs if r[0] > 4), reverse=True), big_modules=[(n, m) for n, m in sizes if n > 800], shims=shim,
                     big_split=[(n, m) for n, m in split_module_lines(root) if n > 450], layout=layout_literals(root), guards=silent_test_guards(root))

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
    for n, nb, cid in why['runs']: print(f'  {n} exported cells without a test between them in {nb}, from cell {cid}')
    for n, m in why['big_modules']: print(f'  module {m}: {n} lines')
    for x in why['shims']: print(f'  shim: {x}')
    for n, m in why['big_split']: print(f'  split module {m}: {n} lines')
    for x in why['layout']: print(f'  layout literal outside RunFolder: {x}')
    for nb, cid in why['guards']: print(f'  test cell guarded by a path existing: {nb}, cell {cid}')
    if '--check' in sys.argv and any(v > GOALS[k] for k, v in fig.items()): sys.exit(1)
