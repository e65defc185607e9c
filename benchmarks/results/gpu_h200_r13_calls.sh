#!/usr/bin/env bash
# Round 13 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (every module for the default; the
# BLS12-381 modules once per option set below, with CUZK_NVRTC_OPTIONS set) and the py_arkworks
# wheel in .whl (`python3 -m pip install --no-deps .whl/*.whl`), after
# `python3 setup.py build_ext --inplace -j 16`, with CUZK_CUDA_CUBIN_DIR=.devtree/cubins PYTHONPATH=.
# Every benchmark ran as its own process per option set; $O is that set's CUZK_NVRTC_OPTIONS.
#
# Call 1 (results/gpu_h200_r13_call1_*.json; kernels.cu with the shared-memory running sum of
# gpu_h200_r13_smem_acc.patch, removed after this call). Option sets:
#   D: none;  A: -DCUZK_ACC_SMEM=3 -DCUZK_ACC_THREADS_G2=128 -DCUZK_ACC_MIN_BLOCKS_G2=3
#   B: -DCUZK_ACC_SMEM=3 -DCUZK_ACC_MIN_BLOCKS=3 -DCUZK_ACC_THREADS_G2=128 -DCUZK_ACC_MIN_BLOCKS_G2=4
#   (A and B with CUZK_MSM_ACC_BLOCK_G2=128)
#   CUZK_NVRTC_OPTIONS="$O" pytest -x tests/test_gpu_msm_tables.py tests/test_gpu_backend.py \
#     -k "bls12_381 and (msm or bucket or table or g2)"                                          # A, B: 29 passed
#   CUZK_NVRTC_OPTIONS="$O" python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --h "" --ntt "" \
#     --g2 24 --msm-table 24 --reps 4                                                          # D, A, B
#   CUZK_NVRTC_OPTIONS="$O" python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" \
#     --prove 24 --prove-tables --prove-g2 both --prove-witnesses filecoin --reps 4               # D, A, B
# Call 2 (results/gpu_h200_r13_call2_*.json; the Fq2 products out of line were then the opt-in
# -DCUZK_FQ2_NOINLINE, the base field's -DCUZK_FP_NOINLINE; main now calls Fq2 products by
# default and spells the old form -DCUZK_FQ2_INLINE). Option sets:
#   D: none;  E: -DCUZK_FQ2_NOINLINE;  E2: -DCUZK_FQ2_NOINLINE -DCUZK_ACC_MIN_BLOCKS_G2=2
#   G: -DCUZK_FP_NOINLINE -DCUZK_FQ2_NOINLINE
#   the tests of call 1                                                                        # E, G: 29 passed
#   ... gpu_kernels.py --profile --msm "" --msm-host "" --h "" --ntt "" --g2 20,24 --msm-table 24 --reps 4   # D, E, E2, G
#   ... gpu_kernels.py (the prove command of call 1)                                            # D, E, E2
# Call 3 (results/gpu_h200_r13_call3_*.json, engine_gpu_h200_r13*; main with Fq2 products out of line):
#   pytest tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py     # 175 passed
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --h "" --ntt "" --g2 20,22,24 --reps 5
#   python3 benchmarks/gpu_kernels.py --curves bn254 --profile --msm "" --msm-host "" --h "" --ntt "" --g2 20,22 --reps 5
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 --prove-tables \
#     --prove-g2 both --prove-witnesses filecoin --reps 6
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify 3 --out $OUT/engine
# Call 4 (results/gpu_h200_r13_call4_*.json; G1's MSM module with -DCUZK_FP_NOINLINE under
# CUZK_G1_FP_CALLS=1, then opt-in; now the default, CUZK_G1_FP_CALLS=0 turns it off):
#   CUZK_G1_FP_CALLS=1 pytest -x tests/test_gpu_msm_tables.py tests/test_gpu_backend.py -k "bls12_381 and (msm or bucket or table)"  # 29 passed
#   CUZK_G1_FP_CALLS=$c python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --h "" --ntt "" --g2 "" \
#     --msm-table 24 --reps 6                                                                   # c = 0, 1, 0, 1 (k_0, k_1: the last of each)
#   CUZK_G1_FP_CALLS=$c python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 \
#     --prove-tables --prove-g2 both --prove-witnesses filecoin --reps 6                        # c = 0, 1
# Call 5 (results/gpu_h200_r13_call5_prove.json; main with both changes as defaults):
#   pytest tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py     # 175 passed
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 --prove-tables \
#     --prove-g2 both --prove-witnesses filecoin --reps 6
