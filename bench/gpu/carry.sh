#!/usr/bin/env bash
# Builds GPU binaries here (nvcc is enough, no GPU needed) for a GPU machine that gets a copy of
# the tree: configures $BUILD (default build/cuda90: Release, sm_90, tests and benchmarks),
# builds the targets named, strips them and packs them into build/carry/bins.tar.xz, which
# travels with the tree when named as carried (bench_gpu_shapes and bench_gpu_lines pack to
# about 35 MB). On the GPU machine the call then runs at once instead of building for minutes
# (stop 59: 8 s and about 70 s of device time, against 140-300 s when built there):
#   mkdir -p /tmp/bins && tar xJf build/carry/bins.tar.xz -C /tmp/bins
#   BIN=/tmp/bins bash bench/gpu/shapes_run.sh        (with test_morphology_cuda packed too)
#
#   bench/gpu/carry.sh [TARGET...]    default: bench_gpu_shapes bench_gpu_lines
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$repo/build/cuda90}
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(bench_gpu_shapes bench_gpu_lines)
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRANULA_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DGRANULA_BUILD_TESTS=ON -DGRANULA_BUILD_BENCHMARKS=ON \
  -DGRANULA_BUILD_PYTHON=OFF >/dev/null
ninja -C "$build" "${targets[@]}"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for t in "${targets[@]}"; do
  f=$(find "$build" -name "$t" -type f -perm -u+x -print -quit)
  [[ -n $f ]] || { echo "carry.sh: no binary $t under $build" >&2; exit 2; }
  cp "$f" "$stage/" && strip "$stage/$t"
done
mkdir -p "$repo/build/carry"
tar cJf "$repo/build/carry/bins.tar.xz" -C "$stage" "${targets[@]}"
ls -la "$repo/build/carry/bins.tar.xz"
