pragma circom 2.0.0;

// No public signals at all: the verifying key's IC holds the constant term only.
template NoPublic(N) {
    signal input a;
    signal input b;
    signal p[N];
    p[0] <== a * b;
    for (var i = 1; i < N; i++) {
        p[i] <== p[i - 1] * (p[i - 1] + a);
    }
}
