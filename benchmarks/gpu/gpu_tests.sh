#!/usr/bin/env bash
# The GPU test suite (tests/gpu) on a CUDA machine: wheels carried in .whl/ are installed to
# /tmp/site, the CPU extension is built, prebuilt cubins in .devtree/cubins are used when
# present (scripts/nvrtc_check.py --cubin-dir .devtree/cubins). Logs and JUnit XML go to $OUT.
# TESTS=path runs part of it (e.g. TESTS=tests/gpu/test_gpu_filecoin.py).
set -uo pipefail
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi -L; python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)"
python3 setup.py build_ext --inplace -j 16 > "$OUT/build.log" 2>&1 || { echo "native build failed"; tail -20 "$OUT/build.log"; }
echo "build $(( $(date +%s) - t0 )) s"
if [ -d .devtree/cubins ]; then export CUZK_CUDA_CUBIN_DIR=$PWD/.devtree/cubins; fi
timeout ${TEST_TIMEOUT:-500} python3 -m pytest -q -p no:cacheprovider -rfEs --junitxml="$OUT/gpu_tests.xml" --durations=0 ${TESTS:-tests/gpu} "$@" 2>&1 | tee "$OUT/gpu_tests.log" | tail -60
echo "tests done at $(( $(date +%s) - t0 )) s"
git log -1 --format='commit %H' 2>/dev/null || true
