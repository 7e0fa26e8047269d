"""Browser test of the Colab runner: the runner cells of nbs/07_colab.ipynb served by Voila on
127.0.0.1, driven by Playwright with Debian's Chromium, from picking the bundled model to the results.

    python nbs/files/colab/browser_test.py [--screenshot PATH]   (default: nbs/files/colab/panel.png)

Needs: pip install voila playwright ipykernel (in the venv), apt-get install chromium, and the MT-bench
files (MTBENCH_DATA_DIR). Exits 0 when the results table appeared, 1 otherwise; prints what it saw.
"""
import argparse, json, os, secrets, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
NB = HERE.parent.parent/'07_colab.ipynb'
KEY = 'sk-test-DO-NOT-LEAK-' + secrets.token_hex(8)
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                 '--disable-background-networking', '--disable-component-update', '--disable-sync']

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

def wait_http(url, proc, timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None: raise SystemExit(f"voila exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5): return
        except urllib.error.HTTPError: return   # any answer means the server is up
        except Exception: time.sleep(0.5)
    raise SystemExit(f"voila did not answer on {url} within {timeout} s")

def shrink_png(path, colors=128):
    "Quantize a screenshot to a palette PNG: a fraction of the size, still sharp for text."
    try: from PIL import Image
    except ImportError: return
    im = Image.open(path).convert('RGB')
    im.quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)

def drive(url, shot, timeout, chromium, max_new_tokens, judge_max_tokens):
    from playwright.sync_api import sync_playwright
    t0 = time.time()
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(profile, executable_path=chromium, args=CHROMIUM_ARGS, headless=True,
                                                    viewport=dict(width=1280, height=900))
        try:
            page = ctx.new_page()
            errors = []
            page.on('console', lambda m: errors.append(m.text) if m.type == 'error' else None)
            page.goto(url, timeout=timeout*1000)
            page.locator('.mtbench-box').wait_for(state='visible', timeout=timeout*1000)
            print(f"panel shown after {time.time()-t0:.1f} s")
            def choose(cls, text):
                opt = page.locator(f'.mtbench-{cls} option').filter(has_text=text).first
                page.locator(f'.mtbench-{cls} select').select_option(value=opt.evaluate('o => o.value'))
            choose('models', 'smollm2-135m')
            choose('judge', 'local: smollm2-135m')
            for cls, v in (('max-questions', '1'), ('max-new-tokens', str(max_new_tokens)), ('judge-max-tokens', str(judge_max_tokens))):
                box = page.locator(f'.mtbench-{cls} input'); box.fill(v); box.press('Tab')
            # a made-up key, typed as a person would: the panel must move it to the kernel's environment, empty
            # the field, and keep it out of the page and of every file (checked at the end)
            keybox = page.locator('.mtbench-api-key input'); keybox.fill(KEY); keybox.press('Tab')
            t1 = time.time()
            while keybox.input_value() and time.time() - t1 < 30: time.sleep(0.2)
            if keybox.input_value(): raise SystemExit("the API key field was not emptied after the key was typed")
            print(f"API key typed; the field emptied itself after {time.time()-t1:.1f} s")
            time.sleep(1)   # let the widget values reach the kernel before the click
            page.locator('.mtbench-run-button').click()
            print(f"Run clicked after {time.time()-t0:.1f} s")
            status, table = page.locator('.mtbench-status'), page.locator('.mtbench-table table')
            while not table.is_visible():
                s = status.inner_text()
                if s.startswith(('failed', 'error')) or 'needs' in s: raise SystemExit(f"the panel says: {s}")
                if time.time() - t0 > timeout: raise SystemExit(f"no results table within {timeout} s; status: {s}")
                time.sleep(1)
            page.locator('.mtbench-radar').wait_for(state='visible', timeout=30000)
            time.sleep(1)
            print(f"results table shown after {time.time()-t0:.1f} s; status: {status.inner_text()}")
            print("table:", table.inner_text().replace('\n', ' | ')[:400])
            print(f"progress bars in the output area: {page.locator('.mtbench-out .widget-hprogress').count()}; "
                  f"output lines: {len(page.locator('.mtbench-out').inner_text().splitlines())}")
            Path(shot).parent.mkdir(parents=True, exist_ok=True)
            box = page.locator('.mtbench-box')
            bb = box.bounding_box()   # make the window tall enough for the whole panel, then photograph just the panel
            page.set_viewport_size(dict(width=1280, height=int(bb['y'] + bb['height'] + 40)))
            time.sleep(0.5)
            box.screenshot(path=str(shot))
            shrink_png(shot)
            print(f"screenshot: {shot} ({Path(shot).stat().st_size//1024} KB)")
            if KEY in page.content(): raise SystemExit("the API key is in the page")
            if errors: print("browser console errors:", *errors[:10], sep='\n  ')
        finally: ctx.close()

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--screenshot', default=str(HERE/'panel.png'), help='where to save the screenshot (default: next to this script)')
    p.add_argument('--timeout', type=int, default=600, help='seconds for the whole run')
    p.add_argument('--chromium', default='/usr/bin/chromium')
    p.add_argument('--max-new-tokens', type=int, default=16, help="the answers' token limit, kept small for a CPU")
    p.add_argument('--judge-max-tokens', type=int, default=24, help="the local judge's token limit")
    a = p.parse_args()
    if not Path(a.chromium).exists(): raise SystemExit(f"no Chromium at {a.chromium}: apt-get install chromium (or pass --chromium PATH)")
    for mod, pkg in (('playwright', 'playwright'), ('voila', 'voila'), ('ipykernel', 'ipykernel')):
        try: __import__(mod)
        except ImportError: raise SystemExit(f"{mod} is missing: pip install {pkg}")
    work = Path(tempfile.mkdtemp(prefix='mtbench_browser_'))
    shot = Path(a.screenshot).resolve()
    runner_notebook(NB, work/'runner.ipynb')
    port = free_port()
    log = open(work/'voila.log', 'w')
    proc = subprocess.Popen([sys.executable, '-m', 'voila', 'runner.ipynb', '--no-browser', f'--port={port}',
                             '--Voila.ip=127.0.0.1', '--Voila.port_retries=0', '--show_tracebacks=True'],
                            cwd=work, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    ok = False
    try:
        url = f'http://127.0.0.1:{port}/'
        wait_http(url + 'static/', proc, 60)
        drive(url, shot, a.timeout, a.chromium, a.max_new_tokens, a.judge_max_tokens)
        leaks = [str(f) for f in work.rglob('*') if f.is_file() and KEY.encode() in f.read_bytes()]
        if leaks: raise SystemExit(f"the API key is in {leaks}")
        print(f"the API key is in none of the {sum(1 for f in work.rglob('*') if f.is_file())} files of the run folder, nor in the page")
        ok = True
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try: proc.wait(20)
        except subprocess.TimeoutExpired: os.killpg(proc.pid, signal.SIGKILL); proc.wait()
        log.close()
        if ok: shutil.rmtree(work, ignore_errors=True)
        else: print("voila log (tail):", *(work/'voila.log').read_text().splitlines()[-30:], f"(kept in {work})", sep='\n  ')
    print("browser test passed")

if __name__ == '__main__': main()
