pragma circom 2.0.0;

// Several public inputs and outputs, mixed with private inputs, so the public part of the
// witness (outputs first, then public inputs) and the IC points are exercised.
template MultiIO(K) {
    signal input pub_x[K];
    signal input pub_k;
    signal input priv_y[K];
    signal output prod[K];
    signal output dot;
    signal output poly;

    signal acc[K + 1];
    acc[0] <== 0;
    for (var i = 0; i < K; i++) {
        prod[i] <== pub_x[i] * priv_y[i];
        acc[i + 1] <== acc[i] + prod[i] * pub_k;
    }
    dot <== acc[K];

    // Horner evaluation of sum(priv_y[i] * t^i) at t = pub_k, plus a constant term.
    signal h[K + 1];
    h[K] <== 7;
    for (var i = K - 1; i >= 0; i--) {
        h[i] <== h[i + 1] * pub_k + priv_y[i];
    }
    poly <== h[0];
}
