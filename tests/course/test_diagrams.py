"""The drawn diagrams draw, return a Figure that fits a notebook, and name every symbol they promise."""

import matplotlib.pyplot as plt  # the root conftest.py selects the off-screen Agg backend
import pytest

from tl_minimal.running_state import DEFAULT_CHUNK
from tl_minimal.views import diagrams


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _texts(fig) -> str:
    """Every piece of text drawn in the figure (titles, labels, annotations, legends), joined."""
    return "\n".join(t.get_text() for t in fig.findobj(plt.Text))


def _fits_a_notebook(fig):
    width, _ = fig.get_size_inches()
    assert width <= 9.5, f"figure is {width} in wide: more than about 950 px in a notebook"
    sizes = [t.get_fontsize() for t in fig.findobj(plt.Text) if t.get_text().strip()]
    assert min(sizes) >= 9, f"text as small as {min(sizes)} pt"


@pytest.mark.parametrize("highlight", [None, "s", "P", "r"])
def test_layer_diagram_names_every_symbol(highlight):
    fig = diagrams.layer_diagram(highlight)
    assert isinstance(fig, plt.Figure)
    text = _texts(fig)
    missing = [sym for sym in diagrams.LAYER_SYMBOLS if sym not in text]
    assert not missing, f"layer diagram does not name {missing}"
    for step in ("running state", "pair memory", "readout"):
        assert step in text
    _fits_a_notebook(fig)


def test_layer_diagram_rejects_an_unknown_highlight():
    with pytest.raises(ValueError, match="highlight must be None or one of"):
        diagrams.layer_diagram("gates")


def test_model_diagram_names_every_symbol():
    fig = diagrams.model_diagram()
    assert isinstance(fig, plt.Figure)
    text = _texts(fig)
    missing = [sym for sym in diagrams.MODEL_SYMBOLS if sym not in text]
    assert not missing, f"model diagram does not name {missing}"
    for part in ("embedding", "causal convolution", "final LayerNorm", "late fusion", "tied head", "FFN"):
        assert part in text
    _fits_a_notebook(fig)


def test_chunk_diagram_draws_the_blocks_and_the_carried_states():
    C = DEFAULT_CHUNK
    fig = diagrams.chunk_diagram(T=4 * C, C=C)
    assert isinstance(fig, plt.Figure)
    text = _texts(fig)
    assert f"T = {4 * C}, C = {C}" in text
    for n in range(1, 4):  # the chunk-end states carried between the four chunks
        assert f"s_{{{n * C - 1}}}" in text
    assert "T/C = 4" in text
    _fits_a_notebook(fig)


def test_chunk_diagram_needs_whole_chunks():
    with pytest.raises(ValueError, match="multiple of C"):
        diagrams.chunk_diagram(T=20, C=16)
