"""A test that needs an optional extra skips, with a one-line reason naming it, when the extra is missing.

The README's test command (``python run.py test``) installs the launcher's default extras, dev and
lab; CI installs every extra, so it never meets a missing one (issue 54, item 0: the figure test of
the site errored where its neighbours skipped). Here pytest runs in a subprocess in which the site
extra (Sphinx, MyST-NB, the book theme), the browser extra (Playwright) and the course extra
(nbgrader) cannot be imported: it collects the whole of ``tests/`` (a module that imports an extra
at the top must skip, not fail to collect) and runs every test that builds the site, drives a browser
or starts JupyterLab (the fixtures ``site``, ``local_site``, ``server``, ``browser``, ``lab``...),
with the environment variables that turn a missing browser into a failure (TL_BROWSER, TL_AXE) unset,
as on a student's machine. Each of those tests must be skipped with one line that names what to
install; nothing may fail or error. No site is built and no browser starts: seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the importable names of each extra (the site's MathJax copy is checked by distribution, after these)
BLOCKED = {"site": ("sphinx", "myst_nb", "sphinx_book_theme"), "browser": ("playwright",), "course": ("nbgrader",)}
# a test with one of these fixtures needs an extra (the site's and the browser tests')
NEEDING = ("site", "local_site", "server", "browser", "scrollbar_browser", "lab")

RUNNER = r"""
import json, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # `import name` raises ImportError; importlib.util.find_spec gives None
import pytest

needing, outcomes = set(sys.argv[2].split(",")), []

class OnlyTheTestsThatNeedAnExtra:
    def pytest_collection_modifyitems(self, config, items):
        keep = [i for i in items if needing & set(getattr(i, "fixturenames", ()))]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    def pytest_collectreport(self, report):
        if report.outcome != "passed":
            outcomes.append((report.nodeid, "collect", report.outcome, _reason(report)))

    def pytest_runtest_logreport(self, report):
        if report.outcome != "passed" or report.when == "call":
            outcomes.append((report.nodeid, report.when, report.outcome, _reason(report)))

def _reason(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ")
    return str(report.longrepr)[-2000:] if report.longrepr else ""

code = pytest.main(["-q", "-p", "no:randomly", "-o", "addopts=-p no:cacheprovider", *sys.argv[4:]],
                   plugins=[OnlyTheTestsThatNeedAnExtra()])
with open(sys.argv[3], "w", encoding="utf-8") as out:
    json.dump({"exit": int(code), "outcomes": outcomes}, out)
"""


@pytest.mark.repo
def test_every_test_needing_a_missing_extra_skips_with_a_one_line_reason(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TL_BROWSER", "TL_AXE", "TL_SITE_BUILT")}
    blocked = ",".join(name for names in BLOCKED.values() for name in names)
    report = tmp_path / "outcomes.json"
    result = subprocess.run([sys.executable, "-X", "utf8", "-c", RUNNER, blocked, ",".join(NEEDING), str(report),
                             "tests"], cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8",
                            timeout=600, check=False)
    assert report.is_file(), f"pytest did not finish:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    found = json.loads(report.read_text(encoding="utf-8"))
    outcomes = found["outcomes"]
    bad = [o for o in outcomes if o[2] != "skipped"]
    assert not bad, "tests that fail or error without the extras:\n" + "\n".join(
        f"{node} ({when}: {outcome}): {reason[-600:]}" for node, when, outcome, reason in bad[:10])
    reasons = {node: reason for node, _, _, reason in outcomes}
    unclear = {node: r for node, r in reasons.items()
               if "\n" in r.strip() or not re.search(r'pip install -e "\.\[(site|browser|course)\]"|Chromium', r)}
    assert not unclear, f"skips whose reason is not one line naming what to install: {unclear}"
    for extra in BLOCKED:  # each extra's tests were among those that ran (and skipped)
        assert any(f'".[{extra}]"' in r for r in reasons.values()), f"no test skipped for the {extra} extra"
    assert found["exit"] == 0, f"pytest exited {found['exit']}:\n{result.stdout[-3000:]}"
    print(f"\nwithout the site, browser and course extras: {len(reasons)} tests and modules skipped, "
          f"each with one line naming the extra, none errored")
