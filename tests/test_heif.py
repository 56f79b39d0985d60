"""HEIC photos (``vision.heif``), as phones save them: read by ``load_image`` and the service's
upload checks like a JPEG, standing the way the phone held them, and refused clearly when broken."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest

from service.errors import ApiError
from service.images import decode_image, image_size, sniff
from vision.errors import NotAnImageError
from vision.pipeline import load_image

pillow_heif = pytest.importorskip("pillow_heif")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "rack_real.jpg"


def heic_bytes(bgr: np.ndarray, orientation: int | None = None) -> bytes:
    """``bgr`` encoded as HEIC (quality 90); with an EXIF ``orientation``, stored turned so."""
    from PIL import Image

    pillow_heif.register_heif_opener()
    image = Image.fromarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    extra = {}
    if orientation is not None:
        exif = image.getexif()
        exif[0x0112] = orientation
        extra["exif"] = exif.tobytes()
    buffer = io.BytesIO()
    image.save(buffer, format="HEIF", quality=90, **extra)
    return buffer.getvalue()


def small_example() -> np.ndarray:
    image = cv2.imread(str(EXAMPLE))
    return cv2.resize(image, (320, 320 * image.shape[0] // image.shape[1]))


def test_a_heic_photo_reads_as_its_pixels(tmp_path: Path) -> None:
    source = small_example()
    path = tmp_path / "IMG_0001.HEIC"
    path.write_bytes(heic_bytes(source))
    image = load_image(path)
    assert image.shape == source.shape and image.dtype == np.uint8
    # lossy, but the same picture in the same channel order (a swap of red and blue moves far more)
    assert float(np.abs(image.astype(int) - source.astype(int)).mean()) < 6
    swapped = source[:, :, ::-1].astype(int)
    assert float(np.abs(image.astype(int) - swapped).mean()) > 10


def test_a_heic_photo_stands_the_way_the_phone_held_it(tmp_path: Path) -> None:
    # left half red, right half black, stored with "turn 90 degrees clockwise to show"
    source = np.zeros((64, 96, 3), np.uint8)
    source[:, :48] = (0, 0, 255)
    path = tmp_path / "portrait.heic"
    path.write_bytes(heic_bytes(source, orientation=6))
    image = load_image(path)
    assert image.shape == (96, 64, 3)  # standing
    assert image[:40, :, 2].mean() > 200 and image[56:, :, 2].mean() < 40  # the red half on top


def test_a_broken_heic_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "cut.heic"
    path.write_bytes(heic_bytes(small_example())[:400])
    with pytest.raises(NotAnImageError, match=r"cut.heic: the HEIF image could not be \w+"):
        load_image(path)


def test_the_service_sniffs_measures_and_decodes_heic() -> None:
    data = heic_bytes(np.full((64, 96, 3), 200, np.uint8))
    assert sniff(data) == "heif"
    assert image_size(data) == ("heif", (96, 64))
    assert decode_image(data, max_pixels=96 * 64).shape == (64, 96, 3)
    with pytest.raises(ApiError) as too_big:
        decode_image(data, max_pixels=96 * 64 - 1)
    assert too_big.value.status == 413
    with pytest.raises(ApiError) as broken:
        decode_image(data[:200], max_pixels=10**6)
    assert broken.value.status == 400 and "HEIF" in str(broken.value.message)
