"""Uploaded images: the format sniffed from the bytes, the size read from the header before any
pixel is decoded (so a small file cannot unpack into a huge image), then decoding to BGR.  JPEG
and PNG, and the HEIC photos phones save (``vision.heif``).

>>> sniff(b"\\x89PNG\\r\\n\\x1a\\n...")
'png'
>>> sniff(b"GIF89a") is None
True
"""

from __future__ import annotations

import struct

import numpy as np

from service.errors import ApiError
from vision.errors import NotAnImageError
from vision.heif import decode_heif, heif_size, is_heif

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
# JPEG start-of-frame markers (baseline, progressive, lossless, ...); C4, C8 and CC are not frames.
_SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def sniff(data: bytes) -> str | None:
    """``"jpeg"``, ``"png"``, ``"heif"`` or None, from the first bytes (file names and headers
    can lie)."""
    if data.startswith(JPEG_MAGIC):
        return "jpeg"
    if data.startswith(PNG_MAGIC):
        return "png"
    if is_heif(data[:4096]):
        return "heif"
    return None


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR chunk, or None if the header is cut short."""
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's start-of-frame segment, or None if there is none."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte before a marker
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker in _SOF_MARKERS:
            if pos + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        if marker == 0xDA or length < 2:  # scan data before any frame header: malformed
            return None
        pos += 2 + length
    return None


def image_size(data: bytes) -> tuple[str, tuple[int, int]]:
    """The sniffed format and (width, height); ``ApiError`` 415 or 400 saying what is wrong."""
    kind = sniff(data)
    if kind is None:
        raise ApiError(
            415,
            "unsupported_media_type",
            "the upload is not a JPEG, PNG or HEIC image (checked from its first bytes)",
        )
    if kind == "heif":
        try:
            return kind, heif_size(data)
        except NotAnImageError as exc:
            raise ApiError(400, "bad_image", str(exc)) from exc
    size = jpeg_size(data) if kind == "jpeg" else png_size(data)
    if size is None or size[0] <= 0 or size[1] <= 0:
        raise ApiError(400, "bad_image", f"the {kind.upper()} header is damaged or cut short")
    return kind, size


def check_image(data: bytes, *, max_pixels: int) -> str:
    """The format of JPEG, PNG or HEIC bytes whose header passes the pixel cap, else
    ``ApiError``."""
    kind, (width, height) = image_size(data)
    if width * height > max_pixels:
        raise ApiError(
            413,
            "too_many_pixels",
            f"the image is {width}x{height} = {width * height} pixels; the limit is {max_pixels}",
        )
    return kind


def decode_image(data: bytes, *, max_pixels: int) -> np.ndarray:
    """Decode JPEG, PNG or HEIC bytes into a BGR array, refusing images over ``max_pixels``."""
    import cv2

    kind = check_image(data, max_pixels=max_pixels)
    if kind == "heif":
        try:
            return decode_heif(data)
        except NotAnImageError as exc:
            raise ApiError(400, "bad_image", str(exc)) from exc
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ApiError(400, "bad_image", f"the {kind.upper()} image could not be decoded")
    return image


def encode_jpeg(image: np.ndarray, quality: int = 85) -> bytes:
    """JPEG bytes of a BGR image (for the annotated image in a scan answer)."""
    import cv2

    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buffer.tobytes()
