#!/usr/bin/env bash
# Round 14 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (every module for the default; the
# BLS12-381 modules once more with CUZK_NVRTC_OPTIONS="$V" for call 1) and the py_arkworks wheel
# in .whl (`python3 -m pip install --no-deps .whl/*.whl`), after
# `python3 setup.py build_ext --inplace -j 16`, with CUZK_CUDA_CUBIN_DIR=.devtree/cubins PYTHONPATH=.
#
# Call 1 (results/gpu_h200_r14_call1_*.json; ff.cuh and fq2.cuh with gpu_h200_r14_byval_calls.patch,
# removed after this call). Option sets: D none; V="-DCUZK_FQ2_BYVAL -DCUZK_FP_BYVAL".
#   CUZK_NVRTC_OPTIONS="$V" pytest -x tests/test_gpu_msm_tables.py tests/test_gpu_backend.py \
#     -k "bls12_381 and (msm or bucket or table or g2)"                                       # 29 passed
#   CUZK_NVRTC_OPTIONS="$O" python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --h "" \
#     --ntt "" --g2 22,24 --msm-table 24 --reps 4                                            # O = D, V, D, V (k1..k4)
#   CUZK_NVRTC_OPTIONS="$O" python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" \
#     --prove 24 --prove-tables --prove-g2 both --prove-witnesses filecoin --reps 6             # O = D, V
# Call 2 (results/gpu_h200_r14_call2_*.json; main's kernels, the bench key still dense):
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 \
#     --prove-tables --prove-g2 [--prove-g2-table C,K] --prove-witnesses filecoin --reps 6       # none, 16,4, 18,3, none
#   (t_none.json is the second "none" run: the first one's file was overwritten)
# Call 3 (results/gpu_h200_r14_call3_*.json; the bench key with a real key's points at infinity,
# MSMs that zero those bases' scalars):
#   pytest -x tests/test_gpu_backend.py -k msm                                                  # 22 passed
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 \
#     --prove-tables --prove-g2 both --prove-witnesses filecoin --reps 6 --prove-dense-key      # p_dense
#   CUZK_MSM_MASK_MIN=0 (the same without --prove-dense-key)                                    # p_real_nomask
#   (the same without --prove-dense-key)                                                        # p_real_mask
# Call 4: pytest tests/test_gpu_prove.py tests/test_gpu_msm_tables.py tests/test_gpu_backend.py  # 179 passed
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify 3                                                 # (wheel not installed: no pairing check)
# Call 5: the same engine run, then with CUZK_MSM_MASK_MIN=0 --verify 0 (both single runs)
# Call 6 (engine_gpu_h200_r14*.json/.png: e1 of the loop, masks on; _nomask: masks off):
#   for i in 1 2 3; for m in on off: CUZK_MSM_MASK_MIN=(0.015625 | 0) python3 benchmarks/engine_gpu.py \
#     --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 --partition-workers 4 --jobs 5 \
#     --verify (3 for the first run, else 0)
#
# Prepared and not run (the session's device time ran out): the masked 2^24 partition traced, and
# the G2 MSM's window over its masked scalars. For the next session:
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 --prove-tables \
#     --prove-g2 both --prove-trace --prove-witnesses filecoin --reps 6
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 --prove-tables \
#     --prove-g2 --prove-modes auto,auto+w13,auto+w14,auto+w18 --prove-witnesses filecoin --reps 6
