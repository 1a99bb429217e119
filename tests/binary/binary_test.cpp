// Binary morphology on bit-packed images (CPU): every operation against
// granula's grey path on 0/1 uint8 images (itself tested against brute force),
// hit-or-miss and the general segment pass against brute force
// (tests/reference/binary_reference.hpp), packing, and every documented error.
// Bit views are word-aligned parts of larger buffers full of random bits, so
// reads of bits that are not pixels show up as wrong results and writes to them
// as changed guard bits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "binary/bit_pass.hpp"
#include "binary/cpu/binary_kernels.hpp"
#include "core/simd_dispatch.hpp"
#include "granula/granula.hpp"
#include "reference/binary_reference.hpp"
#include "support/morphology_cases.hpp"
#include "support/random_images.hpp"

namespace granula {
namespace {

using test_support::all_modes;
using test_support::equal_images;

using test_support::random_binary;

// A w x h bit view inside a buffer of random words: a random word offset and
// row padding.
struct bit_view_case {
    std::vector<bit_word> buffer, initial;
    host_bit_view view;
};

bit_view_case make_bit_view(std::mt19937_64& rng, std::int64_t w, std::int64_t h, bool strided) {
    std::uniform_int_distribution<std::int64_t> pad(0, 3);
    const std::int64_t x0 = strided ? pad(rng) : 0, y0 = strided ? pad(rng) : 0;
    const std::int64_t stride = words_for_width(w) + x0 + (strided ? pad(rng) : 0);
    bit_view_case c;
    c.buffer.resize(static_cast<std::size_t>(stride * (h + y0) + 1));
    for (auto& word : c.buffer) word = rng();
    c.initial = c.buffer;
    c.view = host_bit_view(c.buffer.data() + y0 * stride + x0, w, h, stride);
    return c;
}

// True when every bit of the buffer outside the view's pixels is as it was.
::testing::AssertionResult guard_intact(const bit_view_case& c) {
    std::vector<bit_word> expected = c.initial;
    const std::int64_t offset = c.view.data() - c.buffer.data();
    for (std::int64_t y = 0; y < c.view.height(); ++y)
        for (std::int64_t x = 0; x < c.view.width(); ++x) {
            const auto idx = static_cast<std::size_t>(offset + y * c.view.stride() + x / 64);
            const bit_word bit = bit_word{1} << (x % 64);
            expected[idx] = (expected[idx] & ~bit) | (c.buffer[idx] & bit);
        }
    for (std::size_t i = 0; i < expected.size(); ++i)
        if (expected[i] != c.buffer[i]) return ::testing::AssertionFailure() << "guard word " << i << " changed";
    return ::testing::AssertionSuccess();
}

structuring_element random_element(std::mt19937_64& rng, std::int64_t w, std::int64_t h) {
    // Lengths from 1 to beyond the image.
    std::uniform_int_distribution<std::int64_t> lw(1, 2 * w + 3), lh(1, 2 * h + 3), small(1, 9);
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
        case 5:
            return structuring_element::line(lw(rng), std::uniform_real_distribution<double>(0, 180)(rng));
        case 6:
            return structuring_element::disk(small(rng));
        case 0:
            return structuring_element::hline(lw(rng));
        case 1:
            return structuring_element::vline(lh(rng));
        case 2:
            return structuring_element::rectangle(lw(rng), lh(rng));
        case 3:
            return structuring_element::rectangle(small(rng), small(rng));
        default:
            return structuring_element::square(small(rng));
    }
}

// The grey operation's result on a 0/1 image: the oracle.
host_image<std::uint8_t> grey(morphology_op op, host_view<const std::uint8_t> in, const structuring_element& fp,
                              border b) {
    host_image<std::uint8_t> out(in.width(), in.height());
    morphology<std::uint8_t>(op, in, out.view(), fp, b);
    return out;
}

host_bit_image binary_result(binary_op op, const_host_bit_view in, const structuring_element& fp, border b) {
    host_bit_image out(in.width(), in.height());
    binary_morphology(op, in, out.view(), fp, b);
    return out;
}

morphology_op grey_op(binary_op op) {
    switch (op) {
        case binary_op::erosion:
            return morphology_op::erosion;
        case binary_op::dilation:
            return morphology_op::dilation;
        case binary_op::opening:
            return morphology_op::opening;
        case binary_op::closing:
            return morphology_op::closing;
    }
    return morphology_op::erosion;
}

constexpr binary_op all_binary_ops[] = {binary_op::erosion, binary_op::dilation, binary_op::opening,
                                        binary_op::closing};

std::vector<std::pair<std::int64_t, std::int64_t>> sizes() {
    return {{1, 1},    {1, 17},   {17, 1},   {64, 3},  {65, 2},  {63, 5}, {128, 9},
            {129, 13}, {200, 31}, {37, 70}, {300, 4}, {66, 7}, {65, 10}};
}

void check_against_grey(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (const auto& [w, h] : sizes()) {
        for (int trial = 0; trial < 3; ++trial) {
            const auto img = random_binary(rng, w, h, trial == 0 ? 0.5 : (trial == 1 ? 0.9 : 0.1));
            const auto fp = random_element(rng, w, h);
            auto in = make_bit_view(rng, w, h, true);
            pack<std::uint8_t>(img.view(), in.view);
            for (const auto mode : all_modes)
                for (const double cval : {0.0, 1.0}) {
                    if (mode != border_mode::constant && cval != 0.0) continue;
                    const border b{mode, cval};
                    for (const auto op : all_binary_ops) {
                        SCOPED_TRACE(::testing::Message()
                                     << "seed " << seed << " size " << w << "x" << h << " " << fp.to_string()
                                     << " mode " << to_string(mode) << " cval " << cval << " " << to_string(op));
                        auto out = make_bit_view(rng, w, h, trial != 1);
                        binary_morphology(op, in.view, out.view, fp, b);
                        const auto want = grey(grey_op(op), img.view(), fp, b);
                        const auto got = unpack<std::uint8_t>(out.view);
                        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), want.view()));
                        ASSERT_TRUE(guard_intact(out));
                    }
                }
        }
    }
}

TEST(BinaryCpu, EqualsGreyPathSimd) {
    set_simd_enabled(true);
    check_against_grey(7);
}

TEST(BinaryCpu, EqualsGreyPathScalar) {
    set_simd_enabled(false);
    check_against_grey(8);
    set_simd_enabled(true);
}

// Images large enough for the threaded paths (over 256K pixels), on 1 and 2 threads: work
// items start mid-image, every few vertical windows, and the last one is short.
TEST(BinaryCpu, LargeImageThreaded) {
    std::mt19937_64 rng(11);
    const std::pair<std::int64_t, std::int64_t> sizes[] = {{1000, 700}, {4161, 93}};
    for (const auto& [w, h] : sizes) {
        const auto img = random_binary(rng, w, h, 0.97);
        const auto bits = pack<std::uint8_t>(img.view());
        for (const int threads : {1, 2})
            for (const auto& fp : {structuring_element::square(63), structuring_element::rectangle(45, 70),
                                   structuring_element::rectangle(3, 5)}) {
                set_num_threads(threads);
                for (const auto op : all_binary_ops)
                    for (const auto mode : all_modes) {
                        const auto got = unpack<std::uint8_t>(binary_result(op, bits.view(), fp, {mode}).view());
                        const auto want = grey(grey_op(op), img.view(), fp, {mode});
                        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), want.view()))
                            << w << "x" << h << " " << fp.to_string() << " " << threads << " threads "
                            << to_string(op) << " " << to_string(mode);
                    }
                set_num_threads(0);
            }
    }
}

// Rows extended by words (arms up to 64 bits, rows over 65 pixels) in every mode, at the widths
// around word boundaries. Each row is all background but one pixel near an end, so that a
// border bit off by one place shows in the result.
TEST(BinaryCpu, RowBordersByWords) {
    std::mt19937_64 rng(23);
    for (const std::int64_t w : {65, 66, 127, 128, 129, 191, 700})
        for (int trial = 0; trial < 32; ++trial) {
            const bool dilate = trial % 2 == 1;
            host_image<std::uint8_t> img(w, 4);
            for (std::int64_t y = 0; y < img.height(); ++y) {
                for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = dilate ? 0 : 1;
                // Half the time among the 4 pixels at an end, otherwise among 70.
                const std::int64_t offset = static_cast<std::int64_t>(rng() % (rng() % 2 ? 4 : 70)) % w;
                img.view()(y, rng() % 2 ? offset : w - 1 - offset) = dilate ? 1 : 0;
            }
            const auto bits = pack<std::uint8_t>(img.view());
            // Short windows half the time: where an arm reaches past the other, off-by-one
            // border pixels show.
            std::uniform_int_distribution<std::int64_t> length(1, trial % 4 < 2 ? 9 : 129);
            const auto fp = structuring_element::rectangle(length(rng), 1 + trial / 4 % 2);
            const auto op = dilate ? binary_op::dilation : binary_op::erosion;
            for (const auto mode : all_modes) {
                const auto got = unpack<std::uint8_t>(binary_result(op, bits.view(), fp, {mode}).view());
                const auto want = grey(grey_op(op), img.view(), fp, {mode});
                ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), want.view()))
                    << w << " " << fp.to_string() << " " << to_string(mode) << " " << to_string(op);
            }
        }
}

TEST(BinaryCpu, InPlace) {
    std::mt19937_64 rng(12);
    const auto img = random_binary(rng, 131, 40, 0.7);
    auto bits = pack<std::uint8_t>(img.view());
    const auto fp = structuring_element::rectangle(5, 9);
    binary_closing(bits.view(), bits.view(), fp, {border_mode::nearest});
    const auto want = grey(morphology_op::closing, img.view(), fp, {border_mode::nearest});
    EXPECT_TRUE(equal_images<std::uint8_t>(unpack<std::uint8_t>(bits.view()).view(), want.view()));
}

// The pixel-image operations of the registry: non-zero is 1 and the result 0/1, as packing,
// operating on the bits and unpacking, which integer pixels skip (binary.cpp): pixels other than
// 0 and 1, every mode, separable and other elements.
template <class T>
void check_pixel_images() {
    std::mt19937_64 rng(13);
    std::uniform_int_distribution<int> value(1, 200);
    for (const auto& [w, h] : sizes()) {
        const auto img = random_binary(rng, w, h, 0.6);
        host_image<T> typed(w, h);
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x)
                typed.view()(y, x) = img.view()(y, x) ? static_cast<T>(value(rng)) : T{0};
        const auto fp = random_element(rng, w, h);
        for (const auto mode : all_modes)
            for (const double cval : {0.0, 1.0}) {
                if (mode != border_mode::constant && cval != 0.0) continue;
                const border b{mode, cval};
                for (const auto op : all_binary_ops) {
                    host_image<T> got(w, h), want(w, h);
                    binary_morphology<T>(op, typed.view(), got.view(), fp, b);
                    host_bit_image result(w, h);
                    binary_morphology(op, pack<T>(typed.view()).view(), result.view(), fp, b);
                    unpack<T>(result.view(), want.view());
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << w << "x" << h << " " << fp.to_string() << " mode " << to_string(mode) << " cval " << cval
                        << " " << to_string(op);
                }
            }
    }
}

TEST(BinaryCpu, PixelImagesUint8) { check_pixel_images<std::uint8_t>(); }
TEST(BinaryCpu, PixelImagesUint16) { check_pixel_images<std::uint16_t>(); }
TEST(BinaryCpu, PixelImagesFloat32) { check_pixel_images<float>(); }

template <class T>
void check_pack_roundtrip(double threshold) {
    std::mt19937_64 rng(14);
    for (const auto& [w, h] : sizes()) {
        host_image<T> img(w, h);
        std::uniform_int_distribution<int> v(0, 200);
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(v(rng));
        if constexpr (std::is_floating_point_v<T>) img.view()(0, 0) = std::numeric_limits<T>::quiet_NaN();
        auto packed = make_bit_view(rng, w, h, true);
        pack<T>(img.view(), packed.view, threshold);
        ASSERT_TRUE(guard_intact(packed));
        host_image<T> back(w, h);
        unpack<T>(packed.view, back.view());
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                const T want = img.view()(y, x) > threshold ? T{1} : T{0};
                ASSERT_EQ(back.view()(y, x), want) << "(" << y << ", " << x << ") of " << w << "x" << h;
            }
        // An owning image keeps its padding bits zero.
        const auto owned = pack<T>(img.view(), threshold);
        if (w % 64) {
            for (std::int64_t y = 0; y < h; ++y)
                ASSERT_EQ(owned.view().row(y)[owned.view().row_words() - 1] >> (w % 64), 0u);
        }
    }
}

TEST(BinaryCpu, PackUnpackUint8) { check_pack_roundtrip<std::uint8_t>(100.5); }
TEST(BinaryCpu, PackUnpackUint16) { check_pack_roundtrip<std::uint16_t>(0); }
TEST(BinaryCpu, PackUnpackFloat32) { check_pack_roundtrip<float>(99.5); }

TEST(BinaryCpu, PackScalarEqualsSimd) {
    std::mt19937_64 rng(15);
    const auto img = random_binary(rng, 777, 5, 0.5);
    set_simd_enabled(false);
    const auto scalar = pack<std::uint8_t>(img.view());
    set_simd_enabled(true);
    const auto simd = pack<std::uint8_t>(img.view());
    for (std::int64_t y = 0; y < 5; ++y)
        for (std::int64_t i = 0; i < simd.view().row_words(); ++i)
            ASSERT_EQ(scalar.view().row(y)[i], simd.view().row(y)[i]);
}

TEST(BinaryCpu, HitOrMissMatchesBruteForce) {
    std::mt19937_64 rng(16);
    // A 3x3 cross of foreground with background corners finds isolated plus
    // shapes; a 1x3 line with a 3x1 background above and below finds horizontal
    // runs of exactly one row.
    for (const auto& [w, h] : sizes()) {
        const auto img = random_binary(rng, w, h, 0.6);
        const auto bits = pack<std::uint8_t>(img.view());
        const std::pair<structuring_element, structuring_element> pairs[] = {
            {structuring_element::hline(3), structuring_element::vline(3)},
            {structuring_element::square(1), structuring_element::hline(2)},
            {structuring_element::vline(2), structuring_element::rectangle(4, 1)},
        };
        for (const auto& [fg, bg] : pairs)
            for (const auto& [b, cval] :
                 {std::pair{border{border_mode::ignore}, 0}, std::pair{border{border_mode::constant, 0}, 0},
                  std::pair{border{border_mode::constant, 1}, 1}}) {
                host_bit_image out(w, h);
                hit_or_miss(bits.view(), out.view(), fg, bg, b);
                const auto want = reference::hit_or_miss(img.view(), fg, bg, b.mode == border_mode::ignore,
                                                         static_cast<std::uint8_t>(cval));
                ASSERT_TRUE(equal_images<std::uint8_t>(unpack<std::uint8_t>(out.view()).view(), want.view()))
                    << w << "x" << h << " " << fg.to_string() << " / " << bg.to_string() << " " << to_string(b.mode)
                    << " cval " << cval;
            }
    }
}

// The general pass (segments with any step) through the CPU kernels directly,
// until the structuring elements with such segments land: against the
// brute-force AND/OR of the offsets.
TEST(BinaryCpu, GeneralSegmentPassMatchesBruteForce) {
    std::mt19937_64 rng(17);
    const std::pair<int, int> steps[] = {{1, 1}, {1, -1}, {2, 1}, {-1, 2}, {1, 0}, {0, 1}, {3, 0}};
    for (const auto& [w, h] : sizes())
        for (const auto& [dx, dy] : steps)
            for (const bool dilate : {false, true})
                for (const bool pad : {false, true}) {
                    const auto img = random_binary(rng, w, h, dilate ? 0.1 : 0.9);
                    const auto bits = pack<std::uint8_t>(img.view());
                    detail::bit_pass p;
                    p.dir = detail::bit_pass::direction::general;
                    p.length = std::uniform_int_distribution<std::int64_t>(1, 12)(rng);
                    p.start = -std::uniform_int_distribution<std::int64_t>(0, p.length - 1)(rng);
                    p.dx = dx;
                    p.dy = dy;
                    p.dilate = dilate;
                    p.mode = border_mode::constant;
                    p.pad = pad;
                    std::vector<std::pair<std::int64_t, std::int64_t>> offsets;
                    for (std::int64_t k = 0; k < p.length; ++k)
                        offsets.emplace_back((p.start + k) * dx, (p.start + k) * dy);
                    const auto want = reference::combine_offsets(img.view(), offsets, dilate, pad ? 1 : 0);
                    for (const bool simd : {false, true}) {
                        auto out = make_bit_view(rng, w, h, true);
                        if (simd)
                            simd_baseline::bit_segment_pass(bits.view(), out.view, p);
                        else
                            simd_scalar::bit_segment_pass(bits.view(), out.view, p);
                        ASSERT_TRUE(equal_images<std::uint8_t>(unpack<std::uint8_t>(out.view).view(), want.view()))
                            << w << "x" << h << " step (" << dx << ", " << dy << ") length " << p.length << " start "
                            << p.start << (dilate ? " OR" : " AND") << " pad " << pad;
                        ASSERT_TRUE(guard_intact(out));
                    }
                }
}

// Every compiled copy of the axis and rectangle passes against the scalar copy (itself tested
// against the grey path above), since the dispatch runs only the best copy the CPU has: the
// AVX2 copy is otherwise untested on AVX-512 machines. Windows from 1 to past 2n bits, so every
// register depth, the AVX-512 lane windows (32 to 127 bits) and the long-window sweeps run.
TEST(BinaryCpu, KernelCopiesAgreeWithScalar) {
    using pass_fn = void (*)(const_host_bit_view, host_bit_view, const detail::bit_pass&);
    using rect_fn = void (*)(const_host_bit_view, host_bit_view, const detail::bit_pass&, const detail::bit_pass&);
    std::vector<std::pair<pass_fn, rect_fn>> copies = {
        {simd_baseline::bit_segment_pass, simd_baseline::bit_rectangle_pass}};
#if defined(__x86_64__)
    if (detail::cpu_has_avx2_copy()) copies.emplace_back(simd_avx2::bit_segment_pass, simd_avx2::bit_rectangle_pass);
    if (detail::cpu_has_avx512_copy())
        copies.emplace_back(simd_avx512::bit_segment_pass, simd_avx512::bit_rectangle_pass);
#endif
    std::mt19937_64 rng(19);
    // Wide rows: the vertical pass's column sweeps of several lanes, and the last, overlapping lane.
    const std::pair<std::int64_t, std::int64_t> more_sizes[] = {
        {700, 90}, {1000, 70}, {513, 40}, {4200, 20}, {2600, 9}};
    auto all_sizes = sizes();
    all_sizes.insert(all_sizes.end(), std::begin(more_sizes), std::end(more_sizes));
    for (const auto& [w, h] : all_sizes)
        for (int trial = 0; trial < 6; ++trial) {
            const bool dilate = trial % 2 == 1;
            const auto img = random_binary(rng, w, h, dilate ? 0.05 : 0.95);
            const auto bits = pack<std::uint8_t>(img.view());
            auto axis = [&](detail::bit_pass::direction dir, std::int64_t n) {
                detail::bit_pass p;
                p.dir = dir;
                std::uniform_int_distribution<std::int64_t> arm(0, trial < 2 ? std::min<std::int64_t>(n, 70) : 2 * n);
                p.before = arm(rng);
                p.after = arm(rng);
                p.dilate = dilate;
                p.mode = all_modes[std::uniform_int_distribution<std::size_t>(0, std::size(all_modes) - 1)(rng)];
                p.pad = std::bernoulli_distribution(0.5)(rng);
                return p;
            };
            const auto v = axis(detail::bit_pass::direction::vertical, h);
            auto hp = axis(detail::bit_pass::direction::horizontal, w);
            hp.mode = v.mode, hp.pad = v.pad;
            auto run = [&](auto&& op) {
                auto out = make_bit_view(rng, w, h, true);
                op(out.view);
                EXPECT_TRUE(guard_intact(out));
                return unpack<std::uint8_t>(out.view);
            };
            for (const auto& p : {v, hp}) {
                const auto want = run([&](host_bit_view o) { simd_scalar::bit_segment_pass(bits.view(), o, p); });
                for (const auto& copy : copies)
                    ASSERT_TRUE(equal_images<std::uint8_t>(
                        run([&](host_bit_view o) { copy.first(bits.view(), o, p); }).view(), want.view()))
                        << w << "x" << h << " axis pass " << p.before << "+" << p.after << " mode "
                        << to_string(p.mode);
            }
            const auto want = run([&](host_bit_view o) { simd_scalar::bit_rectangle_pass(bits.view(), o, v, hp); });
            for (const auto& copy : copies)
                ASSERT_TRUE(equal_images<std::uint8_t>(
                    run([&](host_bit_view o) { copy.second(bits.view(), o, v, hp); }).view(), want.view()))
                    << w << "x" << h << " rectangle " << hp.before << "+" << hp.after << " x " << v.before << "+"
                    << v.after << " mode " << to_string(v.mode);
        }
}

// --- errors
// ---------------------------------------------------------------------------------------

TEST(BinaryErrors, SizesMustMatch) {
    host_bit_image a(10, 5), b(10, 6);
    EXPECT_THROW(binary_erosion(a.view(), b.view(), structuring_element::square(3)), invalid_argument);
    host_image<std::uint8_t> pixels(11, 5);
    EXPECT_THROW(pack<std::uint8_t>(pixels.view(), a.view()), invalid_argument);
    EXPECT_THROW(unpack<std::uint8_t>(a.view(), pixels.view()), invalid_argument);
    host_image<std::uint8_t> p1(4, 4), p2(4, 5);
    EXPECT_THROW(
        binary_morphology<std::uint8_t>(binary_op::opening, p1.view(), p2.view(), structuring_element::square(3)),
        invalid_argument);
}

TEST(BinaryErrors, EmptyInput) {
    host_bit_image a(0, 5), b(0, 5);
    EXPECT_THROW(binary_dilation(a.view(), b.view(), structuring_element::square(3)), invalid_argument);
}

TEST(BinaryErrors, CvalMustBeBinary) {
    host_bit_image a(10, 5), b(10, 5);
    try {
        binary_erosion(a.view(), b.view(), structuring_element::square(3), {border_mode::constant, 2});
        FAIL() << "cval 2 was accepted";
    } catch (const invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("cval 0 or 1"), std::string::npos) << e.what();
    }
    EXPECT_THROW(hit_or_miss(a.view(), b.view(), structuring_element::square(1), structuring_element::hline(2),
                             {border_mode::constant, 0.5}),
                 invalid_argument);
}

TEST(BinaryErrors, ThresholdOutOfRange) {
    host_image<std::uint8_t> u8(3, 3);
    host_image<std::uint16_t> u16(3, 3);
    host_image<float> f32(3, 3);
    host_bit_image out(3, 3);
    EXPECT_THROW(pack<std::uint8_t>(u8.view(), out.view(), 256), invalid_argument);
    EXPECT_THROW(pack<std::uint8_t>(u8.view(), out.view(), -1), invalid_argument);
    EXPECT_THROW(pack<std::uint16_t>(u16.view(), out.view(), 70000), invalid_argument);
    EXPECT_THROW(pack<float>(f32.view(), out.view(), std::nan("")), invalid_argument);
    EXPECT_NO_THROW(pack<std::uint8_t>(u8.view(), out.view(), 255));
}

TEST(BinaryErrors, InconsistentStrides) {
    std::vector<bit_word> words(100);
    EXPECT_THROW(host_bit_view(words.data(), 65, 3, 1),
                 invalid_argument);  // 65 pixels need 2 words
    EXPECT_THROW(host_bit_view(words.data(), -1, 3, 1), invalid_argument);
    EXPECT_THROW(host_bit_view(nullptr, 10, 3, 1), invalid_argument);
    const host_bit_view v(words.data(), 200, 10, 4);
    EXPECT_THROW(v.subview(3, 0, 64, 2), invalid_argument);  // not on a word
    EXPECT_THROW(v.subview(128, 0, 100, 2),
                 invalid_argument);  // past the right edge
    EXPECT_NO_THROW(v.subview(64, 2, 136, 8));
}

TEST(BinaryErrors, DeviceWithoutCuda) {
    if (cuda_available())
        GTEST_SKIP() << "a CUDA device is present; "
                        "tests/binary/binary_cuda_test.cpp covers it";
    EXPECT_ANY_THROW(device_bit_image(10, 10));
}

}  // namespace
}  // namespace granula
