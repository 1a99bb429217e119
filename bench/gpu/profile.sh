#!/usr/bin/env bash
# Tuning aid, for a machine with a GPU: Nsight Compute summaries of the morphology kernels and an
# opcode histogram of their machine code. Writes into $OUT (or /tmp/granula-profile).
#   bench/gpu/profile.sh [BUILD_DIR]      (the build needs -DGRANULA_BUILD_BENCHMARKS=ON)
set -u
build=${1:-/tmp/build}
out=${OUT:-/tmp/granula-profile}
mkdir -p "$out"
bench=$build/bench/gpu/bench_gpu_morphology
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
          --section MemoryWorkloadAnalysis)
for t in uint8 float32; do
  ncu --clock-control none "${sections[@]}" -k 'regex:(vhgw|chunk)_kernel' \
    "$bench" --types "$t" --lengths 63,1001 --reps 1 --warmup 0 --buffers 1 --no-extras \
    >"$out/ncu-$t.txt" 2>&1 || echo "ncu failed for $t (see ncu-$t.txt)"
done
# Opcode histogram per kernel (first word of each SASS instruction).
for f in "$build"/CMakeFiles/granula_cuda.dir/src/morphology/cuda/{vertical,horizontal}_pass_{uint8,float32}.cu.o; do
  [[ -f $f ]] || continue
  cuobjdump -sass "$f" | awk -v file="$(basename "$f")" '
    /Function :/ { if (name) dump(); name = $3; delete count; total = 0 }
    /^ +\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// { op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); split(op, p, "."); count[p[1]]++; total++ }
    function dump(  k, s) { s = ""; for (k in count) s = s " " k "=" count[k]; print file, name, "total=" total, s }
    END { if (name) dump() }'
done >"$out/sass-histogram.txt" 2>&1
echo "profile written to $out"
