#!/usr/bin/env bash
# Round 11 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (both curves as is; BLS12-381 once
# more with CUZK_NVRTC_OPTIONS="-DCUZK_ACC_THREADS_G2=128 -DCUZK_ACC_MIN_BLOCKS_G2=3") and the
# py_arkworks wheel in .whl (`python3 -m pip install --no-deps .whl/*.whl`), after
# `python3 setup.py build_ext --inplace -j 16`, with CUZK_CUDA_CUBIN_DIR=.devtree/cubins
# PYTHONPATH=. and E=(--msm-host "" --h "" --ntt "").
# Call 1 (results/gpu_h200_r11_call1.json; g2hi then meant the G2 MSM on a high-priority stream
# and failed at once: CuPy has no deviceGetStreamPriorityRange):
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables --prove-g2 \
#     --prove-modes hf2,hf2+g2hi,hf0 --reps 5
#   python3 benchmarks/gpu_kernels.py --profile --msm "" "${E[@]}" --g2 20,24 --msm-sum hf2,hf0,hf2+s8,hf2+s4 --reps 6
#   pytest -k bls12_381 tests/test_gpu_prove.py tests/test_gpu_backend.py tests/test_native_horner.py   # 68 passed
# Call 2 (results/gpu_h200_r11_call2.json; priority clamped by CUDA, the feature removed after):
#   pytest tests/test_gpu_prove.py -k concurrently        # failed: the high streams' zip (removed code)
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables --prove-g2 \
#     --prove-modes hf2,hf2+g2hi,hf0+g2hi,hf2+g2hi,hf2 --reps 5
#   pytest -k bls12_381 tests/test_gpu_msm_tables.py tests/test_gpu_ntt_plan.py           # 88 passed
# Call 3 (results/gpu_h200_r11_launch_bounds.json): V3=(env CUZK_NVRTC_OPTIONS="-DCUZK_ACC_THREADS_G2=128
# -DCUZK_ACC_MIN_BLOCKS_G2=3" CUZK_MSM_ACC_BLOCK_G2=128)
#   python3 benchmarks/gpu_kernels.py --profile --msm "" "${E[@]}" --g2 20,24 --reps 6            # then with "${V3[@]}"
#   "${V3[@]}" python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables --prove-g2 --reps 5
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables --prove-g2 --reps 5
# Call 4 (results/engine_gpu_h200_r11*.json, .png; the final code):
#   pytest tests/test_gpu_*.py tests/test_native_horner.py                                 # 337 passed
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify 3 --out $OUT/engine
# Call 5 (results/gpu_h200_r11_final.json; the final code):
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --h "" --ntt "" --g2 20,22,24 \
#     --prove 20,22,24 --prove-tables --reps 5
# Call 6 (results/gpu_h200_r11_g2_block.json; gb128 = CudaBackend.msm_acc_block_g2 = 128, same cubins):
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables --prove-g2 \
#     --prove-modes inl,gb128,inl,gb128 --reps 4
#   CUZK_MSM_ACC_BLOCK_G2=128 pytest -k bls12_381 tests/test_gpu_prove.py tests/test_gpu_backend.py tests/test_gpu_msm_tables.py  # 86 passed
