pragma circom 2.0.0;

// A SHA-256-shaped witness: 32-bit words decomposed into boolean wires, bitwise choose /
// majority / xor on the bits, a rotation by rewiring, recomposition, then full field
// multiplications on the recomposed words. Most wires are 0/1, a few are full field elements.

template Bits(n) {
    signal input in;
    signal output out[n];
    var acc = 0;
    var e = 1;
    for (var i = 0; i < n; i++) {
        out[i] <-- (in >> i) & 1;
        out[i] * (out[i] - 1) === 0;
        acc += out[i] * e;
        e = e + e;
    }
    acc === in;
}

template FromBits(n) {
    signal input in[n];
    signal output out;
    var acc = 0;
    var e = 1;
    for (var i = 0; i < n; i++) {
        acc += in[i] * e;
        e = e + e;
    }
    out <== acc;
}

template BitMix(W) {
    signal input a;
    signal input b;
    signal input c;
    signal input k;
    signal output word;
    signal output mixed;

    component ba = Bits(W);
    component bb = Bits(W);
    component bc = Bits(W);
    ba.in <== a;
    bb.in <== b;
    bc.in <== c;

    // ch(a,b,c) = a&b ^ ~a&c = c + a*(b - c); maj(a,b,c) = ab + ac + bc - 2abc
    signal ch[W];
    signal ab[W];
    signal maj[W];
    signal x[W];
    for (var i = 0; i < W; i++) {
        ch[i] <== bc.out[i] + ba.out[i] * (bb.out[i] - bc.out[i]);
        ab[i] <== ba.out[i] * bb.out[i];
        maj[i] <== ab[i] + bc.out[i] * (ba.out[i] + bb.out[i] - 2 * ab[i]);
    }
    for (var i = 0; i < W; i++) {
        // xor of ch with maj rotated by 7
        x[i] <== ch[i] + maj[(i + 7) % W] - 2 * ch[i] * maj[(i + 7) % W];
    }
    component fb = FromBits(W);
    fb.in <== x;
    word <== fb.out;

    // full field elements from here on
    signal sq;
    sq <== word * k;
    mixed <== sq * sq + a;
}
