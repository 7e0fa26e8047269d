"""Check the docs that `nbdev_proc_nbs` wrote to _proc/: every notebook is there, and every public name of the
library has its API section, with a docstring, and docments for each of its parameters. Also the site's frame:
nbs/sidebar.yml lists every notebook, index first, then in file order (the reading order), and the last notebook
(the Colab runner) carries its "Open in Colab" badge for settings.ini's user and repo.

Public names: the functions and classes in each module's `__all__`, and the methods its notebook adds to
public classes with `@patch` (nbdev documents those too). A parameter counts as documented by a docment (a trailing comment) or
by a `Flag(help, ...)` annotation (mtbench.settings.Flag), which the command-line flags are built from. Docments are read from the
library itself, because nbdev cannot show the field comments of dataclasses defined in a notebook.

Usage, from the repository root after `nbdev_proc_nbs`: `python .ci/check_api_docs.py`; exits 1 on a gap.
"""
import ast, importlib, inspect, json, re, sys
from pathlib import Path
from fastcore.docments import docments
from nbdev.config import get_config
from nbdev.doclinks import nbglob

_SKIP = {'self', 'cls', 'return'}

def sections(nb):
    "{name: markdown} of the `show_doc` sections in processed notebook `nb`."
    res = {}
    for c in json.loads(Path(nb).read_text())['cells']:
        for o in c.get('outputs', []):
            md = ''.join(o.get('data', {}).get('text/markdown', []))
            if m := re.search(r'^#{2,4} (\S+)\s*$', md, re.M): res[m.group(1)] = md
    return res

def public_names(py):
    "The functions and classes in `py`'s `__all__`, then its `@patch`ed methods as 'Class.method'."
    tree = ast.parse(py.read_text())
    alls = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], 'id', '') == '__all__'), [])
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    names = [n for n in alls if n in defs]
    for n in tree.body:
        if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith('_')
            and any(getattr(d, 'id', '') == 'patch' for d in n.decorator_list) and n.args.args and n.args.args[0].annotation
            and not (cls := ast.unparse(n.args.args[0].annotation)).startswith('_')):
            names.append(f"{cls}.{n.name}")
    return names

def problems(obj, name, md):
    "What is missing in the docs of `obj`, shown as section `md` (None when there is no section)."
    if md is None: return ['no section in the processed notebook']
    res = []
    if not inspect.getdoc(obj) or not re.search(r'^\*\S', md, re.M): res.append('no docstring')
    try: dm = docments(obj, full=True, eval_str=True)
    except Exception as e: return res + [f'docments unreadable: {e}']
    undoc = [k for k, v in dm.items() if k not in _SKIP and not v.get('docment') and not hasattr(v.get('anno'), 'with_default')
             and v.get('kind') not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    if undoc: res.append('parameters without docments: ' + ', '.join(undoc))
    return res

def site_problems(cfg, nbs):
    "What is wrong with the sidebar and the Colab badge."
    import yaml
    res = []
    side = yaml.safe_load((cfg.nbs_path/'sidebar.yml').read_text())['website']['sidebar']['contents']
    want = sorted((str(nb.relative_to(cfg.nbs_path)) for nb in nbs), key=lambda n: (n != 'index.ipynb', n))
    if side != want: res.append(f"nbs/sidebar.yml lists {side}; the notebooks in reading order are {want}")
    last = want[-1]   # the Colab runner is the last notebook in reading order (the design card's final notebook)
    colab = f"https://colab.research.google.com/github/{cfg.user}/{cfg.repo}/blob/{cfg.branch}/{cfg.nbs_path.name}/{last}"
    if colab not in (cfg.nbs_path/last).read_text(): res.append(f"{last} (the last notebook, the Colab runner) has no Open in Colab badge linking {colab}")
    return res

def main():
    cfg = get_config()
    proc = cfg.config_path/'_proc'
    nbs = sorted(nbglob(cfg.nbs_path, as_path=True))
    site = site_problems(cfg, nbs)
    print(f"site: sidebar and Colab badge " + ('; '.join(site) if site else 'in order'))
    missing = [nb.name for nb in nbs if not (proc/nb.relative_to(cfg.nbs_path)).exists()]
    print(f"_proc: {len(nbs) - len(missing)} of {len(nbs)} notebooks processed" + (f"; missing: {', '.join(missing)}" if missing else ''))
    bad = len(missing) + len(site)
    for py in sorted(cfg.lib_path.glob('*.py')):
        m = re.search(r'File to edit: (\S+\.ipynb)', py.read_text())
        if not m or py.stem == '__main__': continue
        nb = proc/(py.parent/m.group(1)).resolve().relative_to(cfg.nbs_path.resolve())
        secs = sections(nb) if nb.exists() else {}
        mod = importlib.import_module(f"{cfg.lib_name}.{py.stem}")
        names = public_names(py)
        gaps = {}
        for n in names:
            obj = mod
            for part in n.split('.'): obj = getattr(obj, part)
            if p := problems(obj, n, secs.get(n)): gaps[n] = p
        print(f"{py.stem}: {len(names) - len(gaps)} of {len(names)} public names documented in {nb.name}")
        for n, p in gaps.items(): print(f"  {n}: {'; '.join(p)}")
        bad += len(gaps)
    sys.exit(1 if bad else 0)

if __name__ == '__main__': main()
