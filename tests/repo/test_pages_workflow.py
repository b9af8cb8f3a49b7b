"""The workflow that publishes the site (.github/workflows/pages.yml) cannot run here, so it is read.

actionlint checks its syntax, expressions and action inputs in tests/test_workflows.py (every
workflow file); the structure test below always runs: it publishes from main, with the pages
permissions, builds with the same command as a developer (which fails on any warning) and uploads
exactly the folder that command writes.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def load() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_pages_workflow_builds_and_deploys_the_site():
    flow = load()
    triggers = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == ["main"] and "workflow_dispatch" in triggers
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    runs = " ".join(step.get("run", "") for step in build["steps"])
    assert '-e ".[site]"' in runs and "python docs/site/build.py --out build/site" in runs
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "build/site/html"  # build.py writes OUT/html
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
