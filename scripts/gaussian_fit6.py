#!/usr/bin/env python3
"""Fits the coefficients of recursive6 and recursive5, the 6th- and 5th-order recursive
Gaussians (gaussian_plan.cpp).

The filter's response is h(|k| / sigma) (odd for order 1), with Deriche's form in sections:
    h(u) = sum_i (a_i cos(w_i u) + b_i sin(w_i u)) exp(-lam_i u),   u = |k| / sigma,
three second-order sections for recursive6; two and one first-order section (a real pole:
b = w = 0) for recursive5. One set of (a, b, lam, w) per derivative order serves every sigma
(the poles scale with 1/sigma). Order 0 is fitted to the normalised sampled Gaussian after
normalising the response to unit DC gain (as the filter does); orders 1 and 2 to scipy's sampled derivative kernels, times
sigma^(order + 1) (the plan then refits the section scales at each sigma, under the zero-DC
constraint). Least squares (scipy.optimize) over the relative l2 errors of the impulse response
at several sigma at once, in double; prints the fitted sets as C++ initialisers and the
relative l2 error of each at sigma 1 .. 1000.

    python3 scripts/gaussian_fit6.py [--filter recursive6|recursive5] [--restarts 1]
"""

import argparse

import numpy as np
import scipy.optimize as so

FIT_SIGMAS = [1, 1.5, 2, 3, 5, 10, 30, 100]
CHECK_SIGMAS = [1, 1.2, 1.5, 2, 3, 5, 10, 20, 50, 200, 1000]
# Starting points: Deriche's 4th-order sets (1993) and a third section from a fit at sigma 20.
STARTS = {
    0: [1.680, 3.735, 1.783, 0.6318, -0.6803, -0.2598, 1.723, 1.997, 0.08, -0.02, 2.1, 2.85],
    1: [-0.6472, -4.531, 1.527, 0.6719, 0.6494, 0.9557, 1.516, 2.072, 0.05, 0.1, 2.1, 2.85],
    2: [-1.331, 3.661, 1.240, 0.748, 0.3225, -1.738, 1.314, 2.166, 0.1, -0.1, 2.1, 2.85],
}


def kernel(sigma, order, r):
    """scipy's gaussian_filter1d kernel (convolution form) at k = -r .. r."""
    k = np.arange(-r, r + 1, dtype=np.float64)
    g = np.exp(-0.5 * k * k / sigma**2)
    g /= g.sum()
    if order == 1:
        g *= -k / sigma**2
    if order == 2:
        g *= k * k / sigma**4 - 1 / sigma**2
    return g


def sections(par):
    """(a, b, lam, w) of every section; a par whose length is not a multiple of 4 ends with a
    real pole's (a, lam)."""
    full = np.reshape(par[: len(par) // 4 * 4], (-1, 4))
    if len(par) % 4:
        full = np.vstack([full, [par[-2], 0.0, par[-1], 0.0]])
    return full


def response(par, sigma, order, r):
    u = np.arange(r + 1) / sigma
    h = np.zeros(r + 1)
    for a, b, lam, w in sections(par):
        h += (a * np.cos(w * u) + b * np.sin(w * u)) * np.exp(-lam * u)
    if order == 0:
        f = np.concatenate([h[:0:-1], h])
        return f / f.sum()
    h /= sigma ** (order + 1)
    if order == 1:
        h[0] = 0
        return np.concatenate([-h[:0:-1], h])
    f = np.concatenate([h[:0:-1], h])
    f[r] -= f.sum()  # the plan's centre tap makes the DC gain 0
    return f


def errors(par, order, sigmas):
    out = []
    for s in sigmas:
        r = int(14 * s) + 8
        g = kernel(s, order, r)
        out.append((response(par, s, order, r) - g) / np.linalg.norm(g))
    return out


def fit(order, restarts, rng, real_last):
    start = np.array(STARTS[order])
    if real_last:  # the third section becomes a real pole: (a, lam)
        start = np.concatenate([start[:8], [start[8], start[10]]])
    best = None
    for i in range(restarts):
        p0 = start * (1 + (0.15 * rng.normal(size=start.size) if i else 0))
        f = so.least_squares(lambda p: np.concatenate(errors(p, order, FIT_SIGMAS)), p0, xtol=1e-15, ftol=1e-15,
                             gtol=1e-15, max_nfev=4000)
        if best is None or f.cost < best.cost:
            best = f
    return best.x


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filter", choices=["recursive6", "recursive5"], default="recursive6")
    p.add_argument("--restarts", type=int, default=1, help="fits from perturbed starts too (slow); 1: Deriche's start only")
    args = p.parse_args()
    rng = np.random.default_rng(1)
    for order in range(3):
        par = fit(order, args.restarts, rng, args.filter == "recursive5")
        text = ", ".join("{" + ", ".join(f"{v:.10g}" for v in s) + "}" for s in sections(par))
        print(f"order {order}: {{{text}}}")
        errs = [np.linalg.norm(e) for e in errors(par, order, CHECK_SIGMAS)]
        print("  rel l2 at sigma " + ", ".join(f"{s:g}: {e:.2e}" for s, e in zip(CHECK_SIGMAS, errs)))


if __name__ == "__main__":
    main()
