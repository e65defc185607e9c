pragma circom 2.0.0;

// x[i] = x[i-1] * x[i-2]: exactly N multiplication constraints whose wires are full-size field
// elements (the hard case for MSM). The benchmark sizes it to fill a 2^k domain.
template MulChain(N) {
    signal input a;
    signal input b;
    signal output out;
    signal x[N + 2];
    x[0] <== a;
    x[1] <== b;
    for (var i = 2; i < N + 2; i++) {
        x[i] <== x[i - 1] * x[i - 2];
    }
    out <== x[N + 1];
}
