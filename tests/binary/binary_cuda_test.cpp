// Binary morphology on the GPU: every operation on device bit views against the
// CPU backend (itself equal to the grey path, binary_test.cpp) and the grey
// path, on random sizes, word- aligned device sub-views inside buffers of
// random words (guard bits must not change), every border mode, lengths beyond
// the image; packing of every pixel type; hit-or-miss; the general segment pass
// against the CPU's. Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "binary/bit_pass.hpp"
#include "binary/cpu/binary_kernels.hpp"
#if defined(GRANULA_HAVE_CUDA)
#include "binary/cuda/binary_cuda.hpp"
#endif
#include "granula/granula.hpp"
#include "support/morphology_cases.hpp"
#include "support/random_images.hpp"
#include "support/require_gpu.hpp"

namespace granula {
namespace {


using test_support::all_modes;
using test_support::equal_images;

using test_support::random_binary;

// A w x h device bit view inside a buffer of random words (random word offset
// and row padding).
struct device_case {
    device_bit_image buffer;  // one long row of words
    std::vector<bit_word> initial;
    device_bit_view view;
    std::int64_t offset = 0;
};

// With `pixels`, the view holds its packed pixels while its padding bits stay
// random.
device_case make_device_view(std::mt19937_64& rng, std::int64_t w, std::int64_t h, bool strided,
                             const host_image<std::uint8_t>* pixels = nullptr) {
    std::uniform_int_distribution<std::int64_t> pad(0, 3);
    const std::int64_t x0 = strided ? pad(rng) : 0, y0 = strided ? pad(rng) : 0;
    const std::int64_t stride = words_for_width(w) + x0 + (strided ? pad(rng) : 0);
    const std::int64_t total = stride * (h + y0) + 1;
    device_case c;
    c.buffer = device_bit_image(64 * total, 1);
    c.initial.resize(static_cast<std::size_t>(total));
    for (auto& word : c.initial) word = rng();
    c.offset = y0 * stride + x0;
    if (pixels) pack<std::uint8_t>(pixels->view(), host_bit_view(c.initial.data() + c.offset, w, h, stride));
    copy(const_host_bit_view(c.initial.data(), 64 * total, 1), c.buffer.view());
    c.view = device_bit_view(c.buffer.data() + c.offset, w, h, stride);
    return c;
}

// The view's pixels, after checking that no other bit of the buffer changed.
host_image<std::uint8_t> download_checked(const device_case& c, ::testing::AssertionResult& guard) {
    const std::int64_t total = static_cast<std::int64_t>(c.initial.size());
    std::vector<bit_word> all(c.initial.size());
    copy(const_device_bit_view(c.buffer.data(), 64 * total, 1), host_bit_view(all.data(), 64 * total, 1));
    stream{}.synchronize();
    const host_bit_view v(all.data() + c.offset, c.view.width(), c.view.height(), c.view.stride());
    std::vector<bit_word> expected = c.initial;
    for (std::int64_t y = 0; y < v.height(); ++y)
        for (std::int64_t x = 0; x < v.width(); ++x) {
            const auto idx = static_cast<std::size_t>(c.offset + y * v.stride() + x / 64);
            const bit_word bit = bit_word{1} << (x % 64);
            expected[idx] = (expected[idx] & ~bit) | (all[idx] & bit);
        }
    guard = ::testing::AssertionSuccess();
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i] != expected[i]) {
            guard = ::testing::AssertionFailure() << "guard word " << i << " changed";
            break;
        }
    return unpack<std::uint8_t>(v);
}

structuring_element random_element(std::mt19937_64& rng, std::int64_t w, std::int64_t h) {
    std::uniform_int_distribution<std::int64_t> lw(1, 2 * w + 3), lh(1, 2 * h + 3), small(1, 9), medium(60, 140);
    switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0:
            return structuring_element::hline(lw(rng));
        case 1:
            return structuring_element::vline(lh(rng));
        case 2:
            return structuring_element::rectangle(lw(rng), lh(rng));
        case 3:
            return structuring_element::rectangle(medium(rng), small(rng));
        case 4:
            return structuring_element::rectangle(small(rng), small(rng));
        default:
            return structuring_element::square(small(rng));
    }
}

constexpr binary_op all_binary_ops[] = {binary_op::erosion, binary_op::dilation, binary_op::opening,
                                        binary_op::closing};

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

std::vector<std::pair<std::int64_t, std::int64_t>> sizes() {
    return {{1, 1}, {1, 19}, {23, 1}, {64, 3}, {65, 2}, {63, 5}, {128, 9}, {129, 13}, {333, 31}, {37, 70}, {2100, 4}};
}

TEST(BinaryCuda, EqualsCpuAndGreyPath) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(21);
    for (const auto& [w, h] : sizes())
        for (int trial = 0; trial < 3; ++trial) {
            const auto img = random_binary(rng, w, h, trial == 0 ? 0.5 : (trial == 1 ? 0.93 : 0.07));
            const auto fp = random_element(rng, w, h);
            const auto bits = pack<std::uint8_t>(img.view());
            const auto in = make_device_view(rng, w, h, true, &img);
            for (const auto mode : all_modes)
                for (const double cval : {0.0, 1.0}) {
                    if (mode != border_mode::constant && cval != 0.0) continue;
                    const border b{mode, cval};
                    for (const auto op : all_binary_ops) {
                        SCOPED_TRACE(::testing::Message()
                                     << "size " << w << "x" << h << " " << fp.to_string() << " mode " << to_string(mode)
                                     << " cval " << cval << " " << to_string(op));
                        auto out = make_device_view(rng, w, h, trial != 1);
                        binary_morphology(op, in.view, out.view, fp, b);
                        ::testing::AssertionResult guard = ::testing::AssertionSuccess();
                        const auto got = download_checked(out, guard);
                        ASSERT_TRUE(guard);
                        host_bit_image cpu(w, h);
                        binary_morphology(op, bits.view(), cpu.view(), fp, b);
                        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), unpack<std::uint8_t>(cpu.view()).view()));
                        host_image<std::uint8_t> grey(w, h);
                        morphology<std::uint8_t>(grey_op(op), img.view(), grey.view(), fp, b);
                        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), grey.view()));
                    }
                }
        }
}

// Multi-block grids and long windows on one larger image.
TEST(BinaryCuda, LargeImage) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(22);
    const std::int64_t w = 3001, h = 1999;
    const auto img = random_binary(rng, w, h, 0.985);
    const auto bits = pack<std::uint8_t>(img.view());
    const auto dev = upload(bits.view());
    for (const auto& fp : {structuring_element::square(63), structuring_element::rectangle(200, 3),
                           structuring_element::rectangle(130, 33), structuring_element::rectangle(2, 1500),
                           // 63- and 64-bit windows without doubling (word_window)
                           structuring_element::rectangle(64, 40), structuring_element::rectangle(63, 7)})
        for (const auto op : {binary_op::erosion, binary_op::closing})
            for (const auto mode : {border_mode::ignore, border_mode::reflect}) {  // one kernel, two passes
                device_bit_image out(w, h);
                binary_morphology(op, dev.view(), out.view(), fp, {mode});
                host_bit_image cpu(w, h);
                binary_morphology(op, bits.view(), cpu.view(), fp, {mode});
                const auto got = download(out.view());
                for (std::int64_t y = 0; y < h; ++y)
                    for (std::int64_t i = 0; i < got.view().row_words(); ++i)
                        ASSERT_EQ(got.view().row(y)[i], cpu.view().row(y)[i])
                            << fp.to_string() << " " << to_string(op) << " " << to_string(mode) << " row " << y
                            << " word " << i;
            }
}

TEST(BinaryCuda, InPlace) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(23);
    const auto img = random_binary(rng, 300, 77, 0.6);
    const auto bits = pack<std::uint8_t>(img.view());
    auto dev = upload(bits.view());
    const auto fp = structuring_element::rectangle(9, 4);
    binary_opening(dev.view(), dev.view(), fp, {border_mode::wrap});
    host_bit_image cpu(300, 77);
    binary_opening(bits.view(), cpu.view(), fp, {border_mode::wrap});
    EXPECT_TRUE(equal_images<std::uint8_t>(unpack<std::uint8_t>(download(dev.view()).view()).view(),
                                           unpack<std::uint8_t>(cpu.view()).view()));
}

template <class T>
void check_pack(double threshold) {
    std::mt19937_64 rng(24);
    for (const auto& [w, h] : sizes()) {
        host_image<T> img(w, h);
        std::uniform_int_distribution<int> v(0, 200);
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) img.view()(y, x) = static_cast<T>(v(rng));
        const auto dimg = upload<T>(img.view());
        auto out = make_device_view(rng, w, h, true);
        pack<T>(dimg.view(), out.view, threshold);
        ::testing::AssertionResult guard = ::testing::AssertionSuccess();
        const auto got = download_checked(out, guard);
        ASSERT_TRUE(guard);
        const auto want = unpack<std::uint8_t>(pack<T>(img.view(), threshold).view());
        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), want.view())) << w << "x" << h;
        // And back to pixels on the device.
        device_image<T> back(w, h);
        unpack<T>(out.view, back.view());
        const auto host_back = download<T>(back.view());
        const auto want_back = unpack<T>(pack<T>(img.view(), threshold).view());
        ASSERT_TRUE(equal_images<T>(host_back.view(), want_back.view())) << w << "x" << h;
    }
}

TEST(BinaryCuda, PackUnpackUint8) {
    GRANULA_REQUIRE_GPU();
    check_pack<std::uint8_t>(100);
}
TEST(BinaryCuda, PackUnpackUint16) {
    GRANULA_REQUIRE_GPU();
    check_pack<std::uint16_t>(0);
}
TEST(BinaryCuda, PackUnpackFloat32) {
    GRANULA_REQUIRE_GPU();
    check_pack<float>(99.5);
}

// Pixel images on the device equal the host's (binary_test.cpp checks those against the packed
// path): "1" as values 1..200, separable elements and others, every border mode; uint8 and uint16
// take the grey path made 0/1, float32 the packed one.
template <class T>
void check_pixel_images() {
    std::mt19937_64 rng(25);
    std::uniform_int_distribution<int> value(1, 200);
    for (const auto& [w, h] : sizes()) {
        const auto img = random_binary(rng, w, h, 0.7);
        host_image<T> typed(w, h);
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x)
                typed.view()(y, x) = img.view()(y, x) ? static_cast<T>(value(rng)) : T{0};
        const auto dimg = upload<T>(typed.view());
        for (const auto& fp : {random_element(rng, w, h), structuring_element::disk(2),
                               structuring_element::line(9, 30), structuring_element::diamond(1)})
            for (const auto mode : all_modes)
                for (const double cval : {0.0, 1.0}) {
                    if (mode != border_mode::constant && cval != 0.0) continue;
                    const border b{mode, cval};
                    for (const auto op : all_binary_ops) {
                        // Into a view 1..16 pixels into a wider image, so that rows start at every
                        // place within 16 bytes; the pixels around it must keep their value.
                        const std::int64_t offset = std::uniform_int_distribution<std::int64_t>(1, 16)(rng);
                        host_image<T> around(w + 32, h);
                        for (std::int64_t y = 0; y < h; ++y)
                            for (std::int64_t x = 0; x < w + 32; ++x) around.view()(y, x) = static_cast<T>(7);
                        auto frame = upload<T>(around.view());
                        binary_morphology<T>(op, dimg.view(), frame.view().subview(offset, 0, w, h), fp, b);
                        const auto got = download<T>(frame.view());
                        host_image<T> want(w, h);
                        binary_morphology<T>(op, typed.view(), want.view(), fp, b);
                        ASSERT_TRUE(equal_images<T>(got.view().subview(offset, 0, w, h), want.view()))
                            << w << "x" << h << " " << fp.to_string() << " mode " << to_string(mode) << " cval "
                            << cval << " " << to_string(op) << " offset " << offset;
                        for (std::int64_t y = 0; y < h; ++y)
                            for (std::int64_t x = 0; x < w + 32; ++x)
                                if (x < offset || x >= offset + w) {
                                    ASSERT_EQ(got.view()(y, x), static_cast<T>(7));
                                }
                    }
                }
    }
}

TEST(BinaryCuda, PixelImagesUint8) {
    GRANULA_REQUIRE_GPU();
    check_pixel_images<std::uint8_t>();
}
TEST(BinaryCuda, PixelImagesUint16) {
    GRANULA_REQUIRE_GPU();
    check_pixel_images<std::uint16_t>();
}
TEST(BinaryCuda, PixelImagesFloat32) {
    GRANULA_REQUIRE_GPU();
    check_pixel_images<float>();
}

TEST(BinaryCuda, HitOrMissEqualsCpu) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(26);
    for (const auto& [w, h] : sizes()) {
        const auto img = random_binary(rng, w, h, 0.6);
        const auto bits = pack<std::uint8_t>(img.view());
        const auto dev = upload(bits.view());
        for (const auto& b :
             {border{border_mode::ignore}, border{border_mode::constant, 1}, border{border_mode::mirror}}) {
            device_bit_image out(w, h);
            hit_or_miss(dev.view(), out.view(), structuring_element::hline(3), structuring_element::vline(3), b);
            host_bit_image cpu(w, h);
            hit_or_miss(bits.view(), cpu.view(), structuring_element::hline(3), structuring_element::vline(3), b);
            ASSERT_TRUE(equal_images<std::uint8_t>(unpack<std::uint8_t>(download(out.view()).view()).view(),
                                                   unpack<std::uint8_t>(cpu.view()).view()))
                << w << "x" << h << " " << to_string(b.mode);
        }
    }
}

#if defined(GRANULA_HAVE_CUDA)
// The general segment pass, not reachable through today's structuring elements:
// against the CPU's (itself tested against brute force in binary_test.cpp).
TEST(BinaryCuda, GeneralSegmentPassEqualsCpu) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(27);
    const std::pair<int, int> steps[] = {{1, 1}, {1, -1}, {2, 1}, {-1, 2}, {1, 0}, {0, 1}, {3, 0}};
    for (const auto& [w, h] : sizes())
        for (const auto& [dx, dy] : steps)
            for (const bool dilate : {false, true})
                for (const bool pad : {false, true}) {
                    const auto img = random_binary(rng, w, h, dilate ? 0.1 : 0.9);
                    const auto bits = pack<std::uint8_t>(img.view());
                    detail::bit_pass p;
                    p.dir = detail::bit_pass::direction::general;
                    p.length = std::uniform_int_distribution<std::int64_t>(1, 70)(rng);
                    p.start = -std::uniform_int_distribution<std::int64_t>(0, p.length - 1)(rng);
                    p.dx = dx;
                    p.dy = dy;
                    p.dilate = dilate;
                    p.mode = border_mode::constant;
                    p.pad = pad;
                    host_bit_image cpu(w, h);
                    simd_scalar::bit_segment_pass(bits.view(), cpu.view(), p);
                    const auto dev = upload(bits.view());
                    device_bit_image out(w, h);
                    cuda::bit_segment_pass(dev.view(), out.view(), p, {});
                    ASSERT_TRUE(equal_images<std::uint8_t>(unpack<std::uint8_t>(download(out.view()).view()).view(),
                                                           unpack<std::uint8_t>(cpu.view()).view()))
                        << w << "x" << h << " step (" << dx << ", " << dy << ") length " << p.length;
                }
}
#endif

TEST(BinaryCuda, Errors) {
    GRANULA_REQUIRE_GPU();
    device_bit_image a(10, 5), b(10, 6);
    EXPECT_THROW(binary_erosion(a.view(), b.view(), structuring_element::square(3)), invalid_argument);
    EXPECT_THROW(binary_erosion(a.view(), a.view(), structuring_element::square(3), {border_mode::constant, 3}),
                 invalid_argument);
    device_image<std::uint8_t> px(10, 5);
    EXPECT_THROW(pack<std::uint8_t>(px.view(), a.view(), 300), invalid_argument);
    EXPECT_THROW(pack<std::uint8_t>(px.view(), b.view()), invalid_argument);
}

}  // namespace
}  // namespace granula
