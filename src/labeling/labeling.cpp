// Front of labelling: validates arguments, picks the backend.
#include "granula/labeling/labeling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "core/enum_names.hpp"
#include "granula/core/device.hpp"
#include "labeling/cpu/labeling_cpu.hpp"
#if defined(GRANULA_HAVE_CUDA)
#include "labeling/cuda/labeling_cuda.hpp"
#endif

namespace granula {
namespace {

std::string size_text(std::int64_t w, std::int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

// The checks every input shares: its size against the output's, the connectivity, the size.
template <class L, class Space>
void validate_shape(std::int64_t width, std::int64_t height, const image_view<L, Space>& out, int connectivity) {
    if (width == 0 || height == 0)
        throw invalid_argument("label: the input image is empty (" + size_text(width, height) +
                               "); labelling needs at least 1x1 pixels");
    if (out.width() != width || out.height() != height)
        throw invalid_argument("label: the output is " + size_text(out.width(), out.height()) + " but the input is " +
                               size_text(width, height) + "; they must match");
    if (connectivity != 1 && connectivity != 2)
        throw invalid_argument("label: connectivity " + std::to_string(connectivity) +
                               " is not allowed; use 1 (4-neighbours) or 2 (8-neighbours)");
    // Columns and rows are int inside both backends; any pixel count is fine.
    if (width > std::numeric_limits<std::int32_t>::max() || height > std::numeric_limits<std::int32_t>::max())
        throw unsupported("label: images up to 2^31 - 1 pixels wide and high are labelled; this one is " +
                          size_text(width, height));
}

template <class T, class L, class Space>
void validate(const image_view<const T, Space>& in, const image_view<L, Space>& out, int connectivity,
              std::uint32_t background) {
    validate_shape(in.width(), in.height(), out, connectivity);
    if (background > std::numeric_limits<T>::max())
        throw invalid_argument("label: background " + std::to_string(background) + " does not fit the input's " +
                               std::to_string(8 * sizeof(T)) + "-bit pixels");
    if (overlaps(in, out)) throw invalid_argument("label: the output must not overlap the input");
}

constexpr std::pair<label_method, std::string_view> method_names[] = {{label_method::automatic, "auto"},
                                                                     {label_method::tile_merge, "tile_merge"}};

std::string float_input_message() {
    return "label: float32 input cannot be labelled; allowed pixel types: uint8, uint16, uint32 (bool as uint8)";
}

}  // namespace

std::string_view to_string(label_method method) { return detail::name_of(method_names, method); }

label_method parse_label_method(std::string_view name) {
    return detail::value_named(method_names, name, "labelling method");
}

template <label_input T, label_output L>
std::int64_t label(host_view<const T> in, host_view<L> out, int connectivity, std::uint32_t background,
                   region_statistics* statistics, label_method method) {
    validate<T>(in, out, connectivity, background);
    if (method != label_method::automatic)
        throw invalid_argument("label: method '" + std::string(to_string(method)) +
                               "' is a GPU method; the CPU labels with 'auto'");
    return cpu::label<T>(in, out, connectivity, static_cast<T>(background), statistics);
}

namespace {

// statistics: null when not wanted (they are not computed then).
template <class T, class L>
std::int64_t device_label(device_view<const T> in, device_view<L> out, int connectivity, std::uint32_t background,
                          device_region_statistics* statistics, stream s, label_method method) {
    validate<T>(in, out, connectivity, background);
    resolve_device(device::cuda);  // throws when there is no CUDA backend or device
#if defined(GRANULA_HAVE_CUDA)
    if (method == label_method::tile_merge) {
        // The seed's algorithm keeps element indices y * stride + x in the int32 labels.
        if constexpr (std::is_same_v<L, std::int32_t>) {
            if (out.stride() * out.height() <= std::numeric_limits<std::int32_t>::max())
                return cuda::label_tile_merge<T>(in, out, connectivity, static_cast<T>(background), statistics, s);
        }
        throw unsupported("label: the tile_merge method labels images of fewer than 2^31 elements (row stride x "
                          "height) into int32 labels; this one is " + size_text(in.width(), in.height()) + " into " +
                          (std::is_same_v<L, std::int32_t> ? "int32" : "int64") + " labels");
    }
    return cuda::label<T>(in, out, connectivity, static_cast<T>(background), statistics, s);
#else
    static_cast<void>(statistics), static_cast<void>(s), static_cast<void>(method);
    return 0;
#endif
}

}  // namespace

template <label_input T, label_output L>
std::int64_t label(device_view<const T> in, device_view<L> out, int connectivity, std::uint32_t background,
                   device_region_statistics& statistics, stream s, label_method method) {
    return device_label<T>(in, out, connectivity, background, &statistics, s, method);
}

template <label_input T, label_output L>
std::int64_t label(device_view<const T> in, device_view<L> out, int connectivity, std::uint32_t background,
                   region_statistics* statistics, stream s, label_method method) {
    if (!statistics) return device_label<T>(in, out, connectivity, background, nullptr, s, method);
    device_region_statistics on_device;
    const std::int64_t n = device_label<T>(in, out, connectivity, background, &on_device, s, method);
    *statistics = on_device.download(s);
    return n;
}

region_statistics device_region_statistics::download(stream s) const {
    region_statistics st;
    const std::size_t n = static_cast<std::size_t>(size_);
    auto get = [&](auto& host, const auto* device) {
        host.resize(n);
        const std::size_t bytes = n * sizeof(*device);
        detail::copy_2d(host.data(), bytes, device, bytes, bytes, 1, detail::copy_direction::device_to_host, s);
    };
    get(st.area, area());
    get(st.min_row, min_row());
    get(st.min_col, min_col());
    get(st.max_row, max_row());
    get(st.max_col, max_col());
    get(st.centroid_row, centroid_row());
    get(st.centroid_col, centroid_col());
    get(st.value, value());
    if (mean_intensity()) {
        get(st.mean_intensity, mean_intensity());
        get(st.min_intensity, min_intensity());
        get(st.max_intensity, max_intensity());
    }
    s.synchronize();
    return st;
}

template <label_output L>
std::int64_t label(const_host_bit_view in, host_view<L> out, int connectivity, region_statistics* statistics) {
    validate_shape(in.width(), in.height(), out, connectivity);
    if (overlaps(in, out)) throw invalid_argument("label: the output must not overlap the input");
    return cpu::label(in, out, connectivity, statistics);
}

namespace {

// labelled(view) with `in` as a typed view of its pixel type; float32 is an invalid_argument.
template <class AnyView, class Labelled>
std::int64_t label_typed(const AnyView& in, Labelled labelled) {
    return visit_pixel_type(in.type, [&](auto tag) -> std::int64_t {
        using T = typename decltype(tag)::type;
        if constexpr (label_input<T>)
            return labelled(in.template as<const T>());
        else
            throw invalid_argument(float_input_message());
    });
}

template <class View>
using pixel_of = std::remove_const_t<typename View::value_type>;

}  // namespace

template <label_output L>
std::int64_t label(const any_host_view& in, host_view<L> out, int connectivity, std::uint32_t background,
                   region_statistics* statistics, label_method method) {
    return label_typed(in, [&](auto view) {
        return label<pixel_of<decltype(view)>>(view, out, connectivity, background, statistics, method);
    });
}

template <label_output L>
std::int64_t label(const any_device_view& in, device_view<L> out, int connectivity, std::uint32_t background,
                   region_statistics* statistics, stream s, label_method method) {
    return label_typed(in, [&](auto view) {
        return label<pixel_of<decltype(view)>>(view, out, connectivity, background, statistics, s, method);
    });
}

template <label_output L>
std::int64_t label(const any_device_view& in, device_view<L> out, int connectivity, std::uint32_t background,
                   device_region_statistics& statistics, stream s, label_method method) {
    return label_typed(in, [&](auto view) {
        return label<pixel_of<decltype(view)>>(view, out, connectivity, background, statistics, s, method);
    });
}

namespace {

template <class L>
void host_intensity_statistics(host_view<const L> labels, const any_host_view& intensity,
                               region_statistics& statistics) {
    if (intensity.width != labels.width() || intensity.height != labels.height())
        throw invalid_argument("intensity_statistics: the intensity image is " +
                               size_text(intensity.width, intensity.height) + " but the labels are " +
                               size_text(labels.width(), labels.height()) + "; they must match");
    const std::size_t n = static_cast<std::size_t>(statistics.size());
    std::vector<double> sum(n, 0), lo(n, std::numeric_limits<double>::infinity()),
        hi(n, -std::numeric_limits<double>::infinity());
    visit_pixel_type(intensity.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const host_view<const T> v = intensity.as<const T>();
        for (std::int64_t y = 0; y < labels.height(); ++y) {
            const L* l = labels.row(y);
            const T* p = v.row(y);
            for (std::int64_t x = 0; x < labels.width(); ++x) {
                if (l[x] <= 0) continue;
                const std::size_t c = static_cast<std::size_t>(l[x] - 1);
                if (c >= n)
                    throw invalid_argument("intensity_statistics: label " + std::to_string(l[x]) +
                                           " exceeds the statistics' " + std::to_string(n) + " components");
                const double d = static_cast<double>(p[x]);
                sum[c] += d;
                // NaN pixels make the mean NaN and are skipped by min and max (numpy's nanmin/nanmax).
                lo[c] = std::fmin(lo[c], d);
                hi[c] = std::fmax(hi[c], d);
            }
        }
    });
    statistics.mean_intensity.resize(n);
    for (std::size_t c = 0; c < n; ++c) statistics.mean_intensity[c] = sum[c] / static_cast<double>(statistics.area[c]);
    statistics.min_intensity = std::move(lo);
    statistics.max_intensity = std::move(hi);
}

template <class L>
void device_intensity_statistics(device_view<const L> labels, const any_device_view& intensity,
                                 device_region_statistics& statistics, stream s) {
    if (intensity.width != labels.width() || intensity.height != labels.height())
        throw invalid_argument("intensity_statistics: the intensity image is " +
                               size_text(intensity.width, intensity.height) + " but the labels are " +
                               size_text(labels.width(), labels.height()) + "; they must match");
    resolve_device(device::cuda);  // throws when there is no CUDA backend or device
#if defined(GRANULA_HAVE_CUDA)
    visit_pixel_type(intensity.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        cuda::intensity_statistics<T, L>(labels, intensity.as<const T>(), statistics, s);
    });
#else
    static_cast<void>(statistics), static_cast<void>(s);
#endif
}

}  // namespace

void intensity_statistics(host_view<const std::int32_t> labels, const any_host_view& intensity,
                          region_statistics& statistics) {
    host_intensity_statistics(labels, intensity, statistics);
}

void intensity_statistics(host_view<const std::int64_t> labels, const any_host_view& intensity,
                          region_statistics& statistics) {
    host_intensity_statistics(labels, intensity, statistics);
}

void intensity_statistics(device_view<const std::int32_t> labels, const any_device_view& intensity,
                          device_region_statistics& statistics, stream s) {
    device_intensity_statistics(labels, intensity, statistics, s);
}

void intensity_statistics(device_view<const std::int64_t> labels, const any_device_view& intensity,
                          device_region_statistics& statistics, stream s) {
    device_intensity_statistics(labels, intensity, statistics, s);
}

#define GRANULA_INSTANTIATE_TYPED(type, labels)                                                               \
    template std::int64_t label<type, labels>(host_view<const type>, host_view<labels>, int, std::uint32_t,     \
                                              region_statistics*, label_method);                                \
    template std::int64_t label<type, labels>(device_view<const type>, device_view<labels>, int, std::uint32_t, \
                                              region_statistics*, stream, label_method);                        \
    template std::int64_t label<type, labels>(device_view<const type>, device_view<labels>, int, std::uint32_t, \
                                              device_region_statistics&, stream, label_method);
#define GRANULA_INSTANTIATE(labels)                                                                            \
    GRANULA_INSTANTIATE_TYPED(std::uint8_t, labels)                                                           \
    GRANULA_INSTANTIATE_TYPED(std::uint16_t, labels)                                                          \
    GRANULA_INSTANTIATE_TYPED(std::uint32_t, labels)                                                          \
    template std::int64_t label<labels>(const_host_bit_view, host_view<labels>, int, region_statistics*);        \
    template std::int64_t label<labels>(const any_host_view&, host_view<labels>, int, std::uint32_t,             \
                                        region_statistics*, label_method);                                      \
    template std::int64_t label<labels>(const any_device_view&, device_view<labels>, int, std::uint32_t,         \
                                        region_statistics*, stream, label_method);                              \
    template std::int64_t label<labels>(const any_device_view&, device_view<labels>, int, std::uint32_t,         \
                                        device_region_statistics&, stream, label_method);
GRANULA_INSTANTIATE(std::int32_t)
GRANULA_INSTANTIATE(std::int64_t)
#undef GRANULA_INSTANTIATE
#undef GRANULA_INSTANTIATE_TYPED

}  // namespace granula
