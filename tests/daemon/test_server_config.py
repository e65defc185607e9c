"""Daemon TOML config: defaults, overrides, and errors that name the bad key and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuzk.server import config as cfg
from cuzk.settings import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cuzk.toml"
    p.write_text(text)
    return p


def test_defaults_are_local_and_complete() -> None:
    c = cfg.load(None)
    assert cfg.is_loopback(c["daemon"]["listen"])
    assert cfg.is_loopback(c["daemon"]["http_listen"])
    assert c["daemon"]["max_message_bytes"] == 256 * 2**20
    eng = c.engine_dict()
    assert set(eng) == set(cfg.ENGINE_KEYS)
    assert eng["gpu_workers_per_device"] == 2
    assert eng["max_gpu_queue_depth"] == 4


def test_example_config_loads() -> None:
    root = Path(__file__).resolve().parents[2]
    c = cfg.load(root / "configs" / "cuzk.example.toml")
    assert c.circuits, "the example registers at least one circuit"
    for cid in c["srs"]["preload"]:
        assert cid in c.circuits


def test_values_parse(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        """
[daemon]
listen = "unix:/tmp/x.sock"
max_message_bytes = "64MiB"
[store]
retention = "2d"
[gpus]
devices = [0, 1]
[srs]
preload = ["a"]
[srs.circuits.a]
synthetic = { constraints = 64 }
""",
    )
    c = cfg.load(p)
    assert c["daemon"]["max_message_bytes"] == 64 * 2**20
    assert c["store"]["retention"] == 2 * 86400
    assert c.engine_dict()["devices"] == ["cuda:0", "cuda:1"]
    assert c.circuits["a"] == {"synthetic": {"constraints": 64}}


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("[gpus]\ngpu_workers_per_device = 0\n", ["[gpus]", "gpu_workers_per_device", "0"]),
        ("[gpus]\ngpu_workers_per_device = \"two\"\n", ["gpu_workers_per_device", "'two'"]),
        ("[pipeline]\nmax_gpu_queue_dept = 3\n", ["[pipeline]", "max_gpu_queue_dept", "known"]),
        ("[daemon]\nlisten = \"nohost\"\n", ["listen", "'nohost'", "host:port"]),
        ("[daemon]\nmax_message_bytes = \"12 parsecs\"\n", ["max_message_bytes", "12 parsecs"]),
        ("[bogus]\nx = 1\n", ["[bogus]", "unknown section"]),
        ("[srs]\npreload = [\"nope\"]\n", ["preload", "'nope'"]),
        ("[daemon]\nlisten = \"0.0.0.0:9820\"\n", ["listen", "0.0.0.0:9820", "auth_token"]),
        ("[daemon]\ntls_cert = \"/nonexistent.pem\"\n", ["tls_cert", "tls_key"]),
        ("[log]\nlevel = \"loud\"\n", ["level", "'loud'", "'debug'"]),
        ("[srs.circuits]\nx = 3\n", ["srs.circuits.x", "table"]),
        ("not toml = = =\n", ["not valid TOML"]),
    ],
)
def test_errors_name_key_and_value(tmp_path: Path, text: str, needles: list[str]) -> None:
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as exc:
        cfg.load(p)
    msg = str(exc.value)
    for n in needles:
        assert n in msg, f"{n!r} missing from {msg!r}"


def test_remote_listen_allowed_with_token(tmp_path: Path) -> None:
    p = write(tmp_path, '[daemon]\nlisten = "0.0.0.0:9820"\nauth_token = "s3cret"\n')
    c = cfg.load(p)
    assert c.auth_token == "s3cret"
    assert not cfg.is_loopback(c["daemon"]["listen"])


def test_overrides() -> None:
    c = cfg.load(None, ["pipeline.max_gpu_queue_depth=7", "partition_workers=3", "devices=[]"])
    assert c["pipeline"]["max_gpu_queue_depth"] == 7
    assert c["synthesis"]["partition_workers"] == 3
    assert c.engine_dict()["devices"] == ["cpu"]  # [] = CPU only
    with pytest.raises(ConfigError, match="unknown config key"):
        cfg.load(None, ["nope=1"])
    with pytest.raises(ConfigError, match="max_gpu_queue_depth"):
        cfg.load(None, ["max_gpu_queue_depth=-2"])


@pytest.mark.parametrize("token", ["2178405728471761", "1e5", "true", "0x1f", '"quoted"'])
def test_string_override_keeps_text(token: str) -> None:
    # A hex token that happens to be all digits (or reads as a TOML bool) stays a string.
    c = cfg.load(None, [f"daemon.auth_token={token}"])
    assert c["daemon"]["auth_token"] == token.strip('"')


def test_sizes_and_durations() -> None:
    assert cfg.parse_size("1GiB") == 2**30
    assert cfg.parse_size("1.5 KB") == 1500
    assert cfg.parse_size(0) == 0
    assert cfg.parse_duration("90m") == 5400
    with pytest.raises(ValueError):
        cfg.parse_size(-1)
    with pytest.raises(ValueError):
        cfg.parse_duration("soon")


def test_engine_accepts_the_dict() -> None:
    from cuzk.engine.config import EngineConfig

    for over in ([], ["devices=[]"], ["devices=[0]", "verify_after_prove=true"]):
        c = cfg.load(None, over)
        ec = EngineConfig.from_dict(c.engine_dict())
        assert ec.max_gpu_queue_depth == c["pipeline"]["max_gpu_queue_depth"]


def test_filecoin_section_fills_the_filecoin_tables(tmp_path: Path) -> None:
    """[filecoin] params_dir and dev_keys are the defaults of every `filecoin = {...}` table;
    a table's own keys win; other circuits are left alone."""
    c = cfg.load(write(tmp_path, """
[filecoin]
params_dir = "/srv/params"
dev_keys = true
[srs.circuits.porep-32g]
filecoin = { proof = "porep", sector_size = "32GiB" }
[srs.circuits.porep-2k]
filecoin = { proof = "porep", sector_size = "2KiB", params = "/elsewhere", dev_keys = false }
[srs.circuits.tiny]
synthetic = { constraints = 4 }
"""))
    assert c.circuits["porep-32g"]["filecoin"] == {"proof": "porep", "sector_size": "32GiB",
                                                   "params": "/srv/params", "dev_keys": True}
    assert c.circuits["porep-2k"]["filecoin"]["params"] == "/elsewhere"
    assert c.circuits["porep-2k"]["filecoin"]["dev_keys"] is False
    assert c.circuits["tiny"] == {"synthetic": {"constraints": 4}}
    assert cfg.load(None)["filecoin"] == {"params_dir": "", "dev_keys": False}
