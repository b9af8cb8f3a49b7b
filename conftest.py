"""pytest configuration shared by the unit tests and nbval's notebook runs."""

import pytest

# No MPLBACKEND is forced here: nbval's kernel then uses Jupyter's inline backend, exactly as
# nbconvert did when the committed outputs were made (a figure cell yields the same text/plain
# line in both), and plain pytest falls back to Agg by itself on a machine without a display.


def pytest_collectstart(collector):
    """nbval compares text outputs; pictures, HTML tables and widget views differ run to run."""
    if getattr(collector, "fspath", None) is not None and collector.fspath.ext == ".ipynb":
        collector.skip_compare += (
            "image/png",
            "image/svg+xml",
            "text/html",
            "application/javascript",
            "application/vnd.jupyter.widget-view+json",
            "application/vnd.jupyter.widget-state+json",
        )


# The required notebooks run under nbval once: in the wheel test, from the installed course outside the clone
# (tests/repo/test_wheel.py), which proves what the suite's own run of them proved (every cell runs, its text
# matches the committed output) and that the installed wheel alone runs them. So when that test is in the
# session, the suite's nbval run leaves them out; `pytest --nbval notebooks/X.ipynb` alone still runs X here.
WHEEL_NBVAL = "tests/repo/test_wheel.py::test_notebooks_run_from_a_copy_outside_the_clone"


def pytest_collection_modifyitems(config, items):
    """Leave out nbval's cells of the required notebooks when the wheel test runs them (WHEEL_NBVAL)."""
    wheel = next((item for item in items if item.nodeid == WHEEL_NBVAL), None)
    if wheel is None:
        return
    required = {f"notebooks/{name}" for name in wheel.module.NOTEBOOKS}
    moved = [item for item in items if item.nodeid.split("::", 1)[0] in required]
    if moved:
        config.hook.pytest_deselected(items=moved)
        items[:] = [item for item in items if item.nodeid.split("::", 1)[0] not in required]


# With pytest-xdist, `python run.py test` runs two workers with `--dist loadfile`: each file is one unit
# of work, so a notebook's cells share one kernel and run in order and a module's fixtures are made once.
# The site's test modules (tests/repo/test_site*.py) count as one file, so they run in one worker and
# share one built site (test_site.py's `site` fixture builds it once per process). (xdist's loadgroup
# would say the same with marks, but it renames tests by a Node attribute pytest 9 no longer reads.)
SITE_UNIT = "site"


def unit_of_work(nodeid: str) -> str:
    """The unit a test runs in: the site's modules together, any other file alone."""
    file = nodeid.split("::", 1)[0]
    return SITE_UNIT if file.rsplit("/", 1)[-1].startswith("test_site") else file


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: ignored without it
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with the site's modules as one file (unit_of_work); other modes as xdist has them."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndTheSite(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of_work(nodeid)

    return FilesAndTheSite(config, log)
