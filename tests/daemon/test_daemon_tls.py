"""TLS and the off-loopback guard: a real daemon serving gRPC and HTTPS on loopback with a
certificate made at test time (a throwaway CA and a leaf for 127.0.0.1/localhost)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import random
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from daemon_harness import ROOT, DaemonProc, verify_result, write_config

from cuzk.server.client import Client, ClientError

x509 = pytest.importorskip("cryptography.x509", reason="the cryptography package (dev extras) makes test certificates")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_pki(out: Path, tag: str = "") -> dict[str, Path]:
    """A fresh CA and a server certificate it signs for 127.0.0.1 and localhost (valid an hour)."""
    now = datetime.datetime.now(datetime.UTC)
    life = {"not_valid_before": now - datetime.timedelta(minutes=5),
            "not_valid_after": now + datetime.timedelta(hours=1)}
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"cuzk test CA {tag}{os.urandom(4).hex()}")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(life["not_valid_before"]).not_valid_after(life["not_valid_after"])
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName(
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = (x509.CertificateBuilder().subject_name(_name("localhost")).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(life["not_valid_before"]).not_valid_after(life["not_valid_after"])
            .add_extension(san, critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    out.mkdir(parents=True, exist_ok=True)
    paths = {"ca": out / f"ca{tag}.pem", "cert": out / f"cert{tag}.pem", "key": out / f"key{tag}.pem"}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths["key"].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    paths["key"].chmod(0o600)
    return paths


@pytest.fixture(scope="module")
def tls_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaemonProc, dict[str, Path]]]:
    tmp = tmp_path_factory.mktemp("tls")
    pki = make_pki(tmp / "pki")
    token = os.urandom(12).hex()
    (tmp / "token").write_text(token + "\n")
    d = DaemonProc(write_config(tmp, tls_cert=str(pki["cert"]), tls_key=str(pki["key"]),
                                auth_token_file=str(tmp / "token")), tmp).start()
    pki["token"] = tmp / "token"
    yield d, pki
    assert d.term() == 0, d.log()


def _token(pki: dict[str, Path]) -> str:
    return pki["token"].read_text().strip()


def test_tls_client_proves(tls_daemon: tuple[DaemonProc, dict[str, Path]], rng: random.Random) -> None:
    d, pki = tls_daemon
    assert "tls=True" in d.log()
    seeds = [rng.randrange(2**40) for _ in range(2)]
    with Client(d.grpc, token=_token(pki), tls_ca=str(pki["ca"]), retry_unavailable_s=0) as c:
        verify_result(c.prove("tiny", seeds, timeout=120))
    # The certificate names localhost too.
    host = d.grpc.replace("127.0.0.1", "localhost")
    with Client(host, token=_token(pki), tls_ca=str(pki["ca"]), retry_unavailable_s=0) as c:
        assert "tiny" in c.status()["circuits"]


def test_tls_cli(tls_daemon: tuple[DaemonProc, dict[str, Path]], tmp_path: Path,
                 rng: random.Random) -> None:
    d, pki = tls_daemon
    env = {**os.environ, "CUZK_TOKEN": _token(pki)}
    r = subprocess.run(
        [sys.executable, "-m", "cuzk.cli", "prove", "--address", d.grpc, "--tls-ca", str(pki["ca"]),
         "--circuit", "tiny", "--seeds", f"{rng.randrange(99)},{rng.randrange(99)}",
         "--out", str(tmp_path), "--no-progress"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=180,
    )
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.glob("proof_*.bin")) == ["proof_0.bin", "proof_1.bin"]
    meta = json.loads((tmp_path / "result.json").read_text())
    assert meta["status"] == "COMPLETED"


def test_plaintext_and_wrong_ca_fail_clearly(tls_daemon: tuple[DaemonProc, dict[str, Path]],
                                             tmp_path: Path, rng: random.Random) -> None:
    d, pki = tls_daemon
    other = make_pki(tmp_path, tag="-other")
    with pytest.raises(ClientError) as exc:
        Client(d.grpc, token=_token(pki), retry_unavailable_s=0).status()
    assert exc.value.code == grpc.StatusCode.UNAVAILABLE
    assert "if it serves TLS, pass its CA with tls_ca (--tls-ca)" in exc.value.message
    with pytest.raises(ClientError) as exc:
        Client(d.grpc, token=_token(pki), tls_ca=str(other["ca"]), retry_unavailable_s=0).status()
    assert exc.value.code == grpc.StatusCode.UNAVAILABLE
    assert "must be the CA that signed the daemon's certificate" in exc.value.message
    # The CLI prints the same hint and exits non-zero (at once: a failed handshake is not retried).
    r = subprocess.run([sys.executable, "-m", "cuzk.cli", "status", "--address", d.grpc,
                        "--tls-ca", str(other["ca"])],
                       capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env={**os.environ, "CUZK_TOKEN": _token(pki)})
    assert r.returncode == 1 and "must be the CA that signed" in r.stderr, r.stderr
    # TLS with the right CA but no token is still refused: TLS does not replace auth.
    with pytest.raises(ClientError) as exc:
        Client(d.grpc, token="", tls_ca=str(pki["ca"]), retry_unavailable_s=0).status()
    assert exc.value.code == grpc.StatusCode.UNAUTHENTICATED
    # The daemon is unharmed.
    with Client(d.grpc, token=_token(pki), tls_ca=str(pki["ca"]), retry_unavailable_s=0) as c:
        assert c.prove("tiny", [rng.randrange(2**30), rng.randrange(2**30)], timeout=120).ok


def test_https_status(tls_daemon: tuple[DaemonProc, dict[str, Path]]) -> None:
    d, pki = tls_daemon
    ctx = ssl.create_default_context(cafile=str(pki["ca"]))
    req = urllib.request.Request(f"https://{d.http}/status",
                                 headers={"Authorization": f"Bearer {_token(pki)}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        assert "tiny" in json.loads(r.read())["circuits"]
    with urllib.request.urlopen(f"https://{d.http}/healthz", context=ctx, timeout=10) as r:
        assert r.read() == b"ok\n"
    # Plain HTTP to the TLS port gets no answer, and a client with another CA refuses the server.
    with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
        urllib.request.urlopen(f"http://{d.http}/healthz", timeout=10)
    other = ssl.create_default_context()  # system CAs: do not know our throwaway CA
    with pytest.raises(urllib.error.URLError) as exc:
        urllib.request.urlopen(f"https://{d.http}/healthz", context=other, timeout=10)
    assert isinstance(exc.value.reason, ssl.SSLCertVerificationError)
    # Still serving after the failed handshakes.
    with urllib.request.urlopen(f"https://{d.http}/healthz", context=ctx, timeout=10) as r:
        assert r.status == 200


def _daemon_cli(args: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cuzk.cli", "daemon", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.mark.parametrize("key,addr", [("listen", "0.0.0.0:0"), ("listen", "[::]:0"),
                                      ("http_listen", "0.0.0.0:0")])
def test_off_loopback_refused_without_token(tmp_path: Path, key: str, addr: str) -> None:
    # Refused by config validation, before anything binds.
    cfg = write_config(tmp_path, **{key: addr})
    for extra in (["--check"], ["--ready-file", str(tmp_path / "ready.json")]):
        r = _daemon_cli(["--config", str(cfg), *extra])
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert f"[daemon] {key} = {addr!r} accepts connections from other machines" in r.stderr
        assert "auth_token" in r.stderr and "allow_insecure_remote" in r.stderr
        assert not (tmp_path / "ready.json").exists()
    # A token, or the explicit override, makes the same config valid (checked, not started).
    for override in (f"daemon.auth_token={os.urandom(8).hex()}", "daemon.allow_insecure_remote=true"):
        r = _daemon_cli(["--config", str(cfg), "--check", "--set", override])
        assert r.returncode == 0, r.stderr
        assert "ok" in r.stdout


def test_tls_config_checked(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    r = _daemon_cli(["--config", str(write_config(tmp_path, tls_cert=str(pki["cert"]))), "--check"])
    assert r.returncode == 2 and "set both or neither" in r.stderr, r.stderr
    missing = str(tmp_path / "nope.pem")
    r = _daemon_cli(["--config", str(write_config(tmp_path, tls_cert=str(pki["cert"]), tls_key=missing)),
                     "--check"])
    assert r.returncode == 2 and f"tls_key = {missing!r}: file not found" in r.stderr, r.stderr
    # A key that is not the certificate's, or not a key at all, is named before anything binds.
    other = make_pki(tmp_path / "other")
    for key in (other["key"], pki["cert"]):
        cfg = write_config(tmp_path, tls_cert=str(pki["cert"]), tls_key=str(key))
        r = _daemon_cli(["--config", str(cfg), "--check"])
        assert r.returncode == 2, r.stdout
        assert "not a PEM certificate chain and its private key" in r.stderr, r.stderr


def test_port_in_use_refused(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        addr = f"127.0.0.1:{s.getsockname()[1]}"
        for key, needle in (("listen", f"cannot listen on {addr} (address in use?)"),
                            ("http_listen", f"cannot listen on {addr} (http_listen): Address already in use")):
            r = _daemon_cli(["--config", str(write_config(tmp_path, **{key: addr})),
                             "--ready-file", str(tmp_path / "ready.json")])
            assert r.returncode == 1, r.stderr
            assert needle in r.stderr and "Traceback" not in r.stderr, r.stderr
