"""Shared test fixtures: circom circuits compiled for both curves with snarkjs keys.

`circom_artifact(curve, name)` compiles tests/circuits/<library> with circom2, runs
`snarkjs groth16 setup` against the committed power-12 ptau and exports the verifying key;
those are cached under .cache/test-artifacts (keyed by a hash of the sources, curve, ptau and
tool versions), so only the first run on a fresh clone pays for them. Inputs, witnesses and
snarkjs's own proof are made fresh in every session from a random seed (printed in the
header; set CUZK_TEST_SEED to replay one), and so is the circuit named "random", generated
from that seed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cuzk.curves import get_curve
from cuzk.tools import circom, snarkjs

# The Filecoin tests' session fixtures (a sealed 2 KiB sector, its development keys) live in
# their own module; a second conftest.py would shadow this one for `from conftest import`.
pytest_plugins = ["filecoin_fixtures"]

ROOT = Path(__file__).resolve().parents[1]
CIRCUITS_DIR = ROOT / "tests" / "circuits"
FIXTURES_DIR = ROOT / "tests" / "fixtures"
CACHE_DIR = Path(os.environ.get("CUZK_TEST_CACHE", ROOT / ".cache" / "test-artifacts"))

CURVES = ("bn254", "bls12_381")
PTAU = {
    "bn254": FIXTURES_DIR / "bn128_pot12_final.ptau",
    "bls12_381": FIXTURES_DIR / "bls12-381_pot12_final.ptau",
}

SEED = int(os.environ.get("CUZK_TEST_SEED") or int.from_bytes(os.urandom(8), "little"))


def pytest_report_header(config: pytest.Config) -> str:
    return f"cuzk test seed: {SEED} (replay with CUZK_TEST_SEED={SEED})"


InputMaker = Callable[[random.Random, int], dict]


def _felts(rng: random.Random, r: int, n: int) -> list[str]:
    return [str(rng.randrange(r)) for _ in range(n)]


@dataclass(frozen=True)
class CircuitSpec:
    """A circuit: a template library in tests/circuits instantiated as `main`."""

    name: str
    library: str
    template_call: str
    public: tuple[str, ...]
    make_input: InputMaker = field(compare=False)
    optimize: int = 1  # circom --O level: 2 substitutes linear constraints into others
    inline: str | None = None  # a whole generated circuit instead of library + main

    def source(self) -> str:
        if self.inline is not None:
            return self.inline
        return circom.main_wrapper(self.library, self.template_call, self.public)


def mul_chain_spec(n: int) -> CircuitSpec:
    return CircuitSpec(
        f"mul_chain_{n}",
        "mul_chain.circom",
        f"MulChain({n})",
        ("a",),
        lambda rng, r: {"a": _felts(rng, r, 1)[0], "b": _felts(rng, r, 1)[0]},
    )


# Coefficients below BN254's r are field elements of both curves.
_SMALL_R = get_curve("bn254").r


def random_circuit_spec(seed: int) -> CircuitSpec:
    """A circuit nobody wrote: random quadratic and linear constraints over random linear
    combinations of inputs and earlier signals, random public/private split and outputs."""
    rng = random.Random(f"random-circuit-{seed}")
    n_pub, n_priv, n_out = rng.randrange(0, 4), rng.randrange(1, 4), rng.randrange(0, 4)
    n_t = rng.randrange(5, 40)
    pool = [f"p[{i}]" for i in range(n_pub)] + [f"s[{i}]" for i in range(n_priv)]

    def coeff() -> str:
        return str(rng.choice([1, 2, -1, rng.randrange(_SMALL_R), rng.randrange(1, 100)]))

    def lc(k: int) -> str:
        terms = [f"{coeff()} * {rng.choice(pool)}" for _ in range(rng.randrange(1, k + 1))]
        if rng.random() < 0.5:
            terms.append(coeff())
        return " + ".join(terms)

    lines = ["pragma circom 2.0.0;", "template Random() {"]
    if n_pub:
        lines.append(f"    signal input p[{n_pub}];")
    lines.append(f"    signal input s[{n_priv}];")
    lines.append(f"    signal t[{n_t}];")
    if n_out:
        lines.append(f"    signal output out[{n_out}];")
    for i in range(n_t):
        if rng.random() < 0.2:  # linear constraint (kept as its own row at --O1)
            lines.append(f"    t[{i}] <== {lc(4)};")
        else:
            extra = f" + {lc(2)}" if rng.random() < 0.4 else ""
            lines.append(f"    t[{i}] <== ({lc(3)}) * ({lc(3)}){extra};")
        pool.append(f"t[{i}]")
    for j in range(n_out):
        lines.append(f"    out[{j}] <== ({lc(3)}) * ({lc(2)});")
    lines.append("}")
    lines.append(f"component main{' {public [p]}' if n_pub else ''} = Random();")

    def make_input(rng2: random.Random, r: int) -> dict:
        d = {"s": _felts(rng2, r, n_priv)}
        if n_pub:
            d["p"] = _felts(rng2, r, n_pub)
        return d

    return CircuitSpec(
        "random", "", "", ("p",) if n_pub else (), make_input, inline="\n".join(lines) + "\n"
    )


CIRCUITS: dict[str, CircuitSpec] = {
    s.name: s
    for s in (
        mul_chain_spec(8),
        # 509 constraints + 2 public rows + 1 fill a 512 domain exactly
        mul_chain_spec(509),
        CircuitSpec(
            "mul_chain_zeros",
            "mul_chain.circom",
            "MulChain(20)",
            ("a",),
            # a = 0 makes almost every wire 0: zero scalars all through the MSMs
            lambda rng, r: {"a": "0", "b": _felts(rng, r, 1)[0]},
        ),
        CircuitSpec(
            "no_public",
            "edge_cases.circom",
            "NoPublic(6)",
            (),
            lambda rng, r: {"a": _felts(rng, r, 1)[0], "b": _felts(rng, r, 1)[0]},
        ),
        CircuitSpec(
            "multi_io",
            "multi_io.circom",
            "MultiIO(3)",
            ("pub_x", "pub_k"),
            lambda rng, r: {
                "pub_x": _felts(rng, r, 3),
                "pub_k": _felts(rng, r, 1)[0],
                "priv_y": _felts(rng, r, 3),
            },
        ),
        CircuitSpec(
            "bits_mix",
            "bits_mix.circom",
            "BitMix(32)",
            ("k",),
            lambda rng, r: {
                "a": str(rng.getrandbits(32)),
                "b": str(rng.getrandbits(32)),
                "c": str(rng.getrandbits(32)),
                "k": _felts(rng, r, 1)[0],
            },
        ),
        CircuitSpec(
            "lin_comb",
            "lin_comb.circom",
            "LinComb(3, 4)",
            ("key",),
            lambda rng, r: {"state": _felts(rng, r, 3), "key": _felts(rng, r, 1)[0]},
        ),
        CircuitSpec(
            "lin_comb_o2",
            "lin_comb.circom",
            "LinComb(3, 3)",
            ("key",),
            lambda rng, r: {"state": _felts(rng, r, 3), "key": _felts(rng, r, 1)[0]},
            optimize=2,
        ),
        random_circuit_spec(SEED),
    )
}
CIRCUIT_NAMES = tuple(CIRCUITS)


@dataclass(frozen=True)
class CircomArtifact:
    """Paths for one circuit on one curve. r1cs/wasm/zkey/vk_json are cached across runs;
    input_json/wtns/proof_json/public_json (snarkjs's own proof) are fresh per session."""

    name: str
    curve: str
    key_dir: Path
    r1cs: Path
    wasm: Path
    zkey: Path
    vk_json: Path
    work_dir: Path
    input_json: Path
    wtns: Path
    proof_json: Path
    public_json: Path
    stats: dict

    @property
    def public(self) -> list[int]:
        """Public signals (outputs, then public inputs) as snarkjs wrote them."""
        return [int(x) for x in json.loads(self.public_json.read_text())]

    @property
    def n_constraints(self) -> int:
        return self.stats.get("non_linear_constraints", 0) + self.stats.get("linear_constraints", 0)


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()[:16]


def _library_sources(name: str, seen: set[str] | None = None) -> bytes:
    """A library file and, recursively, the files it includes."""
    seen = set() if seen is None else seen
    if name in seen:
        return b""
    seen.add(name)
    text = (CIRCUITS_DIR / name).read_bytes()
    out = text
    for inc in re.findall(rb'^\s*include\s+"([^"]+)"', text, re.M):
        out += _library_sources(inc.decode(), seen)
    return out


def cache_key(spec: CircuitSpec, curve: str) -> str:
    libs = _library_sources(spec.library) if spec.inline is None else b""
    ptau = PTAU[curve]
    return _sha(
        spec.source().encode(),
        libs,
        curve.encode(),
        str(spec.optimize).encode(),
        circom.version().encode(),
        snarkjs.tool_version("snarkjs").encode(),
        hashlib.sha256(ptau.read_bytes()).digest(),
    )


def build_keys(spec: CircuitSpec, curve: str, cache_dir: Path = CACHE_DIR) -> Path:
    """Compile + snarkjs setup + vk export, cached; returns the cache folder."""
    curve = get_curve(curve).name
    key_dir = cache_dir / f"{spec.name}-{curve}-{cache_key(spec, curve)}"
    if (key_dir / "done").exists():
        return key_dir
    for stale in cache_dir.glob(f"{spec.name}-{curve}-*"):  # older sources or tools
        shutil.rmtree(stale, ignore_errors=True)
    tmp = cache_dir / f".{key_dir.name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    src = tmp / "circuit.circom"
    src.write_text(spec.source())
    out = circom.compile_circuit(src, tmp, curve, include=[CIRCUITS_DIR], optimize=spec.optimize)
    snarkjs.groth16_setup(out.r1cs, PTAU[curve], tmp / "circuit.zkey")
    snarkjs.export_vk(tmp / "circuit.zkey", tmp / "verification_key.json")
    (tmp / "stats.json").write_text(json.dumps(out.stats))
    (tmp / "done").write_text("")
    try:
        tmp.rename(key_dir)
    except OSError:  # another process finished the same key first
        shutil.rmtree(tmp, ignore_errors=True)
    return key_dir


def make_artifact(
    spec: CircuitSpec, curve: str, work_root: Path, rng: random.Random
) -> CircomArtifact:
    curve = get_curve(curve).name
    key_dir = build_keys(spec, curve)
    work = work_root / f"{spec.name}-{curve}"
    work.mkdir(parents=True, exist_ok=True)
    art = CircomArtifact(
        name=spec.name,
        curve=curve,
        key_dir=key_dir,
        r1cs=key_dir / "circuit.r1cs",
        wasm=key_dir / "circuit_js" / "circuit.wasm",
        zkey=key_dir / "circuit.zkey",
        vk_json=key_dir / "verification_key.json",
        work_dir=work,
        input_json=work / "input.json",
        wtns=work / "witness.wtns",
        proof_json=work / "snarkjs_proof.json",
        public_json=work / "snarkjs_public.json",
        stats=json.loads((key_dir / "stats.json").read_text()),
    )
    art.input_json.write_text(json.dumps(spec.make_input(rng, get_curve(curve).r)))
    snarkjs.wtns_calculate(art.wasm, art.input_json, art.wtns)
    snarkjs.groth16_prove(art.zkey, art.wtns, art.proof_json, art.public_json)
    return art


@pytest.fixture(scope="session")
def test_seed() -> int:
    return SEED


@pytest.fixture(scope="session")
def circom_artifact(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str, str], CircomArtifact]:
    """Factory: circom_artifact(curve, name) -> CircomArtifact, built once per session."""
    made: dict[tuple[str, str], CircomArtifact] = {}
    work_root = tmp_path_factory.mktemp("circom")

    def get(curve: str, name: str) -> CircomArtifact:
        key = (get_curve(curve).name, name)
        if key not in made:
            rng = random.Random(f"{SEED}-{key[0]}-{name}")
            made[key] = make_artifact(CIRCUITS[name], key[0], work_root, rng)
        return made[key]

    return get


@pytest.fixture(scope="session")
def circuit():
    """The engine tests' small synthetic circuit (2^8, one public input); modules that need
    another size define their own `circuit` and `pk`."""
    from cuzk.circuits.synthetic import for_domain

    return for_domain("bls12_381", 8, n_public=1)


@pytest.fixture(scope="session")
def pk(circuit, tmp_path_factory: pytest.TempPathFactory):
    """Its bellman-convention proving key (cached on disk for the session)."""
    from cuzk.groth16.dev_keys import development_key

    return development_key(circuit, convention="bellman", cache_dir=tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="session")
def cpu():
    """The native CPU backend (skips when the extension is not built)."""
    from cuzk.backends.cpu import CpuBackend, native_module

    if native_module() is None:
        pytest.skip("CPU backend not built")
    return CpuBackend()


@pytest.fixture(scope="session")
def gpu():
    """One CUDA backend for the GPU test modules (each also skips itself without CuPy/GPU)."""
    from cuzk.backends import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    return cuda.CudaBackend()


@pytest.fixture(scope="session")
def cuda_host_kernels():
    """The CUDA backend's kernels compiled for the host (tests/emulated_cuda.py: every module,
    built once side by side and cached by source hash); skips without a host C++ compiler."""
    import emulated_cuda

    if emulated_cuda.CXX is None:
        pytest.skip("no host C++ compiler")
    return emulated_cuda.Libraries(emulated_cuda.build())


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """Per-test RNG derived from the session seed and the test id."""
    return random.Random(f"{SEED}-{request.node.nodeid}")


def read_wtns(path: Path) -> tuple[int, list[int]]:
    """(prime, witness values) of a circom .wtns file; small reader for test fixtures that
    need to edit a witness without depending on cuzk's own reader."""
    data = path.read_bytes()
    assert data[:4] == b"wtns", f"{path} is not a .wtns file"
    pos = 12
    sections: dict[int, tuple[int, int]] = {}
    while pos < len(data):
        sid = int.from_bytes(data[pos : pos + 4], "little")
        size = int.from_bytes(data[pos + 4 : pos + 12], "little")
        sections[sid] = (pos + 12, size)
        pos += 12 + size
    hs, _ = sections[1]
    n8 = int.from_bytes(data[hs : hs + 4], "little")
    prime = int.from_bytes(data[hs + 4 : hs + 4 + n8], "little")
    n = int.from_bytes(data[hs + 4 + n8 : hs + 8 + n8], "little")
    ws, _ = sections[2]
    values = [int.from_bytes(data[ws + i * n8 : ws + (i + 1) * n8], "little") for i in range(n)]
    return prime, values


def write_wtns(path: Path, prime: int, values: list[int]) -> None:
    """Write a .wtns (version 2, two sections) with the given values."""
    n8 = (prime.bit_length() + 63) // 64 * 8
    header = n8.to_bytes(4, "little") + prime.to_bytes(n8, "little")
    header += len(values).to_bytes(4, "little")
    body = b"".join(v.to_bytes(n8, "little") for v in values)
    out = b"wtns" + (2).to_bytes(4, "little") + (2).to_bytes(4, "little")
    out += (1).to_bytes(4, "little") + len(header).to_bytes(8, "little") + header
    out += (2).to_bytes(4, "little") + len(body).to_bytes(8, "little") + body
    path.write_bytes(out)
