#!/usr/bin/env python3
"""granula.label (CPU) side by side with OpenCV and scipy in the same run.

YACCLAB-style random images (g x g blocks, each foreground with probability density) of
--size^2 uint8 pixels, 8-connectivity. For each category: cv2.connectedComponents and
cv2.connectedComponentsWithStats (OpenCV's default algorithm, Spaghetti), granula.label with
and without statistics, and scipy.ndimage.label; each the median of --reps runs, with 1 thread
and with --threads threads (cv2.setNumThreads and granula.set_num_threads set alike). Every
granula result is checked against cv2's count first.

    PYTHONPATH=<build>/python python3 bench/compare_labeling.py [--size 4096] [--reps 5]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def blocks(rng, n, density, g):
    m = -(-n // g)
    small = (rng.random((m, m)) < density).astype(np.uint8)
    return np.repeat(np.repeat(small, g, 0), g, 1)[:n, :n].copy()


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--scipy", action="store_true", help="also time scipy.ndimage.label (slow)")
    args = parser.parse_args()
    import cv2
    import granula
    from scipy import ndimage

    rng = np.random.default_rng(6)
    n = args.size
    cats = [(d, g) for g in (1, 2, 4, 8, 16) for d in (0.1, 0.3, 0.5, 0.7, 0.9)] + [(1.0, 1), (0.0, 1)]
    print(f"# {n}x{n} uint8, 8-connectivity, median of {args.reps}; cv2 {cv2.__version__}; {granula.build_info()}")
    header = "image      threads  cv2 ms  granula ms  ratio | cv2+stats ms  granula+stats ms  ratio"
    if args.scipy:
        header += " | scipy ms"
    print(header)
    for d, g in cats:
        image = blocks(rng, n, d, g)
        expected = cv2.connectedComponents(image, connectivity=8, ltype=cv2.CV_32S)[0] - 1
        assert granula.label(image, 2, return_num=True)[1] == expected
        for threads in sorted({1, args.threads}):
            cv2.setNumThreads(threads)
            granula.set_num_threads(threads)
            t_cv = median_ms(lambda: cv2.connectedComponents(image, connectivity=8, ltype=cv2.CV_32S), args.reps)
            t_gr = median_ms(lambda: granula.label(image, 2), args.reps)
            t_cvs = median_ms(lambda: cv2.connectedComponentsWithStats(image, connectivity=8, ltype=cv2.CV_32S),
                              args.reps)
            t_grs = median_ms(lambda: granula.label(image, 2, statistics=True), args.reps)
            name = "all ones" if d == 1.0 else "all zeros" if d == 0.0 else f"d{int(d * 100):02d} g{g}"
            line = (f"{name:10s} {threads:7d} {t_cv:7.1f} {t_gr:11.1f} {t_cv / t_gr:6.2f} | {t_cvs:12.1f} "
                    f"{t_grs:17.1f} {t_cvs / t_grs:6.2f}")
            if args.scipy and threads == 1:
                line += f" | {median_ms(lambda: ndimage.label(image, np.ones((3, 3))), 1):8.1f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
