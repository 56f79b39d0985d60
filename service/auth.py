"""Who may write.  Every route that writes (a table's state, a new table, kept photos and tiles,
a profile made or deleted) needs a credential, sent as ``Authorization: Bearer TOKEN`` (on the
camera stream: ``"token"`` in its settings):

- the **server owner's token**: made by ``istaka serve`` at start-up (or ``ISTAKA_OWNER_TOKEN``),
  printed with the owner's links and QR code, and carried by the pages opened from them
  (``?owner=TOKEN``).  It may do every write: create tables, write any table, keep data, calibrate,
  delete profiles.
- a **table's token**: given once to whoever created the table; it writes that table, and keeps
  corrected tiles of scans sent with ``?table=NAME``.

Routes that only compute (``/hand``, ``/referee``, ``/scan`` without ``keep``) and every read need
none.  ``tests/test_write_routes.py`` walks the app's route table and fails for a write route that
answers without a credential.

>>> server = Settings(owner_token="s3cret")
>>> is_owner(server, "s3cret"), is_owner(server, "x"), is_owner(server, None)
(True, False, False)
"""

from __future__ import annotations

import hmac

from starlette.requests import HTTPConnection

from service.errors import ApiError
from service.settings import Settings

OWNER_QUERY = "owner"  # the pages' query parameter carrying the owner token


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def credential(conn: HTTPConnection) -> str | None:
    """The token a request carries (``Authorization: Bearer``), if any."""
    return bearer(conn.headers.get("authorization"))


def is_owner(settings: Settings, token: str | None) -> bool:
    """Whether ``token`` is the server owner's, compared in constant time."""
    expected = settings.owner_token
    if not token or not expected:
        return False
    return hmac.compare_digest(token.encode(), expected.encode())


def owner_required(settings: Settings, token: str | None, what: str) -> None:
    """Nothing for the owner's token; else 401 ``owner_token_required`` or 403 ``wrong_token``."""
    if is_owner(settings, token):
        return
    if not token:
        raise ApiError(
            401,
            "owner_token_required",
            f"{what} needs the server owner's token (header 'Authorization: Bearer TOKEN'; istaka"
            " serve prints it at start-up)",
        )
    raise ApiError(403, "wrong_token", f"the token is not the server owner's; {what} needs it")
