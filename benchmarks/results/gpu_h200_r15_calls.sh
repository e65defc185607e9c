#!/usr/bin/env bash
# Round 15 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir (every module, for the new code and
# for HEAD 0c9f27f), .devtree/old = `git archive 0c9f27f cuzk benchmarks/*.py` with the built
# cuzk/_native*.so copied in (the native C++ did not change), and the py_arkworks wheel in .whl
# (`python3 -m pip install --no-deps .whl/*.whl`), after `python3 setup.py build_ext --inplace -j 16`,
# with CUZK_CUDA_CUBIN_DIR=.devtree/cubins. "new" runs with PYTHONPATH=. and benchmarks/...,
# "old" with PYTHONPATH=.devtree/old and .devtree/old/benchmarks/... (the scripts put their own
# root first on sys.path).
#
# Call 1 (results/gpu_h200_r15_call1_p_{new,old,new2}.json):
#   pytest -x tests/test_gpu_msm_tables.py tests/test_gpu_prove.py tests/test_gpu_backend.py \
#     -k "msm or table or prove or infinity"                                                 # 73 passed
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 \
#     --prove-tables --prove-g2 both --prove-trace --prove-witnesses filecoin --reps 6       # new, old, new
# Call 2:
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 24 --prove-tables \
#     --prove-g2 --prove-modes auto,auto+w13,auto+w14,auto+w18 --prove-witnesses filecoin --reps 6
#                                                           # results/gpu_h200_r15_call2_g2_windows.json
#   python3 benchmarks/cpu_synthesis.py --logs 24 --reps 2 --threads 4,8,16   # results/cpu_synthesis_h200_r15.json
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify 3                 # results/engine_gpu_h200_r15.{json,png}
# Call 3:
#   the same engine run with --verify 0, new, old, new, old   # results/engine_gpu_h200_r15_ab_*.json
#   python3 results/gpu_h200_r15_csr_probe.py                 # results/gpu_h200_r15_call3_csr.json
#   (the probe as run kept everything at module level; tidied into functions afterwards)
# Call 4 (results/gpu_h200_r15_call4_p26_{new,old}.json):
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --h "" --ntt "" --g2 "" --prove 26 \
#     --prove-tables --prove-reserve-gib auto --prove-witnesses filecoin --reps 2            # new, old
# Call 5 (after fbb6458's code; results/engine_gpu_h200_r15_eval_{dev1,host1,dev2,host2}.json):
#   pytest -x tests/test_gpu_prove.py                                                        # 12 passed
#   python3 benchmarks/engine_gpu.py --log 20 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 4 --jobs 5 --verify (3 | 0) --evaluate-on (device | host)   # device, host, device, host
