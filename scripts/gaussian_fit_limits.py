#!/usr/bin/env python3
"""How close a Deriche-form recursive filter can get to the sampled Gaussian, by order.

Fits the impulse response h(|k|) (sums of damped cosines, as in gaussian_plan.cpp, normalised
to unit DC gain) to the normalised sampled Gaussian by least squares, with restarts, in double:
4th order (two second-order sections, Deriche's form: the best fit is what any choice of
coefficients can reach) and 6th order (three sections), and cv2's truncated FIR for scale.
Prints the relative l2 error of the impulse response and of a smooth random signal (white
noise smoothed with sigma 1.5, like bench/compare_gaussian.py's image) filtered by it,
against the exact Gaussian.

    python3 scripts/gaussian_fit_limits.py [--sigmas 2,5,20] [--restarts 20]
"""

import argparse

import numpy as np
import scipy.ndimage as ndi
import scipy.optimize as so

DERICHE = [1.680, 3.735, 1.783, 0.6318, -0.6803, -0.2598, 1.723, 1.997]  # Deriche 1993, order 0


def response(par, sigma, r):
    k = np.arange(r + 1)
    h = np.zeros(r + 1)
    for a, b, lam, w in np.reshape(par, (-1, 4)):
        h += (a * np.cos(w * k / sigma) + b * np.sin(w * k / sigma)) * np.exp(-lam * k / sigma)
    f = np.concatenate([h[:0:-1], h])
    return f / f.sum()


def sampled(sigma, r):
    k = np.arange(-r, r + 1)
    g = np.exp(-0.5 * k * k / sigma**2)
    return g / g.sum()


def best_fit(start, sigma, r, g, rng, restarts, spread):
    best = None
    for i in range(restarts):
        p0 = np.array(start) * (1 + (spread * rng.normal(size=len(start)) if i else 0))
        fit = so.least_squares(lambda p: response(p, sigma, r) - g, p0, xtol=1e-15, ftol=1e-15, gtol=1e-15,
                               max_nfev=4000)
        if best is None or fit.cost < best.cost:
            best = fit
    return best.x


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sigmas", type=lambda s: [float(v) for v in s.split(",")], default=[2, 5, 20])
    p.add_argument("--restarts", type=int, default=20)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    x = ndi.gaussian_filter1d(rng.random(20000), 1.5)
    print("| sigma | filter | impulse rel l2 | smooth signal rel l2 |")
    print("|---|---|---|---|")
    for sigma in args.sigmas:
        r = int(14 * sigma) + 8
        g = sampled(sigma, r)
        exact = np.convolve(x, g, mode="same")[2 * r:-2 * r]

        def errors(par):
            f = response(par, sigma, r)
            y = np.convolve(x, f, mode="same")[2 * r:-2 * r]
            return np.linalg.norm(f - g) / np.linalg.norm(g), np.linalg.norm(y - exact) / np.linalg.norm(exact)

        third = [0.08, -0.02, 2.1, 2.85]  # a third section's start, from a fit at sigma 20
        rows = [("Deriche 4th order (gaussian_plan)", DERICHE),
                ("4th order, best fit", best_fit(DERICHE, sigma, r, g, rng, args.restarts, 0.2)),
                ("6th order, best fit", best_fit(DERICHE + third, sigma, r, g, rng, args.restarts, 0.1))]
        for name, par in rows:
            e_imp, e_sig = errors(par)
            print(f"| {sigma:g} | {name} | {e_imp:.2e} | {e_sig:.2e} |")
        # cv2.GaussianBlur's float32 kernel: radius 4 sigma, normalised.
        rc = int(round(sigma * 8 + 1)) | 1
        fir = np.pad(sampled(sigma, rc // 2), r - rc // 2)
        y = np.convolve(x, fir, mode="same")[2 * r:-2 * r]
        print(f"| {sigma:g} | FIR truncated at 4 sigma (cv2's kernel size) | "
              f"{np.linalg.norm(fir - g) / np.linalg.norm(g):.2e} | {np.linalg.norm(y - exact) / np.linalg.norm(exact):.2e} |")


if __name__ == "__main__":
    main()
