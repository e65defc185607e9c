#!/usr/bin/env bash
# Kernel numbers in one device call: G1/G2 MSMs, NTT and h at 2^20..2^26, the partition region at
# 2^20..2^24 (benchmarks/README.md, rows K1-K3). Set-up as gpu_tests.sh; JSON and log go to $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi -L
python3 setup.py build_ext --inplace -j 16 > "$OUT/build.log" 2>&1 || echo "native build failed"
echo "build $(( $(date +%s) - t0 )) s"
export CUZK_CUDA_CUBIN_DIR=$PWD/.devtree/cubins
TABLES=${TABLES:-24,26}
timeout 440 python3 benchmarks/gpu/gpu_kernels.py --msm 20,22,24,26 --msm-table "$TABLES" --msm-host 20,24 \
  --g2 20,22,24 --ntt 20,22,24,26 --h 20,22,24,26 --prove 20,22,24 --prove-tables --prove-g2 both \
  --reps 5 --out "$OUT/gpu_kernels.json" 2>&1 | tee "$OUT/gpu_kernels.log" | tail -70
echo "all done at $(( $(date +%s) - t0 )) s"
