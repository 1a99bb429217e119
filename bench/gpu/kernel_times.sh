#!/usr/bin/env bash
# Tuning aid, for a machine with a GPU: the kernels one erosion launches, each with its time,
# warp instructions and DRAM bytes (Nsight Compute, one launch each, the GPU's own clocks), for
# each element of bench_gpu_shapes. Shows which kernel of a multi-pass element costs what
# (docs/benchmarks.md, "2026-12-05 (stop 57)": a line at an angle's runs and sheared kernels).
#   bench/gpu/kernel_times.sh BUILD_DIR|BENCH_BINARY SPEC... [-- bench_gpu_shapes options]
#   e.g. bench/gpu/kernel_times.sh /tmp/build line:63:30 line:255:30 -- --type float32 --size 8192
set -u -o pipefail
build=${1:?usage: kernel_times.sh BUILD_DIR|BENCH_BINARY SPEC... [-- bench options]}
shift
specs=()
while [[ $# -gt 0 && $1 != -- ]]; do specs+=("$1"); shift; done
[[ $# -gt 0 ]] && shift  # the --
bench=$build
[[ -f $bench ]] || bench=$build/bench/gpu/bench_gpu_shapes
[[ -x $bench ]] || { echo "kernel_times.sh: no $bench (build with -DGRANULA_BUILD_BENCHMARKS=ON)" >&2; exit 2; }
metrics=gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
printf '%-16s %-48s %10s %14s %9s %9s\n' element kernel us "warp instr." "read MB" "write MB"
for spec in "${specs[@]}"; do
  if ! ncu --clock-control none --metrics "$metrics" --csv --print-units base "$bench" --size 16384 "$@" --reps 1 --warmup 0 \
       --buffers 1 --shapes "$spec" >"$csv" 2>&1; then
    echo "$spec: ncu failed:"; tail -5 "$csv"; continue
  fi
  python3 - "$spec" "$csv" <<'EOF'
import csv, sys
spec, path = sys.argv[1], sys.argv[2]
rows = [r for r in csv.reader(open(path)) if len(r) > 10]
if not rows:
    sys.exit(f"{spec}: no kernels in the profile")
head = rows[0]
key, kernel, metric, value = (head.index(c) for c in ("ID", "Kernel Name", "Metric Name", "Metric Value"))
kernels = {}
for r in rows[1:]:
    kernels.setdefault((int(r[key]), r[kernel]), {})[r[metric]] = float(r[value].replace(",", ""))
for (_, name), m in sorted(kernels.items()):
    short = name.replace("(anonymous namespace)::", "").split("(")[0].replace("void ", "")
    print(f"{spec:16s} {short[:48]:48s} {m['gpu__time_duration.sum'] / 1e3:10.1f} "
          f"{m['smsp__inst_executed.sum'] / 1e6:12.1f} M {m['dram__bytes_read.sum'] / 1e6:9.1f} "
          f"{m['dram__bytes_write.sum'] / 1e6:9.1f}")
EOF
done
