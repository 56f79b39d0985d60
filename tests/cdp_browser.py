"""Headless Chromium driven over the DevTools protocol, for the browser tests.

Uses the system's ``chromium`` (Debian's package; never a downloaded browser) and the
``websockets`` package's synchronous client.  ``chromium_path()`` says whether the browser is
there; the tests skip without it, except in CI (``CI=true``), where a missing browser is a failure.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)


DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def shot(name: str, tmp_path: Path) -> Path:
    """Where a screenshot goes: docs/img with ISTAKA_SCREENSHOTS=1 (to refresh the docs), else a
    temporary folder (so an ordinary test run leaves the repository untouched)."""
    folder = DOCS_IMG if os.environ.get("ISTAKA_SCREENSHOTS") == "1" else tmp_path
    return folder / name


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def require_chromium() -> str:
    """The browser's path; skip when it is absent, but fail in CI where setup installs it."""
    path = chromium_path()
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is missing in CI; scripts/setup.sh should have installed it")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


class Page:
    """One browser tab: send DevTools commands, evaluate JavaScript, take screenshots."""

    def __init__(self, ws_url: str) -> None:
        self._stack = ExitStack()
        self._ws = self._stack.enter_context(
            connect(ws_url, max_size=64 * 1024 * 1024, open_timeout=30)
        )
        self._ids = itertools.count(1)
        self.console: list[str] = []
        self.events: list[dict[str, Any]] = []  # every event (Network.*, Security.*, ...) seen

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> Any:
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if "method" in message:
                self.events.append(message)
            if message.get("method") == "Runtime.consoleAPICalled":
                args = message["params"].get("args", [])
                self.console.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in args)
                )
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60, interval: float = 0.2) -> Any:
        """Poll ``expression`` until it is truthy; its value, or ``TimeoutError`` naming it."""
        deadline = time.monotonic() + timeout
        last_error = ""
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError as exc:  # the page is still loading (document.body is null, ...)
                value, last_error = None, str(exc)
            if value:
                return value
            time.sleep(interval)
        raise TimeoutError(f"still false after {timeout} s: {expression} {last_error[:300]}")

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})

    def screenshot(self, path: Path, *, transparent: bool = False) -> None:
        if transparent:
            self.send(
                "Emulation.setDefaultBackgroundColorOverride",
                {"color": {"r": 0, "g": 0, "b": 0, "a": 0}},
            )
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        self._stack.close()


@contextmanager
def chromium(
    video: Path | None = None,
    width: int = 1000,
    height: int = 900,
    *,
    args: tuple[str, ...] = (),
    home: Path | None = None,
    mobile: bool = False,
) -> Iterator[tuple[Page, subprocess.Popen[bytes]]]:
    """A headless Chromium (fake camera fed from ``video``, a .y4m file) and one open page.

    ``args``: more command-line flags (``--host-resolver-rules=...``); ``home``: the ``HOME`` it
    runs with (its ``.pki/nssdb`` holds the authorities it trusts: ``trust_authority``);
    ``mobile``: a phone's screen (touch, device pixel ratio 2)."""
    path = require_chromium()
    # Chromium's helper processes can still write to the profile for a moment after the browser
    # exits; they are ended with it (own process group) and a late file does not fail the test.
    profile_dir = tempfile.TemporaryDirectory(prefix="istaka-chromium-", ignore_cleanup_errors=True)
    with profile_dir as profile:
        argv = [path, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        if video is not None:
            argv.append(f"--use-file-for-fake-video-capture={video}")
        env = {**os.environ, "HOME": str(home)} if home is not None else None
        process = subprocess.Popen(
            [*argv, *args, "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        try:
            port = _devtools_port(Path(profile), process)
            page = Page(_page_ws_url(port))
            page.send("Page.enable")
            page.send("Runtime.enable")
            page.send(
                "Emulation.setDeviceMetricsOverride",
                {
                    "width": width,
                    "height": height,
                    "deviceScaleFactor": 2 if mobile else 1,
                    "mobile": mobile,
                },
            )
            if mobile:
                page.send("Emulation.setTouchEmulationEnabled", {"enabled": True})
            try:
                yield page, process
            finally:
                page.close()
        finally:
            _end_process_group(process)


def trust_authority(home: Path, ca_pem: Path) -> None:
    """Make ``home/.pki/nssdb`` trust ``ca_pem`` for web sites, as a user who installed it would
    (Chromium on Linux reads its authorities there); needs ``certutil`` (libnss3-tools)."""
    certutil = shutil.which("certutil")
    if certutil is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("certutil is missing in CI; scripts/setup.sh should install libnss3-tools")
        pytest.skip("certutil is not installed (apt-get install libnss3-tools)")
    db = home / ".pki" / "nssdb"
    db.mkdir(parents=True, exist_ok=True)
    subprocess.run([certutil, "-d", f"sql:{db}", "-N", "--empty-password"], check=True)
    subprocess.run(
        [certutil, "-d", f"sql:{db}", "-A", "-t", "C,,", "-n", "istaka", "-i", str(ca_pem)],
        check=True,
    )


def _end_process_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the browser and every helper process it started (they share its process group)."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # helpers that outlived the browser
    process.wait()


def _devtools_port(profile: Path, process: subprocess.Popen[bytes]) -> int:
    # With --remote-debugging-port=0 Chromium picks a free port and writes it to this file.
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with code {process.returncode}")
        if marker.exists():
            lines = marker.read_text().split()
            if lines:
                return int(lines[0])
        time.sleep(0.1)
    raise RuntimeError("chromium did not open its DevTools port")


def _page_ws_url(port: int) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
            targets = json.load(response)
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            return pages[0]["webSocketDebuggerUrl"]
        time.sleep(0.1)
    raise RuntimeError("chromium has no page target")


def correct_first_tile(page: Any, timeout: float = 60) -> None:
    """On the camera page: tap the first tile of the hand, pick another reading in the picker, and
    wait until the page shows that tile corrected to it."""
    first = page.evaluate(
        "(() => { const e = document.querySelector('#hand .tile');"
        " return {id: e.dataset.id, tile: e.dataset.tile}; })()"
    )
    new = "FJ" if first["tile"] != "FJ" else "R1"
    tile = f'#hand .tile[data-id="{first["id"]}"]'
    page.evaluate(f"document.querySelector('{tile}').click()")
    page.wait_for("document.getElementById('picker').classList.contains('open')")
    page.evaluate(
        "[...document.querySelectorAll('#picker-tiles .tile')]"
        f".find(e => e.dataset.tile === '{new}').click()"
    )
    page.wait_for(
        f"(() => {{ const e = document.querySelector('{tile}');"
        f" return e && e.classList.contains('corrected') && e.dataset.tile === '{new}'; }})()",
        timeout=timeout,
    )
