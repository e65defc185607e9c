"""The daemon's TOML configuration: sections, defaults that run on a laptop without a GPU, and
validation whose errors name the bad key and value. Every knob is documented in docs/config.md.

Engine knobs ([srs], [memory], [gpus], [synthesis], [pipeline]) are collected into the dict that
`cuzk.engine.config.EngineConfig.from_dict` takes; the daemon's own knobs ([daemon], [store],
[log]) stay here.
"""

from __future__ import annotations

import copy
import ipaddress
import re
import ssl
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuzk.engine import pools
from cuzk.server.limits import Limits
from cuzk.settings import ConfigError

DEFAULT_PORT = 9820
DEFAULT_HTTP_PORT = 9821


# --- value parsers: each takes the raw TOML value and returns the parsed one or raises
# ValueError with what is allowed (the caller adds the key and value). ---

_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_DURATION_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_size(v: Any) -> int:
    """Bytes from an integer or a string like "256MiB", "2 GB"."""
    if isinstance(v, bool):
        raise ValueError("expected a byte size such as 268435456 or \"256MiB\"")
    if isinstance(v, int):
        if v < 0:
            raise ValueError("must be >= 0")
        return v
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", v)
        if m and m.group(2).lower() in _SIZE_UNITS:
            return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    raise ValueError("expected a byte size such as 268435456 or \"256MiB\" (units B, KB, MB, GB, KiB, MiB, GiB, TiB)")


def parse_duration(v: Any) -> float:
    """Seconds from a number or a string like "30s", "12h", "7d"."""
    if isinstance(v, bool):
        raise ValueError("expected a duration such as 3600 or \"7d\"")
    if isinstance(v, int | float):
        if v < 0:
            raise ValueError("must be >= 0")
        return float(v)
    if isinstance(v, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", v)
        if m and m.group(2).lower() in _DURATION_UNITS:
            return float(m.group(1)) * _DURATION_UNITS[m.group(2).lower()]
    raise ValueError("expected a duration such as 3600 or \"7d\" (units s, m, h, d, w)")


def _int(lo: int, hi: int | None = None) -> Callable[[Any], int]:
    def p(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"expected an integer >= {lo}")
        if v < lo or (hi is not None and v > hi):
            raise ValueError(f"must be between {lo} and {hi}" if hi is not None else f"must be >= {lo}")
        return v

    return p


def _float(lo: float) -> Callable[[Any], float]:
    def p(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or v < lo:
            raise ValueError(f"expected a number >= {lo}")
        return float(v)

    return p


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError("expected true or false")
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError("expected a string")
    return v


def _choice(*options: str) -> Callable[[Any], str]:
    def p(v: Any) -> str:
        if not isinstance(v, str) or v.lower() not in options:
            raise ValueError("expected one of " + ", ".join(repr(o) for o in options))
        return v.lower()

    return p


def _cpus(v: Any) -> str:
    # a core list such as "0-11" or "0-3,8": the pool's threads are pinned there (Linux)
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        v = str(v)  # one core (a --set override's 3 reads as a number)
    if not isinstance(v, str):
        raise ValueError('expected a core list such as "0-11" or "0-3,8" ("" = not pinned)')
    pools.valid_cpus(v)
    return v


def _str_list(v: Any) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError("expected a list of strings")
    return list(v)


def _devices(v: Any) -> list[int] | str:
    # "auto" = every visible GPU (none → CPU backend); [] = CPU only; [0, 1] = those ordinals.
    if v == "auto":
        return "auto"
    if isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
        return list(v)
    raise ValueError('expected "auto" or a list of GPU ordinals such as [0, 1] ([] = CPU only)')


def parse_listen(v: Any) -> str:
    """"host:port", "[v6]:port" or "unix:/path"; the empty string disables the listener."""
    if not isinstance(v, str):
        raise ValueError('expected "host:port" or "unix:/path/to.sock"')
    if v == "" or v.startswith("unix:"):
        return v
    m = re.fullmatch(r"(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):(\d+)", v)
    if not m or not 0 <= int(m.group(2)) <= 65535:
        raise ValueError('expected "host:port" (port 0-65535) or "unix:/path/to.sock"')
    return v


def is_loopback(listen: str) -> bool:
    """True for unix sockets and loopback addresses: only this machine can connect."""
    if listen.startswith("unix:") or listen == "":
        return True
    host = listen.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# section -> key -> (parser, default). The defaults run on a laptop without a GPU.
SCHEMA: dict[str, dict[str, tuple[Callable[[Any], Any], Any]]] = {
    "daemon": {
        "listen": (parse_listen, f"127.0.0.1:{DEFAULT_PORT}"),
        "http_listen": (parse_listen, f"127.0.0.1:{DEFAULT_HTTP_PORT}"),
        "auth_token": (_str, ""),
        "auth_token_file": (_str, ""),
        "tls_cert": (_str, ""),
        "tls_key": (_str, ""),
        "allow_insecure_remote": (_bool, False),
        "max_message_bytes": (parse_size, 256 * 2**20),
        "grpc_threads": (_int(4, 4096), 64),
        "max_pending_jobs": (_int(1), 1024),
        "max_pending_jobs_per_client": (_int(1), 256),
        "max_partitions_per_job": (_int(1), 128),
        "max_request_bytes": (parse_size, 256 * 2**20),
        "shutdown_grace_s": (parse_duration, 30.0),
    },
    "srs": {
        "preload": (_str_list, []),
        "key_cache_dir": (_str, "~/.cache/cuzk/keys"),
        # "circuits" is a table of tables, checked separately
    },
    "memory": {
        "srs_budget_bytes": (parse_size, 0),
        "max_pending_bytes": (parse_size, 2 * 2**30),
        "max_pending_bytes_per_client": (parse_size, 2**30),
    },
    "gpus": {
        "devices": (_devices, "auto"),
        "gpu_workers_per_device": (_int(1, 64), 2),
        "gpu_threads": (_int(0), 0),
        "cpus": (_cpus, ""),
        "g2_on_cpu": (_bool, False),
        "msm_tables": (_bool, True),
        "msm_table_reserve_bytes": (parse_size, 16 * 2**30),
        "warm_up": (_bool, True),
        "backend": (_choice("auto", "cpu", "cuda", "reference"), "auto"),
    },
    "synthesis": {
        "threads": (_int(0), 0),
        "cpus": (_cpus, ""),
        "partition_workers": (_int(1, 1024), 2),
        "evaluate_on": (_choice("auto", "host", "device"), "auto"),
    },
    "pipeline": {
        "synthesis_concurrency": (_int(1, 1024), 1),
        "max_gpu_queue_depth": (_int(1, 4096), 4),
        "fair_quantum": (_int(1, 1 << 20), 1),
        "verify_after_prove": (_bool, False),
    },
    "store": {
        "path": (_str, "~/.local/state/cuzk/jobs.sqlite"),
        "retention": (parse_duration, 7 * 86400.0),
        "synchronous": (_choice("normal", "full"), "normal"),
        # A cluster: several daemons sharing one PostgreSQL job store (docs/cluster.md).
        "backend": (_choice("sqlite", "postgres"), "sqlite"),
        "dsn": (_str, ""),
        "migrate": (_bool, True),
        "notify": (_bool, True),
        "node_id": (_str, ""),
        "lease": (parse_duration, 30.0),
        "heartbeat": (parse_duration, 5.0),
        "max_attempts": (_int(1, 100), 3),
        "cold_claim_delay": (parse_duration, 2.0),
        "poll": (parse_duration, 1.0),
    },
    "filecoin": {
        # Defaults of every `filecoin = {...}` circuit table that does not set its own.
        "params_dir": (_str, ""),  # "" = FIL_PROOFS_PARAMETER_CACHE, else /var/tmp/filecoin-proof-parameters
        "dev_keys": (_bool, False),
    },
    "log": {
        "level": (_choice("debug", "info", "warning", "error"), "info"),
        "format": (_choice("text", "json"), "text"),
        "file": (_str, ""),
        "timeline": (_str, "~/.local/state/cuzk/timeline.log"),
    },
}

# Engine knob -> (section, key) in this file's schema. The engine's names are the keys.
ENGINE_KEYS: dict[str, tuple[str, str]] = {
    "devices": ("gpus", "devices"),
    "gpu_workers_per_device": ("gpus", "gpu_workers_per_device"),
    "gpu_threads": ("gpus", "gpu_threads"),
    "gpu_cpus": ("gpus", "cpus"),
    "g2_on_cpu": ("gpus", "g2_on_cpu"),
    "msm_tables": ("gpus", "msm_tables"),
    "msm_table_reserve_bytes": ("gpus", "msm_table_reserve_bytes"),
    "warm_up": ("gpus", "warm_up"),
    "backend": ("gpus", "backend"),
    "synthesis_threads": ("synthesis", "threads"),
    "synthesis_cpus": ("synthesis", "cpus"),
    "partition_workers": ("synthesis", "partition_workers"),
    "evaluate_on": ("synthesis", "evaluate_on"),
    "synthesis_concurrency": ("pipeline", "synthesis_concurrency"),
    "max_gpu_queue_depth": ("pipeline", "max_gpu_queue_depth"),
    "fair_quantum": ("pipeline", "fair_quantum"),
    "verify_after_prove": ("pipeline", "verify_after_prove"),
    "srs_memory_budget_bytes": ("memory", "srs_budget_bytes"),
    "key_cache_dir": ("srs", "key_cache_dir"),
    "timeline_log_path": ("log", "timeline"),
}


@dataclass
class DaemonConfig:
    """A validated config: `sections[name][key]` holds parsed values, `circuits` the circuit
    specs by id (passed to Engine.register_circuit as they are)."""

    sections: dict[str, dict[str, Any]]
    circuits: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = "<defaults>"

    def __getitem__(self, section: str) -> dict[str, Any]:
        return self.sections[section]

    @property
    def auth_token(self) -> str:
        d = self.sections["daemon"]
        if d["auth_token"]:
            return d["auth_token"]
        if d["auth_token_file"]:
            return Path(d["auth_token_file"]).expanduser().read_text().strip()
        return ""

    def engine_dict(self) -> dict[str, Any]:
        """The engine's knobs, named as EngineConfig.from_dict takes them; paths expanded."""
        out: dict[str, Any] = {}
        for key, (sec, k) in ENGINE_KEYS.items():
            v = self.sections[sec][k]
            if key in ("key_cache_dir", "timeline_log_path"):
                v = str(Path(v).expanduser()) if v else None
            elif key == "devices":
                # "auto" = the engine's choice (every GPU, else the CPU); [] = CPU only.
                v = [] if v == "auto" else ([f"cuda:{d}" for d in v] if v else ["cpu"])
            out[key] = v
        return out

    def limits(self) -> Limits:
        """What one request and one client may ask of the daemon (cuzk.server.limits)."""
        d, m = self.sections["daemon"], self.sections["memory"]
        return Limits(max_partitions_per_job=d["max_partitions_per_job"],
                      max_request_bytes=d["max_request_bytes"],
                      max_pending_jobs=d["max_pending_jobs"],
                      max_pending_bytes=m["max_pending_bytes"],
                      max_pending_jobs_per_client=d["max_pending_jobs_per_client"],
                      max_pending_bytes_per_client=m["max_pending_bytes_per_client"])

    def store_path(self) -> Path:
        return Path(self.sections["store"]["path"]).expanduser()


def _validate(raw: dict[str, Any], source: str) -> DaemonConfig:
    sections: dict[str, dict[str, Any]] = {}
    for name, value in raw.items():
        if name not in SCHEMA:
            raise ConfigError(
                f"{source}: unknown section [{name}] (known: {', '.join(f'[{s}]' for s in SCHEMA)})"
            )
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {name} = {value!r}: expected a [{name}] table")
    for name, keys in SCHEMA.items():
        given = dict(raw.get(name, {}))
        circuits_raw = given.pop("circuits", None) if name == "srs" else None
        parsed: dict[str, Any] = {}
        for key, value in given.items():
            if key not in keys:
                known = ", ".join(keys) + (", circuits" if name == "srs" else "")
                raise ConfigError(f"{source}: [{name}] unknown key {key!r} (known: {known})")
            try:
                parsed[key] = keys[key][0](value)
            except ValueError as exc:
                raise ConfigError(f"{source}: [{name}] {key} = {value!r}: {exc}") from None
        for key, (_parser, default) in keys.items():
            parsed.setdefault(key, copy.deepcopy(default))
        sections[name] = parsed
        if name == "srs":
            sections[name]["circuits"] = circuits_raw or {}

    circuits: dict[str, dict[str, Any]] = {}
    for cid, spec in sections["srs"].pop("circuits").items():
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", cid):
            raise ConfigError(f"{source}: [srs.circuits] id {cid!r}: use letters, digits, '.', '_', '-'")
        if not isinstance(spec, dict):
            raise ConfigError(f"{source}: [srs.circuits.{cid}] = {spec!r}: expected a table")
        fc = spec.get("filecoin")
        if isinstance(fc, dict):
            defaults = {"params": sections["filecoin"]["params_dir"],
                        "dev_keys": sections["filecoin"]["dev_keys"]}
            spec = {**spec, "filecoin": {**{k: v for k, v in defaults.items() if v}, **fc}}
        circuits[cid] = spec
    for cid in sections["srs"]["preload"]:
        if cid not in circuits:
            raise ConfigError(
                f"{source}: [srs] preload = {sections['srs']['preload']!r}: {cid!r} is not a "
                f"circuit in [srs.circuits] (known: {', '.join(circuits) or 'none'})"
            )

    d = sections["daemon"]
    if d["listen"] == "":
        raise ConfigError(f"{source}: [daemon] listen = '': the gRPC listener cannot be disabled")
    if bool(d["tls_cert"]) != bool(d["tls_key"]):
        raise ConfigError(
            f"{source}: [daemon] tls_cert = {d['tls_cert']!r}, tls_key = {d['tls_key']!r}: "
            "set both or neither"
        )
    for key in ("tls_cert", "tls_key", "auth_token_file"):
        if d[key] and not Path(d[key]).expanduser().is_file():
            raise ConfigError(f"{source}: [daemon] {key} = {d[key]!r}: file not found")
    if d["tls_cert"]:
        # Load the pair now, so a wrong file fails here with a reason, not at bind time.
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(
                Path(d["tls_cert"]).expanduser(), Path(d["tls_key"]).expanduser())
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(
                f"{source}: [daemon] tls_cert = {d['tls_cert']!r}, tls_key = {d['tls_key']!r}: not a "
                f"PEM certificate chain and its private key ({exc})"
            ) from None
    for key in ("listen", "http_listen"):
        addr = d[key]
        has_token = bool(d["auth_token"] or d["auth_token_file"])
        if not is_loopback(addr) and not has_token and not d["allow_insecure_remote"]:
            raise ConfigError(
                f"{source}: [daemon] {key} = {addr!r} accepts connections from other machines; "
                "set auth_token (and tls_cert/tls_key), or allow_insecure_remote = true"
            )
    _validate_store(sections["store"], source)
    return DaemonConfig(sections=sections, circuits=circuits, source=source)


def _validate_store(s: dict[str, Any], source: str) -> None:
    if s["backend"] != "postgres":
        return
    if not re.match(r"postgres(ql)?://", s["dsn"]):
        raise ConfigError(f"{source}: [store] dsn = {s['dsn']!r}: backend = \"postgres\" needs a "
                          "connection URL such as \"postgresql://cuzk@db-host:5432/cuzk\"")
    if not 0 < s["heartbeat"] * 2 <= s["lease"]:
        raise ConfigError(f"{source}: [store] heartbeat = {s['heartbeat']!r}, lease = "
                          f"{s['lease']!r}: renew at least twice per lease (heartbeat <= lease / 2, "
                          "heartbeat > 0)")
    if s["poll"] <= 0:
        raise ConfigError(f"{source}: [store] poll = {s['poll']!r}: must be > 0")


def from_dict(raw: dict[str, Any], source: str = "<dict>") -> DaemonConfig:
    return _validate(raw, source)


def load(path: str | Path | None, overrides: list[str] | None = None) -> DaemonConfig:
    """Read a TOML file (None = defaults only) and apply `section.key=value` overrides."""
    raw: dict[str, Any] = {}
    source = "<defaults>"
    if path is not None:
        source = str(path)
        try:
            with open(path, "rb") as f:
                raw = tomllib.load(f)
        except FileNotFoundError:
            raise ConfigError(f"{source}: file not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    for item in overrides or []:
        apply_override(raw, item)
    return _validate(raw, source)


def resolve_key(key: str) -> tuple[str, str]:
    """"section.key", a bare key unique across sections, or an engine knob name."""
    if "." in key:
        sec, k = key.split(".", 1)
        if sec in SCHEMA and k in SCHEMA[sec]:
            return sec, k
        raise ConfigError(f"unknown config key {key!r}")
    if key in ENGINE_KEYS:
        return ENGINE_KEYS[key]
    hits = [(s, key) for s, keys in SCHEMA.items() if key in keys]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ConfigError(f"config key {key!r} is ambiguous: use one of " + ", ".join(f"{s}.{k}" for s, k in hits))
    raise ConfigError(f"unknown config key {key!r}")


def parse_override_value(text: str) -> Any:
    """A TOML value ("4", "true", "[0, 1]", "\"x\"") or, failing that, the bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_override(raw: dict[str, Any], item: str) -> None:
    """Set `section.key=value` (or `key=value`) in a raw config dict, in place."""
    if "=" not in item:
        raise ConfigError(f"override {item!r}: expected KEY=VALUE")
    key, text = item.split("=", 1)
    sec, k = resolve_key(key.strip())
    value = parse_override_value(text.strip())
    if SCHEMA[sec][k][0] is _str and not isinstance(value, str):
        # A string key keeps the text as typed: a token of digits is not a number.
        value = text.strip()
    raw.setdefault(sec, {})[k] = value
