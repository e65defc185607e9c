# Round 7 device calls (run from the repo root with .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir)
# ---- call 1
#!/usr/bin/env bash
# Round 7 call 1: NTT 2^24 A/B (default vs CUZK_NTT_R4_MIN_BLOCKS=5, alternating, 41 reps),
# table window 20 vs 22 at 2^24 (scatter passes now), the 2^26 partition (H tabled).
set -uo pipefail
pip install -q --no-deps --no-index .whl/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CUZK_CUDA_CUBIN_DIR=$PWD/.devtree/cubins
t0=$(date +%s)
python3 setup.py build_ext --inplace -j 16 >"$OUT/build.log" 2>&1 || echo "native build failed"
echo "build $(( $(date +%s) - t0 )) s"
B=benchmarks/gpu_kernels.py
Q='--msm "" --msm-host "" --g2 "" --h ""'
for k in 1 2 3; do
  timeout 60 python3 $B --out $OUT/ntt_def_$k.json --msm "" --msm-host "" --g2 "" --h "" --ntt 24,26 --reps 41 2>&1 | grep "ntt" | tail -2
  CUZK_NVRTC_OPTIONS="-DCUZK_NTT_R4_MIN_BLOCKS=5" timeout 60 python3 $B --out $OUT/ntt_mb5_$k.json --msm "" --msm-host "" --g2 "" --h "" --ntt 24 --reps 41 2>&1 | grep "ntt" | tail -1
done
echo "ntt done $(( $(date +%s) - t0 )) s"
timeout 120 python3 $B --out $OUT/cw.json --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" \
  --sweep-log 24 --table-windows 20,22 --reps 5 2>&1 | grep "g1_msm" | tail -3
echo "cw done $(( $(date +%s) - t0 )) s"
timeout $(( 585 - ($(date +%s) - t0) )) python3 $B --out $OUT/p26.json --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" \
  --prove 26 --prove-tables --prove-streams 1,0 --reps 1 2>&1 | tail -12
echo "all done $(( $(date +%s) - t0 )) s"
# ---- call 2
#!/usr/bin/env bash
# Round 7 call 2: the partition's device working set at 2^24 (tables) and 2^26 (no tables;
# tables beside the measured working set), and CudaBackend.is_out_of_memory on a real failure.
set -uo pipefail
pip install -q --no-deps --no-index .whl/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CUZK_CUDA_CUBIN_DIR=$PWD/.devtree/cubins
t0=$(date +%s)
python3 setup.py build_ext --inplace -j 16 >"$OUT/build.log" 2>&1 || echo "native build failed"
echo "build $(( $(date +%s) - t0 )) s"
python3 - <<'PY' 2>&1 | tee $OUT/oom_check.log
import cupy as cp
from cuzk.backends.cuda import CudaBackend
try:
    cp.empty(1 << 50, dtype=cp.uint8)
except Exception as e:
    print("is_out_of_memory:", CudaBackend.is_out_of_memory(e), type(e).__name__)
print("other error:", CudaBackend.is_out_of_memory(ValueError("x")))
PY
B=benchmarks/gpu_kernels.py
N='--msm "" --msm-host "" --g2 "" --h "" --ntt ""'
timeout 120 python3 $B --out $OUT/p24.json --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" \
  --prove 24 --prove-tables --prove-streams 1,0 --reps 2 > $OUT/p24.log 2>&1; tail -3 $OUT/p24.log
echo "p24 done $(( $(date +%s) - t0 )) s"
timeout 200 python3 $B --out $OUT/p26.json --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" \
  --prove 26 --prove-streams 1,0 --reps 2 > $OUT/p26.log 2>&1; tail -3 $OUT/p26.log
echo "p26 done $(( $(date +%s) - t0 )) s"
timeout $(( 590 - ($(date +%s) - t0) )) python3 $B --out $OUT/p26t.json --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" \
  --prove 26 --prove-tables --prove-reserve-gib auto --prove-streams 1,0 --reps 2 > $OUT/p26t.log 2>&1; tail -4 $OUT/p26t.log
grep -h "working set\|window tables" $OUT/*.log
echo "all done $(( $(date +%s) - t0 )) s"
# ---- call 3
#!/usr/bin/env bash
# Round 7 call 3: GPU tests (strided tables included), the tabled 2^24 MSM (stride 1: the
# sort's new bucket_key must cost nothing), the 2^26 partition with tables beside its
# measured working set (a strided H table).
set -uo pipefail
pip install -q --no-deps --no-index .whl/*.whl 2>&1 | grep -v WARNING | tail -2
export CUBIN_DIR=.devtree/cubins SKIP_WARM=1 GPU_TEST_TIMEOUT=200
export GPU_TESTS="tests/test_gpu_msm_tables.py tests/test_gpu_prove.py tests/test_gpu_backend.py"
t0=$(date +%s)
timeout 330 bash benchmarks/gpu_call.sh --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" \
  --msm-table 24 --msm-sum auto --reps 5 2>&1 | grep -v "^| g1_msm" | tail -12
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CUZK_CUDA_CUBIN_DIR=$PWD/.devtree/cubins
timeout $(( 585 - ($(date +%s) - t0) )) python3 benchmarks/gpu_kernels.py --out $OUT/p26s.json --profile \
  --msm "" --msm-host "" --g2 "" --h "" --ntt "" --prove 26 --prove-tables --prove-reserve-gib auto \
  --prove-streams 1 --reps 2 > $OUT/p26s.log 2>&1; tail -3 $OUT/p26s.log
grep -h "working set\|window tables" $OUT/p26s.log
echo "all done $(( $(date +%s) - t0 )) s"
