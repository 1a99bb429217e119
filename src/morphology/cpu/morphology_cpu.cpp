// CPU grey morphology: an element is applied as the sequence of its line segments, each a
// 1-D min/max pass (morphology_kernels.cpp); compound operations combine those.
#include "morphology/cpu/morphology_cpu.hpp"

#include <algorithm>
#include <limits>

#include "core/parallel.hpp"
#include "core/simd_dispatch.hpp"
#include "morphology/cpu/morphology_kernels.hpp"

namespace granula::cpu {
namespace {

template <class T>
detail::line_pass<T> make_pass(const line_segment& segment, bool maximum, border mode) {
    detail::line_pass<T> pass;
    // Erosion reads f(x + b) for b in [-origin, length - 1 - origin]; dilation reads f(x - b).
    const std::int64_t low = segment.origin, high = segment.length - 1 - segment.origin;
    pass.before = maximum ? high : low;
    pass.after = maximum ? low : high;
    pass.maximum = maximum;
    pass.mode = mode.mode;
    if (mode.mode == border_mode::constant) {
        pass.pad = static_cast<T>(mode.cval);
    } else if constexpr (std::numeric_limits<T>::has_infinity) {
        pass.pad = maximum ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
        pass.pad = maximum ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
    return pass;
}

template <class T>
void apply_segment(host_view<const T> in, host_view<T> out, const line_segment& segment, bool maximum, border mode) {
    const auto pass = make_pass<T>(segment, maximum, mode);
    if (segment.horizontal())
        GRANULA_SIMD_DISPATCH(horizontal_pass<T>, in, out, pass);
    else if (segment.vertical())
        GRANULA_SIMD_DISPATCH(vertical_pass<T>, in, out, pass);
    else
        throw unsupported("line segments other than horizontal and vertical are not implemented on the CPU yet");
}

// Erosion (maximum = false) or dilation by the Minkowski sum of the element's segments.
// Horizontal passes work strip by strip and may run in place; vertical ones may not. So the
// vertical segments run first and the horizontal ones in place on `out` after them, and a
// scratch image is needed only for a second vertical segment.
template <class T>
void erode_or_dilate(host_view<const T> in, host_view<T> out, const structuring_element& footprint, bool maximum,
                     border mode) {
    auto segments = footprint.decomposition();
    std::stable_partition(segments.begin(), segments.end(), [](const line_segment& s) { return !s.horizontal(); });
    if (segments.empty()) {
        copy<T>(in, out);
        return;
    }
    host_image<T> scratch;
    host_view<const T> source = in;
    for (const auto& segment : segments) {
        const bool in_place_ok = segment.horizontal() || source.data() != out.data();
        if (in_place_ok) {
            apply_segment<T>(source, out, segment, maximum, mode);
        } else {
            if (scratch.empty()) scratch = host_image<T>(in.width(), in.height());
            copy<T>(out, scratch.view());
            apply_segment<T>(scratch.view(), out, segment, maximum, mode);
        }
        source = out;
    }
}

// out = a - b, saturating at zero for unsigned types.
template <class T>
void subtract(host_view<const T> a, host_view<const T> b, host_view<T> out) {
    detail::parallel_for(a.height(), a.pixel_count(), [&](std::int64_t y) {
        const T *pa = a.row(y), *pb = b.row(y);
        T* po = out.row(y);
        for (std::int64_t x = 0; x < a.width(); ++x) {
            if constexpr (std::is_floating_point_v<T>)
                po[x] = pa[x] - pb[x];
            else
                po[x] = pa[x] > pb[x] ? static_cast<T>(pa[x] - pb[x]) : T{0};
        }
    });
}

}  // namespace

template <class T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                border mode) {
    switch (op) {
    case morphology_op::erosion: erode_or_dilate<T>(in, out, footprint, false, mode); return;
    case morphology_op::dilation: erode_or_dilate<T>(in, out, footprint, true, mode); return;
    case morphology_op::opening:
    case morphology_op::closing: {
        const bool dilate_first = op == morphology_op::closing;
        host_image<T> tmp(in.width(), in.height());
        erode_or_dilate<T>(in, tmp.view(), footprint, dilate_first, mode);
        erode_or_dilate<T>(tmp.view(), out, footprint, !dilate_first, mode);
        return;
    }
    case morphology_op::white_tophat:
    case morphology_op::black_tophat: {
        const bool white = op == morphology_op::white_tophat;
        host_image<T> filtered(in.width(), in.height());
        morphology<T>(white ? morphology_op::opening : morphology_op::closing, in, filtered.view(), footprint, mode);
        if (white)
            subtract<T>(in, filtered.view(), out);
        else
            subtract<T>(filtered.view(), in, out);
        return;
    }
    case morphology_op::gradient: {
        host_image<T> eroded(in.width(), in.height());
        erode_or_dilate<T>(in, eroded.view(), footprint, false, mode);
        erode_or_dilate<T>(in, out, footprint, true, mode);
        subtract<T>(out, eroded.view(), out);
        return;
    }
    }
}

#define GRANULA_INSTANTIATE(type, name)                                                                             \
    template void morphology<type>(morphology_op, host_view<const type>, host_view<type>, const structuring_element&, \
                                   border);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::cpu
