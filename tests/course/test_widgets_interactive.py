"""The live widgets, driven from Python: pictures, rules beside the inputs, bad input, menus that follow.

A widget here is built with ``static=False`` (the controls a live kernel shows) and its controls
are set as a person would; the tests read the message line and the picture it shows. The same
behaviour in a real browser is checked by test_browser.py.
"""

from __future__ import annotations

import base64

import matplotlib.pyplot as plt
import pytest
import torch

from tl_minimal import build_model
from tl_minimal.data import recall as data_recall
from tl_minimal.data import text as data_text
from tl_minimal.views import plots, widgets

pytest.importorskip("ipywidgets")

PNG_MAGIC = b"\x89PNG"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def gated():
    torch.manual_seed(0)
    return build_model("gated_hybrid_repaired", 64, d_model=16, n_layers=1, n_heads=2, max_seq_len=128,
                       dropout=0.0).eval()


def shows_picture(view) -> bool:
    outputs = view.output.outputs
    return len(outputs) == 1 and base64.b64decode(outputs[0]["data"]["image/png"])[:4] == PNG_MAGIC


def shows_error(view) -> bool:
    return view.message.layout.display != "none" and "✗" in view.message.value


def test_view_displays_as_widget_and_picture():
    """Before a notebook runs, JupyterLab and static renderers pick the PNG (not the widget's repr)."""
    view = widgets.pulse_memory_widget(0.9, static=False)
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"])[:4] == PNG_MAGIC
    assert not bundle["text/plain"].startswith("VBox(") and "lam" in bundle["text/plain"]
    assert shows_picture(view) and not shows_error(view)
    before = bundle["image/png"]
    view.controls["lam"].value = 0.5
    assert view._repr_mimebundle_()["image/png"] != before  # the bundle follows the picture on show
    assert not plt.get_fignums()  # nothing left open for a later plt.show()


def test_inputs_show_their_rules():
    view = widgets.pulse_memory_widget(0.9, static=False)
    hint = view.children[0].children[1].value
    assert "half-life" in hint and "(0, 1)" in hint


def test_bad_input_says_what_is_valid_and_removes_the_picture():
    def draw(n):
        if not n.isdigit():
            raise ValueError(f"{n!r} is not a number: write digits, like 12")
        fig, ax = plt.subplots()
        ax.plot(range(int(n)))
        return fig

    view = widgets.interactive(draw, static=False, n=widgets.Text("3", "n", "digits"))
    view.controls["n"].value = "three"
    assert shows_error(view) and "write digits" in view.message.value
    assert view.output.outputs == () and view.picture is None  # no stale picture, none in the bundle
    assert "image/png" not in view._repr_mimebundle_()
    view.controls["n"].value = "5"
    assert shows_picture(view) and not shows_error(view)
    with pytest.raises(ValueError, match="write digits"):  # bad starting values are the caller's error
        widgets.interactive(draw, static=False, n=widgets.Text("three"))
    assert not plt.get_fignums()


def test_a_bug_in_draw_shows_its_traceback_in_place_of_the_picture():
    def draw(n):
        if n == "boom":
            raise KeyError("not bad input: a bug")
        return plt.subplots()[0]

    view = widgets.interactive(draw, static=False, n=widgets.Text("ok"))
    view.controls["n"].value = "boom"
    assert shows_error(view) and "KeyError" in view.message.value
    assert [o["output_type"] for o in view.output.outputs] == ["error"]


def test_draw_must_return_a_figure():
    view = widgets.interactive(lambda n: plt.subplots()[0] if n == "ok" else None, static=False,
                               n=widgets.Text("ok"))
    view.controls["n"].value = "no"
    assert shows_error(view) and "must return a matplotlib Figure" in view.message.value


def test_a_choice_can_follow_another_control():
    def options_for(text):
        return [(w.upper(), w) for w in text.split()]

    view = widgets.interactive(lambda words, pick: plt.subplots()[0], static=False,
                               words=widgets.Text("a b c"),
                               pick=widgets.Choice("b", (), follows="words", options_for=options_for))
    pick = view.controls["pick"]
    assert pick.options == (("A", "a"), ("B", "b"), ("C", "c"))
    view.controls["words"].value = "b d"
    assert pick.value == "b" and widgets.option_values(pick.options) == ["b", "d"]  # kept: still offered
    view.controls["words"].value = "e f"
    assert pick.value == "e"  # gone: the first option


def test_gate_menu_uses_the_symbols_of_the_plots():
    torch.manual_seed(0)
    model = build_model("triple_latent", data_text.VOCAB_SIZE, d_model=8, n_layers=1, n_heads=2, state_dim=4,
                        max_seq_len=32, dropout=0.0)
    view = widgets.gate_widget(model, "hello", key="lam", static=False)
    labels = [label for label, _ in view.controls["key"].options]
    assert labels[0].startswith("γ") and labels[1].startswith("λ") and view.controls["key"].value == "lam"
    view.controls["key"].value = "gam"
    assert shows_picture(view) and not shows_error(view)


def test_pair_rule_is_read_from_the_layout():
    assert widgets.pair_rule() == ("pairs key=value, e.g. k5=v13: keys k5-k12, values v13-v20, each key once")
    small = data_recall.RecallLayout(n_keys=3, n_values=4)
    assert "keys k5-k7, values v8-v11" in widgets.pair_rule(small)
    assert widgets.parse_pairs("k5=v8  k7 = v11,k6=v9", small) == [(5, 8), (7, 11), (6, 9)]
    for bad, why in [("k5=v8 k5=v9", "twice"), ("k8=v8", "out of range"), ("k5:v8", "cannot read"), (" ", "no pairs")]:
        with pytest.raises(ValueError, match=why) as err:
            widgets.parse_pairs(bad, small)
        assert "keys k5-k7, values v8-v11" in str(err.value)


def test_recall_widget(gated):
    view = widgets.recall_widget({"gated_hybrid_repaired": gated}, pairs="k5=v13 k6=v20 k7=v17", ask="k6", static=False)
    pairs, ask, filler = view.controls["pairs"], view.controls["ask"], view.controls["filler"]
    assert "keys k5-k12, values v13-v20" in view.children[0].children[1].value  # the rule beside the box
    assert ask.options == (("k5", 5), ("k6", 6), ("k7", 7)) and ask.value == 6
    assert filler.max == 128 - 4 - 3 * 8  # every valid example fits the models' context
    pairs.value = "k9=v14 k6=v15"
    assert ask.options == (("k9", 9), ("k6", 6)) and ask.value == 6 and shows_picture(view)
    pairs.value = "k9=v14 k13=v15"  # k13 is a value's range, not a key
    assert shows_error(view) and "keys k5-k12" in view.message.value and view.output.outputs == ()
    assert ask.options == (("k9", 9), ("k6", 6))  # unchanged until the pairs are valid again
    pairs.value = "k12=v20"
    assert ask.options == (("k12", 12),) and ask.value == 12 and shows_picture(view) and not shows_error(view)
    with pytest.raises(ValueError, match="ask must name a key among the pairs"):
        widgets.recall_widget({"gated_hybrid_repaired": gated}, pairs="k5=v13", ask="k6", static=False)


def test_recall_widget_states_its_verdict_first(gated):
    fig = widgets.recall_widget({"gated_hybrid_repaired": gated}, static=True)
    verdict = fig._suptitle
    assert ": RIGHT" in verdict.get_text() or ": WRONG" in verdict.get_text()
    texts = [t for t in fig.findobj(plt.Text) if t.get_visible() and t.get_text().strip() and t is not verdict]
    assert all(t.get_fontsize() < verdict.get_fontsize() for t in texts)  # the result is the largest text


def test_static_fallback_needs_no_frontend(gated):
    assert isinstance(widgets.recall_widget({"gated_hybrid_repaired": gated}), plt.Figure)
    assert isinstance(plots.pulse_memory((0.9,)), plt.Figure)
