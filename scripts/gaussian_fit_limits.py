#!/usr/bin/env python3
"""How close a Deriche-form recursive filter can get to the sampled Gaussian, by order.

Fits the impulse response h(|k|) (sums of damped cosines, as in gaussian_plan.cpp, normalised
to unit DC gain) to the normalised sampled Gaussian by least squares, with restarts, in double:
4th order (two second-order sections, Deriche's form: the best fit is what any choice of
coefficients can reach) and 6th order (three sections); the all-pole cascade of 6th and 8th
order (causal 1/A(z), then the same anticausally, as Young-van Vliet at higher order: fewer
operations per sample, one multiply-add per pole; also run in float32 on the signal, as the
CPU would run it); and cv2's truncated FIR for scale.
Prints the relative l2 error of the impulse response and of a smooth random signal (white
noise smoothed with sigma 1.5, like bench/compare_gaussian.py's image) filtered by it,
against the exact Gaussian.

    python3 scripts/gaussian_fit_limits.py [--sigmas 2,5,20] [--restarts 20]
"""

import argparse

import numpy as np
import scipy.ndimage as ndi
import scipy.optimize as so
from scipy.signal import lfilter

DERICHE = [1.680, 3.735, 1.783, 0.6318, -0.6803, -0.2598, 1.723, 1.997]  # Deriche 1993, order 0


def response(par, sigma, r):
    k = np.arange(r + 1)
    h = np.zeros(r + 1)
    for a, b, lam, w in np.reshape(par, (-1, 4)):
        h += (a * np.cos(w * k / sigma) + b * np.sin(w * k / sigma)) * np.exp(-lam * k / sigma)
    f = np.concatenate([h[:0:-1], h])
    return f / f.sum()


def all_pole_response(par, sigma, r):
    """Causal then anticausal 1/A(z), A's poles exp((-lam +- i w) / sigma) for each (lam, w) pair."""
    c = np.zeros(3 * r + 1)
    c[0] = 1.0
    # One section at a time: the product polynomial's direct form loses double precision at
    # large sigma, where the poles crowd near 1.
    for lam, w in np.reshape(par, (-1, 2)):
        z = np.exp(complex(-lam, w) / sigma)
        c = lfilter([1.0], [1.0, -2 * z.real, abs(z) ** 2], c)
    f = np.correlate(c, c, mode="full")[len(c) - 1 - r:len(c) + r]  # f(k) = sum_j c(j) c(j + |k|)
    return f / f.sum()


def all_pole_float32(par, sigma, x):
    """The cascade run in float32 as a SIMD sweep would run it: direct-form sections
    y[k] = g x[k] - a1 y[k-1] - a2 y[k-2], each of unit DC gain, causal then anticausal."""
    sections = []
    for lam, w in np.reshape(par, (-1, 2)):
        z = np.exp(complex(-lam, w) / sigma)
        a1, a2 = -2 * z.real, abs(z) ** 2
        sections.append(np.array([1 + a1 + a2, -a1, -a2], np.float32))
    y = x.astype(np.float32)
    for reverse in (False, True):
        for g, m1, m2 in sections:
            out = np.empty_like(y)
            order = range(len(y) - 1, -1, -1) if reverse else range(len(y))
            y1 = y2 = y[order[0]]  # steady state of a constant start
            for k in order:
                y1, y2 = np.float32(np.float32(g * y[k]) + m1 * y1 + m2 * y2), y1
                out[k] = y1
            y = out
    return y.astype(np.float64)


def sampled(sigma, r):
    k = np.arange(-r, r + 1)
    g = np.exp(-0.5 * k * k / sigma**2)
    return g / g.sum()


def best_fit(start, sigma, r, g, rng, restarts, spread, model=response):
    best = None
    for i in range(restarts):
        p0 = np.array(start) * (1 + (spread * rng.normal(size=len(start)) if i else 0))
        fit = so.least_squares(lambda p: model(p, sigma, r) - g, p0, xtol=1e-15, ftol=1e-15, gtol=1e-15,
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

        def errors(par, model=response):
            f = model(par, sigma, r)
            y = np.convolve(x, f, mode="same")[2 * r:-2 * r]
            return np.linalg.norm(f - g) / np.linalg.norm(g), np.linalg.norm(y - exact) / np.linalg.norm(exact)

        third = [0.08, -0.02, 2.1, 2.85]  # a third section's start, from a fit at sigma 20
        rows = [("Deriche 4th order (gaussian_plan)", DERICHE),
                ("4th order, best fit", best_fit(DERICHE, sigma, r, g, rng, args.restarts, 0.2)),
                ("6th order, best fit", best_fit(DERICHE + third, sigma, r, g, rng, args.restarts, 0.1))]
        for name, par in rows:
            e_imp, e_sig = errors(par)
            print(f"| {sigma:g} | {name} | {e_imp:.2e} | {e_sig:.2e} |")
        # All-pole starts: (lam, w) pairs from earlier fits at sigma 5.
        for name, start in [("all-pole 6th order cascade, best fit", [2.09, 0.58, 1.87, 0.94, 1.39, 2.23]),
                            ("all-pole 8th order cascade, best fit", [1.51, 0.42, 1.47, 1.27, 1.38, 2.17, 1.22, 3.23])]:
            par = best_fit(start, sigma, r, g, rng, args.restarts, 0.1, all_pole_response)
            e_imp, e_sig = errors(par, all_pole_response)
            y32 = all_pole_float32(par, sigma, x)[2 * r:-2 * r]
            e32 = np.linalg.norm(y32 - exact) / np.linalg.norm(exact)
            print(f"| {sigma:g} | {name} | {e_imp:.2e} | {e_sig:.2e} (run in float32: {e32:.2e}) |")
        # cv2.GaussianBlur's float32 kernel: radius 4 sigma, normalised.
        rc = int(round(sigma * 8 + 1)) | 1
        fir = np.pad(sampled(sigma, rc // 2), r - rc // 2)
        y = np.convolve(x, fir, mode="same")[2 * r:-2 * r]
        print(f"| {sigma:g} | FIR truncated at 4 sigma (cv2's kernel size) | "
              f"{np.linalg.norm(fir - g) / np.linalg.norm(g):.2e} | {np.linalg.norm(y - exact) / np.linalg.norm(exact):.2e} |")


if __name__ == "__main__":
    main()
