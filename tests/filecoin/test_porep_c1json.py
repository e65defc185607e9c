"""C1 output JSON in serde_json's exact form, for every registered proof, Curio's wrapper, and
the errors malformed input gets."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from cuzk.filecoin.porep import (
    C1FormatError,
    Column,
    ColumnProof,
    CurioC1,
    EncodingProof,
    LabelingProof,
    MerkleProof,
    PathElement,
    PoRepConfig,
    Proof,
    RegisteredSealProof,
    ReplicaColumnProof,
    SealCommitPhase1Output,
    from_json,
    load,
    to_json,
)
from cuzk.filecoin.porep.seal import seal


def _d(v: int) -> list[int]:
    return list(v.to_bytes(32, "little"))


def test_golden_shape() -> None:
    """A hand-built proof written out: field names, order, enum tags, `_h: null`, byte arrays."""
    leaf = MerkleProof(root=2, leaf=1, base=[PathElement([3], 1)])
    col = ColumnProof(Column(5, [6, 7]), MerkleProof(9, 8, [PathElement([10], 0)], sub=[PathElement([11], 1)]))
    p = Proof(leaf, MerkleProof(13, 12, [PathElement([14], 0)], [PathElement([15], 0)], [PathElement([16], 1)]),
              ReplicaColumnProof(col, [col], []), [LabelingProof([17], 1, 5)], EncodingProof([18], 2, 5))
    out = SealCommitPhase1Output(RegisteredSealProof.StackedDrg2KiBV1_1, [[p]], bytes([1] * 32),
                                 bytes([2] * 32), bytes([3] * 32), bytes([4] * 32), bytes([5] * 32))
    text = to_json(out).decode()

    def d(v: int) -> str:
        return json.dumps(_d(v), separators=(",", ":"))

    col_json = (f'{{"column":{{"index":5,"rows":[{d(6)},{d(7)}],"_h":null}},"inclusion_proof":{{"data":'
                f'{{"Sub":{{"base_proof":{{"path":[{{"hashes":[{d(10)}],"index":0}}]}},'
                f'"sub_proof":{{"path":[{{"hashes":[{d(11)}],"index":1}}]}},"root":{d(9)},"leaf":{d(8)}}}}}}}}}')
    want = (
        '{"registered_proof":"StackedDrg2KiBV1_1","vanilla_proofs":{"StackedDrg2KiBV1":[[{'
        f'"comm_d_proofs":{{"data":{{"Single":{{"root":{d(2)},"leaf":{d(1)},"path":{{"path":'
        f'[{{"hashes":[{d(3)}],"index":1}}]}}}}}}}},'
        f'"comm_r_last_proof":{{"data":{{"Top":{{"base_proof":{{"path":[{{"hashes":[{d(14)}],"index":0}}]}},'
        f'"sub_proof":{{"path":[{{"hashes":[{d(15)}],"index":0}}]}},'
        f'"top_proof":{{"path":[{{"hashes":[{d(16)}],"index":1}}]}},"root":{d(13)},"leaf":{d(12)}}}}}}},'
        f'"replica_column_proofs":{{"c_x":{col_json},"drg_parents":[{col_json}],"exp_parents":[]}},'
        f'"labeling_proofs":[{{"parents":[{d(17)}],"layer_index":1,"node":5}}],'
        f'"encoding_proof":{{"parents":[{d(18)}],"layer_index":2,"node":5}}}}]]}},'
        f'"comm_r":{json.dumps([1] * 32, separators=(",", ":"))},'
        f'"comm_d":{json.dumps([2] * 32, separators=(",", ":"))},'
        f'"replica_id":{json.dumps([3] * 32, separators=(",", ":"))},'
        f'"seed":{json.dumps([4] * 32, separators=(",", ":"))},'
        f'"ticket":{json.dumps([5] * 32, separators=(",", ":"))}}}'
    )
    assert text == want
    assert to_json(from_json(text)) == text.encode()
    # json.dumps agrees byte for byte: the emitter is plain compact JSON
    assert json.dumps(json.loads(text), separators=(",", ":")) == text


@pytest.fixture(scope="module")
def sample_proofs() -> dict[str, list[list[Proof]]]:
    """Proofs of each tree form (8-0-0, 8-8-0, 8-8-2) from small test seals."""
    rng = np.random.default_rng(11)
    out = {}
    for shape, nodes, layers in (("8", 512, 2), ("8-8", 512, 11), ("8-8-2", 1024, 11)):
        cfg = PoRepConfig.test(nodes, layers=layers, challenges=2, shape=shape)
        c1, _, _ = seal(RegisteredSealProof.StackedDrg2KiBV1_1, config=cfg, rng=rng)
        out[shape] = c1.vanilla_proofs
    return out


@pytest.mark.parametrize("proof", list(RegisteredSealProof), ids=lambda p: p.name)
def test_round_trip_every_registered_proof(proof: RegisteredSealProof,
                                           sample_proofs: dict[str, list[list[Proof]]]) -> None:
    shape = {"8-0-0": "8", "8-8-0": "8-8", "8-8-2": "8-8-2"}[str(proof.sector.shape)]
    out = SealCommitPhase1Output(proof, sample_proofs[shape], bytes(range(32)), bytes(range(1, 33)),
                                 bytes(range(2, 34)), bytes(range(3, 35)), bytes(range(4, 36)))
    blob = to_json(out)
    v = json.loads(blob)
    assert list(v) == ["registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id", "seed", "ticket"]
    assert v["registered_proof"] == proof.name
    assert list(v["vanilla_proofs"]) == [f"StackedDrg{proof.sector.name}V1"]
    p0 = next(iter(v["vanilla_proofs"].values()))[0][0]
    assert list(p0) == ["comm_d_proofs", "comm_r_last_proof", "replica_column_proofs",
                        "labeling_proofs", "encoding_proof"]
    assert list(p0["comm_r_last_proof"]["data"]) == [{"8": "Single", "8-8": "Sub", "8-8-2": "Top"}[shape]]
    back = from_json(blob)
    assert back == out and to_json(back) == blob
    wrapped = CurioC1(42, out, proof.sector.size).to_json()
    w = json.loads(wrapped)
    assert list(w) == ["SectorNum", "Phase1Out", "SectorSize"] and w["SectorNum"] == 42
    assert base64.b64decode(w["Phase1Out"]) == blob
    o2, wr = load(wrapped)
    assert o2 == out and wr is not None and wr.sector_size == proof.sector.size
    o3, wr3 = load(blob)
    assert o3 == out and wr3 is None


@pytest.fixture(scope="module")
def blob() -> bytes:
    out, _, _ = seal(RegisteredSealProof.StackedDrg2KiBV1_1, rng=np.random.default_rng(12))
    return to_json(out)


def _err(data: bytes | str) -> str:
    with pytest.raises(C1FormatError) as e:
        load(data)
    return str(e.value)


def test_truncated_and_not_json(blob: bytes) -> None:
    msg = _err(blob[: len(blob) // 2])
    assert "not valid JSON" in msg and "truncated" in msg
    assert "not valid JSON" in _err(b"{]")
    assert "not UTF-8" in _err(b"\xff\xfe{")
    assert "expected an object" in _err(b"[1, 2]")


def test_wrong_registered_proof(blob: bytes) -> None:
    v = json.loads(blob)
    v["registered_proof"] = "StackedDrg8MiBV1_1"
    msg = _err(json.dumps(v))
    assert "registered_proof StackedDrg8MiBV1_1 is a 8MiB proof" in msg and "StackedDrg2KiBV1" in msg
    v["registered_proof"] = "StackedDrg2KiBV7"
    assert "unknown registered seal proof `StackedDrg2KiBV7`" in _err(json.dumps(v))
    v["registered_proof"] = 5
    assert "registered_proof: expected a variant name" in _err(json.dumps(v))
    v = json.loads(blob)
    v["vanilla_proofs"] = {"StackedDrg4KiBV1": []}
    assert "unknown variant `StackedDrg4KiBV1`" in _err(json.dumps(v))


def test_malformed_fields_name_their_path(blob: bytes) -> None:
    v = json.loads(blob)
    del v["seed"]
    assert "SealCommitPhase1Output: missing field `seed`" in _err(json.dumps(v))
    v = json.loads(blob)
    v["comm_r"] = v["comm_r"][:31]
    assert "SealCommitPhase1Output.comm_r: expected 32 bytes, got an array of 31" in _err(json.dumps(v))
    v = json.loads(blob)
    p = v["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]
    p["replica_column_proofs"]["exp_parents"][3]["column"]["rows"][1][7] = 256
    msg = _err(json.dumps(v))
    assert "vanilla_proofs.StackedDrg2KiBV1[0][1].replica_column_proofs.exp_parents[3].column.rows[1][7]" in msg
    assert "expected a byte" in msg
    v = json.loads(blob)
    v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["comm_d_proofs"]["data"] = {"Double": {}}
    assert "unknown variant `Double`" in _err(json.dumps(v))
    v = json.loads(blob)
    del v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["encoding_proof"]["node"]
    assert "[0][0].encoding_proof: missing field `node`" in _err(json.dumps(v))
    v = json.loads(blob)
    v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["labeling_proofs"][0]["layer_index"] = -1
    assert "labeling_proofs[0].layer_index: -1 does not fit a u32" in _err(json.dumps(v))
    v["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["labeling_proofs"][0]["layer_index"] = 1.0
    assert "layer_index: expected an unsigned integer" in _err(json.dumps(v))
    v = json.loads(blob)
    v["extra"] = 1  # serde ignores unknown fields
    load(json.dumps(v))


def test_wrapper_errors(blob: bytes) -> None:
    good = json.loads(CurioC1(1, from_json(blob), 2048).to_json())
    bad = dict(good, Phase1Out="@@notbase64")
    assert "c1.json.Phase1Out: not valid base64" in _err(json.dumps(bad))
    bad = dict(good, SectorSize=8 << 20)
    assert "c1.json.SectorSize: 8388608 bytes, but the C1 output is a StackedDrg2KiBV1_1" in _err(json.dumps(bad))
    bad = dict(good, Phase1Out=base64.b64encode(blob[:100]).decode())
    assert "inside Phase1Out is not valid JSON" in _err(json.dumps(bad))
    bad = {k: v for k, v in good.items() if k != "SectorNum"}
    assert "c1.json: missing field `SectorNum`" in _err(json.dumps(bad))
