#!/usr/bin/env python3
"""granula (CUDA) linear openings side by side with CuPy's cupyx.scipy.ndimage.grey_opening.

Same image, same flat line footprint, timed in the same run on the same GPU with CUDA events
(warm-up, median). granula's numbers come from bench/gpu/bench_gpu_lines (built with
-DGRANULA_BUILD_BENCHMARKS=ON), run first by this script.

The operators agree where compared: at 90 degrees (a vertical L x 1 footprint) and 45 degrees
(an L x L anti-diagonal: the line rises to the right) granula's scan-line opening is the
footprint opening (GUIDE §1 "Lines"), so CuPy computes the same image. The 640x640
orientation map is timed with CuPy as 180 openings by skimage-style line footprints (one pixel
per step along the dominant axis, offsets rounded) plus a running maximum and arg max: off the
axes and diagonals that is the footprint operator, not the scan-line one, so that row compares
cost only.

    python3 bench/gpu_compare_lines.py --bench /tmp/build/bench/gpu/bench_gpu_lines
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile


def line_footprint(length: int, angle: float):
    """L pixels, one per step along the dominant axis, centred at L // 2 (y grows down)."""
    import numpy as np

    a = math.radians(angle % 180.0)
    steep = 45.0 < angle % 180.0 < 135.0
    offsets = []
    for i in range(length):
        t = i - length // 2
        if steep:
            dy = -t
            dx = math.floor(t * math.cos(a) / math.sin(a) + 0.5)
        else:
            dx = t
            dy = -math.floor(t * math.tan(a) + 0.5)
        offsets.append((dy, dx))
    r = max(max(abs(dy), abs(dx)) for dy, dx in offsets)
    fp = np.zeros((2 * r + 1, 2 * r + 1), dtype=bool)
    for dy, dx in offsets:
        fp[r + dy, r + dx] = True
    return fp


def cupy_ms(fn, reps: int) -> float:
    import cupy as cp

    fn(0)
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for i in range(reps):
        start.record()
        fn(i)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="/tmp/build/bench/gpu/bench_gpu_lines")
    ap.add_argument("--size", type=int, default=8000)
    ap.add_argument("--reps", type=int, default=11)
    args = ap.parse_args()
    if not os.path.isfile(args.bench):
        print(f"{args.bench} not found (build with -DGRANULA_BUILD_BENCHMARKS=ON, or pass --bench)")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "lines.json")
        cmd = [args.bench, "--size", str(args.size), "--reps", str(args.reps), "--json", out]
        print("running:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        with open(out) as f:
            rows = json.load(f)
    granula = {}
    for r in rows:
        key = r["case"]
        granula[key] = min(granula.get(key, float("inf")), r["ms"])

    import cupy as cp
    import numpy as np
    from cupyx.scipy import ndimage as cnd

    n, L = args.size, 41
    rng = np.random.default_rng(5)
    ins = [cp.asarray(rng.integers(0, 256, (n, n), dtype=np.uint8)) for _ in range(2)]
    outs = [cp.empty((n, n), dtype=cp.uint8) for _ in range(2)]
    copy_ms = cupy_ms(lambda i: cp.copyto(outs[i % 2], ins[i % 2]), args.reps)
    print(f"# cupy {cp.__version__}; {n}x{n} uint8; CuPy device-to-device copy {copy_ms:.4f} ms")
    print(f"{'case':46s} {'granula ms':>10s} {'CuPy ms':>10s} {'x faster':>9s} {'x copy':>7s}")
    results = []
    for angle in (90.0, 45.0):
        fp = cp.asarray(line_footprint(L, angle))
        ms = cupy_ms(lambda i: cnd.grey_opening(ins[i % 2], footprint=fp, output=outs[i % 2], mode="reflect"),
                     max(3, args.reps // 2))
        name = f"opening {n}x{n} uint8 {angle:g} deg L={L}"
        g = granula.get(name)
        results.append((name, g, ms))

    m = 640
    small = [cp.asarray(rng.integers(0, 256, (m, m), dtype=np.uint8)) for _ in range(2)]
    fps = [cp.asarray(line_footprint(L, 180.0 * k / 180)) for k in range(180)]
    best = cp.empty((m, m), dtype=cp.uint8)
    arg = cp.empty((m, m), dtype=cp.int32)

    def orientation_map(i: int) -> None:
        img = small[i % 2]
        best.fill(0)
        arg.fill(0)
        for k, fp in enumerate(fps):
            o = cnd.grey_opening(img, footprint=fp, mode="reflect")
            better = o > best
            cp.copyto(best, o, where=better)
            cp.copyto(arg, k, where=better)

    ms = cupy_ms(orientation_map, 3)
    name = "orientation 640x640 uint8 180 angles L=41"
    results.append((name, granula.get(name), ms))
    for name, g, c in results:
        gs = f"{g:10.3f}" if g is not None else f"{'-':>10s}"
        speed = f"{c / g:9.1f}" if g else f"{'-':>9s}"
        xc = f"{g / copy_ms:7.1f}" if g and name.startswith("opening") else f"{'-':>7s}"
        print(f"{name:46s} {gs} {c:10.3f} {speed} {xc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
