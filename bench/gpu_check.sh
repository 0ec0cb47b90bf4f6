#!/usr/bin/env bash
# Issue 14's checks on a machine with an NVIDIA GPU, CuPy and JAX (the lent device machine's image):
# builds xjax's core in place, runs the GPU halves of the tests (the `gpu` fixture's "cuda" cases and
# the tests marked for a real GPU), the seed programs and the main job with the GPU as default
# device, and the issue's compare.py rows next to JAX on the same GPU.
#
#   bash bench/gpu_check.sh SHARED_DIR [OUT_DIR]
#
# SHARED_DIR holds seed-programs/ and bench/compare.py (copy ../shared into the repository first:
# the device machine gets the repository only). Logs go to OUT_DIR (default /tmp/gpu_check); the
# summary is printed last. Uses the python3 on PATH.
set -u
shared=$(cd "$1" && pwd)
out=${2:-/tmp/gpu_check}
mkdir -p "$out"
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
summary=()

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
python3 -c "import cupy, jax; print('cupy', cupy.__version__, '| jax', jax.__version__, jax.devices())" \
  | tee -a "$out/device.txt"

# The core, in place (python/xjax/_core*.so), as the README's development loop builds it.
if cmake -S . -B build/gpu -G Ninja -DXJAX_BUILD_PYTHON=ON -DXJAX_DEV_INPLACE=ON \
     -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python3)" \
     >"$out/build.log" 2>&1 && cmake --build build/gpu -j"$(nproc)" >>"$out/build.log" 2>&1; then
  summary+=("build: ok")
else
  tail -30 "$out/build.log"; echo "build failed"; exit 1
fi
export PYTHONPATH="$repo/python" PYTHONUNBUFFERED=1

# Tests: the real-GPU cases (the `gpu` fixture's [cuda] ids; not the emulated runtime's).
python3 -m pytest -q -p no:cacheprovider tests/test_cuda_executor.py tests/test_cuda_linalg.py \
  tests/test_gpu_placement.py tests/test_dlpack.py tests/test_platforms.py -k "not emulated" \
  >"$out/pytest.log" 2>&1
summary+=("tests: $(tail -1 "$out/pytest.log")")

# The seed programs with the GPU as the default device.
JAX_PLATFORMS=cuda,cpu bash "$shared/seed-programs/run.sh" >"$out/seeds.log" 2>&1
summary+=("seeds (JAX_PLATFORMS=cuda,cpu): $(tail -1 "$out/seeds.log")")

# The main job (README's first command) with the GPU as the default device, as a user runs it.
python3 -m xjax.examples.train --out "$out" >"$out/train.log" 2>&1
summary+=("main job on the GPU: rc=$? $(grep -i accuracy "$out/train.log" | tail -1)")

# The issue's rows, xjax and JAX in one process on the same GPU.
(cd "$shared/bench" && JAX_PLATFORMS=cuda,cpu python3 compare.py --rounds 5 \
  --only selu_jit_16e6,matmul_1024_f32,cnn_train_step_b64) >"$out/compare.log" 2>&1

echo "---- $(head -1 "$out/device.txt")"
printf '%s\n' "${summary[@]}"
grep -E "^(FAIL|ok )" "$out/seeds.log"
cat "$out/compare.log"
