"""HTTPS on the local network: phones give the camera only to secure pages.

``istaka serve --https`` makes, once, a small certificate authority of this machine (``ca.pem``)
and with it a certificate for the machine's names and addresses (``server.pem``), kept in
``tls_folder()``.  A phone that trusts ``ca.pem`` (installed once: ``trust_steps()``) opens
``https://<address>:<port>/camera`` without a warning, and the page may use the camera.

The authority may sign only names and addresses of a home or club network (name constraints:
the private IPv4 ranges, loopback, ``.local``, and the names it was made for), so its key, were
it ever copied, could not impersonate a public web site to a phone that trusts it.  A certificate
is made again, by the same authority, when the machine's addresses change; the authority is made
again (and must be trusted again) only when a name outside its constraints is asked for.

>>> folder = Path(__import__("tempfile").mkdtemp())
>>> files = ensure_certificates(folder, ["istaka.test"], ["192.168.1.20"])
>>> files.made, sorted(p.name for p in folder.iterdir())
(True, ['ca-key.pem', 'ca.pem', 'server-key.pem', 'server.pem'])
>>> ensure_certificates(folder, ["istaka.test"], ["192.168.1.20"]).made
False
>>> covers(files.cert, ["istaka.test"], ["192.168.1.20"]), covers(files.cert, [], ["10.0.0.9"])
(True, False)
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

TLS_ENV = "ISTAKA_TLS_DIR"
CA_DAYS = 3650
# Apple's phones refuse server certificates valid for more than 825 days.
CERT_DAYS = 800
RENEW_DAYS = 30  # a certificate this close to its end is made again
# Networks the authority may sign for: private IPv4, carrier-grade NAT, link-local, loopback.
PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "127.0.0.0/8",
        "::1/128",
        "fc00::/7",
    )
)
ORGANISATION = "istaka local network"


@dataclass(frozen=True)
class TlsFiles:
    """The authority's certificate (what a phone trusts) and the server's certificate and key."""

    ca: Path
    ca_key: Path
    cert: Path  # the server's certificate followed by the authority's
    key: Path
    made: bool  # whether this call made or renewed anything
    new_authority: bool  # whether the authority itself is new (phones must trust it again)


def tls_folder() -> Path:
    """``$ISTAKA_TLS_DIR``, else ``$XDG_DATA_HOME/istaka/tls`` (``~/.local/share/istaka/tls``)."""
    if os.environ.get(TLS_ENV):
        return Path(os.environ[TLS_ENV])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "istaka" / "tls"


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses that a phone on the same network can reach: the one of the
    default route first, then the others its host name resolves to (never loopback)."""
    found: list[str] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a documentation address: no packet is sent
            found.append(probe.getsockname()[0])
        except OSError:
            pass  # no network
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        infos = []
    found.extend(str(info[4][0]) for info in infos)
    return [a for a in dict.fromkeys(found) if not ipaddress.ip_address(a).is_loopback]


def machine_names() -> list[str]:
    """``localhost``, the host name, and its ``.local`` name (what mDNS answers on a LAN)."""
    host = socket.gethostname().split(".")[0].lower()
    names = ["localhost"]
    if host and host != "localhost":
        names += [host, f"{host}.local"]
    return names


def ensure_certificates(
    folder: Path, names: Iterable[str] = (), addresses: Iterable[str] = ()
) -> TlsFiles:
    """The authority and a server certificate for ``localhost``, 127.0.0.1, ``names`` and
    ``addresses``, made in ``folder`` when missing, not covering them, or near their end."""
    names = list(dict.fromkeys(["localhost", *(n.lower() for n in names)]))
    addresses = list(dict.fromkeys(["127.0.0.1", *addresses]))
    folder.mkdir(parents=True, exist_ok=True)
    files = {n: folder / f for n, f in _FILES.items()}
    new_authority = not _authority_fits(files["ca"], files["ca_key"], names, addresses)
    if new_authority:
        _make_authority(files["ca"], files["ca_key"], names, addresses)
    made = new_authority or not _cert_fits(
        files["cert"], files["key"], files["ca"], names, addresses
    )
    if made:
        _make_server_cert(files, names, addresses)
    return TlsFiles(**files, made=made, new_authority=new_authority)


_FILES = {"ca": "ca.pem", "ca_key": "ca-key.pem", "cert": "server.pem", "key": "server-key.pem"}


def covers(cert_path: Path, names: Iterable[str], addresses: Iterable[str]) -> bool:
    """Whether the certificate names every one of ``names`` and ``addresses``."""
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have_names = {n.lower() for n in san.get_values_for_type(x509.DNSName)}
    have_ips = {str(a) for a in san.get_values_for_type(x509.IPAddress)}
    return set(n.lower() for n in names) <= have_names and set(addresses) <= have_ips


def fingerprint(cert_path: Path) -> str:
    """The SHA-256 fingerprint of a certificate, as phones show it (``AB:CD:...``)."""
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    return cert.fingerprint(hashes.SHA256()).hex(":").upper()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    data = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # Created readable by its owner only, never world-readable for a moment.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.chmod(path, 0o600)


def _permitted(names: list[str], addresses: list[str]) -> x509.NameConstraints:
    networks = list(PRIVATE_NETWORKS)
    for address in addresses:
        ip = ipaddress.ip_address(address)
        if not any(ip in net for net in networks):
            networks.append(ipaddress.ip_network(address))  # that one public address alone
    dns = list(dict.fromkeys(["localhost", "local", *names]))
    return x509.NameConstraints(
        permitted_subtrees=[x509.DNSName(n) for n in dns] + [x509.IPAddress(n) for n in networks],
        excluded_subtrees=None,
    )


def _authority_fits(ca: Path, ca_key: Path, names: list[str], addresses: list[str]) -> bool:
    if not (ca.is_file() and ca_key.is_file()):
        return False
    cert = x509.load_pem_x509_certificate(ca.read_bytes())
    if cert.not_valid_after_utc - _now() < dt.timedelta(days=RENEW_DAYS):
        return False
    try:
        constraints = cert.extensions.get_extension_for_class(x509.NameConstraints).value
    except x509.ExtensionNotFound:
        return False
    subtrees = constraints.permitted_subtrees or []
    dns = [s.value for s in subtrees if isinstance(s, x509.DNSName)]
    nets = [s.value for s in subtrees if isinstance(s, x509.IPAddress)]
    names_ok = all(any(n == d or n.endswith("." + d) for d in dns) for n in names)
    ips_ok = all(any(ipaddress.ip_address(a) in net for net in nets) for a in addresses)
    return names_ok and ips_ok


def _make_authority(ca: Path, ca_key: Path, names: list[str], addresses: list[str]) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    host = socket.gethostname().split(".")[0] or "this machine"
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANISATION),
            x509.NameAttribute(NameOID.COMMON_NAME, f"istaka on {host}"),
        ]
    )
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(_permitted(names, addresses), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_key(ca_key, key)
    ca.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _cert_fits(
    cert_path: Path, key_path: Path, ca: Path, names: list[str], addresses: list[str]
) -> bool:
    if not (cert_path.is_file() and key_path.is_file()):
        return False
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    authority = x509.load_pem_x509_certificate(ca.read_bytes())
    if cert.issuer != authority.subject or cert.not_valid_after_utc - _now() < dt.timedelta(
        days=RENEW_DAYS
    ):
        return False
    try:
        cert.verify_directly_issued_by(authority)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return covers(cert_path, names, addresses)


def _make_server_cert(files: dict[str, Path], names: list[str], addresses: list[str]) -> None:
    ca_key = serialization.load_pem_private_key(files["ca_key"].read_bytes(), password=None)
    authority = x509.load_pem_x509_certificate(files["ca"].read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    san = [x509.DNSName(n) for n in names] + [
        x509.IPAddress(ipaddress.ip_address(a)) for a in addresses
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name(
                [
                    x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANISATION),
                    x509.NameAttribute(NameOID.COMMON_NAME, names[-1]),
                ]
            )
        )
        .issuer_name(authority.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=CERT_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_key(files["key"], key)
    chain = cert.public_bytes(serialization.Encoding.PEM) + authority.public_bytes(
        serialization.Encoding.PEM
    )
    files["cert"].write_bytes(chain)


def phone_url(scheme: str, address: str, port: int, path: str = "/camera") -> str:
    host = f"[{address}]" if ":" in address else address
    default = (scheme == "https" and port == 443) or (scheme == "http" and port == 80)
    return f"{scheme}://{host}{'' if default else f':{port}'}{path}"


def qr_terminal(text: str) -> str:
    """A QR code of ``text`` drawn with half-block characters, for a terminal."""
    import io

    import segno

    out = io.StringIO()
    segno.make(text, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def qr_svg(text: str) -> str:
    """A QR code of ``text`` as an inline SVG element (black on white, scales with CSS)."""
    import segno

    return segno.make(text, error="m").svg_inline(scale=6, border=2, dark="#000", light="#fff")


TRUST_STEPS = (
    "Trust the authority once on each phone (then no warning, and the camera works):",
    "  Android: open /ca.pem on the phone, or copy ca.pem to it; Settings > Security > Encryption"
    " & credentials > Install a certificate > CA certificate.",
    "  iPhone/iPad: open /ca.pem in Safari, allow the profile; Settings > General > VPN & Device"
    " Management > install it; then Settings > General > About > Certificate Trust Settings >"
    " turn on full trust for it.",
    "  Desktop browsers: import ca.pem as a trusted authority (Chrome: Settings > Privacy and"
    " security > Security > Manage certificates > Authorities).",
    "Without it the browser warns about the certificate; passing the warning still opens the"
    " page over HTTPS.",
)


def trust_steps() -> str:
    return "\n".join(TRUST_STEPS)
