#!/usr/bin/env bash
# Round 20 device calls (one H200, main at d9a865d; kernels unchanged since fefedf9), kept for the
# record. Each ran from the repository root after the set-up of round 18's calls
# (gpu_h200_r18_calls.sh: the wheels, `python3 setup.py build_ext --inplace -j 16`, prebuilt cubins
# in CUZK_CUDA_CUBIN_DIR).
# Call 1 (results/gpu_tests_h200_r20.txt): every gpu-marked test, including the engine's no-room
# test whose expectation round 19 fixed after its last device call.
python3 -m pytest -q -rf -m gpu tests/   # 197 passed, 1 skipped (no host C++ compiler there), 113 s
# Call 2 (7072f65 "new" against 7c7d3a2 "old" from a `git archive` with the new gpu_kernels.py;
# results/gpu_tests_h200_r20_call2.txt, results/gpu_h200_r20_pinned_{new,old}.json,
# results/engine_gpu_h200_r20_p24_dev14gib_{new1,old1}.json):
#   python3 -m pytest -q -rf -m gpu tests/test_gpu_backend.py tests/test_gpu_prove.py \
#     tests/test_gpu_engine.py -k "kept_on_the_host or stream or no_room or live_bases"   # 14 passed
#   python3 {,old/}benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" --ntt "" --h "" \
#     --msm-pinned 22,24 --reps 5    # G2 2^24 bits 147.69 -> 106.28 ms, G1 57.93 -> 51.70
#   E="--log 24 --setup-backend cuda --key-cache /tmp/kc --devices 1 --gpu-workers 2 \
#     --partition-workers 8 --jobs 2 --verify 2 --cross-backend 0 --evaluate-on device --device-gib 14"
#   python3 benchmarks/engine_gpu.py $E       # new1: region 358.15 ms, 2/2 verified
#   python3 old/benchmarks/engine_gpu.py $E   # old1: region 392.29 ms, 2/2 verified
# Call 3 (a4f99e0; results/gpu_tests_h200_r20_call3.txt, results/gpu_h200_r20_pinned_rows*.json,
# results/engine_gpu_h200_r20_p24_dev14gib_new2.json):
#   python3 -m pytest -q -rf -m gpu tests/   # 197 passed, 1 skipped
#   for r in 21 23 24; do CUZK_MSM_STREAM_ROWS=$((1 << r)) python3 benchmarks/gpu_kernels.py \
#     --msm "" --msm-host "" --g2 "" --ntt "" --h "" --msm-pinned 24 --reps 5; done
#   CUZK_MSM_STREAM_ROWS=8388608 python3 benchmarks/engine_gpu.py $E   # warm-up job failed:
#                                            # CUDADriverError CUDA_ERROR_OUT_OF_MEMORY
#   python3 benchmarks/engine_gpu.py $E       # new2: region 369.67 ms, 2/2 verified
# Call 4 (1829dcd; results/gpu_tests_h200_r20_call4.txt, results/engine_gpu_h200_r20_p24_dev14gib_c4new.json):
#   python3 -m pytest -q -rf -m gpu tests/test_gpu_backend.py tests/test_gpu_prove.py \
#     tests/test_gpu_engine.py -k "kept_on_the_host or stream or no_room or live_bases"   # 14 passed
#   CUZK_MSM_STREAM_ROWS=8388608 python3 benchmarks/engine_gpu.py $E   # failed as in call 3
#   python3 benchmarks/engine_gpu.py $E       # c4new: region 360.55 ms, 2/2 verified
