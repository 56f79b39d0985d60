"""JSON errors: every refused request gets ``{"error": {"code", "message", ...}}`` and a 4xx status.

>>> ApiError(413, "too_large", "the upload is 12 MB; the limit is 10 MB").body()["error"]["code"]
'too_large'
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from okey.errors import OkeyError


class ApiError(Exception):
    """A request the server refuses, with the status code and a message naming what was wrong."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


def _response(error: ApiError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=headers)


def _location(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in loc if part != "body") or "body"


async def _api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    headers = {"Retry-After": "1"} if exc.status == 503 else None
    return _response(exc, headers)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = sorted(exc.errors(), key=lambda err: -len(err.get("loc", ())))
    problems = [
        {"field": _location(err.get("loc", ())), "message": str(err.get("msg", ""))}
        for err in errors
    ]
    # The deepest location first: for a field that takes one of several shapes (rules: a preset
    # name or an object), the error inside the object says more than "not a string".
    first = problems[0] if problems else {"field": "body", "message": "invalid request"}
    message = f"{first['field']}: {first['message']}"
    return _response(ApiError(422, "invalid_request", message, problems=problems))


async def _game_error(_: Request, exc: Exception) -> JSONResponse:
    # Engine errors (a tile that cannot be read, an impossible hand) are about the request.
    return _response(ApiError(422, "invalid_hand", str(exc)))


# What FastAPI raises (as a 400) for a body its JSON parser gave up on (nested too deeply, not
# UTF-8): a body that does not parse is the request's 422 like any other bad field.
_UNPARSED_BODY = "There was an error parsing the body"


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and exc.detail == _UNPARSED_BODY:
        message = "body: not JSON that can be read (nested too deeply, or not UTF-8)"
        return _response(ApiError(422, "invalid_request", message))
    codes = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
    code = codes.get(exc.status_code, "http_error")
    return _response(ApiError(exc.status_code, code, str(exc.detail)), dict(exc.headers or {}))


async def _internal_error(_: Request, exc: Exception) -> JSONResponse:
    # A bug, not the client's fault: still JSON, without internals in the message.
    return JSONResponse(
        {"error": {"code": "internal_error", "message": f"internal error ({type(exc).__name__})"}},
        status_code=500,
    )


def install(app: FastAPI) -> None:
    """Register the JSON error handlers on an app."""
    app.add_exception_handler(Exception, _internal_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(OkeyError, _game_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
