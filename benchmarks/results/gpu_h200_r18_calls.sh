#!/usr/bin/env bash
# Round 18 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir, the py_arkworks wheel and the
# daemon's wheels in .whl (`python3 -m pip install --no-deps .whl/*.whl .whl/deps/*.whl`),
# `python3 setup.py build_ext --inplace -j 16` and CUZK_CUDA_CUBIN_DIR=.devtree/cubins.
# "mutant": cuzk/backends/cuda.py with the streamed MSM's first copy wait removed
# (`copy.wait_event(freed[b])` run only when k >= len(bufs)), restored afterwards.
GPU_TESTS="tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py \
  tests/test_gpu_ntt_plan.py tests/test_gpu_engine.py"
# Call 1 (fefedf9 + the round-17 stream-order test; results/gpu_tests_h200_r18_call1.txt,
# results/gpu_h200_r18_kernels_msm.json):
#   pytest $GPU_TESTS      # 344 passed, 4 failed: the new test (a shape bug in the test) and
#                          # the no-room engine test (the session pool's free blocks let the key fit)
#   python3 benchmarks/gpu_kernels.py --msm 20,22,24,26 --msm-table 24,26 --msm-host 20,24 \
#     --g2 20,22,24 --ntt "" --h "" --reps 5
# Call 2 (fresh_pool fixture in tests/test_gpu_engine.py; results/gpu_tests_h200_r18_call2.txt,
# results/gpu_h200_r18_kernels_ntt.json):
#   pytest $GPU_TESTS      # 346 passed, 2 failed: the stream-order test (chunk shape in the test)
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" --ntt 20,22,24,26 \
#     --h 20,22,24,26 --reps 5
# Call 3 (the test's chunk shape fixed; results/gpu_tests_h200_r18_call3_stream_order.txt,
# results/gpu_h200_r18_kernels_prove{,26}.json):
#   pytest tests/test_gpu_backend.py -k waits_for_work   # 2 passed; mutant: 2 failed (wrong sums)
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" --ntt "" --h "" \
#     --prove 20,22,24 --prove-tables --prove-g2 both --reps 5
#   python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" --ntt "" --h "" --prove 26 \
#     --prove-tables --prove-reserve-gib auto --prove-witnesses filecoin --reps 2
# Call 4 (b70a2cf "new": MSM width two then one, against 80a1412 "old": in turn after the first
# out-of-memory; results/engine_gpu_h200_r18_p24_dev14gib_{new1,old1,new2}.json), run new, old, new:
#   E="--log 24 --setup-backend cuda --key-cache /tmp/kc --devices 1 --gpu-workers 2 \
#     --partition-workers 8 --jobs 2 --verify 2 --cross-backend 0 --evaluate-on device --device-gib 14"
#   python3 benchmarks/engine_gpu.py $E --out /tmp/e_new1   # region 518.66 ms, width 2, 2/2 verified
#   python3 old/benchmarks/engine_gpu.py $E --out /tmp/e_old1  # region 551.14 ms, in turn, 2/2
#   python3 benchmarks/engine_gpu.py $E --out /tmp/e_new2   # region 518.25 ms, width 2, 2/2
