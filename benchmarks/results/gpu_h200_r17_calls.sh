#!/usr/bin/env bash
# Round 17 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir, the py_arkworks wheel and the
# daemon's wheels in .whl (`python3 -m pip install --no-deps .whl/*.whl .whl/deps/*.whl`),
# `python3 setup.py build_ext --inplace -j 16` and CUZK_CUDA_CUBIN_DIR=.devtree/cubins.
E="--log 24 --setup-backend cuda --key-cache /tmp/kc --devices 1 --gpu-workers 2 --partition-workers 8 \
   --jobs 2 --verify 2 --cross-backend 0 --evaluate-on device"
# Call 1 (fcd75fd + --device-gib holding memory; results/engine_gpu_h200_r17_p24_dev24gib_call1.json):
#   python3 benchmarks/engine_gpu.py $E --device-gib 14   # failed: warm-up job, partition out of memory
#   python3 benchmarks/engine_gpu.py $E --device-gib 24
# Call 2 (uploads in turn, region rerun in turn; results/engine_gpu_h200_r17_p24_dev{14,24}gib_call2.json):
#   python3 benchmarks/engine_gpu.py $E --device-gib 14
#   python3 benchmarks/engine_gpu.py $E --device-gib 24
#   pytest tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py \
#     tests/test_gpu_ntt_plan.py tests/test_gpu_engine.py
# Call 3 (0320a6f: + msms_in_turn; results/engine_gpu_h200_r17_p24_dev{14,24}gib_call3.json,
# results/gpu_tests_h200_r17_call3.txt): the same three commands.
# Call 4 (results/gpu_tests_h200_r17_call4_engine.txt, results/demo_cuda_h200_r17_2p12.txt):
#   pytest -s tests/test_gpu_engine.py tests/test_gpu_backend.py -k "waits_for_work or engine"
#   python3 -m cuzk.cli demo --backend cuda --log2 12 --workdir /tmp/demo12
