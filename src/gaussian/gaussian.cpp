// Front of the Gaussian filters: validates the parameters, builds one plan per axis, picks
// the backend. No pixel loops here.
#include "granula/gaussian/gaussian.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "core/enum_names.hpp"
#include "gaussian/cpu/gaussian_cpu.hpp"
#include "gaussian/gaussian_plan.hpp"
#include "granula/core/device.hpp"
#if defined(GRANULA_HAVE_CUDA)
#include "gaussian/cuda/gaussian_cuda.hpp"
#endif

namespace granula {
namespace {

constexpr std::array<std::pair<gaussian_method, std::string_view>, 7> method_names{{
    {gaussian_method::automatic, "auto"},
    {gaussian_method::fir, "fir"},
    {gaussian_method::deriche, "deriche"},
    {gaussian_method::recursive6, "recursive6"},
    {gaussian_method::recursive5, "recursive5"},
    {gaussian_method::yvv1995, "yvv1995"},
    {gaussian_method::yvv2002, "yvv2002"},
}};

constexpr std::array<std::pair<gaussian_split, std::string_view>, 3> split_names{{
    {gaussian_split::one_way, "one_way"},
    {gaussian_split::two_way, "two_way"},
    {gaussian_split::two_way_exact, "two_way_exact"},
}};

// Ten significant digits: 1e+300, not its 300 digits; 2.5, not 2.500000.
std::string num(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", v);
    return buffer;
}

void validate_params(const gaussian_params& p, device backend) {
    if (!(std::isfinite(p.truncate) && p.truncate > 0))
        throw invalid_argument("truncate is " + num(p.truncate) + "; it must be a finite number > 0");
    for (int axis = 0; axis < 2; ++axis) {
        const std::string where = " on axis " + std::to_string(axis);
        const double sigma = p.sigma[axis];
        if (!(std::isfinite(sigma) && sigma >= 0))
            throw invalid_argument("sigma" + where + " is " + num(sigma) + "; it must be a finite number >= 0");
        if (sigma > gaussian_max_sigma)
            throw invalid_argument("sigma" + where + " is " + num(sigma) + "; granula takes sigma up to " +
                                   num(gaussian_max_sigma));
        if (p.mode[axis] == border_mode::ignore)
            throw invalid_argument("border mode 'ignore'" + where +
                                   " is not defined for the Gaussian; allowed: constant, nearest, reflect, mirror, wrap");
        if (p.order[axis] < 0 || p.order[axis] > 2)
            throw invalid_argument("order" + where + " is " + std::to_string(p.order[axis]) +
                                   "; allowed: 0, 1, 2");
        if (p.radius[axis] < -1)
            throw invalid_argument("radius" + where + " is " + std::to_string(p.radius[axis]) +
                                   "; it must be >= 0, or -1 to take it from truncate");
        if (sigma == 0) continue;
        const gaussian_method m = resolve_gaussian_method(p.method, sigma, backend);
        const bool yvv = m == gaussian_method::yvv1995 || m == gaussian_method::yvv2002;
        if (yvv && p.order[axis] != 0)
            throw invalid_argument("order" + where + " is " + std::to_string(p.order[axis]) + " but method '" +
                                   std::string(to_string(m)) +
                                   "' computes order 0 only; use 'recursive5', 'recursive6', 'deriche' or 'fir' for derivatives");
        if (!yvv && p.split != gaussian_split::one_way)
            throw invalid_argument("split '" + std::string(to_string(p.split)) + "' applies to the yvv methods, but" +
                                   where + " the method is '" + std::string(to_string(m)) + "'");
        if ((m == gaussian_method::recursive6 || m == gaussian_method::recursive5) && backend == device::cuda)
            throw unsupported("method '" + std::string(to_string(m)) + "'" + where +
                              " runs on the CPU only for now; on the GPU use 'deriche' or 'fir' (or 'auto')");
        const bool fir_taps = m == gaussian_method::fir || (yvv && p.split == gaussian_split::two_way);
        const double radius = detail::fir_radius(sigma, p.truncate, p.radius[axis]);
        if (fir_taps && radius > static_cast<double>(gaussian_max_radius))
            throw invalid_argument("the fir radius" + where + " is " + num(radius) +
                                   "; granula takes radii up to " + std::to_string(gaussian_max_radius) +
                                   " (lower truncate or radius, or use a recursive method)");
        if (m == gaussian_method::yvv2002 && sigma < 0.5)
            throw invalid_argument("sigma" + where + " is " + num(sigma) +
                                   "; the yvv2002 coefficients are defined for sigma >= 0.5");
    }
}

template <class T, class Space, class U>
void validate(const image_view<const T, Space>& in, const image_view<U, Space>& out, const gaussian_params& p) {
    if (in.empty())
        throw invalid_argument("input image is empty (" + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "); the Gaussian needs at least 1x1 pixels");
    if (out.width() != in.width() || out.height() != in.height())
        throw invalid_argument("output is " + std::to_string(out.width()) + "x" + std::to_string(out.height()) +
                               " but the input is " + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "; they must match");
    validate_params(p, std::is_same_v<Space, device_memory> ? device::cuda : device::cpu);
}

std::array<detail::axis_plan, 2> plans(const gaussian_params& p, device where) {
    std::array<detail::axis_plan, 2> out;
    for (int a = 0; a < 2; ++a)
        out[a] = detail::make_axis_plan(resolve_gaussian_method(p.method, p.sigma[a], where), p.sigma[a], p.order[a],
                                        p.mode[a], p.cval, p.truncate, p.radius[a], p.split);
    return out;
}

}  // namespace

std::string_view to_string(gaussian_method method) { return detail::name_of(method_names, method); }

gaussian_method parse_gaussian_method(std::string_view name) {
    if (name == "yvv") return gaussian_method::yvv1995;
    for (const auto& [m, n] : method_names)
        if (n == name) return m;
    std::string allowed;
    for (const auto& entry : method_names) allowed += std::string(entry.second) + ", ";
    throw invalid_argument("unknown Gaussian method '" + std::string(name) + "'; allowed: " + allowed +
                           "yvv (= yvv1995)");
}

std::string_view to_string(gaussian_split split) { return detail::name_of(split_names, split); }

gaussian_split parse_gaussian_split(std::string_view name) {
    return detail::value_named(split_names, name, "Gaussian split");
}

gaussian_method resolve_gaussian_method(gaussian_method method, double sigma, device where) {
    if (method != gaussian_method::automatic) return method;
    const double fir_below = where == device::cuda ? gaussian_fir_max_sigma_cuda : gaussian_fir_max_sigma;
    if (sigma < fir_below) return gaussian_method::fir;
    return where == device::cuda ? gaussian_method::deriche : gaussian_method::recursive5;
}

template <pixel T, pixel U>
    requires(std::is_same_v<U, float> || std::is_same_v<U, T>)
void gaussian(host_view<const T> in, host_view<U> out, const gaussian_params& params) {
    validate(in, out, params);
    if (params.split == gaussian_split::two_way)
        throw unsupported("the two_way split (the seed paper's approximate scheme) runs on the CUDA backend only; "
                          "the CPU runs the sequential recursion (one_way or two_way_exact)");
    const auto plan = plans(params, device::cpu);
    if (overlaps(in, out)) {
        const host_image<T> copy_of_input = clone<T>(in);
        cpu::gaussian<T, U>(copy_of_input.view(), out, plan[0], plan[1]);
        return;
    }
    cpu::gaussian<T, U>(in, out, plan[0], plan[1]);
}

template <pixel T, pixel U>
    requires(std::is_same_v<U, float> || std::is_same_v<U, T>)
void gaussian(device_view<const T> in, device_view<U> out, const gaussian_params& params, stream s) {
    validate(in, out, params);
    resolve_device(device::cuda);  // throws when there is no CUDA backend or device
#if defined(GRANULA_HAVE_CUDA)
    const auto plan = plans(params, device::cuda);
    if (overlaps(in, out)) {
        device_image<T> copy_of_input(in.width(), in.height());
        copy<T>(in, copy_of_input.view(), s);
        cuda::gaussian<T, U>(copy_of_input.view(), out, plan[0], plan[1], s);
        s.synchronize();  // copy_of_input is freed on return
        return;
    }
    cuda::gaussian<T, U>(in, out, plan[0], plan[1], s);
#else
    static_cast<void>(s);
#endif
}

#define GRANULA_INSTANTIATE_PAIR(T, U)                                                                          \
    template void gaussian<T, U>(host_view<const T>, host_view<U>, const gaussian_params&);                    \
    template void gaussian<T, U>(device_view<const T>, device_view<U>, const gaussian_params&, stream);
GRANULA_INSTANTIATE_PAIR(std::uint8_t, std::uint8_t)
GRANULA_INSTANTIATE_PAIR(std::uint8_t, float)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, std::uint16_t)
GRANULA_INSTANTIATE_PAIR(std::uint16_t, float)
GRANULA_INSTANTIATE_PAIR(float, float)
#undef GRANULA_INSTANTIATE_PAIR

}  // namespace granula
