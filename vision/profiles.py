"""Per-set profiles: the shipped reader adapted to one player's tile set, and the data behind it.

Every Okey set is printed differently (the shade of blue and yellow, the numerals, the mark under
the number, the false joker's picture).  A *profile* is a small re-reader fitted on the CPU from
photos of that set (``istaka calibrate``, ``vision.training.calibrate``): it never changes the
shipped model, it re-reads what the shipped recogniser found.

- :func:`tile_features` describes each found tile by the classifier's own logits (recovered from
  its probabilities) and the colour of the tile's ink measured against its own face (so a warm or
  cool light does not move it), cut from the photo with ``vision.crops`` along the tile's box;
- :class:`Profile` holds its reader: a :class:`NetReader` (a copy of the classifier fine-tuned on
  the set, its own ONNX in the profile's folder, whose log-probabilities on each tile's box crop
  are averaged with the shipped reading's), or a :class:`Reader` (a factorised linear correction
  over those features: one term per colour, one per number, one per identity, added to the
  shipped logits); :meth:`Profile.apply` turns a ``Recognition`` into the profile's
  ``Recognition`` (same boxes, new probabilities);
- :class:`ProfiledRecognizer` wraps a ``Recognizer`` so scan, live and the service use a profile
  without knowing it;
- :func:`label_layout` assigns the labels of a calibration photo from its layout (four rows of
  1-13, one colour a row, and the false jokers), naming the tiles out of place;
- :class:`DataStore` keeps corrections and calibration crops, with consent, in a local data folder
  (YOLO-style labels beside the source photo); nothing leaves the machine.

Profiles live in ``profiles_dir()/NAME/`` (``profile.yaml`` + ``classifier.onnx`` or
``reader.npz``), by default
``~/.local/share/istaka/profiles`` (``$XDG_DATA_HOME`` respected; ``ISTAKA_HOME`` overrides the
whole data folder, ``ISTAKA_PROFILES`` the profiles folder alone).

Runtime only: numpy, OpenCV, PyYAML, ONNX Runtime.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from okey import Tile
from vision.crops import crop_tile
from vision.types import Recognition, TileReading

NUM_CLASSES = 53
FJ = 52
PROFILE_FILE = "profile.yaml"
READER_FILE = "reader.npz"
NET_FILE = "classifier.onnx"
PROFILE_KIND = "istaka-profile"
PROFILE_VERSION = 2  # 2: a fine-tuned classifier (NetReader) or the colour reader; 1: colour only
PROFILE_VERSIONS = (1, 2)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")
COLOUR_OF = np.array([k // 13 if k < FJ else 4 for k in range(NUM_CLASSES)])  # 4 = false joker
NUMBER_OF = np.array([k % 13 if k < FJ else 13 for k in range(NUM_CLASSES)])  # 13 = false joker


class ProfileError(ValueError):
    """A profile that cannot be made, found or used (bad name, missing files, wrong model)."""


# --------------------------------------------------------------------------- where things live


def data_home() -> Path:
    """istaka's local data folder: ``$ISTAKA_HOME``, else ``$XDG_DATA_HOME/istaka``, else
    ``~/.local/share/istaka``."""
    if os.environ.get("ISTAKA_HOME"):
        return Path(os.environ["ISTAKA_HOME"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "istaka"


def profiles_dir() -> Path:
    """Where named profiles live (``$ISTAKA_PROFILES`` or ``data_home()/profiles``)."""
    if os.environ.get("ISTAKA_PROFILES"):
        return Path(os.environ["ISTAKA_PROFILES"]).expanduser()
    return data_home() / "profiles"


def check_name(name: str) -> str:
    """A profile name: letters, digits, ``_ . -``, at most 48, not starting with a dot.

    >>> check_name("grandma-set")
    'grandma-set'
    """
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ProfileError(
            f"bad profile name {name!r}: use letters, digits, '_', '.', '-' (at most 48)"
        )
    return name


def list_profiles() -> list[dict[str, Any]]:
    """The saved profiles' manifests (name, created, figures), by name."""
    root = profiles_dir()
    out = []
    if root.is_dir():
        for path in sorted(root.iterdir()):
            manifest = path / PROFILE_FILE
            if manifest.is_file():
                try:
                    out.append(_read_manifest(manifest))
                except (ProfileError, OSError):
                    continue
    return out


def _read_manifest(path: Path) -> dict[str, Any]:
    import yaml

    raw = yaml.safe_load(path.read_text())
    if not isinstance(raw, dict) or raw.get("kind") != PROFILE_KIND:
        raise ProfileError(f"{path} is not an istaka profile")
    return raw


def classifier_digest(manifest: Path | None = None) -> str:
    """sha256 (first 16 hex) of the shipped classifier's ONNX weights: a profile is fitted to
    one classifier's logits and refuses another."""
    from vision.recognizer import MANIFEST, RecognizerSpec

    spec = RecognizerSpec.load(manifest or MANIFEST)
    weights = (spec.classifier or spec.detector).with_suffix(".onnx")
    return hashlib.sha256(weights.read_bytes()).hexdigest()[:16]


# --------------------------------------------------------------------------- features


INK_BINS = 12  # hue histogram of the ink, weighted by chroma
SHAPE = (12, 8)  # the ink mask, downsampled (rows, columns), for the numeral's shape


def ink_features(crop: np.ndarray) -> np.ndarray:
    """Colour of one tile's ink, against the tile's own face: a crop (BGR uint8) in, a vector out.

    The face colour is the median of the crop's brightest, least coloured pixels; dividing by it
    white-balances the crop on the tile itself.  Ink is what is darker or more coloured than the
    face, inside the middle of the crop.  Features: the ink's mean balanced BGR and its Lab
    chroma and lightness, the share of ink, a chroma-weighted hue histogram and the ink mask
    downsampled (the numeral's shape).
    """
    import cv2

    img = crop.astype(np.float32) + 1.0
    h, w = img.shape[:2]
    inner = img[int(0.08 * h) : int(0.92 * h), int(0.1 * w) : int(0.9 * w)]
    flat = inner.reshape(-1, 3)
    lum = flat.mean(axis=1)
    spread = flat.max(axis=1) - flat.min(axis=1)
    bright = lum >= np.quantile(lum, 0.6)
    candidates = flat[bright & (spread <= np.quantile(spread[bright], 0.5) + 1e-3)]
    face = np.median(candidates if len(candidates) else flat, axis=0)
    balanced = np.clip(inner / face[None, None, :], 0, 1.5)
    lab = cv2.cvtColor((np.clip(balanced, 0, 1) * 255).astype(np.uint8), cv2.COLOR_BGR2LAB)
    lab = lab.astype(np.float32)
    lightness, a, b = lab[..., 0] / 255.0, (lab[..., 1] - 128) / 128.0, (lab[..., 2] - 128) / 128.0
    chroma = np.hypot(a, b)
    ink = ((1.0 - lightness) > 0.18) | (chroma > 0.12)
    share = float(ink.mean())
    if ink.sum() < 4:
        ink = (1.0 - lightness) >= np.quantile(1.0 - lightness, 0.9)
    mean_bgr = balanced[ink].mean(axis=0)
    mean_lab = np.array([lightness[ink].mean(), a[ink].mean(), b[ink].mean()])
    hue = (np.degrees(np.arctan2(b[ink], a[ink])) % 360) / 360.0 * INK_BINS
    hist = np.bincount(
        np.minimum(hue.astype(int), INK_BINS - 1), weights=chroma[ink], minlength=INK_BINS
    )
    hist = hist / max(float(ink.sum()), 1.0)
    mask = cv2.resize(ink.astype(np.float32), SHAPE[::-1], interpolation=cv2.INTER_AREA)
    return np.concatenate(
        [mean_bgr, mean_lab * 2.0, [share * 4.0], hist * 4.0, mask.reshape(-1)]
    ).astype(np.float32)


INK_DIM = 3 + 3 + 1 + INK_BINS + SHAPE[0] * SHAPE[1]
CROP = 48  # px: the crop the ink is measured on


def logits_of(probs: np.ndarray) -> np.ndarray:
    """The classifier's logits up to a constant per row, recovered from its probabilities
    (the softmax is the network's last layer), centred on each row's mean."""
    logp = np.log(np.clip(np.asarray(probs, np.float64), 1e-30, None))
    logp = np.maximum(logp, -40.0)
    return (logp - logp.mean(axis=1, keepdims=True)).astype(np.float32)


def tile_crops(image: np.ndarray, boxes: list[tuple[float, ...]] | np.ndarray) -> list[np.ndarray]:
    """The crops the profile measures ink on: each box cut as ``vision.crops`` cuts it."""
    return [crop_tile(image, tuple(float(v) for v in b), CROP, 0.0) for b in boxes]


def tile_features(image: np.ndarray, boxes: Any, probs: np.ndarray) -> np.ndarray:
    """Features of found tiles: ``(k, 53 + INK_DIM)``: the classifier's centred logits and
    :func:`ink_features` of each tile's crop."""
    if len(boxes) == 0:
        return np.zeros((0, NUM_CLASSES + INK_DIM), np.float32)
    ink = np.stack([ink_features(c) for c in tile_crops(image, boxes)])
    return np.concatenate([logits_of(probs), ink], axis=1)


# --------------------------------------------------------------------------- the reader


def marginal_logs(shipped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log-probabilities of each colour (R, Y, B, K, false joker) and each number (1-13, false
    joker) under the shipped logits: a tile whose colour a profile corrects keeps the number the
    shipped reader saw, and the other way round."""
    z = shipped - shipped.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    by_colour = np.log(p @ np.eye(5)[COLOUR_OF] + 1e-9)
    by_number = np.log(p @ np.eye(14)[NUMBER_OF] + 1e-9)
    return by_colour, by_number


@dataclass
class Reader:
    """A factorised linear correction of the shipped logits over standardised features ``x``:

    ``logit[k] = scale * shipped[k] + m_c * log P(colour(k)) + m_n * log P(number(k)) +
    colour_term[colour(k)] + number_term[number(k)] + identity_term[k]``, the probabilities
    the shipped reader's marginals, each term ``x @ W + b`` of its own.  Colour terms learn a
    set's inks from all 13 tiles of each colour, number terms its numerals from all four
    colours, the identity term (kept small) what neither can say alone."""

    mean: np.ndarray
    std: np.ndarray
    scale: float
    w_colour: np.ndarray  # (F, 5)
    b_colour: np.ndarray
    w_number: np.ndarray  # (F, 14)
    b_number: np.ndarray
    w_identity: np.ndarray  # (F, 53)
    b_identity: np.ndarray

    marginals: np.ndarray = field(default_factory=lambda: np.zeros(2, np.float32))

    def logits(self, features: np.ndarray) -> np.ndarray:
        x = (features - self.mean) / self.std
        shipped = features[:, :NUM_CLASSES]
        colour = x @ self.w_colour + self.b_colour
        number = x @ self.w_number + self.b_number
        ident = x @ self.w_identity + self.b_identity
        by_colour, by_number = marginal_logs(shipped)
        return (
            self.scale * shipped
            + self.marginals[0] * by_colour[:, COLOUR_OF]
            + self.marginals[1] * by_number[:, NUMBER_OF]
            + colour[:, COLOUR_OF]
            + number[:, NUMBER_OF]
            + ident
        )

    def probs(self, features: np.ndarray) -> np.ndarray:
        z = self.logits(features)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self.__dict__.items()}

    @classmethod
    def from_arrays(cls, arrays: Any) -> Reader:
        values = {k: np.asarray(arrays[k]) for k in cls.__dataclass_fields__ if k in arrays}
        values["scale"] = float(values["scale"])
        return cls(**values)


def mix_logs(mine: np.ndarray, shipped: np.ndarray, weight: float) -> np.ndarray:
    """Probabilities from two readings of the same tiles: their log-probabilities averaged,
    ``weight`` on ``mine`` (a tile both agree on stays; where the profile is unsure the shipped
    reading decides)."""
    logp = weight * np.log(np.clip(mine, 1e-12, None)) + (1.0 - weight) * np.log(
        np.clip(shipped, 1e-12, None)
    )
    z = logp - logp.max(axis=1, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


class NetReader:
    """A copy of the classifier fine-tuned on one set (``vision.training.calibrate
    .finetune_classifier``), run with ONNX Runtime on each found tile's box crop (``crop_tile``
    at the classifier's input size); its log-probabilities are averaged with the shipped
    reading's (``weight`` on the profile's), so a tile the shipped model reads surely and the
    profile has learned nothing about reads as shipped."""

    def __init__(self, onnx_bytes: bytes, weight: float = 0.5, size: int = 96) -> None:
        self.onnx_bytes = bytes(onnx_bytes)
        self.weight = float(weight)
        self.size = int(size)
        self._session: Any = None

    def session(self) -> Any:
        if self._session is None:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = ort.InferenceSession(
                self.onnx_bytes, sess_options=options, providers=["CPUExecutionProvider"]
            )
        return self._session

    def crops(self, image: np.ndarray, boxes: Any) -> list[np.ndarray]:
        """The crops it reads: each box cut as ``Recognizer.classify`` cuts an unturned box."""
        from vision.crops import CROP_PAD

        return [crop_tile(image, tuple(float(v) for v in b), self.size, CROP_PAD) for b in boxes]

    def own_probs(self, crops: list[np.ndarray]) -> np.ndarray:
        """The fine-tuned copy's probabilities of the 53 identities (``(k, 53)``)."""
        if not crops:
            return np.zeros((0, NUM_CLASSES), np.float32)
        session = self.session()
        name = session.get_inputs()[0].name
        batch = np.stack([c[:, :, ::-1] for c in crops]).astype(np.float32) / 255.0
        batch = np.ascontiguousarray(batch.transpose(0, 3, 1, 2))
        out = np.concatenate(
            [session.run(None, {name: batch[i : i + 64]})[0] for i in range(0, len(batch), 64)]
        )[:, :NUM_CLASSES].astype(np.float64)
        return out / np.clip(out.sum(axis=1, keepdims=True), 1e-12, None)

    def probs(self, image: np.ndarray, boxes: Any, shipped: np.ndarray) -> np.ndarray:
        """The profile's probabilities ``(k, 53)`` of tiles at ``boxes`` read ``shipped``."""
        return mix_logs(self.own_probs(self.crops(image, boxes)), shipped, self.weight)


@dataclass
class Profile:
    """A named per-set reader: the manifest (``profile.yaml``) and the fitted reader (a
    :class:`NetReader` or a :class:`Reader`)."""

    name: str
    reader: Reader | NetReader
    manifest: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    @classmethod
    def load(cls, name_or_path: str | Path, *, check_model: bool = True) -> Profile:
        """A profile by name (in :func:`profiles_dir`) or by folder path."""
        text = str(name_or_path)
        path = Path(text)
        if not (path / PROFILE_FILE).is_file():
            if os.sep in text or "/" in text:
                raise ProfileError(f"no profile at {path} (no {PROFILE_FILE})")
            path = profiles_dir() / check_name(text)
            if not (path / PROFILE_FILE).is_file():
                known = ", ".join(p["name"] for p in list_profiles()) or "none yet"
                raise ProfileError(
                    f"no profile named {text!r} in {profiles_dir()} (saved: {known}); "
                    "make one with: istaka calibrate --profile NAME PHOTO"
                )
        manifest = _read_manifest(path / PROFILE_FILE)
        if int(manifest.get("version", 0)) not in PROFILE_VERSIONS:
            raise ProfileError(f"{path}: profile version {manifest.get('version')} unknown")
        if check_model and manifest.get("classifier") != classifier_digest():
            raise ProfileError(
                f"profile {manifest.get('name')!r} was made for another classifier: "
                "calibrate again with this model"
            )
        reader_file = path / manifest.get("reader", READER_FILE)
        reader: Reader | NetReader
        if reader_file.suffix == ".onnx":
            reader = NetReader(
                reader_file.read_bytes(),
                weight=float(manifest.get("mix", 0.5)),
                size=int(manifest.get("crop", 96)),
            )
        else:
            with np.load(reader_file) as arrays:
                reader = Reader.from_arrays(arrays)
        return cls(
            name=str(manifest.get("name", path.name)), reader=reader, manifest=manifest, path=path
        )

    def save(self, folder: Path | None = None) -> Path:
        """Write ``profile.yaml`` and the reader (``classifier.onnx`` or ``reader.npz``) into
        ``folder`` (default: by name)."""
        import yaml

        folder = Path(folder) if folder else profiles_dir() / check_name(self.name)
        folder.mkdir(parents=True, exist_ok=True)
        own: dict[str, Any]
        if isinstance(self.reader, NetReader):
            (folder / NET_FILE).write_bytes(self.reader.onnx_bytes)
            own = {"reader": NET_FILE, "mix": self.reader.weight, "crop": self.reader.size}
        else:
            np.savez(folder / READER_FILE, **self.reader.arrays())
            own = {"reader": READER_FILE}
        for stale in {NET_FILE, READER_FILE} - {own["reader"]}:
            (folder / stale).unlink(missing_ok=True)
        keep = ("kind", "version", "name", "reader", "mix", "crop")
        manifest = {
            "kind": PROFILE_KIND,
            "version": PROFILE_VERSION,
            "name": self.name,
            **own,
            **{k: v for k, v in self.manifest.items() if k not in keep},
        }
        (folder / PROFILE_FILE).write_text(yaml.safe_dump(manifest, sort_keys=False))
        self.manifest, self.path = manifest, folder
        return folder

    def reread(self, image: np.ndarray, boxes: Any, probs: np.ndarray) -> np.ndarray:
        """The profile's probabilities ``(k, 53)`` for tiles found at ``boxes`` whose shipped
        probabilities are ``probs``."""
        if len(boxes) == 0:
            return np.zeros((0, NUM_CLASSES), np.float32)
        if isinstance(self.reader, NetReader):
            return self.reader.probs(image, boxes, probs)
        return self.reader.probs(tile_features(image, boxes, probs))

    def apply(self, image: np.ndarray, recognition: Recognition) -> Recognition:
        """The same tiles re-read by this profile (boxes and detection scores unchanged)."""
        if not recognition.tiles:
            return recognition
        t0 = time.perf_counter()
        probs = np.stack([t.probs for t in recognition.tiles])
        new = self.reread(image, [t.box for t in recognition.tiles], probs)
        tiles = []
        for t, p in zip(recognition.tiles, new, strict=True):
            best = int(p.argmax())
            tiles.append(
                replace(
                    t,
                    tile=Tile(best),
                    probs=p,
                    confidence=float(p[best] * t.detection_confidence),
                )
            )
        timings = dict(recognition.timings_ms)
        timings["profile"] = (time.perf_counter() - t0) * 1000
        timings["total"] = timings.get("total", 0.0) + timings["profile"]
        return replace(recognition, tiles=tiles, timings_ms=timings)


class ProfiledRecognizer:
    """A recogniser whose readings pass through a profile; everything else is the wrapped one's
    (``spec``, ``backend``, ``detect``, ``classify``)."""

    def __init__(self, recognizer: Any, profile: Profile) -> None:
        self.recognizer = recognizer
        self.profile = profile

    def recognize(self, image_bgr: np.ndarray) -> Recognition:
        return self.profile.apply(image_bgr, self.recognizer.recognize(image_bgr))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.recognizer, name)


def with_profile(recognizer: Any, profile: str | Path | Profile | None) -> Any:
    """``recognizer`` reading through ``profile`` (a name, a folder or a Profile); None: as is."""
    if profile is None or profile == "":
        return recognizer
    if not isinstance(profile, Profile):
        profile = Profile.load(profile)
    return ProfiledRecognizer(recognizer, profile)


# --------------------------------------------------------------------------- calibration layout


@dataclass
class LayoutTile:
    """One found tile of a calibration photo and the label the layout gives it."""

    index: int  # position in the Recognition
    row: int  # 0-based row, top to bottom
    column: int  # 0-based, left to right in its row
    label: Tile | None  # None: not used for learning (out of place, or extra)
    read: Tile  # what the shipped reader read
    note: str = ""


@dataclass
class LayoutReading:
    """What a calibration photo was understood as."""

    tiles: list[LayoutTile]
    rows: list[str]  # per row: "R", "Y", "B", "K" or "FJ"
    problems: list[str]  # tiles out of place, missing, extra: named

    @property
    def labelled(self) -> list[LayoutTile]:
        return [t for t in self.tiles if t.label is not None]

    def summary(self) -> str:
        """The rows as understood, a tile read otherwise by the shipped reader marked
        ``label(read)``, then the problems."""
        lines = []
        for r, colour in enumerate(self.rows):
            cells = []
            for t in sorted((t for t in self.tiles if t.row == r), key=lambda t: t.column):
                if t.label is None:
                    cells.append(f"[{t.read}?]")
                elif t.label != t.read:
                    cells.append(f"{t.label}({t.read})")
                else:
                    cells.append(str(t.label))
            name = {"R": "red", "Y": "yellow", "B": "blue", "K": "black", "FJ": "false jokers"}
            lines.append(f"  row {r + 1} ({name.get(colour, colour)}): " + " ".join(cells))
        return "\n".join(lines)


class LayoutError(ProfileError):
    """A calibration photo that does not show the layout."""


def _rows_of(centres: np.ndarray, heights: np.ndarray) -> list[list[int]]:
    """Group tile centres into rows (the layout may be turned a little): the rows' direction is
    the median direction to each tile's nearest neighbour; rows are split where the turned
    centres' heights jump by more than half a tile."""
    n = len(centres)
    if n < 2:
        return [list(range(n))]
    d = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    np.fill_diagonal(d, np.inf)
    near = d.argmin(axis=1)
    vec = centres[near] - centres
    ang = np.arctan2(vec[:, 1], vec[:, 0])
    ang = (ang + np.pi / 2) % np.pi - np.pi / 2  # fold left/right
    ang = ang[np.abs(ang) < np.pi / 4]
    theta = float(np.median(ang)) if len(ang) else 0.0
    c, s = np.cos(-theta), np.sin(-theta)
    turned = centres @ np.array([[c, s], [-s, c]])
    order = np.argsort(turned[:, 1], kind="stable")
    rows: list[list[int]] = [[int(order[0])]]
    gap = 0.5 * float(np.median(heights))
    for i, j in zip(order[:-1], order[1:], strict=True):
        if turned[j, 1] - turned[i, 1] > gap:
            rows.append([])
        rows[-1].append(int(j))
    return [sorted(r, key=lambda k: turned[k, 0]) for r in rows]


def _align(logp: np.ndarray, skip_tile: float = 12.0, skip_slot: float = 1.0) -> list[int | None]:
    """Monotone alignment of a row's tiles (``logp``: ``(n, 13)`` log-probabilities of each
    number) to the numbers 1-13: each tile gets a number or None (an extra tile), numbers may
    stay empty (a missing tile), order kept.  Dynamic programming, maximising the summed
    log-probabilities minus the skips' costs."""
    n = len(logp)
    best = np.full((n + 1, 14), -np.inf)
    move = np.zeros((n + 1, 14), np.int8)  # 0 match, 1 skip tile, 2 skip slot
    best[0, :] = -skip_slot * np.arange(14)
    best[:, 0] = -skip_tile * np.arange(n + 1)
    move[0, 1:], move[1:, 0] = 2, 1
    for i in range(1, n + 1):
        for j in range(1, 14):
            options = (
                best[i - 1, j - 1] + logp[i - 1, j - 1],
                best[i - 1, j] - skip_tile,
                best[i, j - 1] - skip_slot,
            )
            k = int(np.argmax(options))
            best[i, j], move[i, j] = options[k], k
    out: list[int | None] = [None] * n
    i, j = n, 13
    while i > 0:
        if j == 0 or move[i, j] == 1:
            i -= 1
        elif move[i, j] == 0:
            out[i - 1] = j - 1
            i, j = i - 1, j - 1
        else:
            j -= 1
    return out


def label_layout(recognition: Recognition, max_problems: int = 4) -> LayoutReading:
    """Labels for a calibration photo of the layout: four rows of 1-13 left to right, one colour
    a row (any order of colours), and the false jokers (a row of their own, or at a row's end);
    or a part of it (two colours on a rack's two rows, the jokers in front: two such photos
    hold the whole layout).

    Each row's colour is the one the shipped reader sees most in it; numbers follow the order
    (aligned with what the reader reads, so a missing or extra tile shifts nothing).  A tile whose
    reading says it belongs elsewhere (two neighbours swapped, a tile of another row) is named and
    left out of learning; a colour or numeral misread inside a row that fits the layout is the
    set's own print and is kept with the layout's label (that is what the profile learns).
    Tiles the detector did not find are named and simply not learned from.  Raises
    ``LayoutError`` when the photo does not show the layout, or when more than ``max_problems``
    tiles are out of place or extra.
    """
    readings = recognition.tiles
    if len(readings) < 20:
        raise LayoutError(
            f"found {len(readings)} tiles: a calibration photo shows the four colours as four "
            "rows of 1-13 (and the false jokers)"
        )
    centres = np.array([t.centre for t in readings], np.float64)
    heights = np.array([max(t.height, t.width) for t in readings])
    rows = _rows_of(centres, heights)
    probs = np.stack([np.asarray(t.probs, np.float64) for t in readings])
    colour_p = probs @ np.eye(5)[COLOUR_OF]  # (k, 5): R, Y, B, K, false joker
    number_p = (probs @ np.eye(14)[NUMBER_OF])[:, :13]
    problems: list[str] = []
    tiles: list[LayoutTile] = []
    # false jokers: a short row mostly read as FJ, or FJ readings at a row's ends
    row_colours: list[str] = []
    colour_rows: list[int] = []
    # a short row of its own is the false jokers' when the reader sees them there, or when it
    # is the one row beside four long ones (an unseen joker picture reads as anything)
    long_rows = sum(len(m) >= 7 for m in rows)
    for r, members in enumerate(rows):
        fj_share = float(np.mean([colour_p[i, 4] for i in members]))
        short = len(members) <= 4
        if short and (fj_share >= 0.5 or long_rows == len(rows) - 1):
            row_colours.append("FJ")
        else:
            row_colours.append("?")
            colour_rows.append(r)
    if not 1 <= len(colour_rows) <= 4 or any(len(rows[r]) < 7 for r in colour_rows):
        sizes = ", ".join(str(len(rows[r])) for r in colour_rows)
        raise LayoutError(
            f"found {len(colour_rows)} rows of numbered tiles ({sizes} tiles): lay out the four "
            "colours as four rows of 1-13, rows apart (or two on a rack's two rows a photo)"
        )
    # each colour row's colour: the assignment of distinct colours to the rows that the
    # reader's colour probabilities like best (at most 4! orders)
    from itertools import permutations

    score = np.array(
        [[np.log(colour_p[rows[r], c] + 1e-6).sum() for c in range(4)] for r in colour_rows]
    )
    k = len(colour_rows)
    order = max(permutations(range(4), k), key=lambda p: sum(score[i, p[i]] for i in range(k)))
    for i, r in enumerate(colour_rows):
        row_colours[r] = "RYBK"[order[i]]
    for r, members in enumerate(rows):
        if row_colours[r] == "FJ":
            for k, i in enumerate(members):
                tiles.append(LayoutTile(i, r, k, Tile(FJ), readings[i].tile))
            continue
        colour = "RYBK".index(row_colours[r])
        # a false joker at either end of a colour row is a false joker
        body = list(members)
        ends = []
        while body and colour_p[body[-1], 4] > 0.5:
            ends.append(body.pop())
        while body and colour_p[body[0], 4] > 0.5:
            ends.append(body.pop(0))
        numbers = _align(np.log(number_p[body] + 1e-4))
        for i in ends:
            tiles.append(LayoutTile(i, r, members.index(i), Tile(FJ), readings[i].tile))
        for i, n in zip(body, numbers, strict=True):
            read = readings[i].tile
            column = members.index(i)
            if n is None:
                problems.append(f"row {r + 1}: an extra tile read as {read} (left out)")
                tiles.append(LayoutTile(i, r, column, None, read, "extra"))
                continue
            label = Tile(colour * 13 + n)
            tiles.append(LayoutTile(i, r, column, label, read))
        taken = {n for n in numbers if n is not None}
        missing = [f"{'RYBK'[colour]}{n + 1}" for n in range(13) if n not in taken]
        if missing:
            problems.append(
                f"row {r + 1}: no tile found for {', '.join(missing)} (not learned from)"
            )
    _mark_out_of_place(tiles, probs, problems)
    bad = sum(1 for t in tiles if t.label is None)
    if bad > max_problems:
        raise LayoutError(
            f"{bad} tiles out of place or extra (at most {max_problems}): " + "; ".join(problems)
        )
    if len([t for t in tiles if t.label is not None]) < 10 * k:
        raise LayoutError(
            f"fewer than {10 * k} tiles could be labelled from the layout: " + "; ".join(problems)
        )
    tiles.sort(key=lambda t: (t.row, t.column))
    return LayoutReading(tiles=tiles, rows=row_colours, problems=problems)


def _mark_out_of_place(
    tiles: list[LayoutTile], probs: np.ndarray, problems: list[str], sure: float = 0.9
) -> None:
    """Leave out of learning the tiles the reader is sure belong elsewhere in the layout: a tile
    read surely (``sure``) as another tile's label when that other tile is read surely as this
    one's (a swap), or read surely as a number two or more away from its place."""
    by_label = {t.label: t for t in tiles if t.label is not None}
    for t in tiles:
        if t.label is None or t.read == t.label or probs[t.index, t.read.index] < sure:
            continue
        other = by_label.get(t.read)
        swapped = (
            other is not None
            and other.read == t.label
            and probs[other.index, other.read.index] >= sure
        )
        far = (
            not t.label.is_false_joker
            and not t.read.is_false_joker
            and abs(t.read.number - t.label.number) >= 2
        )
        if swapped or far:
            where = f"row {t.row + 1}, place {t.column + 1}"
            problems.append(
                f"{where}: the layout says {t.label} but the tile reads {t.read} "
                f"({'swapped with its neighbour' if swapped else 'out of place'}; left out)"
            )
            t.note = "out of place"
            t.label = None


# --------------------------------------------------------------------------- the data folder


def data_dir() -> Path:
    """Where kept crops live: ``data_home()/data`` (``$ISTAKA_DATA`` overrides)."""
    if os.environ.get("ISTAKA_DATA"):
        return Path(os.environ["ISTAKA_DATA"]).expanduser()
    return data_home() / "data"


class DataStore:
    """Labelled tiles kept with the user's consent, in a local folder, YOLO-style::

        DIR/images/<id>.jpg       the source photo (once per photo, named by its content hash)
        DIR/labels/<id>.txt       one line per kept tile: class cx cy w h (normalised)
        DIR/records.jsonl         one line per kept tile: photo, box (pixels), label, what the
                                  shipped reader read, source (correction, calibration), when

    Nothing is sent anywhere.  Only :meth:`keep` writes, and callers pass the consent they got.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root else data_dir()

    def keep(
        self,
        image_jpeg_or_bgr: bytes | np.ndarray,
        tiles: list[tuple[tuple[float, float, float, float], Tile | str, Tile | str | None]],
        *,
        source: str,
        consent: bool,
        profile: str | None = None,
    ) -> int:
        """Keep labelled tiles of one photo: ``tiles`` = (box xyxy pixels, right label, what was
        read).  Without ``consent`` nothing is written and 0 returned."""
        if not consent or not tiles:
            return 0
        import cv2

        if isinstance(image_jpeg_or_bgr, bytes | bytearray):
            data = bytes(image_jpeg_or_bgr)
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
            if image is None:
                raise ValueError("the photo to keep is not an image")
        else:
            image = image_jpeg_or_bgr
            ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
            if not ok:
                raise ValueError("cannot encode the photo")
            data = buf.tobytes()
        h, w = image.shape[:2]
        photo_id = hashlib.sha256(data).hexdigest()[:20]
        (self.root / "images").mkdir(parents=True, exist_ok=True)
        (self.root / "labels").mkdir(parents=True, exist_ok=True)
        photo = self.root / "images" / f"{photo_id}.jpg"
        if not photo.exists():
            photo.write_bytes(data)
        label_file = self.root / "labels" / f"{photo_id}.txt"
        existing = self._records_by_photo().get(photo_id, [])
        lines, records = [], []
        for box, label, read in tiles:
            label = Tile.parse(label) if isinstance(label, str) else label
            read_t = Tile.parse(read) if isinstance(read, str) else read
            x1, y1, x2, y2 = (float(v) for v in box)
            if x2 <= x1 or y2 <= y1:
                raise ValueError(f"empty box {box}")
            if any(_same_box(r["box"], (x1, y1, x2, y2)) for r in existing):
                continue  # this tile of this photo is kept already
            lines.append(
                f"{label.index} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} "
                f"{(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}"
            )
            records.append(
                {
                    "photo": photo.name,
                    "box": [round(v, 2) for v in (x1, y1, x2, y2)],
                    "label": str(label),
                    "read": str(read_t) if read_t is not None else None,
                    "source": source,
                    "profile": profile,
                    "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                }
            )
        if not records:
            return 0
        with label_file.open("a") as f:
            f.write("".join(line + "\n" for line in lines))
        with (self.root / "records.jsonl").open("a") as f:
            f.write("".join(json.dumps(r) + "\n" for r in records))
        return len(records)

    def records(self) -> list[dict[str, Any]]:
        """Every kept tile, oldest first."""
        path = self.root / "records.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def _records_by_photo(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for r in self.records():
            out.setdefault(Path(r["photo"]).stem, []).append(r)
        return out

    def crops(self, source: str | None = None) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """(photo, record) of every kept tile (``source``: only those), photos loaded once."""
        import cv2

        out = []
        cache: dict[str, np.ndarray | None] = {}
        for r in self.records():
            if source and r["source"] != source:
                continue
            if r["photo"] not in cache:
                cache[r["photo"]] = cv2.imread(str(self.root / "images" / r["photo"]))
            image = cache[r["photo"]]
            if image is not None:
                out.append((image, r))
        return out

    def export(self, out: Path) -> Path:
        """Copy the folder as a YOLO dataset (images/, labels/, data.yaml, records.jsonl) to
        ``out``."""
        out = Path(out)
        if out.exists() and any(out.iterdir()):
            raise FileExistsError(f"{out} exists and is not empty")
        for sub in ("images", "labels"):
            if (self.root / sub).is_dir():
                shutil.copytree(self.root / sub, out / sub)
        (out / "images").mkdir(parents=True, exist_ok=True)
        (out / "labels").mkdir(parents=True, exist_ok=True)
        if (self.root / "records.jsonl").is_file():
            shutil.copy2(self.root / "records.jsonl", out / "records.jsonl")
        from vision.types import CLASS_NAMES

        names = "\n".join(f"  {i}: {n}" for i, n in enumerate(CLASS_NAMES))
        (out / "data.yaml").write_text(
            f"# kept tiles exported by istaka data export\npath: .\ntrain: images\nval: images\n"
            f"names:\n{names}\n"
        )
        return out


def _same_box(a: Any, b: Any, tol: float = 1.0) -> bool:
    return all(abs(float(x) - float(y)) <= tol for x, y in zip(a, b, strict=True))


def recognition_from(tiles: list[TileReading], size: tuple[int, int]) -> Recognition:
    """A ``Recognition`` of given readings (tests, the service's kept readings)."""
    return Recognition(tiles=list(tiles), image_size=size)
