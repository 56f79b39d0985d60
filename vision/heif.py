"""HEIF / HEIC photos, the format phones save by default (iPhones since iOS 11), which OpenCV
cannot read: told from their first bytes, measured from the header alone, decoded by
``pillow-heif`` (libheif; the ``read`` extra installs it) into the BGR array the pipeline takes.
libheif applies the photo's own rotation and mirroring (``irot``, ``imir``) as it decodes, so a
portrait photo comes out standing, as a JPEG's EXIF orientation does through OpenCV.

>>> is_heif(b"\\x00\\x00\\x00\\x18ftypheic\\x00\\x00\\x00\\x00mif1heic")
True
>>> is_heif(b"\\xff\\xd8\\xff\\xe0"), is_heif(b"\\x00\\x00\\x00\\x18ftypisom")
(False, False)
"""

from __future__ import annotations

import io

import numpy as np

from vision.errors import NotAnImageError

# ISO base media file brands of still HEIF images (HEVC-coded or not), as the ``ftyp`` box at
# the file's start names them: its major brand, or one of its compatible brands.
HEIF_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1"}
MISSING = "reading HEIC/HEIF photos needs pillow-heif: pip install 'istaka[read]'"


def is_heif(data: bytes) -> bool:
    """Whether ``data`` starts as a HEIF still image: an ``ftyp`` box naming a HEIF brand."""
    if len(data) < 16 or data[4:8] != b"ftyp":
        return False
    size = int.from_bytes(data[:4], "big")
    end = min(len(data), size if 16 <= size <= 4096 else 16)
    brands = [data[8:12]] + [data[k : k + 4] for k in range(16, end - 3, 4)]
    return any(b in HEIF_BRANDS for b in brands)


def _open(data: bytes):
    try:
        import pillow_heif
    except ImportError as exc:
        raise NotAnImageError(MISSING) from exc
    try:
        return pillow_heif.open_heif(io.BytesIO(data), convert_hdr_to_8bit=True)
    except (ValueError, RuntimeError, OSError, SyntaxError) as exc:
        raise NotAnImageError(f"the HEIF image could not be read: {str(exc).strip()}") from exc


def heif_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a HEIF image's primary picture, from its header (nothing decoded)."""
    width, height = _open(data).size
    return int(width), int(height)


def decode_heif(data: bytes) -> np.ndarray:
    """A HEIF image's primary picture as a BGR uint8 array (alpha dropped, HDR to 8 bits)."""
    import cv2

    image = _open(data)
    try:
        pixels = np.asarray(image)
    except (ValueError, RuntimeError, OSError) as exc:
        raise NotAnImageError(f"the HEIF image could not be decoded: {str(exc).strip()}") from exc
    if pixels.ndim != 3 or pixels.dtype != np.uint8 or pixels.shape[2] not in (3, 4):
        raise NotAnImageError(f"the HEIF image's pixels are {pixels.shape}, {pixels.dtype}")
    code = cv2.COLOR_RGBA2BGR if pixels.shape[2] == 4 else cv2.COLOR_RGB2BGR
    return cv2.cvtColor(pixels, code)
