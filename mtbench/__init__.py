"""mtbench: MT-bench for any language model. The Python API a notebook calls is here: `mtbench.evaluate`, `mtbench.show`,
`mtbench.compare`, the settings (`mtbench.RunSettings` ...), listed in `API`; each is imported from its module on first use."""
__version__ = "0.0.1"

# Not generated from a notebook: nbdev only keeps the version line above in step with settings.ini (put_version_in_init).
# The names are looked up lazily, with a module __getattr__ (PEP 562), so that `import mtbench` imports nothing more than
# before (the command line imports only what its command needs, and torch stays unimported until a model loads).
API = { # name: (module, attribute) of what a notebook user calls
    'evaluate': ('evaluator', 'evaluate'), # a run, end to end: answers, judgments, results (what `mtbench run` calls)
    'show': ('analysis', 'show_results'), # a run folder's (or a judgment file's) tables, as `mtbench show` prints them
    'compare': ('tables', 'compare'), # is B better than A: paired comparisons of runs, as `mtbench compare` prints them
    'write_report': ('tables', 'write_report'), # results/: summary.json, scores.csv, report.md, the plots and the report page
    'generate_answers': ('conversation', 'generate_answers'), # a model's answers only (`mtbench answers`)
    'judge_answers': ('judging', 'judge_answers'), # judge answer files only (`mtbench judge`)
    'RunSettings': ('settings', 'RunSettings'), 'Selection': ('settings', 'Selection'), 'Generation': ('settings', 'Generation'),
    'JudgeSettings': ('settings', 'JudgeSettings'), 'MMLUProSettings': ('settings', 'MMLUProSettings'), 'ShowSettings': ('settings', 'ShowSettings'),
    'Results': ('analysis', 'Results'), # what `show` returns: the tables as DataFrames
    'get_benchmark': ('registry', 'get_benchmark'), # a benchmark by name, or your own questions file
    'load_questions': ('records', 'load_questions'), # MT-bench's questions
    'RunnerPanel': ('ui', 'RunnerPanel'), # the Colab panel
    'MTBenchError': ('errors', 'MTBenchError'), # what mtbench raises for a mistake a user can fix, in one line
}
__all__ = ['API', *API]

def __getattr__(name):
    if name not in API: raise AttributeError(f"module 'mtbench' has no attribute {name!r}")
    import importlib
    mod, attr = API[name]
    value = globals()[name] = getattr(importlib.import_module(f'mtbench.{mod}'), attr) # imported once, then an ordinary attribute
    return value

def __dir__(): return sorted({*globals(), *API})
