"""Browser test of the Colab runner in two front ends, driven by Playwright with Debian's Chromium: JupyterLab
(ipywidgets 8, a real notebook page) and Voila, each serving the runner cells of nbs/08_colab.ipynb on 127.0.0.1.

    python nbs/files/colab/browser_test.py [--screenshot PATH] [--voila-screenshot PATH] [--only lab|voila]

JupyterLab: Run > Run All Cells, pick the bundled model, the local judge and one question, click Run, find the
results table, the speed and cost tables and both plots, the progress of both phases, and the report page in its frame; then a run with a slow
API judge (a loopback server), interrupted from the Kernel menu while the judge works: the panel must say it
stopped, and the judge must make no further call. Voila: the same first run, with an API key typed into the
panel, which must leave the field, the page and every file.

Needs: pip install jupyterlab voila playwright ipykernel (in the venv), apt-get install chromium, and the MT-bench
files (MTBENCH_DATA_DIR). Prints one line per check and ends with `N passed, M failed`; exits 1 if any failed.
The JupyterLab screenshot of the panel goes to nbs/files/colab/panel.png unless --screenshot says otherwise.
"""
import argparse, json, os, secrets, shutil, signal, socket, subprocess, sys, tempfile, time, traceback, urllib.error, urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
NB = HERE.parent.parent/'08_colab.ipynb'
KEY = 'sk-test-DO-NOT-LEAK-' + secrets.token_hex(8)
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                 '--disable-background-networking', '--disable-component-update', '--disable-sync']

class Checks:
    "Named checks: each prints a line; `summary` prints `N passed, M failed`."
    def __init__(self): self.passed, self.failed = 0, 0
    def __call__(self, name, ok, detail=''):
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f": {detail}" if detail else ''), flush=True)
        if ok: self.passed += 1
        else: self.failed += 1
        return ok
    def summary(self): return f"{self.passed} passed, {self.failed} failed"

def runner_notebook(src, dest):
    "The runner part of the notebook: its cells up to the first one that displays the panel."
    nb = json.loads(Path(src).read_text())
    cells = []
    for c in nb['cells']:
        cells.append(c)
        if c['cell_type'] == 'code' and 'RunnerPanel()' in ''.join(c['source']): break
    else: raise SystemExit(f"{src}: no cell creates RunnerPanel()")
    nb['cells'] = cells
    nb['metadata']['kernelspec'] = dict(name='python3', display_name='Python 3', language='python')
    Path(dest).write_text(json.dumps(nb))

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def wait_http(url, proc, timeout, name):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None: raise RuntimeError(f"{name} exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5): return
        except urllib.error.HTTPError: return   # any answer means the server is up
        except Exception: time.sleep(0.5)
    raise RuntimeError(f"{name} did not answer on {url} within {timeout} s")

def shrink_png(path, colors=128):
    "Quantize a screenshot to a palette PNG: a fraction of the size, still sharp for text."
    try: from PIL import Image
    except ImportError: return
    im = Image.open(path).convert('RGB')
    im.quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)

class Server:
    "A front end (jupyter lab or voila) serving `work`, in its own process group, with its log kept."
    def __init__(self, name, args, work, env=None):
        self.name, self.work, self.port = name, work, free_port()
        self.log = open(work/f'{name}.log', 'w')
        self.proc = subprocess.Popen([sys.executable, '-m', *[a.format(port=self.port) for a in args]], cwd=work, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, **(env or {})})
        self.url = f'http://127.0.0.1:{self.port}/'
    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try: self.proc.wait(20)
            except subprocess.TimeoutExpired: os.killpg(self.proc.pid, signal.SIGKILL); self.proc.wait()
        self.log.close()
    def tail(self, n=30): return (self.work/f'{self.name}.log').read_text().splitlines()[-n:]

def browser(pw, chromium, profile):
    return pw.chromium.launch_persistent_context(profile, executable_path=chromium, args=CHROMIUM_ARGS, headless=True,
                                                 viewport=dict(width=1280, height=900))

# --- driving the panel, the same in both front ends ---

def choose(page, cls, text):
    opt = page.locator(f'.mtbench-{cls} option').filter(has_text=text).first
    page.locator(f'.mtbench-{cls} select').select_option(value=opt.evaluate('o => o.value'))

def fill(page, cls, value):
    box = page.locator(f'.mtbench-{cls} input'); box.fill(str(value)); box.press('Tab')

def set_up_run(page, a, judge='local: smollm2-135m', questions=1):
    choose(page, 'models', 'smollm2-135m')
    choose(page, 'judge', judge)
    for cls, v in (('max-questions', questions), ('max-new-tokens', a.max_new_tokens), ('judge-max-tokens', a.judge_max_tokens)): fill(page, cls, v)

def wait_for_results(page, t0, timeout):
    status, table = page.locator('.mtbench-status'), page.locator('.mtbench-table table')
    while not table.is_visible():
        s = status.inner_text() if status.count() else ''
        if s.startswith(('failed', 'stopped')) or 'needs' in s or 'error' in s.lower(): raise RuntimeError(f"the panel says: {s}")
        if time.time() - t0 > timeout: raise RuntimeError(f"no results table within {timeout} s; status: {s}")
        time.sleep(1)
    for cls in ('radar', 'heatmap'): page.locator(f'.mtbench-{cls}').wait_for(state='visible', timeout=30000)
    time.sleep(1)

def check_results(check, page, where, judge):
    table = page.locator('.mtbench-table table')
    status = page.locator('.mtbench-status').inner_text()
    check(f"{where}: the run ends with 'done'", status.startswith('done'), status[:200])
    text = table.inner_text()
    check(f"{where}: the results table holds the model", 'smollm2-135m' in text and 'average' in text, text.replace('\n', ' | ')[:300])
    speed, cost = page.locator('.mtbench-speed').inner_text(), page.locator('.mtbench-cost').inner_text()
    check(f"{where}: the speed and cost tables are shown", 'tokens/s' in speed and 'cost USD' in cost and judge in cost,
          f"speed: {speed[:120]!r}; cost: {cost[:120]!r}")
    sizes = [page.locator(f'.mtbench-{c} img, img.mtbench-{c}').first.evaluate('i => [i.naturalWidth, i.naturalHeight]') for c in ('radar', 'heatmap')]
    check(f"{where}: both plots are shown", all(w > 100 and h > 100 for w, h in sizes), f"image sizes {sizes}")
    prog = page.locator('.mtbench-progress').inner_text()
    check(f"{where}: the progress area shows both phases, finished",
          'answers smollm2-135m' in prog and f'judge {judge}' in prog and 'finished in' in prog, prog.replace('\n', ' | ')[:300])
    out = page.locator('.mtbench-out').inner_text()
    check(f"{where}: the log reached the output area", 'model 1 of 1: smollm2-135m: answers' in out, f"{len(out.splitlines())} lines")
    button = page.locator('.mtbench-page-button button, button.mtbench-page-button').first
    button.click() # the report page (mtbench.report), in the panel's sandboxed frame
    frame = page.frame_locator('.mtbench-page iframe')
    frame.locator('body[data-ready="1"]').wait_for(timeout=60000)
    frame.locator('nav.tabs a[data-view=questions]').click()
    n = frame.locator('.count').get_attribute('data-judgments')
    check(f"{where}: Show the report page shows it in the panel, and it works there", n == '2', f"{n} judgments in its questions tab")
    button.click()
    page.locator('.mtbench-page iframe').wait_for(state='detached', timeout=30000)

def screenshot(page, shot):
    Path(shot).parent.mkdir(parents=True, exist_ok=True)
    box = page.locator('.mtbench-box')
    box.scroll_into_view_if_needed()
    bb = box.bounding_box()   # make the window tall enough for the whole panel, then photograph just the panel
    page.set_viewport_size(dict(width=1280, height=int(bb['y'] + bb['height'] + 80)))
    time.sleep(0.5)
    box.screenshot(path=str(shot))
    shrink_png(shot)
    print(f"      screenshot: {shot} ({Path(shot).stat().st_size//1024} KB)")

# --- JupyterLab ---

def menu(page, top, item):
    page.get_by_role('menuitem', name=top, exact=True).first.click()
    page.get_by_role('menuitem', name=item).first.click()

def lab(check, a, work):
    cfg = work/'jupyter-config'; (cfg/'labconfig').mkdir(parents=True)
    (cfg/'labconfig'/'page_config.json').write_text(json.dumps({'disabledExtensions': {'@jupyterlab/apputils-extension:announcements': True}}))
    srv = Server('lab', ['jupyterlab', '--no-browser', '--port={port}', '--ServerApp.ip=127.0.0.1', '--ServerApp.port_retries=0',
                         '--IdentityProvider.token=', '--ServerApp.password=', '--ServerApp.disable_check_xsrf=True', '--allow-root'], work,
                 env=dict(JUPYTER_CONFIG_DIR=str(cfg), JUPYTERLAB_WORKSPACES_DIR=str(work/'workspaces')))
    from playwright.sync_api import sync_playwright
    from mtbench.testing import FakeChatServer
    try:
        wait_http(srv.url + 'api', srv.proc, 90, 'jupyter lab')
        with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
            ctx = browser(pw, a.chromium, profile)
            try:
                page = ctx.new_page()
                t0 = time.time()
                page.goto(srv.url + 'lab/tree/runner.ipynb', timeout=a.timeout*1000)
                page.locator('.jp-Notebook .jp-Cell').first.wait_for(state='visible', timeout=120000)
                page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"], .jp-Toolbar-kernelStatus').first.wait_for(timeout=120000)
                time.sleep(2)
                menu(page, 'Run', 'Run All Cells')
                page.locator('.mtbench-box').wait_for(state='visible', timeout=a.timeout*1000)
                check("lab: Run > Run All Cells shows the panel", True, f"after {time.time()-t0:.0f} s")
                set_up_run(page, a)
                time.sleep(1)   # let the widget values reach the kernel before the click
                t1 = time.time(); page.locator('.mtbench-run-button button, button.mtbench-run-button').first.click()
                seen_running = False
                while time.time() - t1 < 60 and not seen_running:   # the main thread's updates arrive while it runs
                    seen_running = 'model 1 of 1: smollm2-135m: answers' in page.locator('.mtbench-progress').inner_text(); time.sleep(0.2)
                check("lab: progress shows while the run goes on", seen_running)
                wait_for_results(page, t1, a.timeout)
                print(f"      results after {time.time()-t1:.0f} s")
                check_results(check, page, 'lab', 'local:smollm2-135m')
                screenshot(page, a.screenshot)
                page.set_viewport_size(dict(width=1280, height=900))
                # a slow API judge, interrupted from the Kernel menu while it judges
                with FakeChatServer(latency=5) as judge:
                    choose(page, 'judge', 'custom OpenAI-compatible endpoint')
                    fill(page, 'judge-model', 'slow-judge'); fill(page, 'judge-base-url', judge.base_url); fill(page, 'max-questions', 2)
                    time.sleep(1)
                    t2 = time.time(); page.locator('.mtbench-run-button button, button.mtbench-run-button').first.click()
                    prog = page.locator('.mtbench-progress')
                    while time.time() - t2 < a.timeout and not (judge.log and 'judge slow-judge' in prog.inner_text()): time.sleep(0.2)
                    check("lab: the API judge's progress shows while it judges in the background",
                          'judge slow-judge' in prog.inner_text() and bool(judge.log), prog.inner_text().replace('\n', ' | ')[:300])
                    t3 = time.time(); menu(page, 'Kernel', 'Interrupt Kernel')
                    status = page.locator('.mtbench-status')
                    while time.time() - t3 < 60 and not status.inner_text().startswith('stopped'): time.sleep(0.2)
                    s = status.inner_text()
                    ok = check("lab: interrupting the kernel stops the run", s.startswith('stopped'), f"{time.time()-t3:.1f} s after the click: {s[:120]}")
                    if not ok: print("      output area (tail):", *page.locator('.mtbench-out').inner_text().splitlines()[-15:], sep='\n        ')
                    calls = judge.count(); time.sleep(7)
                    check("lab: the judge makes no call after the interrupt", judge.count() == calls < 4, f"{judge.count()} calls in all (4 to make)")
                    run_json = json.loads((work/'mtbench_output'/'run.json').read_text())
                    check("lab: run.json says interrupted", run_json['status'] == 'interrupted', run_json['status'])
                    check("lab: Run can be pressed again", page.locator('.mtbench-run-button button, button.mtbench-run-button').first.is_enabled())
            finally: ctx.close()
    except Exception as e:
        check("lab: the test ran to its end", False, f"{type(e).__name__}: {e}")
        traceback.print_exc()
        print("      jupyter lab log (tail):", *srv.tail(), sep='\n        ')
    finally: srv.stop()

# --- Voila ---

def voila(check, a, work):
    srv = Server('voila', ['voila', 'runner.ipynb', '--no-browser', '--port={port}', '--Voila.ip=127.0.0.1', '--Voila.port_retries=0',
                           '--show_tracebacks=True'], work)
    from playwright.sync_api import sync_playwright
    try:
        wait_http(srv.url + 'static/', srv.proc, 60, 'voila')
        with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
            ctx = browser(pw, a.chromium, profile)
            try:
                page = ctx.new_page()
                t0 = time.time()
                page.goto(srv.url, timeout=a.timeout*1000)
                page.locator('.mtbench-box').wait_for(state='visible', timeout=a.timeout*1000)
                check("voila: the panel is shown", True, f"after {time.time()-t0:.0f} s")
                set_up_run(page, a)
                # a made-up key, typed as a person would: the panel must move it to the kernel's environment, empty
                # the field, and keep it out of the page and of every file (checked at the end)
                keybox = page.locator('.mtbench-api-key input'); keybox.fill(KEY); keybox.press('Tab')
                t1 = time.time()
                while keybox.input_value() and time.time() - t1 < 30: time.sleep(0.2)
                check("voila: the API key field empties itself", not keybox.input_value(), f"after {time.time()-t1:.1f} s")
                time.sleep(1)
                t1 = time.time(); page.locator('.mtbench-run-button').click()
                wait_for_results(page, t1, a.timeout)
                print(f"      results after {time.time()-t1:.0f} s")
                check_results(check, page, 'voila', 'local:smollm2-135m')
                screenshot(page, a.voila_screenshot)
                check("voila: the API key is not in the page", KEY not in page.content())
            finally: ctx.close()
        leaks = [str(f) for f in work.rglob('*') if f.is_file() and KEY.encode() in f.read_bytes()]
        check("voila: the API key is in no file of the run folder", not leaks, f"{sum(1 for f in work.rglob('*') if f.is_file())} files searched; in: {leaks}")
    except Exception as e:
        check("voila: the test ran to its end", False, f"{type(e).__name__}: {e}")
        traceback.print_exc()
        print("      voila log (tail):", *srv.tail(), sep='\n        ')
    finally: srv.stop()

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--screenshot', default=str(HERE/'panel.png'), help='the JupyterLab screenshot of the panel (default: next to this script)')
    p.add_argument('--voila-screenshot', default=str(Path(tempfile.gettempdir())/'mtbench_voila_panel.png'), help='the Voila screenshot')
    p.add_argument('--only', choices=['lab', 'voila'], help='test one front end only')
    p.add_argument('--timeout', type=int, default=600, help='seconds for one run')
    p.add_argument('--chromium', default='/usr/bin/chromium')
    p.add_argument('--max-new-tokens', type=int, default=16, help="the answers' token limit, kept small for a CPU")
    p.add_argument('--judge-max-tokens', type=int, default=24, help="the local judge's token limit")
    a = p.parse_args()
    a.screenshot, a.voila_screenshot = Path(a.screenshot).resolve(), Path(a.voila_screenshot).resolve()
    if not Path(a.chromium).exists(): raise SystemExit(f"no Chromium at {a.chromium}: apt-get install chromium (or pass --chromium PATH)")
    for mod, pkg in (('playwright', 'playwright'), ('voila', 'voila'), ('jupyterlab', 'jupyterlab'), ('ipykernel', 'ipykernel')):
        try: __import__(mod)
        except ImportError: raise SystemExit(f"{mod} is missing: pip install {pkg}")
    check = Checks()
    for name, test in (('lab', lab), ('voila', voila)):
        if a.only and a.only != name: continue
        work = Path(tempfile.mkdtemp(prefix=f'mtbench_{name}_'))
        runner_notebook(NB, work/'runner.ipynb')
        failed = check.failed
        test(check, a, work)
        if check.failed == failed: shutil.rmtree(work, ignore_errors=True)
        else: print(f"      kept {work}")
    print(check.summary())
    sys.exit(1 if check.failed or not check.passed else 0)

if __name__ == '__main__': main()
