"""Helpers of test_browser.py: find a browser, run a private JupyterLab, read the page.

Kept apart so the test reads as the list of checks it makes.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def find_browser() -> str | None:
    """TL_BROWSER if set (it must exist), else the first Chromium-family browser on PATH."""
    chosen = os.environ.get("TL_BROWSER")
    if chosen:
        if not Path(chosen).is_file():
            raise FileNotFoundError(f"TL_BROWSER={chosen} is not a file: give the path of a "
                                    "Chromium-family browser")
        return chosen
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def launch_args() -> list[str]:
    # --no-sandbox: Chromium's sandbox refuses to start as root (containers, CI); the other flags
    # keep a headless browser from calling home, which a closed network refuses noisily
    args = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # POSIX only
        args.append("--no-sandbox")
    return args


def with_scrollbars(browser):
    """A second headless Chromium from the Playwright that started ``browser`` (one Playwright per
    thread), without Playwright's --hide-scrollbars: scrollbars take room, as on Windows and most
    Linux desktops. The caller closes it."""
    return browser.browser_type.launch(executable_path=find_browser(), headless=True, args=launch_args(),
                                       ignore_default_args=["--hide-scrollbars"])


def system_chromium():
    """A generator for a module fixture: the system Chromium launched headless by Playwright, closed
    afterwards. Skips without a browser or without Playwright; fails instead when TL_BROWSER names
    a browser (CI does), so a missing Playwright cannot pass as a skip there."""
    import pytest

    executable = find_browser()
    if executable is None:
        pytest.skip("no Chromium-family browser found: install one (e.g. `apt-get install chromium`) or "
                    "point TL_BROWSER at it, e.g. `TL_BROWSER=/path/to/chromium python run.py test`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        message = ('playwright is not installed: pip install -e ".[browser]" (its browser download is not '
                   "needed; the test launches the system browser)")
        if os.environ.get("TL_BROWSER"):  # asked for by name (CI does): missing Playwright is an error
            pytest.fail(message)
        pytest.skip(message)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, headless=True, args=launch_args())
        try:
            yield chromium
        finally:
            chromium.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# JupyterLab settings for a quiet, reproducible test server: no news or update checks (the page
# would call the internet), no autosave (the copy is thrown away anyway)
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                        "checkForUpdates": False},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


class JupyterLab:
    """A JupyterLab server on a temporary copy of ``notebooks``: free port, random token.

    Its kernels get this process's environment with TL_SMOKE=1 (TL_MINIMAL_DATA and PYTHONPATH
    pass through, so a kernel imports the same tl_minimal as the tests)."""

    def __init__(self, notebooks: Path, workdir: Path):
        self.workdir = workdir
        self.root = workdir / "notebooks"
        shutil.copytree(notebooks, self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        # one timestamp for every file: jupytext refuses a pair whose .ipynb looks newer than its .py
        now = time.time()
        for path in self.root.rglob("*"):
            os.utime(path, (now, now))
        for name, values in LAB_SETTINGS.items():
            path = workdir / "settings" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log = workdir / "jupyterlab.log"
        self.process: subprocess.Popen | None = None

    def url(self, path: str = "", **query: str) -> str:
        extra = "".join(f"&{k}={v}" if v else f"&{k}" for k, v in query.items())
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}{extra}"

    def start(self, timeout_s: float = 120) -> None:
        env = dict(os.environ, TL_SMOKE="1")
        for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):  # ignore ~/.jupyter
            env[name] = str(self.workdir / name.lower())
        command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={self.port}",
                   "--ip=127.0.0.1", f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={self.root}",
                   "--ServerApp.port_retries=0", "--LabApp.expose_app_in_browser=True",
                   f"--LabApp.user_settings_dir={self.workdir / 'settings'}",
                   f"--LabApp.workspaces_dir={self.workdir / 'workspaces'}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # POSIX only; Windows has no root check
            command.append("--allow-root")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(command, cwd=self.workdir, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise RuntimeError(f"JupyterLab exited with code {code}:\n{self.log_tail()}")
            try:
                self.api("GET", "api/status")
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not answer within {timeout_s} s:\n{self.log_tail()}")

    def api(self, method: str, path: str):
        request = urllib.request.Request(self.url(path), method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for kernel in self.api("GET", "api/kernels"):
            self.api("DELETE", f"api/kernels/{kernel['id']}")

    def stop(self) -> None:
        """SIGTERM (the server shuts its kernels down), then SIGKILL to the whole group; where there
        are no process groups (Windows), terminate and kill the server process itself."""
        if self.process is None or self.process.poll() is not None:
            return
        if hasattr(os, "killpg"):
            os.killpg(self.process.pid, signal.SIGTERM)
        else:
            self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            if hasattr(os, "killpg"):
                os.killpg(self.process.pid, signal.SIGKILL)
            else:
                self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace", encoding="utf-8")[-chars:] if self.log.exists() else ""


# --- reading the page ---------------------------------------------------------------------
# JupyterLab keeps every cell in the DOM but lays out only those on screen, so cells are found
# with .jp-Notebook .jp-Cell and read with textContent (innerText would be empty off screen).

# Run All is over: no cell waits ([*]), at least one ran, and the kernel is idle.
JS_RUN_FINISHED = """() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
    .map(p => p.textContent.trim());
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  return !prompts.some(p => p.includes('*')) && prompts.some(p => /\\d/.test(p)) && kernel.status === 'idle';
}"""

# One record per cell: code or not, prompt, source, its text, error outputs (from the notebook
# model: an error and a stderr stream render alike), outputs that show a widget's plain repr,
# widget views in the model and drawn on the page, and stderr streams (reported, not failed on).
JS_CELLS = """() => {
  const WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json';
  const model = window.jupyterapp.shell.currentWidget.content.model;
  const widgetRepr = [/^(VBox|HBox|Box|Output|IntSlider|FloatSlider|Text|Dropdown)\\(/,
                      /^(FloatProgress|IntProgress|HTML|Label)\\(/,
                      /^.*:\\s+\\d+%\\|/];  // a tqdm bar's repr: "train:   0%|    | 0/80"
  const dom = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  if (dom.length !== model.cells.length)
    throw new Error(`the page shows ${dom.length} cells of ${model.cells.length}: is windowingMode 'full'?`);
  return dom.map((cell, i) => {
    const code = cell.classList.contains('jp-CodeCell');
    const m = model.cells.get(i);
    const outputs = code ? m.toJSON().outputs : [];
    const reprs = [...cell.querySelectorAll('.jp-OutputArea-output[data-mime-type="text/plain"]')]
      .map(o => o.textContent.trim()).filter(t => widgetRepr.some(r => r.test(t)));
    const prompt = code ? cell.querySelector('.jp-InputPrompt').textContent.replace(/[\\[\\]:\\s]/g, '') : '';
    // a widget view is an output without a mime type: drawn (.jupyter-widgets inside) or closed
    // (hidden, as a finished progress bar); count those outside any widget's own Output
    const views = [...cell.querySelectorAll('.jp-OutputArea-output:not([data-mime-type])')]
      .filter(o => !o.parentElement.closest('.widget-output'));
    const drawn = views.filter(o => o.classList.contains('lm-mod-hidden')
                                    || o.querySelector('.jupyter-widgets'));
    const widgetErrors = [...cell.querySelectorAll('.widget-output [data-mime-type$="stderr"]')]
      .map(e => 'stderr inside a widget: ' + e.textContent.slice(0, 2000));
    return {code, prompt, source: m.sharedModel.getSource(), text: cell.textContent,
            errors: outputs.filter(o => o.output_type === 'error')
              .map(o => o.ename + ': ' + o.evalue).concat(widgetErrors),
            widget_reprs: reprs,
            views_expected: outputs.filter(o => o.data && o.data[WIDGET_VIEW]).length,
            views_drawn: drawn.length,
            stderr: outputs.filter(o => o.output_type === 'stream' && o.name === 'stderr')
              .map(o => Array.isArray(o.text) ? o.text.join('') : o.text)};
  });
}"""

# The controls of the page, each tagged with data-tl-control and its widget box (the VBox that
# also holds the Output it redraws) with data-tl-box, so Python can address them. A control may
# sit in a row with the hint that states its rule (an HBox), so controls are searched inside the
# box, outside its Output; the box's message line (the HTML widget that reports bad input) is
# tagged data-tl-message.
JS_CONTROLS = """() => {
  const found = [];
  document.querySelectorAll('.jp-Notebook .widget-box').forEach((box, b) => {
    const out = [...box.children].find(c => c.classList.contains('widget-output'));
    if (!out) return;
    box.dataset.tlBox = String(b);
    const message = [...box.children].find(c => c.classList.contains('widget-html'));
    if (message) message.dataset.tlMessage = String(b);
    const kinds = '.widget-slider, .widget-dropdown, .widget-text, .widget-textarea';
    [...box.querySelectorAll(kinds)].filter(child => !child.closest('.widget-output')).forEach(child => {
      const label = (child.querySelector('.widget-label') || {}).textContent || '';
      const row = child.parentElement.classList.contains('widget-hbox') ? child.parentElement : null;
      const hint = row ? [...row.querySelectorAll('.widget-html')].map(h => h.textContent).join(' ') : '';
      let el, rec;
      if (child.classList.contains('widget-slider')) {
        el = child.querySelector('[role="slider"]');
        rec = {kind: 'slider', now: el.getAttribute('aria-valuenow'), max: el.getAttribute('aria-valuemax')};
      } else if (child.classList.contains('widget-dropdown')) {
        el = child.querySelector('select');
        rec = {kind: 'dropdown', value: el.value, options: [...el.options].map(o => o.value)};
      } else {
        el = child.querySelector('input, textarea');
        rec = {kind: 'text', value: el.value};
      }
      el.dataset.tlControl = String(found.length);
      found.push(Object.assign(rec, {id: String(found.length), box: String(b), label: label.trim(),
                                     hint: hint.trim()}));
    });
  });
  return found;
}"""
