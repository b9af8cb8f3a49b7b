"""pytest configuration shared by the unit tests and nbval's notebook runs."""

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
