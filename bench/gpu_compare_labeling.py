#!/usr/bin/env python3
"""CuPy's cupyx.scipy.ndimage.label on the same YACCLAB-style categories as bench_gpu_labeling.

Random density x granularity images (numpy generator, same definition as the C++ benchmark:
g x g blocks, each foreground with probability density), 8-connectivity, CUDA events, one
warm-up then the median of --reps runs, alternating two inputs. Run it beside
bench/gpu/bench_gpu_labeling in the same job to compare Gpx/s.

    python3 bench/gpu_compare_labeling.py [--size 8192] [--reps 15]
"""
from __future__ import annotations

import argparse

import numpy as np


def blocks(rng: np.random.Generator, n: int, density: float, g: int) -> np.ndarray:
    m = -(-n // g)
    small = (rng.random((m, m)) < density).astype(np.uint8)
    return np.repeat(np.repeat(small, g, axis=0), g, axis=1)[:n, :n].copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    import cupy as cp
    from cupyx.scipy import ndimage as cnd

    n = args.size
    structure = cp.ones((3, 3), dtype=bool)
    rng = np.random.default_rng(6)
    cats = [(f"d{int(d * 100):02d} g{g}", d, g) for g in (1, 2, 4, 8, 16) for d in (0.1, 0.3, 0.5, 0.7, 0.9)]
    cats += [("all ones", 1.0, 1), ("all zeros", 0.0, 1)]
    print(f"# cupyx.scipy.ndimage.label {n}x{n} uint8, 8-connectivity, median of {args.reps}; cupy {cp.__version__}")
    print(f"{'image':18s} {'components':>10s} {'ms':>10s} {'Gpx/s':>10s}")
    out = [cp.empty((n, n), dtype=cp.int32) for _ in range(2)]
    for name, d, g in cats:
        ins = [cp.asarray(blocks(rng, n, d, g)) for _ in range(2)]
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        count = cnd.label(ins[0], structure, output=out[0])
        times = []
        for i in range(args.reps):
            start.record()
            count = cnd.label(ins[i % 2], structure, output=out[i % 2])
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        ms = float(np.median(times))
        print(f"{name:18s} {int(count):10d} {ms:10.3f} {n * n / ms / 1e6:10.1f}", flush=True)


if __name__ == "__main__":
    main()
