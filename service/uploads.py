"""Reading an uploaded image from a request body under the byte cap: a multipart form with the
file in the field ``image``, or the raw JPEG/PNG bytes as the whole body.

The cap is enforced while the body streams in, so an oversized upload is refused after
``max_bytes`` have arrived rather than after it has all been buffered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from service.errors import ApiError

# Room for the multipart boundaries and part headers around the file itself.
MULTIPART_SLACK = 64 * 1024


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the upload is over the limit of {limit} bytes")


async def _capped(request: Request, limit: int) -> AsyncIterator[bytes]:
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
        if received > limit:
            raise _too_large(limit)
        yield chunk


async def read_image_bytes(request: Request, max_bytes: int) -> bytes:
    """The image's bytes, or ``ApiError`` 400/413/415 saying what is wrong with the request."""
    declared = request.headers.get("content-length")
    content_type = request.headers.get("content-type", "")
    multipart = content_type.startswith("multipart/form-data")
    limit = max_bytes + (MULTIPART_SLACK if multipart else 0)
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(max_bytes)
    if not multipart:
        data = b"".join([chunk async for chunk in _capped(request, limit)])
        if not data:
            raise ApiError(
                400,
                "missing_image",
                "send the image as the request body (JPEG, PNG or HEIC) or as the multipart field"
                " 'image'",
            )
        return data
    parser = MultiPartParser(request.headers, _capped(request, limit), max_files=1, max_fields=20)
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise ApiError(400, "bad_multipart", f"the multipart body is malformed: {exc}") from exc
    try:
        field = form.get("image")
        if isinstance(field, str):
            raise ApiError(
                400,
                "missing_image",
                "the field 'image' holds text, not a file (send it as a file: -F image=@rack.jpg)",
            )
        if not isinstance(field, UploadFile):
            raise ApiError(
                400, "missing_image", "the multipart form has no file in the field 'image'"
            )
        data = await field.read()
        if len(data) > max_bytes:
            raise _too_large(max_bytes)
        if not data:
            raise ApiError(400, "missing_image", "the file in the field 'image' is empty")
        return data
    finally:
        await form.close()
