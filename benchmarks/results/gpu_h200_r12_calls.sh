#!/usr/bin/env bash
# Round 12 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (every module; for call 3 BLS12-381's
# modules once more with CUZK_NVRTC_OPTIONS=-DCUZK_FQ2_LAZY=0) and the py_arkworks wheel in .whl
# (`python3 -m pip install --no-deps .whl/*.whl`), after `python3 setup.py build_ext --inplace -j 16`,
# with CUZK_CUDA_CUBIN_DIR=.devtree/cubins PYTHONPATH=.
# Call 1 (results/gpu_h200_r12_call1_*.json; kernels.cu then had msm_bucket_segments_inl /
# msm_reduce_groups_inl and the tokens rinl / routl, removed after this call; the G2-region JSON
# did not come back: the device tool returns at most 8 files):
#   pytest -x tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py      # 175 passed
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --h "" --ntt "" --g2 20,24 --msm-sum rinl,routl --reps 6
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-table 24 --msm-host "" --h "" --ntt "" --g2 "" --msm-sum rinl,routl --reps 4
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" --msm-host "" --h "" --ntt "" --prove 24 --prove-tables --prove-g2 \
#     --prove-trace --prove-modes rinl,routl,rinl+w14,rinl+w18 --reps 4
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --g2 "" --msm-host "" --h "" --ntt "" --prove 24 --prove-tables \
#     --prove-trace --prove-streams 1,0 --prove-modes rinl,routl --reps 4
# Call 2 (results/gpu_h200_r12_call2_*.json; main's kernels at 5663bfb):
#   python3 benchmarks/gpu_kernels.py --msm-host "" --msm "" --g2 "" --ntt 24 --h 24 \
#     --ntt-impls tiled,tiled:11/2/128/r4,tiled:11/2/256/r4 --reps 9
#   python3 benchmarks/gpu_kernels.py --profile --msm-host "" --msm "" --g2 "" --h "" --ntt "" --prove 24 --prove-tables \
#     --prove-trace --prove-modes inl,inl+hf12,inl+nr4,inl+s32,inl --reps 4
#   python3 benchmarks/gpu_kernels.py --profile --msm-host "" --msm "" --g2 "" --h "" --ntt "" --prove 24 --prove-tables --prove-g2 \
#     --prove-trace --prove-streams 1,0 --reps 4
# Call 3 (results/gpu_h200_r12_call3_*.json; the Fq2 products of two reductions, default, against
# PLAIN=(env CUZK_NVRTC_OPTIONS=-DCUZK_FQ2_LAZY=0), each a process of its own):
#   pytest -x tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py      # 175 passed
#   python3 benchmarks/gpu_kernels.py --profile --msm-host "" --msm "" --h "" --ntt "" --g2 20,24 --reps 6   # lazy, PLAIN, lazy
#   python3 benchmarks/gpu_kernels.py --profile --msm-host "" --msm "" --h "" --ntt "" --g2 "" --prove 24 --prove-tables --prove-g2 \
#     --prove-modes inl,inl --reps 4                                                              # lazy, then PLAIN
# Call 4 (results/engine_gpu_h200_r12*; main with the Fq2 products of two reductions):
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify 3 --out $OUT/engine
