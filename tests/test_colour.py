"""vision.colour: white balance taken from the tiles' faces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision.colour import MIN_TILES, balance, cast_gains, cast_strength, face_colour

FACE = (190, 215, 228)  # an off-white tile face, BGR
INK = (150, 60, 20)  # blue ink


def _rack(face=FACE, ink=INK, table=(40, 70, 110), n: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A brown table with ``n`` tiles in a row, each a face with a dark stroke of ink."""
    image = np.zeros((200, 60 * n + 20, 3), np.uint8)
    image[:] = table
    boxes = []
    for k in range(n):
        x1, y1 = 20 + 60 * k, 50
        image[y1 : y1 + 70, x1 : x1 + 45] = face
        image[y1 + 15 : y1 + 50, x1 + 18 : x1 + 27] = ink  # a "1": a fifth of the face
        boxes.append((x1, y1, x1 + 45, y1 + 70))
    return image, np.float32(boxes)


def test_face_colour_is_the_faces_not_the_ink_or_the_table() -> None:
    image, boxes = _rack()
    assert face_colour(image, boxes).tolist() == list(FACE)


def test_face_colour_ignores_a_few_boxes_on_something_else() -> None:
    image, boxes = _rack(n=5)
    image[0:40, 0:60] = (10, 10, 10)  # a dark hand
    hand = np.float32([[0, 0, 60, 40]])
    assert face_colour(image, np.concatenate([boxes, hand])).tolist() == list(FACE)


def test_too_few_tiles_or_empty_boxes_say_nothing() -> None:
    image, boxes = _rack(n=MIN_TILES - 1)
    assert face_colour(image, boxes) is None
    assert face_colour(image, np.zeros((0, 4), np.float32)) is None
    # boxes outside the frame or too thin to hold a middle are skipped, not counted
    image, boxes = _rack(n=MIN_TILES)
    outside = np.float32([[900, 900, 950, 960], [10, 10, 11, 80]])
    assert face_colour(image, np.concatenate([boxes[:-1], outside])) is None
    assert face_colour(image, np.concatenate([boxes, outside])).tolist() == list(FACE)


def test_gains_undo_a_cast_and_keep_the_exposure() -> None:
    cast = np.float32([1.0, 0.8, 1.0])  # magenta: green low
    image, boxes = _rack()
    seen = balance(image, cast)
    gains = cast_gains(face_colour(seen, boxes), np.float32(FACE))
    assert np.prod(gains) == pytest.approx(1.0, abs=1e-5)  # geometric mean 1
    assert (gains * cast / (gains * cast).mean()) == pytest.approx(np.ones(3), abs=0.01)
    restored = face_colour(balance(seen, gains), boxes)
    assert restored / restored.mean() == pytest.approx(np.float32(FACE) / np.mean(FACE), abs=0.01)
    assert cast_strength(gains) == pytest.approx(np.log(1 / 0.8) * 2 / 3, abs=0.01)


def test_no_cast_no_change() -> None:
    gains = cast_gains(np.float32(FACE), np.float32(FACE))
    assert gains.tolist() == pytest.approx([1, 1, 1])
    assert cast_strength(gains) == pytest.approx(0, abs=1e-6)
    image, _ = _rack()
    assert np.array_equal(balance(image, gains), image)


@given(
    st.tuples(*[st.floats(20, 255) for _ in range(3)]),
    st.tuples(*[st.floats(20, 255) for _ in range(3)]),
)
def test_gains_take_any_face_to_the_reference_colour(face, reference) -> None:
    gains = cast_gains(np.float32(face), np.float32(reference))
    moved = np.float32(face) * gains
    # the same colour (proportions) as the reference, the same geometric brightness as the face
    assert moved / moved.sum() == pytest.approx(np.float32(reference) / sum(reference), rel=1e-4)
    assert np.prod(moved) ** (1 / 3) == pytest.approx(np.prod(face) ** (1 / 3), rel=1e-4)
    assert cast_strength(gains) >= 0
