"""TLS: our ASGI app under uvicorn with a certificate from a CA made in the test (the
`cryptography` package), reached over `wss://` and `https://` by clients that trust that CA
through their `ssl` option, and refused by clients that do not."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.remote.support import remote, uvicorn_server
from tests.remote.versions_kit import V2Agent, acp_v2, expect_turn, prompt_turn


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca_and_server_cert(directory: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for 127.0.0.1 it signed: (CA cert, server cert, server key)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key, server_key = (
        ec.generate_private_key(ec.SECP256R1()),
        ec.generate_private_key(ec.SECP256R1()),
    )
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("acp-codegen test CA"))
        .issuer_name(_name("acp-codegen test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca_cert.subject)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    paths[0].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.mark.parametrize("scheme", ["wss", "https"])
async def test_tls_clients_trust_the_servers_ca(scheme: str, tmp_path: Path) -> None:
    ca, cert, key = make_ca_and_server_cert(tmp_path)
    app = remote.acp_asgi_app(V2Agent())
    schemes: set[str] = set()
    deletes: list[str] = []

    async def recording(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            schemes.add(scope["scheme"])
            if scope.get("method") == "DELETE":
                deletes.append(scope["path"])
        await app(scope, receive, send)

    async with uvicorn_server(recording, ssl_certfile=str(cert), ssl_keyfile=str(key)) as base:
        url = f"{scheme}://{base}/acp"
        trusting = ssl.create_default_context(cafile=str(ca))
        turn = await prompt_turn(acp_v2, url, ssl=trusting)
        # closed once: a second DELETE after the client closed would leave a TLS socket open
        # (and uvicorn's shutdown waiting for it)
        assert deletes == (["/acp"] if scheme == "https" else [])
        with pytest.raises((ssl.SSLCertVerificationError, acp_v2.RpcError, ConnectionError)):
            await prompt_turn(acp_v2, url)  # the system's CAs do not know the test CA
    expect_turn(acp_v2, turn)
    assert schemes == {scheme}  # every request of the turn came over TLS
