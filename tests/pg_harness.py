"""A throwaway PostgreSQL server for the cluster tests, started by the tests themselves.

The server binaries come from the `pgserver` wheel (a dev extra, so a fresh clone's `./test`
has them) or else from the system (`initdb`/`postgres` on PATH or in the usual prefixes). The
cluster is initdb'd into a temporary folder, listens on a free loopback port, and is stopped at
interpreter exit. As root, PostgreSQL refuses to run: the server runs as `nobody` then.
Each test gets its own database (`fresh_dsn`), so tests do not see each other's jobs.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

_SYSTEM_DIRS = ["/usr/local/bin", "/usr/local/pgsql/bin", "/usr/lib/postgresql/17/bin",
                "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin",
                "/usr/lib/postgresql/14/bin"]


def find_bindir() -> Path | None:
    """A folder holding both `initdb` and `postgres`: pgserver's, else the system's."""
    # Found by location, not imported: importing pgserver sets up its own server machinery.
    spec = importlib.util.find_spec("pgserver")
    cands = [Path(spec.origin).parent / "pginstall" / "bin"] if spec and spec.origin else []
    on_path = shutil.which("initdb")
    if on_path:
        cands.append(Path(on_path).parent)
    cands += [Path(d) for d in _SYSTEM_DIRS]
    for d in cands:
        if (d / "initdb").is_file() and (d / "postgres").is_file():
            return d
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """One postgres process over a temporary data folder; stop() and start() again keep the
    data (a test can take the database away for a while)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="cuzk-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None
        self._as_nobody = os.geteuid() == 0
        self.root.chmod(0o755)
        self.data.mkdir()
        if self._as_nobody:
            os.chown(self.data, 65534, 65534)
            self.bindir = self._reachable(bindir)
        self._run([str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                   "--auth=trust", "--encoding=UTF8", "--no-sync"])

    def _reachable(self, bindir: Path) -> Path:
        """`bindir` if `nobody` can run its postgres; else a copy of the installation (bin,
        lib, share) under our temporary folder (a checkout under /root is not traversable)."""
        try:
            subprocess.run([str(bindir / "postgres"), "--version"], preexec_fn=self._demote,
                           capture_output=True, check=True)
            return bindir
        except (OSError, subprocess.CalledProcessError):
            pass
        # Keep the layout two levels up: pgserver's binaries find their libraries through
        # $ORIGIN/../../../pgserver.libs.
        top = bindir.parent.parent.parent
        prefix = self.root / "pg" / bindir.parent.parent.name / bindir.parent.name
        for sub in ("bin", "lib", "share"):
            if (bindir.parent / sub).is_dir():
                shutil.copytree(bindir.parent / sub, prefix / sub, symlinks=True)
        libs = top / f"{bindir.parent.parent.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, self.root / "pg" / libs.name, symlinks=True)
        for p in [self.root / "pg", *(self.root / "pg").rglob("*")]:
            if not p.is_symlink():
                p.chmod(p.stat().st_mode | 0o055 if p.is_dir() else p.stat().st_mode | 0o044)
        return prefix / "bin"

    def _demote(self) -> None:
        if self._as_nobody:
            os.setgid(65534)
            os.setuid(65534)

    def _run(self, cmd: list[str]) -> None:
        r = subprocess.run(cmd, preexec_fn=self._demote, capture_output=True, text=True,
                           cwd=self.root)
        if r.returncode:
            raise RuntimeError(f"{cmd[0]} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self, timeout: float = 60.0) -> None:
        log = open(self.root / "postgres.log", "ab")  # noqa: SIM115 - the server owns it
        self.proc = subprocess.Popen(
            [str(self.bindir / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-h", "127.0.0.1", "-k", str(self.data), "-c", "fsync=off",
             "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
             "-c", "max_connections=200", "-c", "shared_buffers=32MB"],
            preexec_fn=self._demote, stdout=log, stderr=subprocess.STDOUT, cwd=self.root)
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(self.dsn, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("postgres did not start:\n" + (
                        self.root / "postgres.log").read_text(errors="replace")) from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown: disconnects clients
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def fresh_dsn(self) -> str:
        """A new empty database on this server."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"


_SERVER: PgServer | None = None
_WHY_NOT = ""


def server() -> PgServer:
    """The session's server (started on first use), or a pytest skip saying why there is none."""
    global _SERVER, _WHY_NOT
    if _SERVER is None and not _WHY_NOT:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            _WHY_NOT = "psycopg is not installed (pip install -e '.[dev]')"
        bindir = find_bindir() if not _WHY_NOT else None
        if not _WHY_NOT and bindir is None:
            _WHY_NOT = ("no PostgreSQL server binaries: pip install pgserver (a dev extra) or "
                        "install initdb/postgres")
        if not _WHY_NOT:
            srv = PgServer(bindir)
            srv.start()
            atexit.register(srv.destroy)
            _SERVER = srv
    if _SERVER is None:
        pytest.skip(_WHY_NOT)
    return _SERVER
