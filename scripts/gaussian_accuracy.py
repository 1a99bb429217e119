#!/usr/bin/env python3
"""Accuracy report of granula's Gaussian methods (writes the tables of docs/gaussian.md).

For every method and sigma: relative l2 and max abs error of the impulse response (one line,
mode 'constant', an impulse far from the borders) against the normalised sampled Gaussian, and
the PSNR of a real image (data/camera.png, float32, both axes, mode 'reflect') against exact FIR
(scipy.ndimage.gaussian_filter in float64, truncate 12, the same border).

With --two-way (needs CuPy and a CUDA device), also the seed paper's Table 2 setting (Lee et al.
2014): PSNR (MAX 255) between the sampled Gaussian (fir), the one-way yvv1995 recursion and the
paper's two-way split, and the exact two-way split, at the paper's image sizes (camera.png as
the 512x512 SD image, resized to HD and Full HD) and its "filter window sizes" 3, 30, 90 (the
sigma of the coefficient formula), border 'nearest' (the paper replicates the edge), with the
GPU time of each scheme (CUDA events, median).

    PYTHONPATH=<build>/python python3 scripts/gaussian_accuracy.py [--two-way]
"""

import argparse
import pathlib

import numpy as np
import scipy.ndimage as ndi

import granula

SIGMAS = [0.5, 1, 2, 5, 10, 50, 200]
METHODS = ["fir", "deriche", "recursive6", "recursive5", "yvv1995", "yvv2002"]


def sampled(sigma, radius):
    k = np.arange(-radius, radius + 1)
    g = np.exp(-0.5 * k * k / sigma**2)
    return g / g.sum()


def impulse_errors(method, sigma):
    r = int(np.ceil(14 * sigma)) + 8
    line = np.zeros((1, 2 * r + 1), np.float32)
    line[0, r] = 1
    got = granula.gaussian(line, (0, sigma), mode="constant", method=method, radius=(0, r))[0].astype(np.float64)
    want = sampled(sigma, r)
    d = got - want
    return np.linalg.norm(d) / np.linalg.norm(want), np.abs(d).max()


def psnr(method, sigma, image):
    exact = ndi.gaussian_filter(image.astype(np.float64), sigma, mode="reflect", truncate=12.0)
    got = granula.gaussian(image, sigma, method=method).astype(np.float64)
    mse = np.mean((got - exact) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def psnr_between(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def gpu_ms(run, reps):
    import cupy as cp

    run()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def two_way_table(camera, reps):
    import cupy as cp
    import cv2

    splits = ["one_way", "two_way", "two_way_exact"]
    print("| image | window (sigma) | one-way vs two-way | FIR vs one-way | FIR vs two-way "
          "| one-way vs exact two-way | one-way ms | two-way ms | exact two-way ms | granula deriche ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, w, h in [("SD 512x512", 512, 512), ("HD 1280x720", 1280, 720), ("Full HD 1920x1080", 1920, 1080)]:
        image = camera if (w, h) == camera.shape[::-1] else cv2.resize(camera, (w, h), interpolation=cv2.INTER_CUBIC)
        d = cp.asarray(image)
        out = cp.empty(image.shape, cp.float32)
        for sigma in [3, 30, 90]:
            def run(method, split="one_way"):
                return granula.gaussian(d, sigma, mode="nearest", method=method, split=split, out=out)

            fir = cp.asnumpy(run("fir"))
            got = {s: cp.asnumpy(run("yvv1995", s)) for s in splits}
            ms = {s: gpu_ms(lambda s=s: run("yvv1995", s), reps) for s in splits}
            deriche_ms = gpu_ms(lambda: run("deriche"), reps)
            print(f"| {name} | {sigma} | {psnr_between(got['one_way'], got['two_way']):.1f} "
                  f"| {psnr_between(fir, got['one_way']):.1f} | {psnr_between(fir, got['two_way']):.1f} "
                  f"| {psnr_between(got['one_way'], got['two_way_exact']):.1f} | {ms['one_way']:.3f} "
                  f"| {ms['two_way']:.3f} | {ms['two_way_exact']:.3f} | {deriche_ms:.3f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--two-way", action="store_true", help="also the seed paper's Table 2 setting on the GPU")
    parser.add_argument("--reps", type=int, default=20, help="GPU timing repetitions (median)")
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    from granula import _core  # noqa: F401  (the extension must be importable)
    import cv2

    camera = cv2.imread(str(root / "data" / "camera.png"), cv2.IMREAD_GRAYSCALE)
    if args.two_way:
        if not granula.cuda_available():
            raise SystemExit("--two-way needs a CUDA device")
        two_way_table(camera, args.reps)
        print()
    image = camera.astype(np.float32)
    print("| method | sigma | impulse rel l2 | impulse max abs | camera PSNR dB vs exact |")
    print("|---|---|---|---|---|")
    for method in METHODS:
        for sigma in SIGMAS:
            if method == "yvv2002" and sigma < 0.5:
                continue
            l2, mx = impulse_errors(method, sigma)
            p = psnr(method, sigma, image)
            print(f"| {method} | {sigma:g} | {l2:.2e} | {mx:.2e} | {p:.1f} |")


if __name__ == "__main__":
    main()
