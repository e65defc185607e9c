#!/usr/bin/env bash
# Round 9 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir and the py_arkworks wheel in .whl;
# every step below ran with CUZK_CUDA_CUBIN_DIR=.devtree/cubins after
# `python3 setup.py build_ext --inplace -j 16`. E=(--msm-host "" --h "" --ntt "").
# Call 1 (results/gpu_h200_r9_tail_window.json; the tail stream, reverted afterwards):
#   pytest tests/test_gpu_prove.py tests/test_gpu_msm_tables.py
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --table-windows 20,22,23,24 --sweep-log 24 --reps 6
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables \
#     --prove-streams 1,0 --prove-modes auto+tp,auto+notp --reps 6
#   python3 benchmarks/gpu_kernels.py ... --prove 24 --prove-tables --prove-table-window 22 --prove-streams 1 \
#     --prove-modes auto+tp,auto+notp --reps 6
# Call 2 (results/gpu_h200_r9_chunks.json):
#   CUZK_MSM_FLAT_CHUNK=128 pytest tests/test_gpu_prove.py tests/test_gpu_msm_tables.py
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --msm-table 24 \
#     --msm-sum auto,auto+f64,auto+f128,auto+o256 --reps 7
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables \
#     --prove-streams 1,0 --prove-modes auto,auto+f64,auto+f128,auto+f128+o256,auto+o256 --reps 6
# Call 3 (results/gpu_h200_r9_later_chunk.json):
#   pytest tests/test_gpu_msm_tables.py tests/test_gpu_prove.py tests/test_gpu_backend.py
#   CUZK_MSM_CHUNK=8 pytest tests/test_gpu_msm_tables.py tests/test_gpu_prove.py
#   python3 benchmarks/gpu_kernels.py --profile --g2 "" "${E[@]}" --msm 24 --msm-table 24 \
#     --msm-sum auto,auto+o128+f0,auto+t8,auto+t16 --reps 7
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables \
#     --prove-streams 1,0 --prove-modes auto,auto+o128+f0,auto+t8,auto+t16 --reps 8
# Call 4 (results/gpu_h200_r9_final.json; T = 16 in the code then, so `auto+t32` is the default kept):
#   pytest tests/test_gpu_msm_tables.py tests/test_gpu_prove.py
#   python3 benchmarks/gpu_kernels.py --profile --g2 "" "${E[@]}" --msm 24,26 --msm-table 24 --msm-sum auto,auto+t32 --reps 5
#   python3 benchmarks/gpu_kernels.py --msm "" "${E[@]}" --g2 20,22 --reps 5             # and again with CUZK_MSM_CHUNK=32
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables \
#     --prove-streams 1,0 --prove-modes auto,auto+t32 --reps 10
