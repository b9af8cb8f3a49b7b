"""The settings a site widget is drawn at (``widget_frames.py`` draws them; step 4 of its docstring).

- a slider: ``FRAMES_PER_SLIDER`` values spanning its range on its step grid, its starting value,
  and any in-range decimal the prose around the widget names (notebook 00's "try 0.995");
- a menu (``Choice``): every option; a menu that follows another control (``follows=``, 06a's ask
  menu, which offers the keys among the pairs) gets its options for each of its leader's values;
- a text box: a menu of its starting text and the texts the prose around it suggests
  (``suggested_texts``: `backticked` or "quoted" in a paragraph that says try), since no picture
  exists for text a reader has not typed; without suggestions it keeps its starting text;
- several controls: every combination when that is at most ``MOST_FRAMES``, else one control at a
  time from the starting values (a leader together with its followers counts as one control).
"""

from __future__ import annotations

import json
import re

FRAMES_PER_SLIDER = 8
MOST_FRAMES = 40              # more combinations than this: one control at a time
MOST_NAMED = 3                # numbers taken from the prose around a widget, at most
TRY = re.compile(r"\btry(?:ing)?\b", re.IGNORECASE)  # a paragraph that suggests what to try
SUGGESTED = re.compile(r'`([^`]+)`|"([^"]+)"')    # the texts it suggests: `backticked` or "quoted"


def decimals(step) -> int:
    text = f"{step:.10f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def slider_values(spec, prose: str) -> list:
    """FRAMES_PER_SLIDER values on the step grid spanning [min, max], the start, and numbers the prose names."""
    ints = all(isinstance(v, int) for v in (spec.value, spec.min, spec.max, spec.step))
    places = decimals(spec.step)

    def snap(v):
        v = spec.min + round((v - spec.min) / spec.step) * spec.step
        v = min(max(v, spec.min), spec.max)
        return round(v) if ints else round(v, places)

    n = FRAMES_PER_SLIDER
    values = {snap(spec.min + (spec.max - spec.min) * i / (n - 1)) for i in range(n)} | {snap(spec.value)}
    # a decimal the prose names ("try 0.995"); an integer there is a layer or a section, not a setting
    named = [] if ints else [float(x) for x in re.findall(r"(?<![\w.])(\d+\.\d+)(?![\w.])", prose)]
    values |= {snap(x) for x in named if spec.min <= x <= spec.max and abs(snap(x) - x) < 1e-9}
    return sorted(values)[: n + 1 + MOST_NAMED]


def suggested_texts(prose: str) -> list[str]:
    """The texts the prose suggests for a text box: `backticked` or "quoted" in a paragraph that says try."""
    found = []
    for paragraph in re.split(r"\n\s*\n", prose):
        if TRY.search(paragraph):
            found += [" ".join((a or b).split()) for a, b in SUGGESTED.findall(paragraph)]  # a line break: a space
    return list(dict.fromkeys(found))


def menus(controls: dict, prose: str) -> dict:
    """The menus of a widget as the page shows them: {name: {"kind": "menu", ...}} for its Choices and
    its text boxes with suggested texts; a Choice that follows a control gets ``follows`` and
    ``options`` (its [label, value] options for each of the leader's values, in order)."""
    from tl_minimal.views.widgets import Choice, Text

    texts = [n for n, spec in controls.items() if isinstance(spec, Text)]
    suggested = suggested_texts(prose) if texts else []
    if suggested and len(texts) > 1:
        raise ValueError(f"the prose suggests texts {suggested}, but the widget has {len(texts)} text boxes: "
                         f"which one is meant cannot be told")
    shown = {}
    followers_last = sorted(controls.items(), key=lambda kv: getattr(kv[1], "follows", None) is not None)
    for name, spec in followers_last:
        base = {"kind": "menu", "label": spec.description or name, "hint": spec.hint}
        if isinstance(spec, Text) and suggested:
            values = list(dict.fromkeys([spec.value, *suggested]))
            shown[name] = {**base, "typed": True, "values": values, "labels": values}
        elif isinstance(spec, Choice):
            leader = shown.get(spec.follows) if spec.follows else None
            if leader is not None and "follows" in leader:
                raise ValueError(f"menu {name!r} follows {spec.follows!r}, itself a follower: not drawn")
            if spec.follows is None:
                lists = [spec.options]
            elif leader is None:  # its leader does not move on the site
                lists = [spec.options_for(controls[spec.follows].value)]
            else:
                try:
                    lists = [spec.options_for(v) for v in leader["values"]]
                except ValueError as err:
                    raise ValueError(f"a text the prose suggests for {spec.follows!r} ({leader['values']}) gives "
                                     f"menu {name!r} no options: {err}") from err
            options = [[list(o) if isinstance(o, tuple) else [str(o), o] for o in opts] for opts in lists]
            union = {json.dumps(o[1], sort_keys=True): o for opts in options for o in opts}
            shown[name] = {**base, "values": [o[1] for o in union.values()], "labels": [o[0] for o in union.values()]}
            if leader is not None:
                shown[name].update(follows=spec.follows, options=options)
    return shown


def settings(controls: dict, prose: str) -> tuple[dict, list[dict]]:
    """(the controls as the page shows them, every setting to draw)."""
    from itertools import product

    from tl_minimal.views.widgets import Slider

    shown, start = menus(controls, prose), {name: spec.value for name, spec in controls.items()}
    for name, spec in controls.items():
        if isinstance(spec, Slider):
            shown[name] = {"kind": "slider", "label": spec.description or name, "hint": spec.hint,
                           "values": slider_values(spec, prose), "places": decimals(spec.step)}
    shown = {name: shown[name] for name in controls if name in shown}  # the notebook's order
    for name in shown:
        shown[name]["start"] = start[name]

    def group(head: str) -> list[dict]:
        """Every setting of a control and the menus that follow it (each follower's options per value)."""
        followers = [n for n, c in shown.items() if c.get("follows") == head]
        return [{head: v, **dict(zip(followers, vs, strict=True))} for i, v in enumerate(shown[head]["values"])
                for vs in product(*([o[1] for o in shown[f]["options"][i]] for f in followers))]

    groups = [group(head) for head, c in shown.items() if "follows" not in c]
    if not groups or all(len(g) < 2 for g in groups):
        return shown, []
    combos = 1
    for g in groups:
        combos *= len(g)
    if combos <= MOST_FRAMES:
        todo = [{**start, **{k: v for part in parts for k, v in part.items()}} for parts in product(*groups)]
    else:
        todo = [{**start, **part} for g in groups for part in g]
    unique = {json.dumps(t, sort_keys=True, default=str): t for t in todo}
    return shown, list(unique.values())
