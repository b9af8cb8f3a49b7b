"""The one set of colours every picture uses, safe for colour-blind readers: the eight colours of
Okabe and Ito ("Color Universal Design", 2008) stay distinct under every common colour-vision
deficiency. Continuous values keep their perceptual colour maps (vlag, mako, rocket, viridis), and
no picture carries a meaning by colour alone: right / wrong also differ by a hatch and a word. No
other file of ``views/`` writes a colour code other than a grey (``tests/course/test_palette.py``).
"""

from __future__ import annotations

from collections import namedtuple

import matplotlib as mpl
from cycler import cycler

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
CATEGORICAL = [OKABE_ITO[name] for name in ("blue", "orange", "bluish_green", "vermillion", "reddish_purple",
                                            "sky_blue", "yellow", "black")]
BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY, YELLOW = CATEGORICAL[:7]
INK = "#444444"  # secondary text


def tint(colour: str, white: float = 0.75) -> str:
    """``colour`` mixed with a share ``white`` (0..1) of white: a pale fill that keeps text readable."""
    rgb = mpl.colors.to_rgb(colour)
    return mpl.colors.to_hex([c + (1 - c) * white for c in rgb])


# how one verdict is drawn: text colour, box fill and hatch (the words RIGHT / WRONG are written too)
Verdict = namedtuple("Verdict", "colour fill hatch")
RIGHT = Verdict(colour=GREEN, fill=tint(GREEN, 0.65), hatch="///")
WRONG = Verdict(colour=VERMILLION, fill=tint(VERMILLION, 0.65), hatch="xx")


def apply() -> None:
    """Make CATEGORICAL matplotlib's colour cycle (every later figure and axes uses it)."""
    mpl.rcParams["axes.prop_cycle"] = cycler(color=CATEGORICAL)
