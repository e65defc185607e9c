#!/usr/bin/env bash
# Round 16 device calls (one H200), kept for the record. Each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir, the py_arkworks wheel in .whl
# (`python3 -m pip install --no-deps .whl/*.whl`), `python3 setup.py build_ext --inplace -j 16`,
# and CUZK_CUDA_CUBIN_DIR=.devtree/cubins.
#
# Call 1 (b477d9c: pinned witness leases, allocated lazily; results/engine_gpu_h200_r16_p24_lazy_pinned*.json):
#   pytest -x tests/test_gpu_prove.py                                                   # 12 passed
#   python3 benchmarks/engine_gpu.py --log 24 --setup-backend cuda --devices 1 --gpu-workers 2 \
#     --partition-workers 8 --jobs 3 --evaluate-on device,host --verify 2 --cross-backend 0
# Call 2 (7ef8468: buffer sets reserved as the key goes HOT; old = `git archive b477d9c cuzk` with the
# built cuzk/_native*.so and 7ef8468's benchmarks/engine_gpu.py copied in):
#   E="--log 24 --setup-backend cuda --key-cache /tmp/kc --devices 1 --gpu-workers 2 --partition-workers 8 \
#      --jobs 3 --verify 2 --cross-backend 0"
#   python3 benchmarks/engine_gpu.py $E --evaluate-on device,host         # results/engine_gpu_h200_r16_p24_new*.json
#   python3 .devtree/old/benchmarks/engine_gpu.py $E --evaluate-on device # results/engine_gpu_h200_r16_p24_old.json
#   python3 benchmarks/engine_gpu.py $E --evaluate-on device              # results/engine_gpu_h200_r16_p24_new2.json
#   (the waterfall PNG was redrawn here from the device run's timeline with cuzk.tools.timeline)
# Call 3 (results/gpu_h200_r16_pinned_stall.json):
#   PYTHONPATH=. python3 benchmarks/gpu_pinned_check.py --stall-gib 6
# Call 4 (7ef8468, with the daemon's wheels from .whl/deps and the generated cuzk/server/proto/*_pb2*.py):
#   pytest tests/test_gpu_backend.py tests/test_gpu_msm_tables.py tests/test_gpu_prove.py \
#     tests/test_gpu_ntt_plan.py                                                        # 338 passed in 137 s
#   python3 -m cuzk.cli demo --backend cuda --log2 12 --workdir /tmp/demo12   # results/demo_cuda_h200_r16_2p12.txt
#   python3 -m cuzk.cli demo --backend cuda --log2 20 --workdir /tmp/demo20   # results/demo_cuda_h200_r16_2p20.txt
# Call 5 (5583dc6 + the benchmark fix; results/gpu_h200_r16_streamed_msm_g{1,2}.json,
# results/engine_gpu_h200_r16_p24_dev40gib.json, results/demo_cuda_h200_r16_2p20_warm_up.txt):
#   pytest tests/test_gpu_backend.py -k "kept_on_the_host or msm_matches_cpu" tests/test_gpu_prove.py
#   python3 benchmarks/gpu_streamed_msm.py --logs 22,24 --rows 21,22,23
#   python3 benchmarks/gpu_streamed_msm.py --group 2 --logs 22 --rows 20,21
#   E="--log 24 --setup-backend cuda --key-cache /tmp/kc --devices 1 --gpu-workers 2 --partition-workers 8 \
#      --jobs 2 --verify 2 --cross-backend 0 --evaluate-on device"
#   python3 benchmarks/engine_gpu.py $E --device-gib 14   # failed: proof C off the curve (H streamed; fixed in bff46c5)
#   python3 benchmarks/engine_gpu.py $E --device-gib 40
#   python3 -m cuzk.cli demo --backend cuda --log2 20     # twice; the "old" run meant to be 91d08cb loaded
#                                                         # ./cuzk too (python -m puts the cwd first): both had the warm-up
# Call 6: refused (no machine could be started).
# Call 7 (bff46c5, a cold machine; results/engine_gpu_h200_r16_p24_dev14gib_streamed*.json):
#   pytest tests/test_gpu_prove.py tests/test_gpu_backend.py -k kept_on_the_host                 # 4 passed
#   python3 benchmarks/engine_gpu.py $E --device-gib 14                                         # 2 of 2 verified
#   the new test_gpu_prove test against the code without the fix                                 # 2 passed (does not catch it)
