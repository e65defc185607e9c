#!/usr/bin/env bash
# Round 8 device calls (one H200), kept for the record; each ran from the repository root with
# .devtree/cubins built by scripts/nvrtc_check.py --cubin-dir and the py_arkworks wheel in .whl.
# Call 1: ncu on the NTT tiles and a kernel timeline of the 2^24 partition
#   ncu --clock-control none --set full --kernel-name regex:ntt_tile --launch-skip 3 --launch-count 3 \
#     python3 benchmarks/gpu_kernels.py --msm "" --msm-host "" --g2 "" --reps 1 --h "" --ntt 24
#   ncu ... --launch-skip 16 --launch-count 4 python3 benchmarks/gpu_kernels.py ... --ntt "" --h 24
#   python3 benchmarks/results/gpu_h200_r8_trace_prove.py
# Call 2: python3 benchmarks/results/gpu_h200_r8_conc_probe.py
# Call 3 (results/gpu_h200_r8_task_runs.json):
#   CUZK_MSM_TASK_CHUNK=128 CUZK_MSM_ITEMS_INL=1 python3 -m pytest tests/test_gpu_msm_tables.py tests/test_gpu_prove.py
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" --msm-table 24 \
#     --reps 5 --msm-sum auto,auto+o32,auto+o64,auto+o128,auto+iinl,auto+o128+iinl,auto+o64+iinl
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" --prove 24 \
#     --prove-tables --prove-streams 1,0 --prove-modes auto,auto+o128+iinl,auto+o64+iinl --reps 2
# Call 4 (results/gpu_h200_r8_final.json): defaults
#   python3 -m pytest tests/test_gpu_msm_tables.py tests/test_gpu_prove.py tests/test_gpu_backend.py
#   python3 benchmarks/gpu_kernels.py --profile --msm 24,26 --msm-host "" --g2 "" --h 24 --ntt 24,26 \
#     --msm-table 24,26 --msm-sum auto --reps 5
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" --prove 24 \
#     --prove-tables --prove-streams 1,0 --reps 2
#   python3 benchmarks/gpu_kernels.py --profile --msm "" --msm-host "" --g2 "" --h "" --ntt "" --prove 26 \
#     --prove-tables --prove-reserve-gib auto --prove-streams 1 --reps 2
