#!/usr/bin/env python3
"""granula (CUDA) erosion side by side with CuPy's cupyx.scipy.ndimage.grey_erosion.

Same image size, same flat line footprint (size=(1, L) horizontal, (L, 1) vertical, centred
as granula's origin L // 2), same border mode, timed in the same run on the same GPU with CUDA
events (warm-up, median of several runs). granula's numbers come from the C++ benchmark
binary (bench/gpu, built with -DGRANULA_BUILD_BENCHMARKS=ON), which rotates its inputs over
several buffers so the L2 cache does not flatter it.

    python3 bench/gpu_compare.py --bench /tmp/build/bench/gpu/bench_gpu_morphology
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

SCIPY_MODE = {"nearest": "nearest", "reflect": "reflect", "mirror": "mirror", "wrap": "wrap"}


def find_bench(path: str | None) -> str | None:
    candidates = [path] if path else []
    candidates += [
        os.environ.get("GRANULA_GPU_BENCH", ""),
        "/tmp/build/bench/gpu/bench_gpu_morphology",
        "build/bench/gpu/bench_gpu_morphology",
        shutil.which("bench_gpu_morphology") or "",
    ]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def granula_times(bench: str, size: int, lengths: list[int], mode: str, reps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "granula.json")
        cmd = [bench, "--types", "uint8", "--u8-size", str(size), "--lengths", ",".join(map(str, lengths)),
               "--mode", mode, "--reps", str(reps), "--no-extras", "--json", out]
        print("running:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            rows = json.load(f)
    times = {}
    for r in rows:
        if r["operation"].startswith("copy"):
            times["copy"] = min(times.get("copy", float("inf")), r["ms"])
        else:
            direction = "H" if "hline" in r["operation"] else "V"
            times[(direction, r["length"])] = r["ms"]
    return times


def cupy_time(fn, reps: int) -> float:
    import cupy as cp

    fn()  # warm-up (also compiles the kernel)
    cp.cuda.Device().synchronize()
    ms = []
    for _ in range(reps):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        ms.append(cp.cuda.get_elapsed_time(start, stop))
    ms.sort()
    return ms[len(ms) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="path of bench_gpu_morphology")
    ap.add_argument("--size", type=int, default=16384, help="image side, uint8 (default 16384)")
    ap.add_argument("--lengths", default="3,15,63,255", help="line lengths (default 3,15,63,255)")
    ap.add_argument("--mode", default="nearest", choices=sorted(SCIPY_MODE), help="border mode (default nearest)")
    ap.add_argument("--reps", type=int, default=5, help="timed CuPy runs per case (default 5)")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",") if x]

    try:
        import cupy as cp
        from cupyx.scipy import ndimage as cnd
    except ImportError as e:
        print(f"CuPy is not available ({e}); nothing to compare")
        return 1
    bench = find_bench(args.bench)
    if bench is None:
        print("bench_gpu_morphology not found (build with -DGRANULA_BUILD_BENCHMARKS=ON, or pass --bench)")
        return 1

    g = granula_times(bench, args.size, lengths, args.mode, max(args.reps, 15))

    rng = cp.random.default_rng(1)
    image = rng.integers(0, 256, size=(args.size, args.size), dtype=cp.uint8)
    out = cp.empty_like(image)
    copy_ms = cupy_time(lambda: out.__setitem__(Ellipsis, image), args.reps)

    print(f"\n{args.size}x{args.size} uint8, mode {args.mode}; device {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"device-to-device copy: CuPy {copy_ms:.3f} ms, granula bench {g.get('copy', float('nan')):.3f} ms\n")
    header = f"{'dir':>3} {'L':>6} {'cupy ms':>10} {'granula ms':>11} {'speed-up':>9} {'granula x copy':>15}"
    print(header)
    print("-" * len(header))
    worst = None
    for direction in ("H", "V"):
        for L in lengths:
            size = (1, L) if direction == "H" else (L, 1)
            reps = args.reps if L <= 255 else max(2, args.reps // 2)
            c_ms = cupy_time(lambda: cnd.grey_erosion(image, size=size, mode=SCIPY_MODE[args.mode], output=out), reps)
            g_ms = g.get((direction, L), float("nan"))
            speedup = c_ms / g_ms
            print(f"{direction:>3} {L:>6} {c_ms:>10.3f} {g_ms:>11.4f} {speedup:>8.1f}x {g_ms / g['copy']:>14.2f}x",
                  flush=True)
            if L == 63:
                worst = speedup if worst is None else min(worst, speedup)
    if worst is not None:
        print(f"\nL=63: granula is at least {worst:.1f}x faster than CuPy grey_erosion (target >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
