#!/usr/bin/env python3
"""Gaussian smoothing side by side with its peers, in one run on one machine.

CPU (default): granula.gaussian (auto, recursive5, recursive6, deriche, fir) against cv2.GaussianBlur and
scipy.ndimage.gaussian_filter on an N x N float32 image, same thread count, with each
result's error against the exact sampled Gaussian (scipy in float64, truncate 8, the same
border: reflect = cv2.BORDER_REFLECT). cv2's kernel size is its own default for sigma
(ksize 0: round(sigma * 8 + 1) | 1 for float32). cv2 and granula's methods run in turn within
each repetition (median of --reps), so load on a shared machine falls on all of them alike.

GPU (--gpu): cupyx.scipy.ndimage.gaussian_filter timed with CUDA events (median of --reps
runs after warm-up, inputs rotated); granula's GPU figures come from bench_gpu_gaussian in
the same job.

    python3 bench/compare_gaussian.py [--size 4096] [--sigmas 1,2,5,20] [--threads 2] [--gpu]
"""

import argparse
import statistics
import time

import numpy as np


def timed(fn, reps):
    return interleaved([fn], reps)[0]


def interleaved(fns, reps):
    """Median ms of each function, run in turn within every repetition (A/B alternated, so a
    load that comes and goes on a shared machine falls on all of them alike)."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(reps):
        for fn, t in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [statistics.median(t) * 1e3 for t in times]


def cpu(args):
    import cv2
    import scipy.ndimage as ndi

    import granula

    cv2.setNumThreads(args.threads)
    granula.set_num_threads(args.threads)
    rng = np.random.default_rng(1)
    # A smooth image with detail: errors against the exact Gaussian are then meaningful.
    img = ndi.gaussian_filter(rng.random((args.size, args.size)), 1.5).astype(np.float32)
    img = (img - img.min()) / (img.max() - img.min())
    print(f"CPU: {args.size}x{args.size} float32, {args.threads} threads, cv2 {cv2.__version__}, "
          f"granula SIMD {granula._core.simd_target()}")
    print("| sigma | peer / method | ms | granula speed-up vs cv2 | max abs err vs exact | rel l2 err |")
    print("|---|---|---|---|---|---|")
    for sigma in args.sigmas:
        exact = ndi.gaussian_filter(img.astype(np.float64), sigma, mode="reflect", truncate=8.0)

        def err(r):
            d = r.astype(np.float64) - exact
            return np.abs(d).max(), np.linalg.norm(d) / np.linalg.norm(exact)

        # cv2 and granula's methods alternate rep by rep; scipy (slow) is timed on its own.
        out_cv = np.empty_like(img)
        outs = [np.empty_like(img) for _ in args.methods]
        fns = [lambda: cv2.GaussianBlur(img, (0, 0), sigma, dst=out_cv, borderType=cv2.BORDER_REFLECT)]
        fns += [lambda m=m, o=o: granula.gaussian(img, sigma, method=m, out=o) for m, o in zip(args.methods, outs)]
        ts = interleaved(fns, args.reps)
        t_cv = ts[0]
        rows = [("cv2.GaussianBlur", t_cv, out_cv)]
        if sigma <= args.scipy_max_sigma:
            out_sp = np.empty_like(img)
            t_sp = timed(lambda: ndi.gaussian_filter(img, sigma, output=out_sp, mode="reflect"), max(1, args.reps // 3))
            rows.append(("scipy.ndimage.gaussian_filter", t_sp, out_sp))
        rows += [(f"granula {m}", t, o) for m, t, o in zip(args.methods, ts[1:], outs)]
        for name, t, out in rows:
            mx, l2 = err(out)
            speed = f"{t_cv / t:.1f}x" if name.startswith("granula") else ""
            print(f"| {sigma:g} | {name} | {t:.1f} | {speed} | {mx:.2e} | {l2:.2e} |")


def gpu(args):
    import cupy as cp
    from cupyx.scipy import ndimage as cndi

    n = args.gpu_size
    imgs = [cp.random.default_rng(i).random((n, n), dtype=cp.float32) for i in range(3)]
    outs = [cp.empty_like(imgs[0]) for _ in range(3)]
    print(f"GPU: CuPy {cp.__version__}, {n}x{n} float32, median of {args.reps} runs (CUDA events)")
    print("| sigma | cupy gaussian_filter ms | Gpx/s |")
    print("|---|---|---|")
    for sigma in args.sigmas:
        def run(i):
            cndi.gaussian_filter(imgs[i % 3], sigma, output=outs[i % 3], mode="reflect")

        for i in range(3):
            run(i)
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for i in range(args.reps):
            start.record()
            run(i)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        ms = statistics.median(times)
        print(f"| {sigma:g} | {ms:.3f} | {n * n / ms / 1e6:.1f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--gpu-size", type=int, default=8192)
    p.add_argument("--sigmas", type=lambda s: [float(v) for v in s.split(",")], default=[1, 2, 5, 20])
    p.add_argument("--methods", type=lambda s: s.split(","), default=["auto", "recursive5", "recursive6", "deriche", "fir"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--scipy-max-sigma", type=float, default=5.0, help="skip scipy above this sigma (slow)")
    p.add_argument("--gpu", action="store_true")
    args = p.parse_args()
    gpu(args) if args.gpu else cpu(args)


if __name__ == "__main__":
    main()
