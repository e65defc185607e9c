// Poseidon permutation on neptune's preprocessed constants (Filecoin's Poseidon over BLS12-381
// Fr): post-S-box round keys, the pre-sparse matrix after the first half's full rounds and one
// sparse matrix per partial round. Constants come from cuzk/filecoin/poseidon (Python), already
// in Montgomery form; host and device code can share this header.
#pragma once

#include "ff.cuh"

namespace cuzk {

// Widths up to neptune's largest arity, 36, plus the tag lane.
constexpr int POSEIDON_MAX_WIDTH = 37;

template <class Fr>
struct PoseidonConstants {
    int width;           // t = arity + 1
    int full_rounds;     // RF (even; half before the partial rounds, half after)
    int partial_rounds;  // RP
    Fr domain_tag;       // state[0] before the permutation
    const Fr* keys;      // RF·t + RP compressed round constants, in the order they are used
    const Fr* mds;       // t·t, row-major (symmetric)
    const Fr* pre_sparse;  // t·t, row-major, applied as a row vector times the matrix
    const Fr* sparse;      // per partial round 2t − 1 values: first column (t), first row less
                           // the corner (t − 1)
};

template <class Fr>
CUZK_HD Fr poseidon_quintic(const Fr& x) {
    Fr x2 = x.sqr();
    return x2.sqr() * x;
}

// out_j = sum_i s_i · m[i][j] (row vector times matrix; m = M for the symmetric MDS matrix).
template <class Fr>
CUZK_HD void poseidon_vec_mat(Fr* s, const Fr* m, int t) {
    Fr out[POSEIDON_MAX_WIDTH];
    for (int j = 0; j < t; j++) out[j] = s[0] * m[j];
    for (int i = 1; i < t; i++)
        for (int j = 0; j < t; j++) out[j] += s[i] * m[i * t + j];
    for (int j = 0; j < t; j++) s[j] = out[j];
}

// In place: s <- permutation(s).
template <class Fr>
CUZK_HD void poseidon_permute(Fr* s, const PoseidonConstants<Fr>& c) {
    const int t = c.width, half = c.full_rounds / 2, rp = c.partial_rounds;
    const Fr* k = c.keys;
    for (int i = 0; i < t; i++) s[i] += k[i];
    k += t;
    // First half: S-boxes, keys; the last of these rounds mixes with the pre-sparse matrix.
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < t; i++) s[i] = poseidon_quintic(s[i]) + k[i];
        k += t;
        poseidon_vec_mat(s, r == half - 1 ? c.pre_sparse : c.mds, t);
    }
    // Partial rounds: one S-box, one key, a sparse matrix (dense first row and column).
    const Fr* sp = c.sparse;
    for (int r = 0; r < rp; r++) {
        s[0] = poseidon_quintic(s[0]) + *k++;
        Fr s0 = s[0];
        Fr first = s[0] * sp[0];
        for (int i = 1; i < t; i++) first += s[i] * sp[i];
        for (int j = 1; j < t; j++) s[j] += s0 * sp[t + j - 1];
        s[0] = first;
        sp += 2 * t - 1;
    }
    // Second half: keys after all but the last round's S-boxes.
    for (int r = 0; r < half; r++) {
        const bool last = r == half - 1;
        for (int i = 0; i < t; i++) {
            s[i] = poseidon_quintic(s[i]);
            if (!last) s[i] += k[i];
        }
        if (!last) k += t;
        poseidon_vec_mat(s, c.mds, t);
    }
}

// Merkle-tree hash of `arity` = t − 1 values: the tag in lane 0, the output lane 1.
template <class Fr>
CUZK_HD Fr poseidon_hash(const Fr* in, const PoseidonConstants<Fr>& c) {
    Fr s[POSEIDON_MAX_WIDTH];
    s[0] = c.domain_tag;
    for (int i = 1; i < c.width; i++) s[i] = in[i - 1];
    poseidon_permute(s, c);
    return s[1];
}

}  // namespace cuzk
