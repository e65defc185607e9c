"""`cuzk filecoin gen-post`, `prove-post`, `verify-post`, `gen-update`, `prove-update`,
`verify-update`, in-process, at 2 KiB with development keys (NOT FOR PRODUCTION) kept in the
session's cache: round trips for both PoSt kinds and both update variants, from job files and
from Curio's fields; inputs refused before anything is proved, one line, nothing written."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from cuzk.backends.cpu import native_module
from cuzk.cli import main

pytestmark = pytest.mark.skipif(native_module() is None, reason="needs the native CPU backend")


@pytest.fixture(autouse=True)
def _cache(c2_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUZK_CACHE_DIR", str(c2_cache))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["filecoin", *argv])
    got = capsys.readouterr()
    return rc, got.out, got.err


def _one_line_error(err: str, needle: str) -> None:
    lines = [x for x in err.strip().splitlines() if x.startswith("ERROR")]
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in err, err


def _gen(capsys: pytest.CaptureFixture[str], tmp_path: Path, verb: str, *opts: str,
         name: str = "job") -> tuple[Path, dict]:
    job = tmp_path / f"{name}.bin"
    rc, out, err = _run(capsys, verb, *opts, "-o", str(job), "--vanilla-out",
                        str(tmp_path / f"{name}.json"), "--json")
    assert rc == 0, err
    return job, json.loads(out)


def _round_trip(capsys: pytest.CaptureFixture[str], tmp_path: Path, no_params: Path, what: str,
                job: Path, partitions: int = 1) -> Path:
    proof = tmp_path / f"{job.stem}.proof"
    rc, out, err = _run(capsys, f"prove-{what}", str(job), "-o", str(proof), "--params",
                        str(no_params), "--backend", "cpu")
    assert rc == 0, err
    assert "[DEVELOPMENT KEYS]" in out and "NOT FOR PRODUCTION" in err
    assert proof.stat().st_size == 192 * partitions
    rc, out, err = _run(capsys, f"verify-{what}", str(job), str(proof), "--params", str(no_params))
    assert (rc, out.strip()) == (0, "valid"), err
    return proof


def test_window_post(capsys: pytest.CaptureFixture[str], tmp_path: Path, no_params: Path) -> None:
    job, info = _gen(capsys, tmp_path, "gen-post", "window", "--sectors", "3",
                     "--partition-index", "1")
    assert info["registered_proof"] == "StackedDrgWindow2KiBV1_2" and info["partitions"] == 2
    proof = _round_trip(capsys, tmp_path, no_params, "post", job)
    # Curio's fields instead of a job file: the same proof verifies
    rc, out, err = _run(capsys, "verify-post", str(proof), "--params", str(no_params),
                        "--registered-proof", "StackedDrgWindow2KiBV1_1",
                        "--vanilla", str(tmp_path / "job.json"), "--randomness", info["randomness"],
                        "--prover-id", info["prover_id"], "--partition-index", "1")
    assert (rc, out.strip()) == (0, "valid"), err
    # other sectors (partition 0 of the same PoSt) do not verify it
    other, _ = _gen(capsys, tmp_path, "gen-post", "window", "--sectors", "3", name="p0")
    rc, out, _ = _run(capsys, "verify-post", str(other), str(proof), "--params", str(no_params))
    assert rc == 1 and out.startswith("invalid: ")
    rc, out, _ = _run(capsys, "verify-post", str(job), str(other), "--params", str(no_params))
    assert rc == 1


def test_winning_post(capsys: pytest.CaptureFixture[str], tmp_path: Path, no_params: Path) -> None:
    job, info = _gen(capsys, tmp_path, "gen-post", "winning", "--miner-id", "1000")
    assert info["proof"] == "winning-post" and info["prover_id"].startswith("e807")
    proof = _round_trip(capsys, tmp_path, no_params, "post", job)
    out = tmp_path / "again.proof"
    rc, _, err = _run(capsys, "prove-post", "--registered-proof", "0", "--vanilla",
                      str(tmp_path / "job.json"), "--randomness", info["randomness"],
                      "--miner-id", "1000", "-o", str(out), "--params", str(no_params))
    assert rc == 0, err
    rc, text, _ = _run(capsys, "verify-post", str(job), str(out), "--params", str(no_params))
    assert (rc, text.strip()) == (0, "valid")
    other, _ = _gen(capsys, tmp_path, "gen-post", "winning", "--miner-id", "1000", "--seed", "5",
                    name="other")
    rc, text, _ = _run(capsys, "verify-post", str(other), str(proof), "--params", str(no_params))
    assert rc == 1 and text.startswith("invalid: ")


def test_update_poseidon(capsys: pytest.CaptureFixture[str], tmp_path: Path, no_params: Path) -> None:
    job, info = _gen(capsys, tmp_path, "gen-update", "--poseidon", "--seed", "3")
    assert info["proof"] == "snap-update-poseidon" and info["partitions"] == 1
    proof = _round_trip(capsys, tmp_path, no_params, "update", job)
    # the fields instead of the job file; comm_r_old and comm_r_new swapped do not verify
    flags = ["--registered-proof", "StackedDrg2KiBV1", "--poseidon", "--vanilla",
             str(tmp_path / "job.json"), "--comm-d-new", info["comm_d_new"]]
    rc, out, _ = _run(capsys, "verify-update", str(proof), "--params", str(no_params), *flags,
                      "--comm-r-old", info["comm_r_old"], "--comm-r-new", info["comm_r_new"])
    assert (rc, out.strip()) == (0, "valid")
    rc, out, _ = _run(capsys, "verify-update", str(proof), "--params", str(no_params), *flags,
                      "--comm-r-old", info["comm_r_new"], "--comm-r-new", info["comm_r_old"])
    assert rc == 1 and out.startswith("invalid: partition 0")


@pytest.mark.slow
def test_update_sha256(capsys: pytest.CaptureFixture[str], tmp_path: Path, no_params: Path) -> None:
    """1.7 M constraints: the development setup (once per cache) takes a minute or two on
    two cores, the proof ten seconds; swapped or other commitments do not verify."""
    job, info = _gen(capsys, tmp_path, "gen-update", "--seed", "4")
    assert info["proof"] == "snap-update" and info["partitions"] == 1
    proof = _round_trip(capsys, tmp_path, no_params, "update", job)
    flags = ["--registered-proof", "0", "--vanilla", str(tmp_path / "job.json"), "--params",
             str(no_params)]
    for old, new, d_new in ((info["comm_r_new"], info["comm_r_old"], info["comm_d_new"]),
                            (info["comm_r_old"], info["comm_r_new"], info["comm_r_old"])):
        rc, out, _ = _run(capsys, "verify-update", str(proof), *flags, "--comm-r-old", old,
                          "--comm-r-new", new, "--comm-d-new", d_new)
        assert rc == 1 and out.startswith("invalid: partition 0")


def _tamper(blob: bytes, at_from_end: int) -> bytes:
    b = bytearray(blob)
    b[-at_from_end] ^= 1
    return bytes(b)


def test_refused_before_proving(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                no_params: Path) -> None:
    """Each refusal: a one-line error, a non-zero exit, no proof file; no keys are needed."""
    win, info = _gen(capsys, tmp_path, "gen-post", "window", "--sectors", "3", "--api-version",
                     "1.0.0", "--partition-index", "1")
    upd, uinfo = _gen(capsys, tmp_path, "gen-update", "--poseidon", name="upd")
    blobs = [base64.b64decode(x) for x in json.loads((tmp_path / "job.json").read_text())]
    made: list[Path] = []

    def vanilla_file(items: list[bytes]) -> str:
        made.append(tmp_path / f"vanilla{len(made)}.json")
        made[-1].write_text(json.dumps([base64.b64encode(x).decode() for x in items]))
        return str(made[-1])

    post = ["--registered-proof", "5", "--prover-id", info["prover_id"]]
    cases: list[tuple[str, list[str], str]] = [
        ("post", [str(_write(tmp_path, "t1", _tamper(win.read_bytes(), 40)))],
         "hash(comm_c || comm_r_last) != comm_r"),
        ("post", [*post, "--vanilla", vanilla_file(blobs), "--randomness", info["randomness"][:-2],
                  "--partition-index", "1"], "randomness must be 32 bytes, got 31"),
        ("post", [*post, "--vanilla", vanilla_file(blobs), "--randomness", info["randomness"],
                  "--partition-index", "0"], "the challenge is"),
        ("post", [*post, "--vanilla", vanilla_file(blobs * 3), "--randomness", info["randomness"]],
         "do not fit one partition of 2"),
        ("post", [*post, "--vanilla", vanilla_file([blobs[0][:-5]]), "--randomness",
                  info["randomness"]], "vanilla proof 0"),
        ("post", [str(_write(tmp_path, "t2", win.read_bytes()[:-3]))], "bytes of vanilla proofs"),
        ("post", [str(_write(tmp_path, "t3", b"not a job\n"))], "header is not JSON"),
        ("update", [str(_write(tmp_path, "t4", _tamper(upd.read_bytes(), 100)))], "partition 0"),
        ("update", ["--registered-proof", "0", "--poseidon", "--vanilla", str(tmp_path / "upd.json"),
                    "--comm-r-old", uinfo["comm_r_old"], "--comm-r-new", uinfo["comm_r_new"],
                    "--comm-d-new", uinfo["comm_d_new"][:-2]], "comm_d_new must be 32 bytes"),
        ("update", ["--registered-proof", "0", "--vanilla", str(tmp_path / "upd.json"),
                    "--comm-r-old", uinfo["comm_r_old"], "--comm-r-new", uinfo["comm_r_new"],
                    "--comm-d-new", uinfo["comm_d_new"]], "partition proof 0"),
        ("update", [str(upd), "--h", "2"], "not both"),
    ]
    for what, argv, needle in cases:
        out = tmp_path / "never.proof"
        rc, _, err = _run(capsys, f"prove-{what}", *argv, "-o", str(out), "--params", str(no_params))
        assert rc != 0, (argv, needle)
        _one_line_error(err, needle)
        assert not out.exists()


def _write(tmp_path: Path, name: str, blob: bytes) -> Path:
    p = tmp_path / f"{name}.bin"
    p.write_bytes(blob)
    return p
