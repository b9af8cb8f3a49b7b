"""Things to play with: sliders, menus and text boxes that redraw a picture from ``plots.py``. In a live
notebook (a Jupyter kernel with ipywidgets) a helper returns the controls and a figure redrawn when a control
changes, with a PNG of its latest picture for the committed notebook; anywhere else (or ``static=True``) it
draws the figure once with the starting values and returns that ``Figure``.

Controls are small specs, so the fallback needs no ipywidgets: ``Slider(value, min, max, step)`` (ints: an
int slider), ``Text(value)`` (applied on Enter), ``Choice(value, options)`` (values or (label, value) pairs;
``follows="pairs", options_for=fn``: the options are ``fn(value of pairs)``), each with a ``description`` and
a ``hint`` (the rule for its input). A ValueError of ``draw`` replaces the picture with its message.
"""

from __future__ import annotations

import base64
import functools
import html
import re
import traceback
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt

from ..data import recall as data_recall
from ..data import text as data_text
from ..jupyter import in_jupyter_kernel
from . import plots, plots_retrieval
from .palette import RIGHT, WRONG

_ERROR_COLOUR, _HINT_COLOUR, _RIGHT_COLOUR = WRONG.colour, "#555555", RIGHT.colour  # words say it too


@dataclass
class Slider:
    value: float
    min: float
    max: float
    step: float
    description: str = ""
    hint: str = ""

    def make(self, name: str):
        import ipywidgets as w

        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (self.value, self.min, self.max, self.step))
        cls = w.IntSlider if ints else w.FloatSlider
        extra = {} if ints else {"readout_format": ".3f"}
        return cls(value=self.value, min=self.min, max=self.max, step=self.step,
                   description=self.description or name, continuous_update=False, **extra)


@dataclass
class Text:
    value: str
    description: str = ""
    hint: str = ""

    def make(self, name: str):
        import ipywidgets as w

        return w.Text(value=self.value, description=self.description or name, continuous_update=False,
                      layout=w.Layout(width="45%" if self.hint else "90%", min_width="300px"))


def option_values(options) -> list:
    """The values of drop-down options given as values or (label, value) pairs."""
    return [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]


@dataclass
class Choice:
    value: object
    options: tuple = ()
    description: str = ""
    hint: str = ""
    follows: str | None = None                   # the control whose value sets the options
    options_for: Callable | None = None          # options_for(value of `follows`) -> options

    def make(self, name: str, options=None):
        import ipywidgets as w

        options = list(self.options if options is None else options)  # a value not among them: a TraitError
        return w.Dropdown(value=self.value, options=options, description=self.description or name)


def has_frontend() -> bool:
    """True inside a Jupyter kernel with ipywidgets installed (a frontend may draw widgets)."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return in_jupyter_kernel()


def _figure_bundle(fig) -> tuple[dict, dict]:
    """A figure's display data (the notebook's own PNG rendering when there is one): (data, metadata)."""
    from IPython import get_ipython

    shell = get_ipython()
    data, metadata = shell.display_formatter.format(fig) if shell is not None else ({}, {})
    if "image/png" not in data:                                   # no inline backend: render it here
        from IPython.core.pylabtools import print_figure

        data, metadata = {"image/png": print_figure(fig, "png"), "text/plain": repr(fig)}, {}
    if isinstance(data["image/png"], bytes):
        data = {**data, "image/png": base64.b64encode(data["image/png"]).decode("ascii")}
    return data, metadata


@functools.cache
def _view_class():
    """InteractiveView, an ipywidgets VBox that also carries a PNG of its picture (built on first use)."""
    import ipywidgets as w

    class InteractiveView(w.VBox):
        """Controls, a message line and the picture; displays as the widget plus a PNG and a short text."""

        def __init__(self, children, controls: dict, message, output, summary: str):
            super().__init__(children)
            self.controls, self.message, self.output, self.summary = controls, message, output, summary
            self.picture: str | None = None                 # base64 PNG of the picture on show
            self.picture_meta: dict = {}                    # its alt text, size, smallest text (alt_text)

        def _repr_mimebundle_(self, **kwargs):
            data = super()._repr_mimebundle_(**kwargs)
            data["text/plain"] = self.summary
            if self.picture is None:
                return data
            data["image/png"] = self.picture
            return (data, {"image/png": self.picture_meta}) if self.picture_meta else data

    return InteractiveView


def interactive(draw, static: bool | None = None, **controls):
    """Controls + a figure redrawn by ``draw(**values) -> Figure`` whenever a control changes: an
    ``InteractiveView`` (make it the cell's last expression), or, without a frontend or with ``static=True``,
    the ``Figure`` drawn once. A ValueError on the starting values raises here; later it is the message."""
    if static or (static is None and not has_frontend()):
        fig = draw(**{name: spec.value for name, spec in controls.items()})
        plt.show()
        return fig
    live = _LiveFigure(draw, controls)
    live.draw_and_show()                                            # the starting values: errors raise here
    return live.view


class _LiveFigure:
    """One interactive figure in a kernel: the ipywidgets controls, a message line, the output
    that holds the picture, and the callbacks that redraw it when a control changes."""

    def __init__(self, draw, controls: dict):
        import ipywidgets as w

        self.draw, self.controls = draw, controls
        self.made = {name: spec.make(name, spec.options_for(controls[spec.follows].value))
                     if isinstance(spec, Choice) and spec.follows is not None else spec.make(name)
                     for name, spec in controls.items()}
        self.message = w.HTML(layout=w.Layout(display="none"))
        self.out = w.Output()
        rows = [w.HBox([self.made[n], w.HTML(f'<span style="color:{_HINT_COLOUR}">{html.escape(s.hint)}</span>')])
                if s.hint else self.made[n] for n, s in controls.items()]
        summary = f"[interactive figure; controls: {', '.join(controls)}; run the notebook to change them]"
        self.view = _view_class()([*rows, self.message, self.out], self.made, self.message, self.out, summary)
        self.busy = False                                           # True while a Choice's options change
        for control in self.made.values():
            control.observe(self.changed, names="value")

    def say(self, text: str):
        """Show ``text`` as the error line under the controls ("" hides it)."""
        self.message.value = f'<span style="color:{_ERROR_COLOUR}"><b>✗</b> {html.escape(text)}</span>' if text else ""
        self.message.layout.display = None if text else "none"

    def show(self, fig):
        data, metadata = _figure_bundle(fig)
        self.out.outputs = ({"output_type": "display_data", "data": data, "metadata": metadata},)
        self.view.picture, self.view.picture_meta = data["image/png"], metadata.get("image/png", {})

    def fail(self, err: Exception):
        """No picture (it would look current); the message says what went wrong."""
        self.out.outputs = ()
        self.view.picture, self.view.picture_meta = None, {}
        if isinstance(err, ValueError):
            self.say(str(err))
            return
        self.say(f"the picture could not be drawn: {type(err).__name__}: {err}")
        lines = "".join(traceback.format_exception(err)).splitlines()
        self.out.outputs = ({"output_type": "error", "ename": type(err).__name__, "evalue": str(err),
                             "traceback": lines},)

    def draw_and_show(self):
        """Draw with the controls' values and show the figure; close every figure the drawing opened."""
        before = set(plt.get_fignums())
        try:
            fig = self.draw(**{name: control.value for name, control in self.made.items()})
            if not isinstance(fig, plt.Figure):
                raise TypeError(f"draw must return a matplotlib Figure, got {type(fig).__name__}")
            self.show(fig)
        finally:
            for number in set(plt.get_fignums()) - before:          # nothing left for a later plt.show()
                plt.close(number)

    def redraw(self):
        try:
            self.draw_and_show()
            self.say("")
        except Exception as err:  # any error is shown beside the controls, never raised into the kernel
            self.fail(err)

    def follow(self, leader: str, value):
        """Give every Choice that follows ``leader`` the options for its new ``value``."""
        for name, spec in self.controls.items():
            if isinstance(spec, Choice) and spec.follows == leader:
                options = list(spec.options_for(value))
                if not options:
                    raise ValueError(f"no choices for {spec.description or name} from this {leader}")
                control, keep = self.made[name], self.made[name].value
                control.options = options
                control.value = keep if keep in option_values(options) else option_values(options)[0]

    def changed(self, change):
        if self.busy:
            return
        leader = next(name for name, control in self.made.items() if control is change.owner)
        self.busy = True
        try:
            self.follow(leader, change.new)
        except Exception as err:  # as in redraw
            self.fail(err)
            return
        finally:
            self.busy = False
        self.redraw()


# --- the widgets of the notebooks ------------------------------------------------------------

def pulse_memory_widget(lam: float = 0.9, T: int | None = None, static: bool | None = None):
    """A lambda slider redrawing the running state's memory of one pulse (``plots.pulse_memory``) beside a
    fixed lambda of 0.5."""
    def draw(lam):
        return plots.pulse_memory([0.5, lam], T=T)

    return interactive(draw, static, lam=Slider(lam, 0.05, 0.995, 0.005, "λ",
                                                 "keep gate in (0, 1); half-life ln(1/2) / ln(λ) tokens"))


def pair_memory_widget(snapshots: dict, labels=None, static: bool | None = None, title: str = "pair memory P_t"):
    """A position slider stepping through P_t: snapshots {t: [H, S, S]}, one layer's of
    ``plots.model_pair_memories``."""
    by_t = {int(t): P for t, P in snapshots.items()}

    def draw(t):
        nearest = min(sorted(by_t), key=lambda p: abs(p - t))        # positions may have gaps
        return plots.pair_memory_grid({nearest: by_t[nearest]}, labels, title=title)

    return interactive(draw, static, t=Slider(max(by_t), min(by_t), max(by_t), 1, "position t"))


def byte_prompt(text: str, max_len: int):
    """BOS + the UTF-8 bytes of ``text`` (no EOS), cut to ``max_len`` tokens: [T] int64."""
    return data_text.encode(text)[:-1][:max_len]


GATE_NAMES = {"gam": "γ (pair-memory keep gate)", "lam": "λ (running-state keep gate)"}


def gate_widget(model, text: str, key: str = "gam", static: bool | None = None):
    """Type a sentence (bytes with BOS, cut to the model's context), see the model's gates per layer and head
    (``plots.gate_heatmaps``); key: the gate shown first ("gam" or "lam"; a menu switches)."""
    if key not in GATE_NAMES:
        raise ValueError(f"key must be 'lam' (λ) or 'gam' (γ), got {key!r}")

    def draw(text, key):
        tokens = byte_prompt(text if text else " ", model.max_seq_len)
        gates = plots.model_gates(model, tokens, key)               # [L, T, H]
        return plots.gate_heatmaps(gates, plots.token_labels(tokens), name=GATE_NAMES[key][0],
                                   title=f"{GATE_NAMES[key]} of the trained {model.variant}")

    hint = f"any text, then Enter; the first {model.max_seq_len - 1} bytes are read"
    return interactive(draw, static, text=Text(text, "sentence", hint),
                       key=Choice(key, tuple((label, k) for k, label in GATE_NAMES.items()), "gate"))


# --- associative recall (notebook 06a) ---------------------------------------------------------

def pair_rule(layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT) -> str:
    """The rule of the recall pairs box, read from the layout: which keys and values exist."""
    last_key, last_value = layout.first_value - 1, layout.first_filler - 1
    return (f"pairs key=value, e.g. {layout.name(layout.first_key)}={layout.name(layout.first_value)}: "
            f"keys {layout.name(layout.first_key)}-{layout.name(last_key)}, values "
            f"{layout.name(layout.first_value)}-{layout.name(last_value)}, each key once")


def parse_pairs(text: str, layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT) -> list[tuple[int, int]]:
    """'k5=v13 k6=v20' -> [(5, 13), (6, 20)]; anything else is a ValueError that states the rule."""
    pieces = re.sub(r"\s*=\s*", "=", text.strip()).replace(",", " ").split()
    if not pieces:
        raise ValueError(f"no pairs: write {pair_rule(layout)}")
    pairs = []
    for piece in pieces:
        match = re.fullmatch(r"k(\d+)=v(\d+)", piece)
        if match is None:
            raise ValueError(f"cannot read {piece!r}: write {pair_rule(layout)}")
        k, v = int(match[1]), int(match[2])
        if not (layout.first_key <= k < layout.first_value and layout.first_value <= v < layout.first_filler):
            raise ValueError(f"{piece} is out of range: {pair_rule(layout)}")
        if k in dict(pairs):
            raise ValueError(f"{layout.name(k)} appears twice: {pair_rule(layout)}")
        pairs.append((k, v))
    return pairs


def recall_widget(models: dict, pairs: str = "k5=v13 k6=v20 k7=v17 k8=v14", ask: str = "k7", filler: int = 60,
                  model: str | None = None, max_len: int = 128,
                  layout: data_recall.RecallLayout = data_recall.PAPER_LAYOUT, static: bool | None = None):
    """Write key-value pairs, ask one key, and see where a trained model's memory reads: models {name: model
    with a key-value memory} (``plots_retrieval.read_at``); the filler stops where ``max_len`` tokens hold every key."""
    model = next(iter(models)) if model is None else model
    def names(x):
        return [layout.name(t) for t in x.tolist()]

    def key_options(text):
        return [(layout.name(k), k) for k, _ in parse_pairs(text, layout)]

    most_filler = max_len - 4 - 3 * layout.n_keys                 # BOS, 3 per pair, QUERY key ANSWER

    def draw(pairs, ask, filler, model):
        found = parse_pairs(pairs, layout)
        x, y = plots_retrieval.recall_sequence(found, ask, n_filler=filler, seed=0, layout=layout)
        r = plots_retrieval.read_at(models[model], x, y)
        fig, ax = plt.subplots(figsize=(plots.MAX_WIDTH, 3.4))
        plots_retrieval.position_bars(ax, r["weights"][0], names(x), plots_retrieval.recall_marks(x, y, layout),
                                   "retrieval weight", f"where {model} reads; read gate g = {r['read_gate'][0]:.2f}")
        right = bool(r["correct"][0])
        fig.suptitle(f"{model} answers {layout.name(int(r['pred'][0]))}: {'RIGHT' if right else 'WRONG'} "
                     f"(target {layout.name(int(r['target'][0]))})", fontsize=13, fontweight="bold",
                     color=_RIGHT_COLOUR if right else _ERROR_COLOUR)
        fig.tight_layout()
        return fig

    asked = re.fullmatch(r"k(\d+)", ask)
    if asked is None or int(asked[1]) not in dict(parse_pairs(pairs, layout)):
        raise ValueError(f"ask must name a key among the pairs {pairs!r}, like 'k7'; got {ask!r}")
    return interactive(
        draw, static,
        pairs=Text(pairs, "pairs", pair_rule(layout)),
        ask=Choice(int(asked[1]), tuple(key_options(pairs)), "ask", "only keys among the pairs",
                   follows="pairs", options_for=key_options),
        filler=Slider(filler, 0, most_filler, 1, "filler", "tokens between the pairs and the question"),
        model=Choice(model, tuple(models), "model"))
