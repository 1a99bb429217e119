#!/usr/bin/env bash
# On the device machine (METHOD.md: one call builds, checks and times): the CUDA morphology
# tests and bench_gpu_shapes for this tree, and the same benchmark built from the baseline tree
# BASE (when given) for a before/after table in one run. Logs under $OUT.
#   BIN=dir-with-prebuilt-binaries BASE=/path/to/baseline/checkout bash bench/gpu/shapes_run.sh
# KERNEL_TIMES="line:63:30 line:255:30" adds bench/gpu/kernel_times.sh for those elements.
set -u
t0=$SECONDS
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/env.txt" 2>&1
CFG="-G Ninja -DCMAKE_BUILD_TYPE=Release -DGRANULA_ENABLE_CUDA=ON -DGRANULA_BUILD_BENCHMARKS=ON -DGRANULA_BUILD_PYTHON=OFF"
if [ -n "${BASE:-}" ]; then
  cp bench/gpu/shapes_bench.cpp bench/gpu/CMakeLists.txt "$BASE/bench/gpu/"
  (cmake -S "$BASE" -B /tmp/bbase $CFG -DGRANULA_BUILD_TESTS=OFF && ninja -C /tmp/bbase -j10 bench_gpu_shapes) > "$OUT/base-build.log" 2>&1 &
  base_pid=$!
fi
if [ -n "${PYCOMPARE:-}" ]; then  # the Python package for bench/gpu_compare_shapes.py (CuPy side by side)
  (CMAKE_BUILD_PARALLEL_LEVEL=12 python3 -m pip install -q --no-build-isolation --no-deps --disable-pip-version-check . ) > "$OUT/pip.log" 2>&1 &
  pip_pid=$!
fi
jobs=$([ -n "${BASE:-}" ] && echo 6 || echo 16)  # the baseline's build takes the other cores
T=${BIN:-}/test_morphology_cuda
S=${BIN:-}/bench_gpu_shapes
if [ -z "${BIN:-}" ] || ! "$S" --size 512 --reps 1 --warmup 0 --shapes disk:3 > "$OUT/probe.log" 2>&1; then
  echo "building here"; cat "$OUT/probe.log" 2>/dev/null | tail -3
  (cmake -S . -B /tmp/bnew $CFG -DGRANULA_BUILD_TESTS=ON && ninja -C /tmp/bnew -j"$jobs" bench_gpu_shapes test_morphology_cuda) > "$OUT/build.log" 2>&1 || { echo BUILD FAILED; grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
  T=/tmp/bnew/tests/cuda/test_morphology_cuda
  S=/tmp/bnew/bench/gpu/bench_gpu_shapes
fi
echo "binaries ready $((SECONDS-t0))s"
# The whole CUDA morphology suite took 210 s on an H100 (stop 57).
timeout ${TEST_TIMEOUT:-240} "$T" --gtest_color=no > "$OUT/test.log" 2>&1; rc=$?; echo "cuda tests rc=$rc $((SECONDS-t0))s"
grep -E "^\[  (PASSED|FAILED|SKIPPED)|FAILED \]|Failure|vs reference|vs CPU|wrote outside" "$OUT/test.log" | head -30
if [ -n "${BASE:-}" ]; then
  wait $base_pid; echo "baseline build rc=$? $((SECONDS-t0))s"
  timeout 90 /tmp/bbase/bench/gpu/bench_gpu_shapes ${BENCH_ARGS:-} > "$OUT/bench-base.log" 2>&1 || tail -5 "$OUT/base-build.log"
fi
timeout 90 "$S" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench-new.log"
[ -n "${BASE:-}" ] && { echo "--- baseline"; cat "$OUT/bench-base.log"; }
timeout 40 "$S" --type float32 --size 8192 --reps 7 --shapes line:63:45,line:255:30,disk:31,octagon:20:10 > "$OUT/bench-f32.log" 2>&1
echo "--- float32 8192"; cat "$OUT/bench-f32.log"
if [ -n "${PYCOMPARE:-}" ]; then
  wait $pip_pid; echo "pip install rc=$? $((SECONDS-t0))s"; tail -3 "$OUT/pip.log"
  (cd /tmp && PYTHONUNBUFFERED=1 timeout $((345 - (SECONDS-t0))) python3 "$OLDPWD/bench/gpu_compare_shapes.py") 2>&1 | tee "$OUT/cupy.log"
fi
if [ -n "${KERNEL_TIMES:-}" ] && command -v ncu > /dev/null && [ $((SECONDS-t0)) -lt 500 ]; then  # each kernel's time, instructions, bytes
  timeout $((570 - (SECONDS-t0))) bash "$(dirname "$0")/kernel_times.sh" "$S" \
    $KERNEL_TIMES 2>&1 | tee "$OUT/kernel-times.txt"
fi
if [ -n "${NCU:-}" ] && command -v ncu > /dev/null && [ $((SECONDS-t0)) -lt 290 ]; then
  timeout $((345 - (SECONDS-t0))) ncu --clock-control none --kernel-name regex:"${NCU}" --launch-count 5 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    "$S" --size 8192 --reps 1 --warmup 0 --buffers 1 --shapes ${NCU_SHAPES:-line:255:30,disk:31,line:63:45} > "$OUT/ncu.txt" 2>&1
  grep -E "sheared|runs_kernel|Duration|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -60
fi
echo "total $((SECONDS-t0))s"
