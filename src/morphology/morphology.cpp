// Front of grey morphology: validates arguments, resolves overlap, picks the backend.
#include "granula/morphology/morphology.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/border_index.hpp"
#include "granula/core/device.hpp"
#include "morphology/cpu/morphology_cpu.hpp"
#if defined(GRANULA_HAVE_CUDA)
#include "morphology/cuda/morphology_cuda.hpp"
#endif

namespace granula {
namespace {

constexpr std::array<std::string_view, 7> op_names{
#define GRANULA_NAME(name) #name,
    GRANULA_FOR_EACH_MORPHOLOGY_OP(GRANULA_NAME)
#undef GRANULA_NAME
};

template <class T, class Space>
void validate(const image_view<const T, Space>& in, const image_view<T, Space>& out, border mode) {
    if (in.empty())
        throw invalid_argument("input image is empty (" + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "); morphology needs at least 1x1 pixels");
    if (out.width() != in.width() || out.height() != in.height())
        throw invalid_argument("output is " + std::to_string(out.width()) + "x" + std::to_string(out.height()) +
                               " but the input is " + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "; they must match");
    if (mode.mode == border_mode::constant) {
        // Floats take any value they can hold, infinities and NaN included; integers their range.
        const double lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        const bool representable = std::numeric_limits<T>::is_integer
                                       ? mode.cval >= lo && mode.cval <= hi
                                       : std::isnan(mode.cval) || std::isinf(mode.cval) || std::abs(mode.cval) <= hi;
        if (!representable)
            throw invalid_argument("cval " + std::to_string(mode.cval) + " is not representable as " +
                                   std::string(pixel_traits<T>::name));
    }
}

// The elements an operation's erosions and dilations use under a convention: the convention
// is this change of the element, so every backend computes it alike.
struct stage_elements {
    structuring_element erosion, dilation;
};

stage_elements elements_for(const structuring_element& element, convention c, border b, std::int64_t width,
                            std::int64_t height) {
    // A line much longer than the image: shortened under the borders that read one value off the
    // image (structuring_element::shortened_for). Not under MATLAB's convention, whose origin
    // moves with the line's length.
    const bool one_value_off = detail::pads_with_one_value(b.mode);
    const structuring_element footprint =
        one_value_off && c != convention::matlab ? element.shortened_for(width, height) : element;
    switch (c) {
    case convention::opencv:  // cv::dilate is max f(x + b): granula's dilation by the reflection
        return {footprint, footprint.reflected()};
    case convention::matlab: {
        const auto centred = footprint.with_origin((footprint.width() - 1) / 2, (footprint.height() - 1) / 2);
        return {centred, centred};
    }
    case convention::granula:
    case convention::scipy: break;
    }
    return {footprint, footprint};
}

// The border that gives the same image as `b` and reaches the backends' fastest paths: ignore
// for reflect and nearest (mirror too where every window is centred) when both elements are
// rectangles or axis-parallel lines whose arms differ by at most one pixel. Such an element runs
// as 1-D passes along the rows and columns, each extending its input by the mode along its own
// direction only; a window that reaches k pixels past an edge (k <= its arm on that side) then
// reads, from the extension, reflect's pixels 0..k-1 or nearest's pixel 0, which its other arm
// (at least k - 1 long) already covers inside the image, so they change no minimum or maximum.
// Mirror's pixel k needs arms of equal length. (The lines' scan-line filters use the same
// argument along their lines: with_equivalent_border in lines/lines.cpp.)
border equivalent_border(const stage_elements& se, border b) {
    const bool extends = b.mode == border_mode::reflect || b.mode == border_mode::nearest || b.mode == border_mode::mirror;
    if (!extends) return b;
    const auto windows_hold_extension = [&](const structuring_element& e) {
        const auto& terms = e.decomposition();
        if (terms.size() != 1 || terms[0].offset_x != 0 || terms[0].offset_y != 0) return false;
        return std::all_of(terms[0].segments.begin(), terms[0].segments.end(), [&](const line_segment& s) {
            const std::int64_t arms_apart = std::abs(s.length - 1 - 2 * s.origin);
            return std::abs(s.dx) + std::abs(s.dy) == 1 && arms_apart <= (b.mode == border_mode::mirror ? 0 : 1);
        });
    };
    return windows_hold_extension(se.erosion) && windows_hold_extension(se.dilation) ? border{border_mode::ignore, 0.0}
                                                                                     : b;
}

}  // namespace

std::string_view to_string(morphology_op op) { return op_names[static_cast<std::size_t>(op)]; }

morphology_op parse_morphology_op(std::string_view name) {
    for (std::size_t i = 0; i < op_names.size(); ++i)
        if (op_names[i] == name) return static_cast<morphology_op>(i);
    std::string allowed;
    for (auto n : op_names) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
    throw invalid_argument("unknown morphology operation '" + std::string(name) + "'; allowed: " + allowed);
}

template <pixel T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                convention c, std::optional<border> mode) {
    const border b = mode.value_or(default_border(c));
    validate<T>(in, out, b);
    const stage_elements se = elements_for(footprint, c, b, in.width(), in.height());
    const border run_as = equivalent_border(se, b);
    if (overlaps(in, out)) {
        const host_image<T> copy_of_input = clone<T>(in);
        cpu::morphology<T>(op, copy_of_input.view(), out, se.erosion, se.dilation, run_as);
        return;
    }
    cpu::morphology<T>(op, in, out, se.erosion, se.dilation, run_as);
}

template <pixel T>
void morphology(morphology_op op, device_view<const T> in, device_view<T> out, const structuring_element& footprint,
                convention c, std::optional<border> mode, stream s) {
    const border b = mode.value_or(default_border(c));
    validate<T>(in, out, b);
    resolve_device(device::cuda);  // throws when there is no CUDA backend or device
#if defined(GRANULA_HAVE_CUDA)
    const stage_elements se = elements_for(footprint, c, b, in.width(), in.height());
    const border run_as = equivalent_border(se, b);
    if (overlaps(in, out)) {
        device_image<T> copy_of_input(in.width(), in.height());
        copy<T>(in, copy_of_input.view(), s);
        cuda::morphology<T>(op, copy_of_input.view(), out, se.erosion, se.dilation, run_as, s);
        s.synchronize();  // copy_of_input is freed on return
        return;
    }
    cuda::morphology<T>(op, in, out, se.erosion, se.dilation, run_as, s);
#else
    static_cast<void>(op), static_cast<void>(footprint), static_cast<void>(c), static_cast<void>(s);
#endif
}

#define GRANULA_INSTANTIATE(type, name)                                                                      \
    template void morphology<type>(morphology_op, host_view<const type>, host_view<type>,                    \
                                   const structuring_element&, convention, std::optional<border>);           \
    template void morphology<type>(morphology_op, device_view<const type>, device_view<type>,                \
                                   const structuring_element&, convention, std::optional<border>, stream);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula
