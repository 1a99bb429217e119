// Front of binary morphology: validates arguments, turns a structuring element
// into one pass per line segment (the grey path's order and border handling),
// and runs them on the backend of the views' memory space.
#include "granula/binary/binary.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "binary/bit_pass.hpp"
#include "binary/cpu/binary_kernels.hpp"
#include "core/parallel.hpp"
#include "core/simd_dispatch.hpp"
#include "granula/core/device.hpp"
#include "granula/morphology/morphology.hpp"
#if defined(GRANULA_HAVE_CUDA)
#include "binary/cuda/binary_cuda.hpp"
#endif

namespace granula {

// --- bit images
// -------------------------------------------------------------------------------------
namespace detail {

void check_bit_view_shape(std::int64_t width, std::int64_t height, std::int64_t stride_words, const void* data) {
    if (width < 0 || height < 0)
        throw invalid_argument("bit image size must not be negative, got " + std::to_string(width) + "x" +
                               std::to_string(height));
    if (stride_words < words_for_width(width))
        throw invalid_argument("bit image row stride of " + std::to_string(stride_words) + " words is too small for " +
                               std::to_string(width) + " pixels: a row needs at least " +
                               std::to_string(words_for_width(width)) + " 64-bit words");
    if (data == nullptr && width > 0 && height > 0)
        throw invalid_argument("non-empty bit image view with a null data pointer");
}

bit_word* allocate_bits(host_memory, std::size_t words) {
    auto* p = static_cast<bit_word*>(allocate(host_memory{}, words * sizeof(bit_word)));
    std::memset(p, 0, words * sizeof(bit_word));
    return p;
}

bit_word* allocate_bits(device_memory, std::size_t words) {
    auto* p = static_cast<bit_word*>(allocate(device_memory{}, words * sizeof(bit_word)));
#if defined(GRANULA_HAVE_CUDA)
    try {
        cuda::zero_words(p, words);
    } catch (...) {
        deallocate(device_memory{}, p);
        throw;
    }
#endif
    return p;
}

std::int64_t bit_row_stride(host_memory, std::int64_t width) { return words_for_width(width); }
std::int64_t bit_row_stride(device_memory, std::int64_t width) { return (words_for_width(width) + 15) / 16 * 16; }

}  // namespace detail

namespace {

template <class A, class B>
void check_same_size(const A& a, const B& b, const char* what) {
    if (a.width() != b.width() || a.height() != b.height())
        throw invalid_argument(std::string(what) + ": the output is " + std::to_string(b.width()) + "x" +
                               std::to_string(b.height()) + " but the input is " + std::to_string(a.width()) + "x" +
                               std::to_string(a.height()) + "; they must match");
}

}  // namespace

void copy(const_host_bit_view src, host_bit_view dst) {
    check_same_size(src, dst, "bit image copy");
    for (std::int64_t y = 0; y < src.height(); ++y) std::copy_n(src.row(y), src.row_words(), dst.row(y));
}

void copy(const_host_bit_view src, device_bit_view dst, stream s) {
    check_same_size(src, dst, "bit image upload");
    if (src.empty()) return;
    detail::copy_2d(dst.data(), static_cast<std::size_t>(dst.stride()) * sizeof(bit_word), src.data(),
                    static_cast<std::size_t>(src.stride()) * sizeof(bit_word),
                    static_cast<std::size_t>(src.row_words()) * sizeof(bit_word),
                    static_cast<std::size_t>(src.height()), detail::copy_direction::host_to_device, s);
}

void copy(const_device_bit_view src, host_bit_view dst, stream s) {
    check_same_size(src, dst, "bit image download");
    if (src.empty()) return;
    detail::copy_2d(dst.data(), static_cast<std::size_t>(dst.stride()) * sizeof(bit_word), src.data(),
                    static_cast<std::size_t>(src.stride()) * sizeof(bit_word),
                    static_cast<std::size_t>(src.row_words()) * sizeof(bit_word),
                    static_cast<std::size_t>(src.height()), detail::copy_direction::device_to_host, s);
}

void copy(const_device_bit_view src, device_bit_view dst, stream s) {
    check_same_size(src, dst, "bit image device copy");
    if (src.empty()) return;
    detail::copy_2d(dst.data(), static_cast<std::size_t>(dst.stride()) * sizeof(bit_word), src.data(),
                    static_cast<std::size_t>(src.stride()) * sizeof(bit_word),
                    static_cast<std::size_t>(src.row_words()) * sizeof(bit_word),
                    static_cast<std::size_t>(src.height()), detail::copy_direction::device_to_device, s);
}

device_bit_image upload(const_host_bit_view src, stream s) {
    device_bit_image out(src.width(), src.height());
    copy(src, out.view(), s);
    return out;
}

host_bit_image download(const_device_bit_view src, stream s) {
    host_bit_image out(src.width(), src.height());
    copy(src, out.view(), s);
    s.synchronize();
    return out;
}

// --- backends
// -------------------------------------------------------------------------------------
namespace {

using detail::bit_pass;

// The binary kernels have one more copy than most: AVX-512 with VBMI2 (funnel shifts of 8
// words at a time), GRANULA_SIMD_DISPATCH_AVX512.

// The CPU and CUDA backends behind one interface, so the composition below is
// written once.
template <class Space>
struct backend;

template <>
struct backend<host_memory> {
    static void pass(const_host_bit_view in, host_bit_view out, const bit_pass& p, stream) {
        GRANULA_SIMD_DISPATCH_AVX512(bit_segment_pass, in, out, p);
    }
    static bool rectangle(const_host_bit_view in, host_bit_view out, const bit_pass& v, const bit_pass& h, stream) {
        if (v.dir != bit_pass::direction::vertical || h.dir != bit_pass::direction::horizontal) return false;
        GRANULA_SIMD_DISPATCH_AVX512(bit_rectangle_pass, in, out, v, h);
        return true;
    }
    static void complement(const_host_bit_view in, host_bit_view out, stream) {
        GRANULA_SIMD_DISPATCH_AVX512(bit_complement, in, out);
    }
    static void intersect(const_host_bit_view a, host_bit_view out, stream) {
        GRANULA_SIMD_DISPATCH_AVX512(bit_and, a, out);
    }
    static void synchronize(stream) {}
};

template <>
struct backend<device_memory> {
#if defined(GRANULA_HAVE_CUDA)
    static void pass(const_device_bit_view in, device_bit_view out, const bit_pass& p, stream s) {
        cuda::bit_segment_pass(in, out, p, s);
    }
    static bool rectangle(const_device_bit_view in, device_bit_view out, const bit_pass& v, const bit_pass& h,
                          stream s) {
        return cuda::rectangle_pass(in, out, v, h, s);
    }
    static void complement(const_device_bit_view in, device_bit_view out, stream s) {
        cuda::bit_complement(in, out, s);
    }
    static void intersect(const_device_bit_view a, device_bit_view out, stream s) { cuda::bit_and(a, out, s); }
#else
    [[noreturn]] static void no_cuda() {
        throw unsupported(
            "binary morphology on the device: this granula build has "
            "no CUDA backend");
    }
    static void pass(const_device_bit_view, device_bit_view, const bit_pass&, stream) { no_cuda(); }
    static bool rectangle(const_device_bit_view, device_bit_view, const bit_pass&, const bit_pass&, stream) {
        no_cuda();
    }
    static void complement(const_device_bit_view, device_bit_view, stream) { no_cuda(); }
    static void intersect(const_device_bit_view, device_bit_view, stream) { no_cuda(); }
#endif
    // Temporaries are freed on return, after the work queued on them.
    static void synchronize(stream s) { s.synchronize(); }
};

// The pass of one segment, as the grey path applies it (morphology_cpu.cpp
// make_pass): erosion reads f(x + b) for b in [-origin, length - 1 - origin],
// dilation f(x - b).
bit_pass make_pass(const line_segment& segment, bool dilate, border mode, std::int64_t width, std::int64_t height) {
    bit_pass p;
    p.dilate = dilate;
    p.mode = mode.mode;
    p.pad = mode.mode == border_mode::constant ? mode.cval != 0 : !dilate;
    const std::int64_t low = segment.origin, high = segment.length - 1 - segment.origin;
    if (segment.horizontal() || segment.vertical()) {
        p.dir = segment.horizontal() ? bit_pass::direction::horizontal : bit_pass::direction::vertical;
        const std::int64_t n = segment.horizontal() ? width : height;
        // Every border mode repeats within 2n pixels, so longer arms read nothing
        // new.
        p.before = std::min(dilate ? high : low, 2 * n);
        p.after = std::min(dilate ? low : high, 2 * n);
        return p;
    }
    if (mode.mode != border_mode::ignore && mode.mode != border_mode::constant)
        throw unsupported("binary morphology supports border mode '" + std::string(to_string(mode.mode)) +
                          "' for horizontal and vertical line segments only; a "
                          "segment with step (" +
                          std::to_string(segment.dx) + ", " + std::to_string(segment.dy) +
                          ") needs mode ignore or constant");
    p.dir = bit_pass::direction::general;
    p.length = segment.length;
    p.dx = segment.dx;
    p.dy = segment.dy;
    p.start = dilate ? -high : -low;
    return p;
}

void validate_border(border mode) {
    if (mode.mode == border_mode::constant && mode.cval != 0 && mode.cval != 1)
        throw invalid_argument("cval " + std::to_string(mode.cval) +
                               " is not a binary value; with mode constant a "
                               "binary image needs cval 0 or 1");
}

template <class Space>
void validate(const const_bit_view<Space>& in, const bit_view<bit_word, Space>& out, border mode) {
    if (in.empty())
        throw invalid_argument("input bit image is empty (" + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "); binary morphology needs at least 1x1 pixels");
    check_same_size(in, out, "binary morphology");
    validate_border(mode);
}

// Elements that are not separable (lines at other angles, disks, masks) go through the grey
// path on 0/1 pixels for now: correct and identical, not yet bit-parallel.
template <class Space>
void erode_or_dilate_unpacked(const_bit_view<Space> in, bit_view<bit_word, Space> out,
                              const structuring_element& footprint, bool dilate, border mode, stream s) {
    const morphology_op op = dilate ? morphology_op::dilation : morphology_op::erosion;
    if constexpr (std::is_same_v<Space, host_memory>) {
        host_image<std::uint8_t> pixels(in.width(), in.height()), result(in.width(), in.height());
        unpack<std::uint8_t>(in, pixels.view());
        morphology<std::uint8_t>(op, pixels.view(), result.view(), footprint, mode);
        pack<std::uint8_t>(result.view(), out);
    } else {
        device_image<std::uint8_t> pixels(in.width(), in.height()), result(in.width(), in.height());
        unpack<std::uint8_t>(in, pixels.view(), s);
        morphology<std::uint8_t>(op, pixels.view(), result.view(), footprint, mode, s);
        pack<std::uint8_t>(result.view(), out, 0, s);
        s.synchronize();  // the temporaries are freed on return
    }
}

// Erosion or dilation as one pass per segment (vertical ones first, as the grey
// path), through two temporaries: passes never run in place.
template <class Space>
void erode_or_dilate(const_bit_view<Space> in, bit_view<bit_word, Space> out, const structuring_element& footprint,
                     bool dilate, border mode, stream s) {
    if (!footprint.separable()) {
        erode_or_dilate_unpacked<Space>(in, out, footprint, dilate, mode, s);
        return;
    }
    auto segments = footprint.decomposition().front().segments;
    std::stable_partition(segments.begin(), segments.end(), [](const line_segment& seg) { return !seg.horizontal(); });
    if (segments.empty()) segments.push_back(line_segment{1, 1, 0, 0});  // identity: a copy through a 1-bit window
    std::vector<bit_pass> passes;
    for (const auto& segment : segments) passes.push_back(make_pass(segment, dilate, mode, in.width(), in.height()));
    // A rectangle in one pass where the backend can (the two passes read and
    // write the image twice).
    if (passes.size() == 2 && backend<Space>::rectangle(in, out, passes[0], passes[1], s)) return;
    bit_image<Space> temps[2];
    const_bit_view<Space> source = in;
    for (std::size_t i = 0; i < passes.size(); ++i) {
        bit_view<bit_word, Space> target = out;
        if (i + 1 < passes.size()) {
            auto& t = temps[i % 2];
            if (t.empty()) t = bit_image<Space>(in.width(), in.height());
            target = t.view();
        }
        backend<Space>::pass(source, target, passes[i], s);
        source = target;
    }
    if (passes.size() > 1) backend<Space>::synchronize(s);
}

template <class Space>
void run_op(binary_op op, const_bit_view<Space> in, bit_view<bit_word, Space> out, const structuring_element& footprint,
            border mode, stream s) {
    switch (op) {
        case binary_op::erosion:
            erode_or_dilate<Space>(in, out, footprint, false, mode, s);
            return;
        case binary_op::dilation:
            erode_or_dilate<Space>(in, out, footprint, true, mode, s);
            return;
        case binary_op::opening:
        case binary_op::closing: {
            const bool dilate_first = op == binary_op::closing;
            bit_image<Space> tmp(in.width(), in.height());
            erode_or_dilate<Space>(in, tmp.view(), footprint, dilate_first, mode, s);
            erode_or_dilate<Space>(tmp.view(), out, footprint, !dilate_first, mode, s);
            backend<Space>::synchronize(s);
            return;
        }
    }
}

// A copy of `in` when it shares memory with `out`, so that no pass reads what
// it writes.
template <class Space>
bit_image<Space> separate_input(const_bit_view<Space>& in, const bit_view<bit_word, Space>& out, stream s) {
    bit_image<Space> copy_of_input;
    if (!overlaps(in, out)) return copy_of_input;
    copy_of_input = bit_image<Space>(in.width(), in.height());
    if constexpr (std::is_same_v<Space, host_memory>)
        copy(in, copy_of_input.view());
    else
        copy(in, copy_of_input.view(), s);
    in = copy_of_input.view();
    return copy_of_input;
}

template <class Space>
void binary_morphology_impl(binary_op op, const_bit_view<Space> in, bit_view<bit_word, Space> out,
                            const structuring_element& footprint, border mode, stream s) {
    validate<Space>(in, out, mode);
    if constexpr (std::is_same_v<Space, device_memory>) resolve_device(device::cuda);
    const auto copy_of_input = separate_input<Space>(in, out, s);
    run_op<Space>(op, in, out, footprint, mode, s);
    if (!copy_of_input.empty()) backend<Space>::synchronize(s);
}

template <class Space>
void hit_or_miss_impl(const_bit_view<Space> in, bit_view<bit_word, Space> out, const structuring_element& foreground,
                      const structuring_element& background, border mode, stream s) {
    validate<Space>(in, out, mode);
    if constexpr (std::is_same_v<Space, device_memory>) resolve_device(device::cuda);
    const auto copy_of_input = separate_input<Space>(in, out, s);
    // The complement of the border-extended image: constant c becomes 1 - c.
    border complement_mode = mode;
    if (mode.mode == border_mode::constant) complement_mode.cval = 1 - mode.cval;
    bit_image<Space> complement(in.width(), in.height()), missed(in.width(), in.height());
    backend<Space>::complement(in, complement.view(), s);
    erode_or_dilate<Space>(complement.view(), missed.view(), background, false, complement_mode, s);
    erode_or_dilate<Space>(in, out, foreground, false, mode, s);
    backend<Space>::intersect(missed.view(), out, s);
    backend<Space>::synchronize(s);
}

// The threshold as a pixel value T with (p > threshold) == (p > converted) for
// every p.
template <class T>
T convert_threshold(double threshold) {
    if (std::isnan(threshold)) throw invalid_argument("pack: the threshold is NaN; it must be a number");
    if constexpr (std::numeric_limits<T>::is_integer) {
        const double lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        if (threshold < lo || threshold > hi)
            throw invalid_argument("pack: threshold " + std::to_string(threshold) + " is outside the range of " +
                                   std::string(pixel_traits<T>::name) + " [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
        return static_cast<T>(std::floor(threshold));
    } else {
        return static_cast<T>(threshold);
    }
}

morphology_op grey_op(binary_op op) {
    switch (op) {
        case binary_op::erosion: return morphology_op::erosion;
        case binary_op::dilation: return morphology_op::dilation;
        case binary_op::opening: return morphology_op::opening;
        case binary_op::closing: return morphology_op::closing;
    }
    return morphology_op::erosion;
}

}  // namespace

std::string_view to_string(binary_op op) {
    switch (op) {
        case binary_op::erosion:
            return "binary_erosion";
        case binary_op::dilation:
            return "binary_dilation";
        case binary_op::opening:
            return "binary_opening";
        case binary_op::closing:
            return "binary_closing";
    }
    return "?";
}

void binary_morphology(binary_op op, const_host_bit_view in, host_bit_view out, const structuring_element& footprint,
                       border mode) {
    binary_morphology_impl<host_memory>(op, in, out, footprint, mode, stream{});
}

void binary_morphology(binary_op op, const_device_bit_view in, device_bit_view out,
                       const structuring_element& footprint, border mode, stream s) {
    binary_morphology_impl<device_memory>(op, in, out, footprint, mode, s);
}

void hit_or_miss(const_host_bit_view in, host_bit_view out, const structuring_element& foreground,
                 const structuring_element& background, border mode) {
    hit_or_miss_impl<host_memory>(in, out, foreground, background, mode, stream{});
}

void hit_or_miss(const_device_bit_view in, device_bit_view out, const structuring_element& foreground,
                 const structuring_element& background, border mode, stream s) {
    hit_or_miss_impl<device_memory>(in, out, foreground, background, mode, s);
}

template <pixel T>
void pack(host_view<const T> in, host_bit_view out, double threshold) {
    check_same_size(in, out, "pack");
    const T t = convert_threshold<T>(threshold);
    if (in.empty()) return;
    GRANULA_SIMD_DISPATCH_AVX512(pack_bits<T>, in, out, t);
}

template <pixel T>
void pack(device_view<const T> in, device_bit_view out, double threshold, stream s) {
    check_same_size(in, out, "pack");
    const T t = convert_threshold<T>(threshold);
    if (in.empty()) return;
    resolve_device(device::cuda);
#if defined(GRANULA_HAVE_CUDA)
    cuda::pack_bits<T>(in, out, t, s);
#else
    static_cast<void>(t), static_cast<void>(s);
#endif
}

template <pixel T>
void unpack(const_host_bit_view in, host_view<T> out) {
    check_same_size(in, out, "unpack");
    if (in.empty()) return;
    GRANULA_SIMD_DISPATCH_AVX512(unpack_bits<T>, in, out);
}

template <pixel T>
void unpack(const_device_bit_view in, device_view<T> out, stream s) {
    check_same_size(in, out, "unpack");
    if (in.empty()) return;
    resolve_device(device::cuda);
#if defined(GRANULA_HAVE_CUDA)
    cuda::unpack_bits<T>(in, out, s);
#else
    static_cast<void>(s);
#endif
}

namespace {

// The checks of the pixel-image entry points, host and device.
template <class T, class Space>
void validate_pixels(binary_op op, const image_view<const T, Space>& in, const image_view<T, Space>& out, border mode) {
    if (in.empty())
        throw invalid_argument("input image is empty (" + std::to_string(in.width()) + "x" +
                               std::to_string(in.height()) + "); binary morphology needs at least 1x1 pixels");
    check_same_size(in, out, std::string(to_string(op)).c_str());
    validate_border(mode);
}

}  // namespace

// Pixel images: pack (non-zero is 1), operate, unpack. On the CPU, integer pixels take the grey
// operation instead, its result made 0/1: p != 0 keeps the order of unsigned pixels, so it
// commutes with every stage's minima and maxima and their pads (ignore's neutral values become
// binary ignore's, cval 0 or 1 itself), and the result is the packed path's without packing and
// unpacking (4096x4096 uint8, 2 threads: erosion by square:3 5.7 -> 2.3-2.6 ms, line:31:30
// 13.5 -> 3.3, disk:7 22 -> 12, rect:63x63 about the same; docs/benchmarks.md, stop 44), except
// openings and closings by separable elements, which stay in bits from one stage to the next
// (square:7 6.2 against 7.3). Float pixels keep the packed path: their grey minimum over a NaN
// is NaN, which is non-zero, and NaN packs to 0.
template <pixel T>
void binary_morphology(binary_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                       border mode) {
    validate_pixels(op, in, out, mode);
    const bool two_stages = op == binary_op::opening || op == binary_op::closing;
    if (std::is_integral_v<T> && !(two_stages && footprint.separable())) {
        morphology<T>(grey_op(op), in, out, footprint, mode);
        detail::parallel_for(out.height(), out.pixel_count(), [out](std::int64_t y) {
            const std::int64_t width = out.width();  // a local: stores of uint8 pixels may alias the captures
            T* const row = out.row(y);
            for (std::int64_t x = 0; x < width; ++x) row[x] = row[x] != 0;
        });
        return;
    }
    const host_bit_image bits = pack<T>(in, 0.0);
    host_bit_image result(in.width(), in.height());
    binary_morphology(op, bits.view(), result.view(), footprint, mode);
    unpack<T>(result.view(), out);
}

template <pixel T>
void binary_morphology(binary_op op, device_view<const T> in, device_view<T> out, const structuring_element& footprint,
                       border mode, stream s) {
    validate_pixels(op, in, out, mode);
    // Integer pixels: the grey operation made 0/1, as on the host (the reasons above), for every
    // element. One H200, 16384x16384 uint8 erosion against pack, operate in bits, unpack (whose
    // two bit images were allocated and waited for on each call): square:3 0.47 against 1.39 ms,
    // disk:7 1.49 against 4.0 (unpacked again inside), opening by square:15 0.84 against 1.49
    // (bench_gpu_binary; docs/benchmarks.md, stop 45).
    if constexpr (std::is_integral_v<T>) {
        morphology<T>(grey_op(op), in, out, footprint, mode, s);
#if defined(GRANULA_HAVE_CUDA)
        cuda::zero_one<T>(out, s);
#endif
        return;
    }
    device_bit_image bits(in.width(), in.height()), result(in.width(), in.height());
    pack<T>(in, bits.view(), 0.0, s);
    binary_morphology(op, bits.view(), result.view(), footprint, mode, s);
    unpack<T>(result.view(), out, s);
    s.synchronize();  // bits and result are freed on return
}

#define GRANULA_INSTANTIATE(type, name)                                                          \
    template void pack<type>(host_view<const type>, host_bit_view, double);                      \
    template void pack<type>(device_view<const type>, device_bit_view, double, stream);          \
    template void unpack<type>(const_host_bit_view, host_view<type>);                            \
    template void unpack<type>(const_device_bit_view, device_view<type>, stream);                \
    template void binary_morphology<type>(binary_op, host_view<const type>, host_view<type>,     \
                                          const structuring_element&, border);                   \
    template void binary_morphology<type>(binary_op, device_view<const type>, device_view<type>, \
                                          const structuring_element&, border, stream);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula
