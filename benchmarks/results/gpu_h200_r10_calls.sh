#!/usr/bin/env bash
# Round 10 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (production headers of 1899170,
# and CUZK_NVRTC_OPTIONS=-DCUZK_KARATSUBA_SUM for the BLS12-381 modules of this round's
# headers) and the py_arkworks wheel in .whl. E=(--msm-host "" --h "" --ntt "" --g2 "").
# Call 1 (results/gpu_h200_r10_products.json, _b4.json; the defines were then spelled
# CUZK_KARATSUBA=1 (product) and =2 (also the product sums)):
#   python3 benchmarks/gpu_products.py --out $OUT/products.json
#   python3 benchmarks/gpu_products.py --blocks-per-sm 4 --out $OUT/products_b4.json
# Call 2 (results/gpu_h200_r10_ksum.json): the production runs from a `git archive` of
# 1899170 in .devtree/prod, the Karatsuba runs from this tree, each after
# `python3 setup.py build_ext --inplace`; rounds r = 1, 2, each production then Karatsuba:
#   CUZK_NVRTC_OPTIONS=-DCUZK_KARATSUBA_SUM pytest -k bls12_381 tests/test_gpu_msm_tables.py tests/test_gpu_prove.py
#   python3 benchmarks/gpu_kernels.py --profile "${E[@]}" --msm 24 --msm-table 24 --msm-sum auto --reps 5
#   python3 benchmarks/gpu_kernels.py --msm "" "${E[@]}" --prove 24 --prove-tables --prove-streams 1 --reps 4
