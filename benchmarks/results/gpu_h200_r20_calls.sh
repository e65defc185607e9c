#!/usr/bin/env bash
# Round 20 device calls (one H200, main at d9a865d; kernels unchanged since fefedf9), kept for the
# record. Each ran from the repository root after the set-up of round 18's calls
# (gpu_h200_r18_calls.sh: the wheels, `python3 setup.py build_ext --inplace -j 16`, prebuilt cubins
# in CUZK_CUDA_CUBIN_DIR).
# Call 1 (results/gpu_tests_h200_r20.txt): every gpu-marked test, including the engine's no-room
# test whose expectation round 19 fixed after its last device call.
python3 -m pytest -q -rf -m gpu tests/   # 197 passed, 1 skipped (no host C++ compiler there), 113 s
