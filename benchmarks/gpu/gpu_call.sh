#!/usr/bin/env bash
# One device call: build the CPU extension, compile the CUDA modules, run the GPU tests named in
# $GPU_TESTS (pytest args; empty: none), then benchmarks/gpu/gpu_kernels.py with the arguments given.
# SKIP_BUILD=1 / SKIP_WARM=1 skip the first two steps. CUBIN_DIR=dir (if it exists) is exported as
# CUZK_CUDA_CUBIN_DIR (absolute), so modules with a prebuilt cubin there (scripts/nvrtc_check.py
# --cubin-dir) load instead of compiling. Logs and JSON go to $OUT (the device tool's output
# folder), or ./gpu-out elsewhere.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
t0=$(date +%s)
if [ -z "${SKIP_BUILD:-}" ]; then
    python3 setup.py build_ext --inplace -j 16 >"$OUT/build.log" 2>&1 || echo "native build failed (CPU comparisons skip)"
    echo "build $(( $(date +%s) - t0 )) s"
fi
if [ -n "${CUBIN_DIR:-}" ] && [ -d "$CUBIN_DIR" ]; then
    CUZK_CUDA_CUBIN_DIR=$(cd "$CUBIN_DIR" && pwd)
    export CUZK_CUDA_CUBIN_DIR
    echo "cubin cache $CUZK_CUDA_CUBIN_DIR ($(find "$CUZK_CUDA_CUBIN_DIR" -name '*.cubin' | wc -l) cubins)"
fi
if [ -z "${SKIP_WARM:-}" ]; then  # else the benchmark compiles only the modules it uses
    python3 benchmarks/gpu/gpu_kernels.py --warm --curves "${WARM_CURVES:-bls12_381,bn254}" 2>&1 | tail -3
    echo "compiled at $(( $(date +%s) - t0 )) s"
fi
if [ -n "${GPU_TESTS:-}" ]; then
    # shellcheck disable=SC2086
    timeout "${GPU_TEST_TIMEOUT:-240}" python3 -m pytest -q -p no:cacheprovider $GPU_TESTS 2>&1 | tee "$OUT/tests.log" | tail -15
    echo "tests done at $(( $(date +%s) - t0 )) s"
fi
python3 benchmarks/gpu/gpu_kernels.py --out "$OUT/bench.json" "$@" 2>&1 | tee "$OUT/bench.log" | tail -40
echo "all done at $(( $(date +%s) - t0 )) s"
