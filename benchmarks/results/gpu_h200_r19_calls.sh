#!/usr/bin/env bash
# Round 19 device calls (one H200, main at debe57c; kernels unchanged since fefedf9), kept for the
# record. Each ran from the repository root after the set-up of round 18's calls
# (gpu_h200_r18_calls.sh: the wheels, `python3 setup.py build_ext --inplace -j 16`, prebuilt cubins
# in CUZK_CUDA_CUBIN_DIR).
# Call 5 (results/gpu_tests_h200_r19.txt, results/gpu_h200_r19_ntt_p{1,2,3}.json):
#   python3 -m pytest -q -rf -m gpu tests/    # 191 passed, 1 skipped (no host C++ compiler there)
#   for k in 1 2 3; do   # three processes: the spread of the 2^24 NTT between processes
#     python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" --ntt 24,26 --h "" --reps 41 \
#       --out gpu_h200_r19_ntt_p$k.json
#   done                 # 2^24: 4.69 / 4.77 / 4.65 ms; 2^26: 20.48 / 20.41 / 20.41 ms
# Call 6, deliverable 6 in one device call (results/gpu_h200_r19_deliverable6_*.json; 15 + 43 + 70
# + 133 = 261 s of benchmark, the call 263 s on a machine already warm; the set-up adds ~90 s cold):
K="python3 benchmarks/gpu_kernels.py"
$K --msm "" --msm-host "" --g2 "" --ntt 20,22,24,26 --h 20,22,24,26 --reps 5 \
  --out gpu_h200_r19_deliverable6_ntt.json
$K --msm 20,22,24,26 --msm-table 24,26 --msm-host 20,24 --g2 20,22,24 --ntt "" --h "" --reps 5 \
  --out gpu_h200_r19_deliverable6_msm.json
$K --msm "" --msm-host "" --g2 "" --ntt "" --h "" --prove 20,22,24 --prove-tables --prove-g2 both \
  --reps 5 --out gpu_h200_r19_deliverable6_prove.json
$K --msm "" --msm-host "" --g2 "" --ntt "" --h "" --prove 26 --prove-tables --prove-reserve-gib auto \
  --prove-witnesses filecoin --reps 2 --out gpu_h200_r19_deliverable6_prove26.json
# Call 7 (48dc71b "new": streamed copies of the live bases only, against 6c628f6 "old" from a
# `git archive`; results/gpu_tests_h200_r19_call7.txt, results/engine_gpu_h200_r19_p24_dev14gib_*.json):
#   python3 -m pytest -q tests/test_gpu_backend.py tests/test_gpu_prove.py -k kept_on_the_host   # 6 passed
#   E="--log 24 --setup-backend cuda --key-cache /tmp/kc --devices 1 --gpu-workers 2 \
#     --partition-workers 8 --jobs 2 --verify 2 --cross-backend 0 --evaluate-on device --device-gib 14"
#   python3 benchmarks/engine_gpu.py $E       # new1: region 388.96 ms, streamed 6.71 GB, 2/2 verified
#   python3 old/benchmarks/engine_gpu.py $E   # old1: region 516.40 ms, streamed 9.02 GB, 2/2
#   python3 benchmarks/engine_gpu.py $E       # new2: region 389.05 ms, 2/2
# Call 8 (63fabff "new": resident copies of the live bases only, against bd5616c "old";
# results/gpu_tests_h200_r19_call8.txt, results/engine_gpu_h200_r19_p24_dev14gib_c8_*.json,
# results/gpu_h200_r19_prove24_{new,old}.json):
#   python3 -m pytest -q -rf -m gpu tests/   # 195 passed, 2 failed (the no-room engine test's
#                                            # streamed_bytes expectation, since fixed, not re-run)
#   python3 benchmarks/engine_gpu.py $E       # new1: region 396.32 ms, streamed 5.63 GB, 2/2
#   python3 old/benchmarks/engine_gpu.py $E   # old1: region 390.37 ms, streamed 6.71 GB, 2/2
#   for v in new old: python3 {,old/}benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" \
#     --ntt "" --h "" --prove 24 --prove-tables --prove-witnesses filecoin --reps 5
#                                            # region 178.28 ms new, 179.55 ms old
