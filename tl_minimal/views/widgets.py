"""Things to play with: sliders and text boxes that redraw a picture from ``plots.py``.

Every widget here degrades to a picture. In a live notebook (a Jupyter kernel with ipywidgets)
a helper returns the controls and a live figure, redrawn when a control changes; anywhere else
(a plain script, pytest, ipywidgets missing, or ``static=True``) it draws the figure once with
the controls' starting values and returns that ``Figure``. Widgets do not survive on GitHub
(the notebooks are committed without widget state), so notebooks draw a static figure first.

Controls are described by small specs, so the fallback needs no ipywidgets:
    Slider(value, min, max, step)   a float slider (an int slider when all four are ints)
    Text(value)                     a text box (applied on Enter or when it loses focus)
    Choice(value, options)          a drop-down

    interactive(draw, **controls)   the general helper: draw(**values) returns a Figure
    pulse_memory_widget             lambda slider -> the state's memory of a pulse
    pair_memory_widget              position slider -> P_t per head of a trained model
    gate_widget                     type a sentence -> a trained model's gates per layer and head
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt

from ..data import text as data_text
from . import plots


@dataclass
class Slider:
    value: float
    min: float
    max: float
    step: float
    description: str = ""

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

    def make(self, name: str):
        import ipywidgets as w

        return w.Text(value=self.value, description=self.description or name, continuous_update=False,
                      layout=w.Layout(width="90%"))


@dataclass
class Choice:
    value: object
    options: tuple
    description: str = ""

    def make(self, name: str):
        import ipywidgets as w

        if self.value not in self.options:
            raise ValueError(f"Choice value {self.value!r} is not one of {self.options!r}")
        return w.Dropdown(value=self.value, options=list(self.options), description=self.description or name)


def has_frontend() -> bool:
    """True inside a Jupyter kernel with ipywidgets installed (a frontend may draw widgets)."""
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def interactive(draw, static: bool | None = None, **controls):
    """Controls + a figure redrawn by ``draw(**values) -> Figure`` whenever a control changes.

    Returns an ipywidgets ``VBox`` (display it: make it the cell's last expression), or, without
    a frontend or with ``static=True``, the ``Figure`` drawn once with the starting values.
    """
    for name, spec in controls.items():
        if not isinstance(spec, (Slider, Text, Choice)):
            raise TypeError(f"control {name!r} must be a Slider, Text or Choice, got {type(spec).__name__}")
    if static or (static is None and not has_frontend()):
        fig = draw(**{name: spec.value for name, spec in controls.items()})
        plt.show()
        return fig

    import ipywidgets as w

    made = {name: spec.make(name) for name, spec in controls.items()}
    out = w.Output()

    def redraw(change=None):
        out.clear_output(wait=True)
        with out:                                                   # live use: outputs go into the widget
            draw(**{name: control.value for name, control in made.items()})
            plt.show()

    for control in made.values():
        control.observe(redraw, names="value")
    # the first picture is put into the widget's state directly rather than printed into it: a
    # headless run (nbconvert, nbval) then sees no stray outputs, and nbclient's Output-widget
    # hook (which fails when widget state is not stored) never fires
    fig = draw(**{name: spec.value for name, spec in controls.items()})
    out.append_display_data(fig)
    plt.close(fig)
    return w.VBox([*made.values(), out])


def pulse_memory_widget(lam: float = 0.9, T: int = 40, compare: tuple = (0.5,), static: bool | None = None):
    """A lambda slider redrawing the running state's memory of one pulse (``plots.pulse_memory``).

    ``compare`` lambdas stay on the plot as fixed references.
    """
    def draw(lam):
        return plots.pulse_memory([*compare, lam], T=T)

    return interactive(draw, static, lam=Slider(lam, 0.05, 0.995, 0.005, "λ"))


def pair_memory_widget(snapshots: dict, labels=None, heads=None, start: int | None = None,
                       static: bool | None = None, title: str = "pair memory P_t"):
    """A position slider stepping through P_t: snapshots {t: [H, S, S]} (``plots.model_pair_memory``)."""
    if not snapshots:
        raise ValueError("snapshots is empty: give {position: P [H, S, S]}")
    positions = sorted(int(t) for t in snapshots)
    lo, hi = positions[0], positions[-1]
    start = hi if start is None else int(start)
    by_t = {int(t): P for t, P in snapshots.items()}

    def draw(t):
        nearest = min(positions, key=lambda p: abs(p - t))          # positions may have gaps
        return plots.pair_memory_grid({nearest: by_t[nearest]}, labels, heads, title)

    return interactive(draw, static, t=Slider(start, lo, hi, 1, "position t"))


def byte_prompt(text: str, max_len: int):
    """BOS + the UTF-8 bytes of ``text`` (no EOS), cut to ``max_len`` tokens: [T] int64."""
    return data_text.encode(text)[:-1][:max_len]


def gate_widget(model, text: str, key: str = "gam", encode=None, static: bool | None = None):
    """Type a sentence, see the model's gates per layer and head (``plots.gate_heatmaps``).

    encode(text) -> tokens [T] (default: byte level with BOS, cut to the model's context).
    key: the gate shown first, "gam" (pair memory) or "lam" (running state); a menu switches.
    """
    if key not in ("lam", "gam"):
        raise ValueError(f"key must be 'lam' or 'gam', got {key!r}")
    encode = encode or (lambda s: byte_prompt(s, model.max_seq_len))
    names = {"lam": "λ (running-state keep gate)", "gam": "γ (pair-memory keep gate)"}

    def draw(text, key):
        tokens = encode(text if text else " ")
        gates = plots.model_gates(model, tokens, key)               # [L, T, H]
        return plots.gate_heatmaps(gates, plots.token_labels(tokens), name=key,
                                   title=f"{names[key]} of the trained {model.variant}")

    return interactive(draw, static, text=Text(text, "sentence"), key=Choice(key, ("gam", "lam"), "gate"))
