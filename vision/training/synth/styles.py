"""Style pools: typefaces, inks, tile bodies, racks and tables, split into *train* and *heldout*.

The held-out pool shares nothing with the training pool in typefaces, ink shades and rack textures,
so the committed evaluation set (rendered from ``heldout``) measures how the model copes with a tile
set it has never seen.  Backgrounds, light and camera come from the same ranges in both pools: they
are nuisance, not identity.

>>> sorted(POOLS)
['framing', 'heldout', 'train', 'wide', 'wide2']
>>> set(POOLS["train"].fonts) & set(POOLS["heldout"].fonts)
set()
>>> set(POOLS["wide"].fonts) & set(POOLS["heldout"].fonts), "flower" in POOLS["wide"].joker_marks
(set(), False)
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, replace
from pathlib import Path

FONT_DIR = Path(__file__).with_name("fonts")

Colour = tuple[int, int, int]  # BGR


@dataclass(frozen=True)
class InkRange:
    """HSV-like description of one ink: hue range (OpenCV 0..180), saturation and value ranges."""

    hue: tuple[float, float]
    sat: tuple[float, float]
    val: tuple[float, float]


@dataclass(frozen=True)
class RackStyle:
    """A rack material: texture kind and the colours it may take (BGR)."""

    texture: str
    colours: tuple[Colour, ...]


@dataclass(frozen=True)
class StylePool:
    name: str
    fonts: tuple[str, ...]  # file names in FONT_DIR
    inks: dict[str, tuple[InkRange, ...]]  # colour letter -> ranges (one chosen per set)
    racks: tuple[RackStyle, ...]
    suits: tuple[str, ...]  # symbol in the small circle under the number
    joker_marks: tuple[str, ...]
    number_scale: tuple[float, float] = (0.40, 0.50)  # number height / face height, drawn per set
    # the share of sets whose false joker carries a shape drawn at random instead of a named mark
    # (``vision.training.synth.face.random_mark``): "a mark and no number" is what makes a false
    # joker
    random_marks: float = 0.0


# Inks: OpenCV hue is degrees / 2.  Red wraps around 0/180.
_TRAIN_INKS = {
    "R": (InkRange((172, 180), (170, 240), (170, 235)), InkRange((0, 5), (180, 250), (160, 225))),
    "Y": (
        InkRange((12, 17), (200, 255), (210, 250)),  # orange
        InkRange((20, 25), (190, 250), (200, 245)),  # golden yellow
    ),
    "B": (
        InkRange((104, 112), (170, 240), (120, 190)),  # royal blue
        InkRange((68, 78), (170, 240), (90, 150)),  # green sets
    ),
    "K": (InkRange((0, 180), (0, 40), (15, 45)),),
}
_HELDOUT_INKS = {
    "R": (InkRange((165, 171), (140, 200), (170, 230)),),  # pinkish red
    "Y": (InkRange((17, 20), (170, 220), (215, 255)),),  # amber
    "B": (
        InkRange((96, 103), (160, 230), (140, 200)),  # cyan-ish blue
        InkRange((58, 66), (150, 220), (110, 160)),  # yellowish green
    ),
    "K": (InkRange((100, 130), (30, 80), (30, 60)),),  # navy-black
}

_TRAIN_RACKS = (
    RackStyle(
        "wood", ((60, 110, 170), (40, 80, 135), (30, 55, 95), (90, 150, 200), (70, 120, 160))
    ),
    RackStyle("painted", ((40, 40, 150), (60, 100, 40), (120, 60, 30), (230, 230, 230))),
    RackStyle("plastic", ((25, 25, 25), (85, 85, 85), (40, 40, 45))),
)
_HELDOUT_RACKS = (
    RackStyle("wood", ((100, 165, 215), (20, 40, 70))),  # pale beech, wenge
    RackStyle("painted", ((30, 30, 110), (90, 50, 20))),  # burgundy, navy
    RackStyle("plastic", ((130, 130, 125), (20, 60, 20))),  # light grey, dark green
)

# The wide training pool's inks: each colour may drift anywhere in its own wedge of the hue
# wheel (red 163-180 and 0-6, yellow/orange 11-27, blue 88-122, the green sets 55-86), at
# saturations and brightness from a worn, dim print to a fresh one; black may carry a tint of any
# hue (white balance and real inks make it bluish, brownish, greenish) as long as it stays dark.
# Drawn from the wheel, not from the held-out pool: it covers the held-out inks too, so on the
# held-out set a model trained on this pool is no longer tested on unseen inks (the card says so).
_WIDE_INKS = {
    "R": (InkRange((163, 180), (120, 250), (140, 240)), InkRange((0, 6), (140, 250), (140, 235))),
    "Y": (InkRange((11, 20), (170, 255), (195, 255)), InkRange((20, 27), (160, 250), (190, 250))),
    "B": (InkRange((88, 122), (120, 245), (100, 210)), InkRange((55, 86), (130, 240), (80, 170))),
    "K": (InkRange((0, 180), (0, 45), (10, 60)), InkRange((0, 180), (45, 90), (15, 55))),
}

# Typefaces of the wide training pool: the six of ``train`` and 27 more from Debian's font
# packages (licences beside them in fonts/).  Left out on purpose: the held-out four and their
# clones (TeX Gyre Adventor, Pagella, Schola and Heros Condensed, Liberation Sans Narrow), and
# faces whose default figures are old-style (EB Garamond, Vollkorn): tiles print lining figures.
_WIDE_FONTS = (
    "Andika-Bold.ttf",
    "B612-Bold.otf",
    "BebasNeue-Bold.otf",
    "Caladea-Bold.ttf",
    "Cantarell-Bold.otf",
    "Carlito-Bold.ttf",
    "ComicNeue-Bold.otf",
    "DejaVuSansCondensed-Bold.ttf",
    "DejaVuSerifCondensed-Bold.ttf",
    "FiraCode-Bold.ttf",
    "FreeSerifBold.ttf",
    "Hack-Bold.ttf",
    "Inter-Bold.otf",
    "Lato-Black.ttf",
    "LeagueSpartan-Bold.otf",
    "LinBiolinum_RB.otf",
    "LinLibertine_RB.otf",
    "NimbusMonoPS-Bold.otf",
    "NimbusRoman-Bold.otf",
    "NotoSans-Bold.ttf",
    "NotoSerif-Bold.ttf",
    "OpenSans-Bold.ttf",
    "OpenSans-CondBold.ttf",
    "Quicksand-Bold.ttf",
    "Roboto-Bold.ttf",
    "RobotoCondensed-Bold.ttf",
    "RobotoSlab-Bold.otf",
)


def _bgr_from_hsv(h: float, s: float, v: float) -> Colour:
    r, g, b = colorsys.hsv_to_rgb(h, s, v)
    return int(b * 255), int(g * 255), int(r * 255)


def _ramp(a: Colour, b: Colour, n: int) -> tuple[Colour, ...]:
    """``n`` colours evenly from ``a`` to ``b``."""
    return tuple(
        tuple(int(x + (y - x) * i / (n - 1)) for x, y in zip(a, b, strict=True)) for i in range(n)
    )


# The wide pool's racks: wood in nine browns from pale to nearly black, paint in twelve hues at two
# shades and white, plastic in six greys and four colours.  Generated as ramps and a hue wheel,
# not picked: they come near the held-out racks' colours too.
_WIDE_RACKS = (
    RackStyle("wood", _ramp((135, 185, 230), (18, 30, 50), 9)),
    RackStyle(
        "painted",
        tuple(_bgr_from_hsv(k / 12, 0.75, v) for k in range(12) for v in (0.35, 0.6))
        + ((230, 230, 230),),
    ),
    RackStyle(
        "plastic",
        _ramp((22, 22, 22), (200, 200, 200), 6)
        + ((30, 70, 30), (80, 40, 20), (30, 30, 90), (150, 170, 185)),
    ),
)

POOLS: dict[str, StylePool] = {
    "train": StylePool(
        name="train",
        fonts=(
            "DejaVuSans-Bold.ttf",
            "LiberationSans-Bold.ttf",
            "FreeSansBold.ttf",
            "NimbusSans-Bold.otf",
            "URWBookman-Demi.otf",
            "LiberationSerif-Bold.ttf",
        ),
        inks=_TRAIN_INKS,
        racks=_TRAIN_RACKS,
        suits=("heart", "spade", "club", "dot", "none"),
        # more marks than real sets use, so "a mark and no number" is what makes a false joker
        # (the held-out pool's flower stays unseen)
        joker_marks=("clover", "star", "heart", "spade", "club", "dot"),
    ),
    "heldout": StylePool(
        name="heldout",
        fonts=("URWGothic-Demi.otf", "NimbusSansNarrow-Bold.otf", "C059-Bold.otf", "P052-Bold.otf"),
        inks=_HELDOUT_INKS,
        racks=_HELDOUT_RACKS,
        suits=("heart", "spade", "club", "dot", "none"),
        joker_marks=("clover", "star", "flower"),
    ),
}
# ``wide``: the training pool grown for typefaces, inks, racks and false-joker marks never seen
# in a test (suits as ``train``).  ``train`` itself stays as it was, so every earlier seed
# renders the same picture.
POOLS["wide"] = StylePool(
    name="wide",
    fonts=POOLS["train"].fonts + _WIDE_FONTS,
    inks=_WIDE_INKS,
    racks=_WIDE_RACKS,
    suits=POOLS["train"].suits,
    joker_marks=POOLS["train"].joker_marks
    + ("diamond", "ring", "crescent", "cross", "triangle", "hexagon", "smiley"),
    number_scale=(0.36, 0.54),
)

# ``wide2``: ``wide`` whose false jokers carry, in half of the sets, a random shape (an irregular
# polygon, or two or three overlapping ellipses and triangles) drawn from its own seed: a
# real set's mark may be any picture.
POOLS["wide2"] = replace(POOLS["wide"], name="wide2", random_marks=0.5)

# ``framing``: ``wide2`` with the sets players bring that the other pools lack: navy and teal
# blues beside the black, mustard and deep orange yellows, a ring (circle) under the number as
# well as the suits, and the false-joker pictures of ``wide2`` (half of them random shapes).
# Engraved numerals come with every pool (``face.sample_set_style``).  Drawn from the hue wheel,
# not from the held-out pool's inks.
_FRAMING_INKS = {
    **_WIDE_INKS,
    "B": _WIDE_INKS["B"]
    + (
        InkRange((108, 122), (140, 240), (55, 110)),  # navy
        InkRange((84, 96), (140, 235), (80, 150)),  # teal
    ),
    "Y": _WIDE_INKS["Y"]
    + (
        InkRange((21, 27), (150, 225), (150, 205)),  # mustard
        InkRange((9, 14), (200, 255), (190, 245)),  # deep orange
    ),
}
POOLS["framing"] = replace(
    POOLS["wide2"],
    name="framing",
    inks=_FRAMING_INKS,
    suits=POOLS["wide2"].suits + ("ring", "diamond"),
)

# Tables: the same for both pools (nuisance).  Colours BGR.
TABLES: tuple[RackStyle, ...] = (
    RackStyle("wood", ((70, 120, 170), (40, 75, 120), (25, 45, 80), (110, 160, 200))),
    RackStyle("marble", ((225, 228, 230), (200, 205, 210), (60, 60, 65))),
    RackStyle("cloth", ((180, 180, 180), (60, 60, 140), (120, 90, 60), (200, 210, 220))),
    RackStyle("felt", ((50, 110, 30), (100, 70, 20), (40, 40, 120))),
    RackStyle("checks", ((40, 40, 190), (140, 80, 30), (50, 120, 50))),
    RackStyle("plastic", ((170, 175, 175), (210, 210, 205), (90, 95, 100))),
)


def pool(name: str) -> StylePool:
    """The style pool called ``name`` (``train`` or ``heldout``)."""
    try:
        return POOLS[name]
    except KeyError:
        raise ValueError(f"unknown style pool {name!r}; use one of: {', '.join(POOLS)}") from None
