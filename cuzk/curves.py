"""Curve constants for BLS12-381 and BN254 as Python ints.

Everything curve-specific that Python code needs lives here; the native headers carry the same
numbers (checked against these by the tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Curve:
    name: str
    p: int  # base field modulus (Fq)
    r: int  # scalar field modulus (Fr)
    limbs: int  # 64-bit limbs per Fq element (6 or 4)
    g1: tuple[int, int]
    g2: tuple[tuple[int, int], tuple[int, int]]  # ((x.c0, x.c1), (y.c0, y.c1))
    b: int  # y^2 = x^3 + b on G1
    b2: tuple[int, int]  # y^2 = x^3 + b2 on the twist (Fq2, u^2 = -1)
    fr_generator: int  # multiplicative generator of Fr* (bellman's coset shift)
    snarkjs_nqr: int  # smallest quadratic non-residue of Fr (ffjavascript's root source)
    fr_two_adicity: int
    field_bytes: int = field(init=False)
    snarkjs_name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "field_bytes", self.limbs * 8)

    @property
    def fr_r_bits(self) -> int:
        return self.r.bit_length()

    def root_of_unity(self, n: int, convention: str = "snarkjs") -> int:
        """Primitive n-th root of unity in Fr (n a power of two) as each toolchain picks it.

        snarkjs (ffjavascript) derives roots from the smallest non-residue; bellman/blstrs from
        the multiplicative generator. Keys fix the domain, so the prover must match the key.
        """
        if n & (n - 1) or n <= 0:
            raise ValueError(f"domain size {n} is not a power of two")
        k = n.bit_length() - 1
        if k > self.fr_two_adicity:
            raise ValueError(f"domain 2^{k} exceeds the two-adicity 2^{self.fr_two_adicity} of Fr")
        base = self.snarkjs_nqr if convention == "snarkjs" else self.fr_generator
        return pow(base, (self.r - 1) >> k, self.r)


BLS12_381 = Curve(
    name="bls12_381",
    p=0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
    r=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
    limbs=6,
    g1=(
        0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
        0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1,
    ),
    g2=(
        (
            0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
            0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
        ),
        (
            0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
            0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
        ),
    ),
    b=4,
    b2=(4, 4),
    fr_generator=7,
    snarkjs_nqr=5,
    fr_two_adicity=32,
    snarkjs_name="bls12381",
)

_BN_P = 21888242871839275222246405745257275088696311157297823662689037894645226208583


def _bn_twist_b() -> tuple[int, int]:
    # b' = 3 / (9 + u) in Fq2 with u^2 = -1
    p = _BN_P
    inv_norm = pow(9 * 9 + 1, p - 2, p)
    return (3 * 9 * inv_norm % p, (-3) * inv_norm % p)


BN254 = Curve(
    name="bn254",
    p=_BN_P,
    r=21888242871839275222246405745257275088548364400416034343698204186575808495617,
    limbs=4,
    g1=(1, 2),
    g2=(
        (
            10857046999023057135944570762232829481370756359578518086990519993285655852781,
            11559732032986387107991004021392285783925812861821192530917403151452391805634,
        ),
        (
            8495653923123431417604973247489272438418190587263600148770280649306958101930,
            4082367875863433681332203403145435568316851327593401208105741076214120093531,
        ),
    ),
    b=3,
    b2=_bn_twist_b(),
    fr_generator=5,
    snarkjs_nqr=5,
    fr_two_adicity=28,
    snarkjs_name="bn128",
)

CURVES: dict[str, Curve] = {c.name: c for c in (BLS12_381, BN254)}
# Names other tools use for the same curves.
_ALIASES = {
    "bls12381": "bls12_381",
    "bls12-381": "bls12_381",
    "bn128": "bn254",
    "bn256": "bn254",
    "alt_bn128": "bn254",
}


def get_curve(name: str | Curve) -> Curve:
    if isinstance(name, Curve):
        return name
    key = _ALIASES.get(name.lower(), name.lower())
    try:
        return CURVES[key]
    except KeyError:
        raise ValueError(f"unknown curve {name!r}; expected one of {sorted(CURVES)}") from None
