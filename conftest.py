"""pytest configuration shared by the unit tests and nbval's notebook runs."""

import os

# Figures are drawn off-screen when notebooks run under pytest (nbval starts its own kernel,
# which inherits this environment).
os.environ.setdefault("MPLBACKEND", "Agg")


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
