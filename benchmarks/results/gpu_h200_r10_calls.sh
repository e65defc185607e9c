#!/usr/bin/env bash
# Round 10 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (BLS12-381 modules, once as is and
# once with CUZK_NVRTC_OPTIONS=-DCUZK_KARATSUBA_SUM: the options are part of the cache key) and
# the py_arkworks wheel in .whl, after `python3 setup.py build_ext --inplace -j 16`, with
# CUZK_CUDA_CUBIN_DIR=.devtree/cubins. E=(--msm-host "" --h "" --ntt "" --g2 "").
# Call 1 (results/gpu_h200_r10_products.json, _b4.json; the defines were then spelled
# CUZK_KARATSUBA=1 (product) and =2 (also the product sums)):
#   python3 benchmarks/gpu_products.py --out $OUT/products.json
#   python3 benchmarks/gpu_products.py --blocks-per-sm 4 --out $OUT/products_b4.json
# Call 2 (results/gpu_h200_r10_ksum.json): both builds from this tree, in one call; rounds
# r = 1, 2, each the default build then CUZK_NVRTC_OPTIONS=-DCUZK_KARATSUBA_SUM:
#   python3 benchmarks/gpu_products.py --out $OUT/products2.json      # adds the _sched kernels
#   CUZK_NVRTC_OPTIONS=-DCUZK_KARATSUBA_SUM pytest -k bls12_381 tests/test_gpu_msm_tables.py tests/test_gpu_prove.py
#   python3 benchmarks/gpu_kernels.py --profile "${E[@]}" --msm 24 --msm-table 24 \
#     --prove 24 --prove-tables --prove-streams 1 --reps 4
# Call 3 (results/engine_gpu_h200_r10*.json, .png): main's headers, every module's cubin:
#   pytest tests/test_gpu_*.py                                            # 332 passed
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify 3 --out $OUT/engine
# Call 4 (results/gpu_h200_r10_g2_windows.json): E=(--msm "" --msm-host "" --h "" --ntt "")
#   python3 benchmarks/gpu_kernels.py --profile "${E[@]}" --g2 20,22,24 --g2-windows 12,13,14,15,16,17,18 --reps 4
#   python3 benchmarks/gpu_kernels.py --profile "${E[@]}" --g2 "" --prove 24 --prove-tables --prove-g2 --reps 4
# Call 5 (results/gpu_h200_r10_dense.json; the sampled share for G1 and G2), each once as is and
# once with CUZK_MSM_DENSE=1 (the old model); E=(--msm-host "" --h "" --ntt ""):
#   pytest tests/test_gpu_*.py                                            # 332 passed
#   python3 benchmarks/gpu_kernels.py --profile "${E[@]}" --msm 22,24 --g2 20,22,24 --reps 4
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" "${E[@]}" --prove 24 --prove-tables --prove-g2 --reps 4
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --gpu-workers 2 --partition-workers 4 --jobs 5 --verify 3
# Call 6 (results/gpu_h200_r10_final.json; the share for G2 only): the same without the old runs.
