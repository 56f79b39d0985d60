"""The way-up model (``vision.up``): which way up a tile's crop stands, on a real photo it never
saw (the model learnt from renders only)."""

from pathlib import Path

import numpy as np
import pytest

from vision.up import SIZE, WayUp, prepare

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def real_crops() -> list[np.ndarray]:
    """The tiles of the real example rack (standing upright in the photo), cut along their
    detector boxes as the recogniser cuts them."""
    import cv2

    from vision.crops import crop_tile
    from vision.recognizer import Recognizer

    recognizer = Recognizer.default()
    image = cv2.imread(str(ROOT / "examples" / "rack_real.jpg"))
    boxes, _ = recognizer.detect(image)
    assert len(boxes) == 10
    return [crop_tile(image, tuple(b), 96) for b in boxes]


def test_real_tiles_read_upright_and_turned(real_crops) -> None:
    """Each tile of a real rack, and the same crops turned a quarter, a half and three quarters
    round: the model names the turn for nearly every tile, and the rack's summed odds say
    upright as it stands and upside down turned over."""
    way_up = WayUp()
    for k in range(4):
        turned = [np.ascontiguousarray(np.rot90(c, k)) for c in real_crops]
        read = way_up.turns(turned).argmax(axis=1)
        assert (read == k).sum() >= 8, (k, read)
    assert way_up.upside_down(real_crops) < 0
    assert way_up.upside_down([np.ascontiguousarray(c[::-1, ::-1]) for c in real_crops]) > 0


def test_inputs_and_errors(tmp_path) -> None:
    """No crops give no turns; crops of any size are shrunk to the model's; a missing model
    file is named."""
    way_up = WayUp()
    assert way_up.turns([]).shape == (0, 4)
    assert way_up.upside_down([]) == 0.0
    assert prepare(np.zeros((96, 96, 3), np.uint8)).shape == (SIZE, SIZE, 3)
    p = way_up.turns([np.zeros((64, 64, 3), np.uint8), np.zeros((96, 96, 3), np.uint8)])
    assert p.shape == (2, 4) and np.allclose(p.sum(axis=1), 1.0)
    with pytest.raises(FileNotFoundError, match="way-up model"):
        WayUp(tmp_path / "none.onnx")
