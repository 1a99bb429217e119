#!/usr/bin/env python3
"""Accuracy report of granula's Gaussian methods (writes the tables of docs/gaussian.md).

For every method and sigma: relative l2 and max abs error of the impulse response (one line,
mode 'constant', an impulse far from the borders) against the normalised sampled Gaussian, and
the PSNR of a real image (data/camera.png, float32, both axes, mode 'reflect') against exact FIR
(scipy.ndimage.gaussian_filter in float64, truncate 12, the same border).

    PYTHONPATH=<build>/python python3 scripts/gaussian_accuracy.py [--markdown]
"""

import argparse
import pathlib

import numpy as np
import scipy.ndimage as ndi

import granula

SIGMAS = [0.5, 1, 2, 5, 10, 50, 200]
METHODS = ["fir", "deriche", "yvv1995", "yvv2002"]


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


def main():
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    from granula import _core  # noqa: F401  (the extension must be importable)
    import cv2

    image = cv2.imread(str(root / "data" / "camera.png"), cv2.IMREAD_GRAYSCALE).astype(np.float32)
    print("| method | sigma | impulse rel l2 | impulse max abs | camera PSNR dB vs exact |")
    print("|---|---|---|---|---|")
    for method in METHODS:
        for sigma in SIGMAS:
            if method == "yvv2002" and sigma < 0.5:
                continue
            l2, mx = impulse_errors(method, sigma)
            p = psnr(method, sigma, image) if sigma <= 50 else float("nan")
            print(f"| {method} | {sigma:g} | {l2:.2e} | {mx:.2e} | {p:.1f} |")


if __name__ == "__main__":
    main()
