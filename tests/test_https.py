"""HTTPS on the local network (``service.https``, ``istaka serve --https``), the start page, and a
phone-sized Chromium at the table: the live camera over HTTPS from a LAN name it trusts through
the generated authority, and the photo fallback over plain HTTP from the same name."""

from __future__ import annotations

import socket
import ssl
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.verification import PolicyBuilder, Store, VerificationError

from service.app import create_app
from service.https import TlsFiles, covers, ensure_certificates, fingerprint
from service.routers.pages import CA_ENV, PHONE_ENV
from service.settings import Settings

REPO = Path(__file__).resolve().parent.parent
PHONE_NAME = "istaka-phone.test"  # a LAN name, mapped to 127.0.0.1 inside Chromium only
EXAMPLE_PHOTO = REPO / "examples" / "rack_real.jpg"
EXAMPLE_TRUTH = REPO / "examples" / "rack_real.txt"
HAND_TILES = "[...document.querySelectorAll('#hand .tile')].map(e => e.dataset.tile)"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return ensure_certificates(
        tmp_path_factory.mktemp("tls"), [PHONE_NAME, "istaka.local"], ["192.168.1.20"]
    )


def test_the_authority_and_certificate_are_made_once(tmp_path: Path) -> None:
    first = ensure_certificates(tmp_path, ["club.local"], ["192.168.1.20"])
    assert first.made and first.new_authority
    assert stat.S_IMODE(first.key.stat().st_mode) == 0o600
    assert stat.S_IMODE(first.ca_key.stat().st_mode) == 0o600
    assert covers(first.cert, ["localhost", "club.local"], ["127.0.0.1", "192.168.1.20"])
    ca_before = first.ca.read_bytes()
    again = ensure_certificates(tmp_path, ["club.local"], ["192.168.1.20"])
    assert not again.made and again.ca.read_bytes() == ca_before
    # A new Wi-Fi address: a new certificate from the same authority (phones keep trusting it).
    moved = ensure_certificates(tmp_path, ["club.local"], ["10.0.0.7"])
    assert moved.made and not moved.new_authority and moved.ca.read_bytes() == ca_before
    assert covers(moved.cert, [], ["10.0.0.7"])
    assert len(fingerprint(moved.ca).split(":")) == 32


def _verify(ca: Path, leaf: x509.Certificate, name: str) -> None:
    authority = x509.load_pem_x509_certificate(ca.read_bytes())
    verifier = PolicyBuilder().store(Store([authority])).build_server_verifier(x509.DNSName(name))
    verifier.verify(leaf, [])


def test_the_authority_cannot_vouch_for_a_public_site(tls: TlsFiles) -> None:
    """Name constraints: a copied authority key still could not impersonate a web site."""
    leaf = x509.load_pem_x509_certificates(tls.cert.read_bytes())[0]
    _verify(tls.ca, leaf, PHONE_NAME)  # the server's own certificate is valid for its LAN name
    ca_key = serialization.load_pem_private_key(tls.ca_key.read_bytes(), password=None)
    authority = x509.load_pem_x509_certificate(tls.ca.read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    forged = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "bank.example")]))
        .issuer_name(authority.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(leaf.not_valid_before_utc)
        .not_valid_after(leaf.not_valid_after_utc)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("bank.example")]), False)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    with pytest.raises(VerificationError):
        _verify(tls.ca, forged, "bank.example")


@contextmanager
def https_server(settings: Settings, files: TlsFiles) -> Iterator[int]:
    """``create_app(settings)`` served over TLS on a free loopback port; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        create_app(settings),
        log_level="warning",
        ssl_certfile=str(files.cert),
        ssl_keyfile=str(files.key),
        ws_max_size=settings.ws_max_size,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # set-up (the model loads), not a timing check
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the uvicorn server did not start")
        time.sleep(0.05)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def test_https_server_is_trusted_through_the_authority(tls: TlsFiles) -> None:
    trusting = ssl.create_default_context(cafile=str(tls.ca))
    with https_server(Settings(load_pipeline=False), tls) as port:
        answer = httpx.get(f"https://localhost:{port}/api/v1/health", verify=trusting)
        assert answer.status_code == 200 and answer.json()["status"] == "ok"
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(
                f"https://localhost:{port}/api/v1/health", verify=ssl.create_default_context()
            )


def test_start_page_shows_the_phone_address_and_how_to_trust(
    monkeypatch: pytest.MonkeyPatch, tls: TlsFiles
) -> None:
    from fastapi.testclient import TestClient

    monkeypatch.delenv(PHONE_ENV, raising=False)
    monkeypatch.delenv(CA_ENV, raising=False)
    with TestClient(create_app(Settings(load_pipeline=False)), base_url="http://localhost") as c:
        page = c.get("/").text
        assert "listens only on this machine" in page and "<svg" not in page
        assert c.get("/ca.pem").status_code == 404
        # Opened from the network, the page's own address is the phone's; over HTTP it says
        # that the live camera needs HTTPS.
        lan = c.get("/", headers={"host": "192.168.1.20:8000"}).text
        assert 'href="http://192.168.1.20:8000/camera"' in lan and "<svg" in lan
        assert "istaka serve --https" in lan
    monkeypatch.setenv(PHONE_ENV, "https://192.168.1.20:8000/camera")
    monkeypatch.setenv(CA_ENV, str(tls.ca))
    with TestClient(create_app(Settings(load_pipeline=False)), base_url="http://localhost") as c:
        page = c.get("/").text
        assert 'href="https://192.168.1.20:8000/camera"' in page and "<svg" in page
        assert "Trust this server once" in page and 'href="/ca.pem"' in page
        assert c.get("/ca.pem").content == tls.ca.read_bytes()


@pytest.mark.slow
def test_serve_https_prints_the_phone_address_and_a_qr_code(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [sys.executable, "-m", "istaka", "serve", "--https", "--no-model", "--port", str(port)]
    argv += ["--tls-dir", str(tmp_path / "tls"), "--host", "0.0.0.0", "--log-level", "warning"]
    process = subprocess.Popen(
        argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=REPO
    )
    try:
        lines: list[str] = []
        for line in process.stderr:  # the banner comes before the server answers
            lines.append(line)
            if "Without it the browser" in line:
                break
        text = "".join(lines)
        assert "made a local certificate authority" in text
        assert f":{port}/camera" in text and "https://" in text
        assert "█" in text  # the QR code, in half blocks
        assert "Android" in text and "iPhone" in text
        trusting = ssl.create_default_context(cafile=str(tmp_path / "tls" / "ca.pem"))
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(f"https://localhost:{port}/", verify=trusting)
                break
            except httpx.ConnectError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        assert "Trust this server once" in answer.text and "<svg" in answer.text
    finally:
        process.terminate()
        process.wait(timeout=30)


# --- A phone-sized Chromium -----------------------------------------------------------------


@pytest.fixture(scope="module")
def rack_video(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    from vision.training.synth.video import render_video, write_y4m

    frames, truths = render_video(7, 1, size=(1280, 720))
    path = tmp_path_factory.mktemp("video") / "rack.y4m"
    write_y4m(path, frames * 30, 15)
    return path, truths[0]


def phone_flags(port: int) -> tuple[str, ...]:
    # Only the test's LAN name leads to this machine; every other name fails to resolve.
    return (f"--host-resolver-rules=MAP {PHONE_NAME} 127.0.0.1",)


@pytest.mark.slow
def test_phone_gets_the_live_camera_over_https_from_a_lan_name(
    tls: TlsFiles, rack_video: tuple[Path, dict], tmp_path: Path
) -> None:
    from cdp_browser import chromium, trust_authority
    from conftest_service import require_model

    require_model()
    home = tmp_path / "home"
    trust_authority(home, tls.ca)
    video, truth = rack_video
    settings = Settings(allowed_hosts=(PHONE_NAME,))
    with (
        https_server(settings, tls) as port,
        chromium(video, 412, 915, args=phone_flags(port), home=home, mobile=True) as (page, _),
    ):
        page.navigate(f"https://{PHONE_NAME}:{port}/camera?indicator={truth['indicator']}")
        page.wait_for("document.body && document.body.dataset.mode === 'live'", 120)
        # A trusted certificate: no interstitial, a secure page, and the camera given to it.
        assert page.evaluate("location.href").startswith(f"https://{PHONE_NAME}:{port}/")
        assert page.evaluate("window.isSecureContext") is True
        page.wait_for("document.querySelectorAll('#hand .tile[data-id]').length >= 2", 120)
        assert page.evaluate("document.getElementById('notice').hidden") is True
        assert page.evaluate("document.getElementById('indicator-status').dataset.source") == (
            "typed"
        )


@pytest.mark.slow
def test_phone_over_plain_http_is_offered_the_photo_fallback(tmp_path: Path) -> None:
    from cdp_browser import chromium, correct_first_tile, shot
    from conftest_service import live_server, require_model

    require_model()
    rows = [line.split() for line in EXAMPLE_TRUTH.read_text().splitlines() if line[:1] != "#"]
    truth = [tile for row in rows for tile in row]
    with (
        live_server(Settings(allowed_hosts=(PHONE_NAME,))) as server,
        chromium(None, 412, 915, args=phone_flags(server.port), mobile=True) as (page, _),
    ):
        page.navigate(f"http://{PHONE_NAME}:{server.port}/camera?indicator=K4")
        page.wait_for("document.body && document.body.dataset.mode === 'photo'", 60)
        notice = page.evaluate("document.getElementById('notice').textContent")
        assert "secure page" in notice and "istaka serve --https" in notice
        assert page.evaluate("window.isSecureContext") is False
        # The phone's camera app gives a file; the page sends it to /scan.
        document = page.send("DOM.getDocument")["root"]["nodeId"]
        node = page.send("DOM.querySelector", {"nodeId": document, "selector": "#photo"})["nodeId"]
        page.send("DOM.setFileInputFiles", {"nodeId": node, "files": [str(EXAMPLE_PHOTO)]})
        page.wait_for(f"document.querySelectorAll('#hand .tile').length === {len(truth)}", 120)
        assert page.evaluate(HAND_TILES) == truth
        assert page.evaluate("document.body.dataset.source") == "photo"
        assert "Indicator K4 (typed)" in page.evaluate(
            "document.getElementById('indicator-text').textContent"
        )
        page.screenshot(shot("camera_photo.png", tmp_path))
        # A correction sends the same photo again with it; the tile shows as corrected.
        correct_first_tile(page, timeout=120)
        assert page.evaluate("Number(document.body.dataset.photos)") == 2


@pytest.mark.slow
def test_a_suggested_indicator_is_confirmed_with_one_tap(tmp_path: Path) -> None:
    """The full rack with its indicator on the table: read too unsurely to be used, it is offered;
    one tap makes it typed, and the verdict and advice follow."""
    from cdp_browser import chromium, shot
    from conftest_service import live_server, require_model

    require_model()
    with (
        live_server(Settings()) as server,
        chromium(None, 412, 915, mobile=True) as (page, _),
    ):
        page.navigate(f"{server.url}/camera")
        page.wait_for("document.body && document.body.dataset.mode", 60)
        document = page.send("DOM.getDocument")["root"]["nodeId"]
        node = page.send("DOM.querySelector", {"nodeId": document, "selector": "#photo"})["nodeId"]
        photo = REPO / "examples" / "rack_full.jpg"
        page.send("DOM.setFileInputFiles", {"nodeId": node, "files": [str(photo)]})
        page.wait_for("document.querySelectorAll('#hand .tile').length === 14", 120)
        status = "document.getElementById('indicator-status').dataset.source"
        assert page.evaluate(status) == "none"
        assert page.evaluate("document.getElementById('indicator-confirm').textContent") == (
            "Use R3"
        )
        assert page.evaluate("document.getElementById('verdict').textContent") == ""
        page.screenshot(shot("camera_suggestion.png", tmp_path))
        page.evaluate("document.getElementById('indicator-confirm').click()")
        page.wait_for(f"{status} === 'typed'", 120)
        page.wait_for("document.getElementById('advice').textContent.includes('wins')", 120)
        assert page.evaluate("document.getElementById('indicator').value") == "R3"
        assert page.evaluate("document.getElementById('indicator-confirm').hidden") is True
