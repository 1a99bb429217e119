// Coefficients of the Gaussian filters (host, double precision).
#include "gaussian/gaussian_plan.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>

#include "granula/core/error.hpp"

namespace granula::detail {
namespace {

using cplx = std::complex<double>;

// Samples beyond which the recursive filters' responses have decayed below float precision:
// the extension of reflect, mirror and wrap is run through the recursion this far.
constexpr double decay_tolerance = 1e-7;
// Floor on the extension so that the recursions' start states read padded samples only.
constexpr std::int64_t min_recursive_pad = 3;

// Fits of the Gaussian (order 0) and its derivatives for x >= 0 as sums of damped cosines, one
// term per second-order section (b = w = 0: a real pole, one first-order section):
//   h(x) = sum_i (a_i cos(w_i x/s) + b_i sin(w_i x/s)) e^(-lam_i x/s)
struct section_fit {
    double a, b, lam, w;
};
// deriche: Deriche (1993), 4th order.
constexpr section_fit deriche_fits[3][2] = {
    {{1.680, 3.735, 1.783, 0.6318}, {-0.6803, -0.2598, 1.723, 1.997}},
    {{-0.6472, -4.531, 1.527, 0.6719}, {0.6494, 0.9557, 1.516, 2.072}},
    {{-1.331, 3.661, 1.240, 0.748}, {0.3225, -1.738, 1.314, 2.166}},
};
// recursive6: 6th order, fitted by scripts/gaussian_fit6.py (relative l2 of the impulse response
// in double: order 0 2e-6 .. 4e-6, order 1 2e-5 .. 3e-5, order 2 1e-4 .. 2e-4, sigma 1 .. 1000).
constexpr section_fit recursive6_fits[3][3] = {
    {{2.21859417, 5.227181931, 2.202937948, 0.5236005411},
     {-1.649445616, -0.6849521285, 2.169019876, 1.60873302},
     {0.1155103812, -0.02923174781, 2.093514888, 2.846978003}},
    {{-0.9397303759, -4.357172715, 1.986041439, 0.5483244005},
     {1.070381997, 1.287952446, 1.97746205, 1.668128904},
     {-0.1306115908, -0.05525427363, 1.930365786, 2.922031858}},
    {{-0.2796943196, 4.755572507, 1.740905841, 0.5805234772},
     {-0.2468324759, -2.421692852, 1.768486754, 1.735987153},
     {0.1274089961, 0.2494880636, 1.75284262, 3.001163257}},
};

// recursive5: two second-order sections and a first-order one, fitted by
// `scripts/gaussian_fit6.py --filter recursive5 --restarts 4` (relative l2 of the impulse
// response in double: order 0 2.5e-5 .. 3.7e-5, order 1 1.5e-4 .. 2.4e-4, order 2 6e-4 .. 1.4e-3,
// sigma 1 .. 1000).
constexpr section_fit recursive5_fits[3][3] = {
    {{-2.206309967, 2.306624797, 1.991951346, 1.152733152},
     {0.01904022453, -0.3302469225, 1.92128651, 2.446184073},
     {3.083308934, 0, 2.014627214, 0}},
    {{1.880808925, -0.7455527412, 1.790709925, 1.209796096},
     {-0.1875552452, 0.2062804676, 1.760399851, 2.524022857},
     {-1.693567285, 0, 1.78813383, 0}},
    {{-2.403484868, -0.4119586691, 1.559988757, 1.26997157},
     {0.5023658851, -0.06970366822, 1.568326974, 2.591800632},
     {1.503151633, 0, 1.518731184, 0}},
};

std::int64_t pad_for(border_mode mode, std::int64_t decay) {
    const bool periodic = mode == border_mode::reflect || mode == border_mode::mirror || mode == border_mode::wrap;
    return periodic ? std::max(decay, min_recursive_pad) : min_recursive_pad;
}

bool is_real(const section_fit& f) { return f.w == 0 && f.b == 0; }

// The kernels take a first-order section only as the last one.
deriche_coeffs make_deriche(const section_fit* fits, int sections, double sigma, int order, std::int64_t& decay) {
    constexpr int max_s = deriche_coeffs::max_sections;
    // h(k) = Re(alpha_i z_i^k) summed over the sections.
    cplx z[max_s], alpha[max_s];
    double h0 = 0, sum = 0;  // h(0) and the sum of h over k >= 0
    for (int i = 0; i < sections; ++i) {
        z[i] = std::exp(cplx(-fits[i].lam, fits[i].w) / sigma);
        alpha[i] = cplx(fits[i].a, -fits[i].b);
        h0 += alpha[i].real();
        sum += (alpha[i] / (1.0 - z[i])).real();
    }
    // The full response F(k) = h(|k|), odd (sign(k) h(|k|)) for order 1.
    const double side = order == 1 ? -1.0 : 1.0;  // anticausal sign
    double scale[max_s], direct = 0;
    std::fill_n(scale, max_s, 1.0 / (2 * sum - h0));  // order 0: unit DC gain
    if (order > 0) {
        // Derivatives: one scale per section (and for order 2 the centre tap) fitted to scipy's
        // sampled derivative kernel by least squares, under the constraint of an exact zero DC
        // gain. Normalising a moment instead, or fixing the DC at the centre tap alone, puts
        // Deriche's order 2 4% off, growing with sigma (measured); this fit gives 0.6% at every sigma.
        const auto r = static_cast<std::int64_t>(std::ceil(20 * sigma)) + 4;
        const auto t = gaussian_fir_taps(sigma, order, r);  // correlation weights: t[r + j] = F(-j)
        const int n = sections + (order == 2 ? 1 : 0);       // parameters: section scales (+ centre)
        const int rows = n + (order == 2 ? 1 : 0);           // normal equations (+ DC constraint row)
        constexpr int cols = max_s + 3;                      // up to max_s + 2 rows, then the right side
        double m[max_s + 2][cols] = {};
        for (std::int64_t k = -r; k <= r; ++k) {
            const std::int64_t a = k < 0 ? -k : k;
            double col[max_s + 1] = {};
            for (int i = 0; i < sections; ++i) {
                col[i] = (alpha[i] * std::pow(z[i], static_cast<double>(a))).real() * (k < 0 ? side : 1.0);
                if (order == 1 && k == 0) col[i] = 0;  // the centre of an odd kernel is set to 0 below
            }
            if (order == 2) col[sections] = k == 0 ? 1.0 : 0.0;
            const double target = t[static_cast<std::size_t>(r - k)];
            for (int u = 0; u < n; ++u) {
                for (int v = 0; v < n; ++v) m[u][v] += col[u] * col[v];
                m[u][cols - 1] += col[u] * target;
                if (order == 2) m[u][n] += col[u], m[n][u] += col[u];  // Lagrange row/column: sum F = 0
            }
        }
        for (int u = 0; u < rows; ++u) {  // Gauss-Jordan with partial pivoting
            int best = u;
            for (int v = u + 1; v < rows; ++v)
                if (std::abs(m[v][u]) > std::abs(m[best][u])) best = v;
            std::swap(m[u], m[best]);
            for (int v = 0; v < rows; ++v) {
                if (v == u) continue;
                const double f = m[v][u] / m[u][u];
                for (int w = 0; w < cols; ++w) m[v][w] -= f * m[u][w];
            }
        }
        auto solution = [&](int u) { return m[u][cols - 1] / m[u][u]; };
        for (int i = 0; i < sections; ++i) {
            scale[i] = solution(i);
            direct -= scale[i] * alpha[i].real();
        }
        if (order == 2) direct = solution(sections);
    }
    deriche_coeffs c{};
    c.sections = sections;
    c.real_last = is_real(fits[sections - 1]);
    c.direct = static_cast<float>(direct);
    decay = 0;
    for (int i = 0; i < sections; ++i) {
        const double r = std::abs(z[i]);
        const double theta = std::arg(z[i]);
        const cplx a = alpha[i] * scale[i];
        const cplx beta = a * z[i];
        c.b0[i] = static_cast<float>(a.real());
        c.c1[i] = static_cast<float>(side * beta.real());
        if (is_real(fits[i])) {  // y[k] = z y[k-1] + b0 x[k]; e1 = 1 - z without cancellation
            c.b1[i] = c.c2[i] = c.a2[i] = 0;
            c.e1[i] = static_cast<float>(-std::expm1(-fits[i].lam / sigma));
        } else {
            // 1 + a1 + a2 with a1 = -2 r cos(theta), a2 = r^2, written without cancellation.
            const double e1 = (1 - r) * (1 - r) + 4 * r * std::sin(theta / 2) * std::sin(theta / 2);
            c.b1[i] = static_cast<float>(-(a * std::conj(z[i])).real());
            c.c2[i] = static_cast<float>(-side * (beta * std::conj(z[i])).real());
            c.e1[i] = static_cast<float>(e1);
            c.a2[i] = static_cast<float>(r * r);
        }
        // Steady states from the float coefficients the kernels use.
        c.causal_gain[i] = static_cast<float>((double(c.b0[i]) + c.b1[i]) / c.e1[i]);
        c.anticausal_gain[i] = static_cast<float>((double(c.c1[i]) + c.c2[i]) / c.e1[i]);
        decay = std::max(decay, static_cast<std::int64_t>(std::ceil(std::log(decay_tolerance) / std::log(r))));
    }
    return c;
}

// Young, van Vliet (1995) and Young, van Vliet, van Ginkel (2002) coefficients, unit DC gain.
void yvv_coefficients(double sigma, bool v2002, double b[4]) {
    if (!v2002) {
        const double q = sigma < 0.5   ? 0.1147705018520355224609375
                         : sigma < 2.5 ? 3.97156 - 4.14554 * std::sqrt(1 - 0.26891 * sigma)
                                       : 0.98711 * sigma - 0.96330;
        const double q2 = q * q, q3 = q2 * q;
        const double b0 = 1.57825 + 2.44413 * q + 1.4281 * q2 + 0.422205 * q3;
        b[1] = (2.44413 * q + 2.85619 * q2 + 1.26661 * q3) / b0;
        b[2] = -(1.4281 * q2 + 1.26661 * q3) / b0;
        b[3] = 0.422205 * q3 / b0;
    } else {
        const double m0 = 1.16680, m1 = 1.10783, m2 = 1.40586;
        const double q = sigma >= 3.556 ? 0.9804 * (sigma - 3.556) + 2.5091 : 0.0561 * sigma * sigma + 0.5784 * sigma - 0.2568;
        const double scale = (m0 + q) * (m1 * m1 + m2 * m2 + 2 * m1 * q + q * q);
        b[1] = q * (2 * m0 * m1 + m1 * m1 + m2 * m2 + (2 * m0 + 4 * m1) * q + 3 * q * q) / scale;
        b[2] = -q * q * (m0 + 2 * m1 + 3 * q) / scale;
        b[3] = q * q * q / scale;
    }
    b[0] = 1 - (b[1] + b[2] + b[3]);
}

yvv_coeffs make_yvv(double sigma, bool v2002, std::int64_t& decay) {
    double b[4];
    yvv_coefficients(sigma, v2002, b);
    yvv_coeffs c{};
    c.B = b[0];
    c.b1 = b[1];
    c.b2 = b[2];
    c.b3 = b[3];
    // Decay length: where the causal impulse response's remaining mass falls below tolerance. The
    // response is run twice, for its total and then for the tail, so that memory stays O(1).
    const auto limit = static_cast<std::int64_t>(200 * sigma + 200);
    const auto response = [&](auto&& visit) {
        double w1 = 0, w2 = 0, w3 = 0;
        for (std::int64_t k = 0; k < limit; ++k) {
            const double w = (k == 0 ? double(c.B) : 0.0) + c.b1 * w1 + c.b2 * w2 + c.b3 * w3;
            if (!visit(std::abs(w))) return;
            w3 = w2, w2 = w1, w1 = w;
        }
    };
    double total = 0;
    response([&](double h) { return total += h, true; });
    double tail = total;
    decay = 0;
    response([&](double h) {
        if (tail <= decay_tolerance * total) return false;
        tail -= h, ++decay;
        return true;
    });
    // Triggs-Sdika: run the deviations forward (zero input) well past the decay length, then
    // the anticausal filter back from zero state; read its state at N, N+1, N+2.
    const std::int64_t K = decay + 16;
    for (int j = 0; j < 3; ++j) {
        std::vector<double> w(static_cast<std::size_t>(K + 3), 0.0);  // w[i] holds position N - 3 + i
        w[static_cast<std::size_t>(2 - j)] = 1.0;                      // deviation of w[N-1-j]
        for (std::int64_t i = 3; i < K + 3; ++i)
            w[i] = c.b1 * w[i - 1] + c.b2 * w[i - 2] + c.b3 * w[i - 3];
        std::vector<double> v(static_cast<std::size_t>(K + 6), 0.0);
        for (std::int64_t i = K + 2; i >= 3; --i) v[i] = c.B * w[i] + c.b1 * v[i + 1] + c.b2 * v[i + 2] + c.b3 * v[i + 3];
        for (int i = 0; i < 3; ++i) c.m[i][j] = v[static_cast<std::size_t>(3 + i)];
    }
    return c;
}

}  // namespace

double fir_radius(double sigma, double truncate, std::int64_t radius) {
    return radius >= 0 ? static_cast<double>(radius) : std::floor(truncate * sigma + 0.5);
}

std::vector<double> gaussian_fir_taps(double sigma, int order, std::int64_t radius) {
    const auto n = static_cast<std::size_t>(2 * radius + 1);
    std::vector<double> phi(n);
    const double s2 = sigma * sigma;
    for (std::int64_t j = -radius; j <= radius; ++j) phi[static_cast<std::size_t>(j + radius)] = std::exp(-0.5 * j * j / s2);
    const double sum = std::accumulate(phi.begin(), phi.end(), 0.0);
    for (std::int64_t j = -radius; j <= radius; ++j) {
        double& w = phi[static_cast<std::size_t>(j + radius)];
        w /= sum;
        // scipy's kernel q(x) phi(x), reversed for correlation: weight of x[k + j] is q(-j) phi(j).
        if (order == 1) w *= j / s2;
        if (order == 2) w *= j * j / (s2 * s2) - 1 / s2;
    }
    return phi;
}

axis_plan make_axis_plan(gaussian_method method, double sigma, int order, border_mode mode, double cval,
                         double truncate, std::int64_t radius, gaussian_split split) {
    axis_plan p;
    p.mode = mode;
    p.cval = static_cast<float>(cval);
    p.order = order;
    if (sigma == 0) return p;  // identity
    switch (method) {
    case gaussian_method::fir: {
        p.kind = gaussian_kind::fir;
        const auto r = static_cast<std::int64_t>(fir_radius(sigma, truncate, radius));
        const auto taps = gaussian_fir_taps(sigma, order, r);
        p.taps.assign(taps.begin(), taps.end());
        p.pad = r;
        break;
    }
    case gaussian_method::deriche:
    case gaussian_method::recursive6:
    case gaussian_method::recursive5: {
        p.kind = gaussian_kind::deriche;
        std::int64_t decay = 0;
        if (method == gaussian_method::deriche)
            p.deriche = make_deriche(deriche_fits[order], 2, sigma, order, decay);
        else
            p.deriche = make_deriche(method == gaussian_method::recursive6 ? recursive6_fits[order] : recursive5_fits[order],
                                     3, sigma, order, decay);
        p.pad = pad_for(mode, decay);
        break;
    }
    default: {
        p.kind = gaussian_kind::yvv;
        std::int64_t decay = 0;
        p.yvv = make_yvv(sigma, method == gaussian_method::yvv2002, decay);
        p.pad = pad_for(mode, decay);
        p.split = split;
        if (split == gaussian_split::two_way) {
            const auto r = static_cast<std::int64_t>(fir_radius(sigma, truncate, radius));
            const auto taps = gaussian_fir_taps(sigma, 0, r);
            p.taps.assign(taps.begin(), taps.end());
        }
        break;
    }
    }
    return p;
}

}  // namespace granula::detail
