"""The pages a person opens: ``/`` (the start page: what to open on a phone, its QR code, how to
trust the local authority), ``/camera``, ``/overlay``, ``/ca.pem``, and the API documentation at
``/docs`` and ``/redoc`` served from assets installed with the ``fastapi-offline`` package, so they
work on a network with no internet.

``istaka serve`` tells the start page the phone's address and the authority's file through
``ISTAKA_PHONE_URL`` and ``ISTAKA_TLS_CA`` (as it hands every option to its workers).
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response

from service.auth import OWNER_QUERY, is_owner
from service.errors import ApiError
from service.https import TRUST_STEPS, qr_svg

STATIC = Path(__file__).resolve().parent.parent / "static"
PHONE_ENV = "ISTAKA_PHONE_URL"  # the camera page's address for a phone (https://192.168.1.20:8000)
CA_ENV = "ISTAKA_TLS_CA"  # the local authority's certificate, offered at /ca.pem
DOC_ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")

router = APIRouter(include_in_schema=False)


def docs_assets() -> Path:
    """The folder of Swagger UI's and ReDoc's files that ``fastapi-offline`` installs."""
    import fastapi_offline

    return Path(fastapi_offline.__file__).resolve().parent / "static"


@router.get("/camera")
async def camera_page() -> FileResponse:
    return FileResponse(STATIC / "camera.html")


@router.get("/overlay")
async def overlay_page() -> FileResponse:
    return FileResponse(STATIC / "overlay.html")


@router.get("/docs")
async def swagger_page(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url,
        title=f"{request.app.title} API",
        swagger_js_url="/docs-assets/swagger-ui-bundle.js",
        swagger_css_url="/docs-assets/swagger-ui.css",
        swagger_favicon_url="/docs-assets/favicon.png",
    )


@router.get("/redoc")
async def redoc_page(request: Request) -> HTMLResponse:
    return get_redoc_html(
        openapi_url=request.app.openapi_url,
        title=f"{request.app.title} API",
        redoc_js_url="/docs-assets/redoc.standalone.js",
        redoc_favicon_url="/docs-assets/favicon.png",
        with_google_fonts=False,
    )


@router.get("/docs-assets/{name}")
async def docs_asset(name: Annotated[str, PathParam(max_length=40)]) -> FileResponse:
    if name not in DOC_ASSETS:
        raise ApiError(404, "not_found", f"no documentation asset {name!r}")
    return FileResponse(docs_assets() / name, headers={"cache-control": "max-age=86400"})


@router.get("/ca.pem")
async def authority() -> Response:
    """The local authority's certificate: what a phone installs to trust this server."""
    path = os.environ.get(CA_ENV)
    if not path or not Path(path).is_file():
        raise ApiError(404, "not_found", "this server runs without HTTPS (istaka serve --https)")
    return Response(
        Path(path).read_bytes(),
        media_type="application/x-x509-ca-cert",
        headers={"content-disposition": 'attachment; filename="istaka-ca.pem"'},
    )


def phone_address(request: Request, owner: str | None = None) -> str | None:
    """The camera page's address for a phone: what ``istaka serve`` found, else this page's own
    address when it was opened from another machine; None when only this machine can reach it.
    With ``owner`` (the owner's own start page), the address carries the owner's token."""
    if os.environ.get(PHONE_ENV):
        address = os.environ[PHONE_ENV]
    else:
        host = (request.url.hostname or "").lower()
        if host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost"):
            return None
        address = str(request.url.replace(path="/camera", query=""))
    return f"{address}?{urlencode({OWNER_QUERY: owner})}" if owner else address


@router.get("/")
async def start_page(request: Request) -> HTMLResponse:
    """The start page; opened with the owner's token (``/?owner=TOKEN``, the link ``istaka serve``
    prints), its links and QR code carry the token, so the pages opened from it may write."""
    token = request.query_params.get(OWNER_QUERY)
    owner = token if is_owner(request.app.state.settings, token) else None
    phone = phone_address(request, owner)
    return HTMLResponse(render_start_page(phone, bool(os.environ.get(CA_ENV)), owner))


def render_start_page(phone: str | None, has_authority: bool, owner: str | None = None) -> str:
    """The start page: links to the pages, and the way to the camera from a phone."""
    esc = html.escape
    carry = f"?{urlencode({OWNER_QUERY: owner})}" if owner else ""
    role = (
        "<p>Opened with the owner's token: the camera and calibration pages opened from here may"
        " create tables and keep data. Do not share this page's address.</p>"
        if owner
        else "<p>Creating tables, keeping photos and calibrating need the server owner's token:"
        " open the link <code>istaka serve</code> printed.</p>"
    )
    if phone is None:
        phone_part = (
            "<p>This server listens only on this machine. For a phone on the same Wi-Fi, start it"
            " with <code>istaka serve --https</code>: it prints the phone's address and a QR code,"
            " and shows them here.</p>"
        )
    else:
        secure = phone.startswith("https://")
        note = (
            "The live camera works on this address."
            if secure
            else "Over plain HTTP a phone's browser gives no live camera; the camera page then"
            " takes photos instead. <code>istaka serve --https</code> gives the live camera."
        )
        phone_part = (
            f'<p>On a phone on the same Wi-Fi, scan the code or open <a id="phone-url"'
            f' href="{esc(phone)}">{esc(phone)}</a>. {note}</p>'
            f'<div class="qr" role="img" aria-label="QR code of {esc(phone)}">{qr_svg(phone)}</div>'
        )
    trust = ""
    if has_authority:
        steps = "".join(f"<li>{esc(line.strip())}</li>" for line in TRUST_STEPS[1:])
        trust = (
            "<h2>Trust this server once</h2>"
            f'<p>{esc(TRUST_STEPS[0])} <a href="/ca.pem">Download ca.pem</a></p>'
            f"<ul>{steps}</ul>"
        )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>istaka</title>
<style>
  body {{ margin: 0 auto; max-width: 40em; padding: 16px;
         font: 16px/1.5 "DejaVu Sans", Arial, sans-serif; background: #1d2320; color: #eee; }}
  a {{ color: #8fd3ff; }}
  .qr {{ width: min(70vw, 260px); margin: 12px 0; }}
  .qr svg {{ width: 100%; height: auto; display: block; }}
  nav a {{ display: inline-block; margin: 0 12px 8px 0; padding: 8px 14px; border-radius: 6px;
          background: #2e3a34; text-decoration: none; color: #fff; }}
  code {{ background: #111; padding: 1px 4px; border-radius: 3px; }}
</style>
</head>
<body>
<h1>istaka</h1>
<p>Camera assistant for Okey: reads a rack, referees a hand, advises the discard.</p>
{role}
<nav>
  <a href="/camera{esc(carry)}">Camera</a>
  <a href="/calibrate{esc(carry)}">Calibrate</a>
  <a href="/overlay">Overlay</a>
  <a href="/docs">API docs</a>
  <a href="/redoc">API reference</a>
</nav>
<h2>From a phone</h2>
{phone_part}
{trust}
</body>
</html>
"""
