// Brute-force Gaussian for the tests: direct convolution with the normalised sampled Gaussian
// (times scipy's derivative polynomial) in double, every outside sample looked up by its own
// border rule. Shares no code with the library (not its taps, not its border mapping).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"

namespace granula::reference {

// Position i of a line of length n under scipy's modes; -1 means cval.
inline std::int64_t gaussian_source(std::int64_t i, std::int64_t n, border_mode mode) {
    while (i < 0 || i >= n) {
        switch (mode) {
        case border_mode::constant: return -1;
        case border_mode::nearest: return i < 0 ? 0 : n - 1;
        case border_mode::wrap: i = i < 0 ? i + n : i - n; break;
        case border_mode::reflect: i = i < 0 ? -i - 1 : 2 * n - 1 - i; break;  // d c b a | a b c d
        case border_mode::mirror:                                             // d c b | a b c d
            if (n == 1) return 0;
            i = i < 0 ? -i : 2 * n - 2 - i;
            break;
        default: return -1;
        }
    }
    return i;
}

// The kernel g_r(j), j = -r..r, as in scipy: out[k] = sum_j g(j) x[k - j] (a convolution),
// g(j) = phi(j) q(j), phi normalised to sum 1, q = 1, -j/s^2, j^2/s^4 - 1/s^2.
inline std::vector<double> gaussian_kernel(double sigma, int order, std::int64_t r) {
    std::vector<double> g;
    double sum = 0;
    for (std::int64_t j = -r; j <= r; ++j) {
        g.push_back(std::exp(-double(j) * double(j) / (2 * sigma * sigma)));
        sum += g.back();
    }
    for (std::int64_t j = -r; j <= r; ++j) {
        double& v = g[static_cast<std::size_t>(j + r)];
        v /= sum;
        const double s2 = sigma * sigma;
        if (order == 1) v *= -double(j) / s2;
        if (order == 2) v *= double(j) * double(j) / (s2 * s2) - 1 / s2;
    }
    return g;
}

// One line: out[k] = sum_j g(j) x[k - j] with the border rule.
inline std::vector<double> gaussian_line(const std::vector<double>& x, double sigma, int order, std::int64_t r,
                                         border_mode mode, double cval) {
    const auto n = static_cast<std::int64_t>(x.size());
    if (sigma == 0) return x;
    const auto g = gaussian_kernel(sigma, order, r);
    std::vector<double> out(x.size());
    for (std::int64_t k = 0; k < n; ++k) {
        double acc = 0;
        for (std::int64_t j = -r; j <= r; ++j) {
            const std::int64_t s = gaussian_source(k - j, n, mode);
            acc += g[static_cast<std::size_t>(j + r)] * (s < 0 ? cval : x[static_cast<std::size_t>(s)]);
        }
        out[static_cast<std::size_t>(k)] = acc;
    }
    return out;
}

// 2-D: axis 0 (along columns) then axis 1 (along rows); radius r[a] per axis. Row-major result.
template <class T>
std::vector<double> gaussian(host_view<const T> in, const double sigma[2], const int order[2],
                             const std::int64_t r[2], const border_mode mode[2], double cval) {
    const std::int64_t w = in.width(), h = in.height();
    std::vector<double> img(static_cast<std::size_t>(w * h));
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) img[static_cast<std::size_t>(y * w + x)] = double(in(y, x));
    for (std::int64_t x = 0; x < w; ++x) {
        std::vector<double> col(static_cast<std::size_t>(h));
        for (std::int64_t y = 0; y < h; ++y) col[static_cast<std::size_t>(y)] = img[static_cast<std::size_t>(y * w + x)];
        col = gaussian_line(col, sigma[0], order[0], r[0], mode[0], cval);
        for (std::int64_t y = 0; y < h; ++y) img[static_cast<std::size_t>(y * w + x)] = col[static_cast<std::size_t>(y)];
    }
    for (std::int64_t y = 0; y < h; ++y) {
        std::vector<double> row(img.begin() + y * w, img.begin() + (y + 1) * w);
        row = gaussian_line(row, sigma[1], order[1], r[1], mode[1], cval);
        std::copy(row.begin(), row.end(), img.begin() + y * w);
    }
    return img;
}

}  // namespace granula::reference
