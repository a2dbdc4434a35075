"""Throwaway TLS material for tests: a CA, a server certificate for 127.0.0.1 and localhost, and a client
certificate, all made with the `cryptography` package (ECDSA P-256, valid for one day), written as PEM files.

Nothing here is trusted anywhere but in the test that made it; keys are written mode 0600."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class TlsFiles:
    """PEM paths: the CA's certificate, the server's certificate and key, the client's certificate and key."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def _signed(subject: str, key, issuer: str, issuer_key, ca: bool, usage=None, hosts: bool = False) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if hosts:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_tls_files(folder: Path, ca_name: str = "twin test CA") -> TlsFiles:
    """Write a fresh CA (named `ca_name`), a server certificate for localhost and 127.0.0.1 and a client certificate
    (both signed by that CA) into `folder`; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _signed(ca_name, ca_key, ca_name, ca_key, ca=True)
    files = TlsFiles(folder / "ca.pem", folder / "server.pem", folder / "server.key", folder / "client.pem",
                     folder / "client.key")
    files.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    for cert_path, key_path, usage, hosts in ((files.server_cert, files.server_key, ExtendedKeyUsageOID.SERVER_AUTH,
                                               True),
                                              (files.client_cert, files.client_key, ExtendedKeyUsageOID.CLIENT_AUTH,
                                               False)):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _signed(cert_path.stem, key, ca_name, ca_key, ca=False, usage=usage, hosts=hosts)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, key_path)
    return files
