// Differential tests of the CUDA morphology backend: bit for bit against the brute-force
// reference (tests/reference) and against the CPU backend, on random sizes, strided and
// misaligned device sub-views, every pixel type, border mode and operation, lengths from 1 to
// beyond the image, and NaN inputs. Every test that needs a GPU skips without one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#if defined(GRANULA_TEST_CUDART)
#include <cuda_runtime.h>
#endif

#include "granula/granula.hpp"
#include "reference/morphology_reference.hpp"
#include "support/morphology_cases.hpp"
#include "support/require_gpu.hpp"

namespace granula {
namespace {


using namespace granula::test_support;

template <class T>
host_image<T> random_image(std::mt19937_64& rng, std::int64_t w, std::int64_t h, int levels, double nan_rate = 0) {
    host_image<T> img(w, h);
    std::bernoulli_distribution nan(nan_rate);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            T v = random_pixel<T>(rng, levels);
            if constexpr (std::is_floating_point_v<T>)
                if (nan_rate > 0 && nan(rng)) v = std::numeric_limits<T>::quiet_NaN();
            img.view()(y, x) = v;
        }
    return img;
}

// A device view of w x h pixels inside a larger buffer: random offset, random row stride
// (which may leave rows unaligned), the rest of the buffer filled with random values so that
// reads outside the view show up as wrong results and writes outside it as changed guard bytes.
template <class T>
struct device_view_case {
    device_image<T> buffer;  // one long row
    device_view<T> view;
    std::vector<T> initial;  // the buffer's contents before the operation
    std::int64_t offset = 0, stride = 0;
};

// A w x h view at `offset` with row stride `stride` in a buffer of `total` random pixels.
template <class T>
device_view_case<T> guarded_view(std::mt19937_64& rng, std::int64_t w, std::int64_t h, std::int64_t stride,
                                 std::int64_t offset, std::int64_t total) {
    device_view_case<T> c;
    c.stride = stride;
    c.offset = offset;
    c.buffer = device_image<T>(total, 1);
    c.initial.resize(static_cast<std::size_t>(total));
    for (auto& v : c.initial) v = random_pixel<T>(rng, 256);
    copy<T>(host_view<const T>(c.initial.data(), total, 1), c.buffer.view());
    c.view = device_view<T>(c.buffer.data() + offset, w, h, stride);
    return c;
}

template <class T>
device_view_case<T> make_device_view(std::mt19937_64& rng, std::int64_t w, std::int64_t h, bool strided) {
    std::uniform_int_distribution<std::int64_t> pad(0, 13);
    const std::int64_t x0 = strided ? pad(rng) : 0, y0 = strided ? pad(rng) % 4 : 0;
    const std::int64_t stride = strided ? w + x0 + pad(rng) : w;
    return guarded_view<T>(rng, w, h, stride, y0 * stride + x0, stride * (h + y0) + 7);
}

// A device view whose rows start one 4-byte word into a buffer (word aligned, not 16-byte
// aligned), with a row stride one word longer than the row, guards around it as above.
template <class T>
device_view_case<T> make_word_aligned_view(std::mt19937_64& rng, std::int64_t w, std::int64_t h) {
    constexpr std::int64_t P = 4 / static_cast<std::int64_t>(sizeof(T));
    const std::int64_t stride = (w + P - 1) / P * P + P;
    return guarded_view<T>(rng, w, h, stride, stride + P, stride * (h + 2) + P);
}

// A device view whose rows start on 16-byte boundaries (the row stride rounded up to 16 pixels,
// then 16 more), guards after the last row.
template <class T>
device_view_case<T> make_aligned_view(std::mt19937_64& rng, std::int64_t w, std::int64_t h) {
    const std::int64_t stride = (w + 15) / 16 * 16 + 16;
    return guarded_view<T>(rng, w, h, stride, 0, stride * (h + 1));
}

// The view's pixels against `want`, and nothing outside the view changed (its guards).
template <class T>
::testing::AssertionResult view_equals(const device_view_case<T>& c, const host_image<T>& want) {
    const host_image<T> all = download<T>(c.buffer.view());
    const std::int64_t w = c.view.width(), h = c.view.height();
    host_image<T> got(w, h);
    for (std::int64_t i = 0; i < all.width(); ++i) {
        const std::int64_t rel = i - c.offset, y = rel >= 0 ? rel / c.stride : -1, x = rel >= 0 ? rel % c.stride : -1;
        const bool inside = rel >= 0 && y < h && x < w;
        if (inside)
            got.view()(y, x) = all.view()(0, i);
        else if (!same_pixel(all.view()(0, i), c.initial[static_cast<std::size_t>(i)]))
            return ::testing::AssertionFailure() << "wrote outside the output view at buffer element " << i;
    }
    return equal_images<T>(got.view(), want.view());
}

// `op` on the GPU from and to random device views (make_device_view) of `input`'s size equals
// `want`, writing nothing outside its output view.
template <class T>
::testing::AssertionResult cuda_equals(morphology_op op, host_view<const T> input, const structuring_element& se,
                                       border mode, std::mt19937_64& rng, bool strided, const host_image<T>& want) {
    auto in = make_device_view<T>(rng, input.width(), input.height(), strided);
    copy<T>(input, in.view);
    auto out = make_device_view<T>(rng, input.width(), input.height(), strided);
    morphology<T>(op, device_view<const T>(in.view), out.view, se, mode);
    return view_equals(out, want);
}

template <class T>
host_image<T> run_cpu(morphology_op op, host_view<const T> input, const structuring_element& se, border mode) {
    host_image<T> out(input.width(), input.height());
    morphology<T>(op, input, out.view(), se, mode);
    return out;
}

template <class T>
border make_border(border_mode mode) {
    return {mode, std::is_floating_point_v<T> ? 1.5 : 7.0};
}

std::string describe(std::uint64_t seed, int trial, std::int64_t w, std::int64_t h, const structuring_element& se,
                     morphology_op op, border_mode mode, bool strided) {
    std::ostringstream s;
    s << "seed " << seed << " trial " << trial << " image " << w << "x" << h << " " << se.to_string() << " "
      << to_string(op) << " mode " << to_string(mode) << (strided ? " strided" : " contiguous");
    return s.str();
}

template <class T>
class MorphologyCuda : public ::testing::Test {};
using PixelTypes = ::testing::Types<std::uint8_t, std::uint16_t, float>;
TYPED_TEST_SUITE(MorphologyCuda, PixelTypes);

// Every op and mode on small random images, against the brute-force reference and the CPU.
TYPED_TEST(MorphologyCuda, EqualsReferenceOnRandomInputs) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261121;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(2, 37), length(1, 90), coin(0, 3);
    for (int trial = 0; trial < 36; ++trial) {
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const auto img = random_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200);
        const std::int64_t a = length(rng), b = length(rng);
        const structuring_element se = trial % 3 == 0   ? structuring_element::hline(a)
                                       : trial % 3 == 1 ? structuring_element::vline(a)
                                                        : structuring_element::rectangle(a % 14 + 1, b % 14 + 1);
        const bool strided = trial % 2 == 1;
        for (auto mode : all_modes)
            for (auto op : all_ops) {
                const border bm = make_border<T>(mode);
                const auto want = reference::morphology<T>(op, img.view(), se, bm);
                const std::string what = describe(seed, trial, w, h, se, op, mode, strided);
                ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want)) << "vs reference: " << what;
                // The GPU's result equals want, so it equals the CPU's exactly when the CPU's does.
                const auto cpu = run_cpu<T>(op, img.view(), se, bm);
                ASSERT_TRUE(equal_images<T>(cpu.view(), want.view())) << "vs CPU: " << what;
            }
    }
}

// 1x1, 1xN, Nx1 images with lengths from 1 to far beyond the image.
TYPED_TEST(MorphologyCuda, DegenerateShapes) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 99;
    std::mt19937_64 rng(seed);
    const std::int64_t shapes[][2] = {{1, 1}, {1, 45}, {45, 1}, {2, 1}, {1, 2}, {300, 1}, {1, 300}};
    for (const auto& shape : shapes) {
        const std::int64_t w = shape[0], h = shape[1];
        const auto img = random_image<T>(rng, w, h, 50);
        for (std::int64_t L : {1, 2, 3, 4, 7, 33, 64, 65, 200, 1201}) {
            for (const auto& se : {structuring_element::hline(L), structuring_element::vline(L),
                                   structuring_element::rectangle(L, 3), structuring_element::rectangle(3, L)}) {
                for (auto mode : all_modes)
                    for (auto op : {morphology_op::erosion, morphology_op::dilation, morphology_op::opening,
                                    morphology_op::black_tophat}) {
                        const border bm = make_border<T>(mode);
                        const auto want = reference::morphology<T>(op, img.view(), se, bm);
                        const bool strided = L % 2 == 1;
                        ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want))
                            << "vs reference: " << describe(seed, 0, w, h, se, op, mode, strided);
                    }
            }
        }
    }
}

// Long windows: every chunk length, the coarse level (L >= 65) and its recursion (L > 2000),
// lengths beyond the image (arms clipped), against the reference.
TYPED_TEST(MorphologyCuda, LongWindowsEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 4242;
    std::mt19937_64 rng(seed);
    const std::int64_t lengths[] = {5, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65, 66, 96, 97, 127, 128, 129,
                                    130, 161, 255, 256, 257, 1000, 1001, 2113, 2200, 2801, 2900};
    for (const bool horizontal : {true, false}) {
        const std::int64_t n = 560, across = 3;  // n >= 530: lengths up to 4n + 1 reach the recursion
        const auto img = horizontal ? random_image<T>(rng, n, across, 180) : random_image<T>(rng, across, n, 180);
        for (const std::int64_t L : lengths) {
            const auto se = horizontal ? structuring_element::hline(L) : structuring_element::vline(L);
            for (auto mode : all_modes)
                for (auto op : {morphology_op::erosion, morphology_op::dilation}) {
                    const border bm = make_border<T>(mode);
                    const auto want = reference::morphology<T>(op, img.view(), se, bm);
                    const bool strided = L % 2 == 0;
                    ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want))
                        << "vs reference: " << describe(seed, 0, img.width(), img.height(), se, op, mode, strided);
                }
        }
    }
}

// Sizes around the kernels' tiles (128 columns, 32 row groups, 64-row runs), against the CPU.
TYPED_TEST(MorphologyCuda, EqualsCpuAroundTileSizes) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 77;
    std::mt19937_64 rng(seed);
    const std::int64_t sizes[][2] = {{31, 33},   {32, 32},  {33, 31},   {127, 129}, {128, 128}, {129, 127},
                                     {255, 65},  {257, 63}, {63, 257},  {65, 255},  {513, 130}, {130, 513},
                                     {1000, 70}, {70, 999}, {333, 333}, {129, 300}};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 220);
        for (std::int64_t L : {3, 15, 63, 100, 255, 700}) {
            ++trial;
            const structuring_element se = trial % 3 == 0   ? structuring_element::hline(L)
                                           : trial % 3 == 1 ? structuring_element::vline(L)
                                                            : structuring_element::rectangle(L, L / 3 + 1);
            const border_mode mode = all_modes[trial % 6];
            for (auto op : all_ops) {
                const border bm = make_border<T>(mode);
                const auto want = run_cpu<T>(op, img.view(), se, bm);
                const bool strided = trial % 2 == 0;
                ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want))
                    << "vs CPU: " << describe(seed, trial, w, h, se, op, mode, strided);
            }
        }
    }
}

// device_image rows are 128-byte aligned, so widths that are not a multiple of the 4-byte word
// take the packed kernels plus the one-column kernel for the last width % 4 columns.
TYPED_TEST(MorphologyCuda, AlignedRowsWithPartialWords) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 1234;
    std::mt19937_64 rng(seed);
    for (std::int64_t w : {1, 2, 3, 5, 6, 7, 9, 33, 130, 131}) {
        const std::int64_t h = 70 - w / 3;
        const auto img = random_image<T>(rng, w, h, 90);
        const auto dev = upload<T>(img.view());
        for (std::int64_t L : {3, 20, 70}) {
            for (const auto& se : {structuring_element::vline(L), structuring_element::rectangle(L / 3 + 1, L)})
                for (auto op : all_ops) {
                    const border bm = make_border<T>(all_modes[(w + L) % 6]);
                    const auto want = reference::morphology<T>(op, img.view(), se, bm);
                    device_image<T> out(w, h);
                    morphology<T>(op, dev.view(), out.view(), se, bm);
                    const auto got = download<T>(out.view());
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view()))
                        << describe(seed, 0, w, h, se, op, bm.mode, false) << " (aligned rows)";
                }
        }
    }
}

// The odd large image of the issue, against the CPU backend.
TYPED_TEST(MorphologyCuda, LargeOddImageEqualsCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 4097;
    std::mt19937_64 rng(seed);
    const auto img = random_image<T>(rng, 4097, 3001, 256);
    struct item {
        structuring_element se;
        morphology_op op;
        border_mode mode;
    };
    const item items[] = {{structuring_element::hline(255), morphology_op::erosion, border_mode::ignore},
                          {structuring_element::vline(101), morphology_op::erosion, border_mode::reflect},
                          {structuring_element::vline(1001), morphology_op::dilation, border_mode::nearest},
                          {structuring_element::hline(3), morphology_op::dilation, border_mode::wrap},
                          {structuring_element::rectangle(63, 5), morphology_op::opening, border_mode::mirror},
                          {structuring_element::rectangle(15, 15), morphology_op::white_tophat, border_mode::constant},
                          {structuring_element::square(3), morphology_op::gradient, border_mode::ignore}};
    for (const auto& it : items) {
        const border bm = make_border<T>(it.mode);
        const auto want = run_cpu<T>(it.op, img.view(), it.se, bm);
        ASSERT_TRUE(cuda_equals<T>(it.op, img.view(), it.se, bm, rng, true, want))
            << "vs CPU: " << describe(seed, 0, 4097, 3001, it.se, it.op, it.mode, true);
    }
}

// Lines at random angles and lengths, disks, diamonds, octagons, ellipses, random masks.
TYPED_TEST(MorphologyCuda, EveryElementEqualsReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261121;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(1, 37), coin(0, 3);
    const auto elements = assorted_elements(rng, 72);
    for (std::size_t e = 0; e < elements.size(); ++e) {
        const auto& se = elements[e];
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const auto img = random_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200);
        const auto mode = all_modes[e % std::size(all_modes)];
        const bool strided = e % 2 == 1;
        for (auto op : e % 4 == 0 ? std::vector<morphology_op>(std::begin(all_ops), std::end(all_ops))
                                  : std::vector<morphology_op>{morphology_op::erosion, morphology_op::dilation}) {
            const border bm = make_border<T>(mode);
            const auto want = reference::morphology<T>(op, img.view(), se, bm);
            ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want))
                << "vs reference: " << describe(seed, static_cast<int>(e), w, h, se, op, mode, strided);
        }
    }
}

// Each convention on the GPU equals its peer's definition (reference::peer_morphology).
TYPED_TEST(MorphologyCuda, ConventionsEqualTheirPeersDefinitions) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261122;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> size(1, 29), coin(0, 3);
    const auto elements = convention_elements(rng, 12);
    for (std::size_t e = 0; e < elements.size(); ++e) {
        const auto& se = elements[e];
        const std::int64_t w = coin(rng) == 0 ? 1 : size(rng), h = coin(rng) == 0 ? 1 : size(rng);
        const auto img = random_image<T>(rng, w, h, coin(rng) == 0 ? 3 : 200);
        const border given = make_border<T>(all_modes[e % std::size(all_modes)]);
        auto in = make_device_view<T>(rng, w, h, e % 2 == 1);
        copy<T>(img.view(), in.view);
        for (auto c : all_conventions)
            for (auto mode : {std::optional<border>{}, std::optional<border>{given}})
                for (auto op : all_ops) {
                    const auto want = reference::peer_morphology<T>(op, img.view(), se, c, mode.value_or(default_border(c)));
                    auto out = make_device_view<T>(rng, w, h, e % 2 == 1);
                    morphology<T>(op, device_view<const T>(in.view), out.view, se, c, mode);
                    ASSERT_TRUE(view_equals<T>(out, want))
                        << describe(seed, static_cast<int>(e), w, h, se, op, mode.value_or(default_border(c)).mode,
                                    e % 2 == 1)
                        << " convention " << to_string(c);
                }
    }
}

// Lines longer than the image along their dominant axis, which the front shortens under
// borders ignore and constant (structuring_element::shortened_for): against the reference
// with the whole line's footprint, every convention and mode; and a line far beyond the image.
TYPED_TEST(MorphologyCuda, LinesLongerThanTheImageEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(20261204);
    for (const auto& [w, h, se, i] : lines_longer_than_their_images()) {
        const auto img = random_image<T>(rng, w, h, i % 2 ? 5 : 200);
        const border b_mode = make_border<T>(all_modes[i % std::size(all_modes)]);
        auto in = make_device_view<T>(rng, w, h, i % 3 == 1);
        copy<T>(img.view(), in.view);
        for (auto c : all_conventions)
            for (auto op : all_ops) {
                const auto want = reference::peer_morphology<T>(op, img.view(), se, c, b_mode);
                auto out = make_device_view<T>(rng, w, h, i % 3 == 1);
                morphology<T>(op, device_view<const T>(in.view), out.view, se, c, b_mode);
                ASSERT_TRUE(view_equals<T>(out, want))
                    << describe(20261204, static_cast<int>(i), w, h, se, op, b_mode.mode, i % 3 == 1)
                    << " convention " << to_string(c);
            }
    }
    const auto img = random_image<T>(rng, 64, 48, 200);
    const auto far_line = structuring_element::line(100'000'000, 30);
    const auto want = reference::morphology<T>(morphology_op::opening, img.view(), far_line.shortened_for(64, 48));
    EXPECT_TRUE(cuda_equals<T>(morphology_op::opening, img.view(), far_line, {}, rng, true, want));
}

// Wide rows: the whole-row horizontal kernel with several tiles of thread runs per row (9000
// float32, 20000 uint8 columns), and rows too wide for shared memory (70000 columns), which take
// the tiled kernel with its coarse pass.
TYPED_TEST(MorphologyCuda, WideRowsEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 9000;
    std::mt19937_64 rng(seed);
    int trial = 0;
    for (const std::int64_t w : {9000, 20000, 70000}) {
        const std::int64_t h = 3 + w % 4;
        const auto img = random_image<T>(rng, w, h, 256);
        for (const std::int64_t L : {std::int64_t{3}, std::int64_t{64}, std::int64_t{1001}, std::int64_t{8193}, 3 * w}) {
            ++trial;
            const border_mode mode = all_modes[trial % std::size(all_modes)];
            const auto op = trial % 2 ? morphology_op::erosion : morphology_op::dilation;
            const auto se = structuring_element::hline(L);
            const border bm = make_border<T>(mode);
            const auto want = run_cpu<T>(op, img.view(), se, bm);
            const bool strided = trial % 3 == 0;
            ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want))
                << "vs CPU: " << describe(seed, trial, w, h, se, op, mode, strided);
        }
    }
}

// Long lines at many angles and large disks on a large odd image: the GPU equals the CPU.
TYPED_TEST(MorphologyCuda, LargeImageElementsEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    std::mt19937_64 rng(64);
    const auto img = random_image<T>(rng, 1531, 1097, 256, std::is_floating_point_v<T> ? 1e-5 : 0);
    std::uniform_real_distribution<double> angle(0.0, 180.0);
    std::vector<structuring_element> elements = {structuring_element::disk(31), structuring_element::octagon(9, 6),
                                                 structuring_element::line(1001, 45), structuring_element::line(301, 90)};
    for (int i = 0; i < 12; ++i) elements.push_back(structuring_element::line(i % 2 ? 301 : 63, angle(rng)));
    for (std::size_t e = 0; e < elements.size(); ++e) {
        const auto mode = all_modes[e % std::size(all_modes)];
        const auto op = e % 3 == 0 ? morphology_op::opening : e % 3 == 1 ? morphology_op::erosion : morphology_op::dilation;
        const border bm = make_border<T>(mode);
        const auto want = run_cpu<T>(op, img.view(), elements[e], bm);
        ASSERT_TRUE(cuda_equals<T>(op, img.view(), elements[e], bm, rng, true, want))
            << "vs CPU: " << describe(64, static_cast<int>(e), 1531, 1097, elements[e], op, mode, true);
    }
}

// Lines at angles around the diagonals and axes, on images wider than the sheared pass's block
// (512 uint8, 256 uint16 or 128 float32 columns, so interior blocks take its test-free paths)
// with widths that are not multiples of it, aligned rows and misaligned views, against the CPU
// (which the CPU tests hold to the reference); and images smaller than the line against the
// reference.
TYPED_TEST(MorphologyCuda, LinesAtAnglesEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 1411;
    std::mt19937_64 rng(seed);
    const double angles[] = {44.9, 45, 45.1, 89.9, 90.1, 134.9, 135, 135.1, 30, 10, 100, 170};
    const std::int64_t sizes[][2] = {{1283, 151}, {2050, 67}, {40, 25}};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 250);
        const auto dev = upload<T>(img.view());
        for (const std::int64_t L : {1, 2, 63, 1001})
            for (const double angle : angles) {
                ++trial;
                const auto se = structuring_element::line(L, angle);
                const border_mode mode = trial % 3 == 0 ? border_mode::reflect
                                         : trial % 3 == 1 ? border_mode::ignore
                                                          : border_mode::constant;
                const border bm = make_border<T>(mode);
                for (auto op : {morphology_op::erosion, morphology_op::dilation, morphology_op::opening}) {
                    if (op == morphology_op::opening && trial % 4 != 0) continue;
                    const bool small = w * h < 2000;
                    const auto want = small ? reference::morphology<T>(op, img.view(), se, bm)
                                            : run_cpu<T>(op, img.view(), se, bm);
                    const std::string what = describe(seed, trial, w, h, se, op, mode, false);
                    device_image<T> out(w, h);
                    morphology<T>(op, dev.view(), out.view(), se, bm);
                    const auto got = download<T>(out.view());
                    ASSERT_TRUE(equal_images<T>(got.view(), want.view())) << what << " (aligned rows)";
                    if (trial % 5 == 0) {
                        ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, true, want)) << what << " strided";
                    }
                }
            }
    }
}

// Diagonal lines, uint8 and uint16 under ignore and constant borders, run on the linear
// filters' scan-line passes down the rows (morphology_cuda.cu's diagonal_on_scan_lines; at 45
// degrees with the arms mirrored), the others (float32, OpenCV's reflected dilation element at
// even lengths, the borders that extend the image) on the sheared pass or the general path:
// every operation and border, both conventions whose dilation element differs, odd and even
// lengths and lengths past the image, images of one row or column, aligned rows and strided
// views, against the CPU (itself held to the reference) and, on small images, the reference.
TYPED_TEST(MorphologyCuda, DiagonalLinesEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 4545;
    std::mt19937_64 rng(seed);
    const std::int64_t sizes[][2] = {{1283, 151}, {130, 97}, {40, 25}, {517, 1}, {1, 300}};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 250);
        for (const std::int64_t L : {2, 3, 4, 63, 64, 101})
            for (const double angle : {45.0, 135.0})
                for (const border_mode mode : all_modes)
                    for (const convention c : {convention::granula, convention::opencv})
                        for (const morphology_op op : all_ops) {
                            ++trial;
                            const auto se = structuring_element::line(L, angle);
                            const border bm = make_border<T>(mode);
                            host_image<T> want(w, h);
                            if (c == convention::granula && w * h < 5000)
                                want = reference::morphology<T>(op, img.view(), se, bm);
                            else
                                morphology<T>(op, img.view(), want.view(), se, c, bm);
                            const bool strided = trial % 3 == 0;
                            auto in = make_device_view<T>(rng, w, h, strided);
                            copy<T>(img.view(), in.view);
                            auto out = make_device_view<T>(rng, w, h, strided);
                            morphology<T>(op, device_view<const T>(in.view), out.view, se, c, bm);
                            ASSERT_TRUE(view_equals<T>(out, want))
                                << describe(seed, trial, w, h, se, op, mode, strided)
                                << (c == convention::opencv ? " (OpenCV's convention)" : "");
                        }
    }
}

// The sheared pass's staged kernel (packed words: blocks of 127 stored words, 32 positions per
// stage): widths one off multiples of the block's 127 words, heights one off the stages, lines
// whose steps have different periods, lengths across the chunk lengths (2 .. 1001), erosion and
// dilation under ignore and constant borders (one sheared pass, in to out) and reflect (the
// general path), word-aligned views that are not 16-byte aligned, against the reference (the
// CPU for L = 1001, where the brute-force reference takes seconds an image).
TYPED_TEST(MorphologyCuda, ShearedPassEdgesEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    constexpr std::int64_t P = 4 / static_cast<std::int64_t>(sizeof(T));
    const std::uint64_t seed = 127;
    std::mt19937_64 rng(seed);
    const std::int64_t sizes[][2] = {{127 * P - 1, 33}, {127 * P, 32}, {254 * P + 1, 31}, {130, 97}};
    const double angles[] = {45, 135, 30, 63.43, 10, 100};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 250);
        for (const std::int64_t L : {2, 3, 9, 33, 64, 65, 130, 1001})
            for (const double angle : angles) {
                ++trial;
                const auto se = structuring_element::line(L, angle);
                const border_mode mode = trial % 3 == 0 ? border_mode::reflect
                                         : trial % 3 == 1 ? border_mode::ignore
                                                          : border_mode::constant;
                const border bm = make_border<T>(mode);
                const auto op = trial % 2 ? morphology_op::erosion : morphology_op::dilation;
                const auto want = L > 130 ? run_cpu<T>(op, img.view(), se, bm)
                                          : reference::morphology<T>(op, img.view(), se, bm);
                auto in = make_word_aligned_view<T>(rng, w, h);
                copy<T>(img.view(), in.view);
                auto out = make_word_aligned_view<T>(rng, w, h);
                morphology<T>(op, device_view<const T>(in.view), out.view, se, bm);
                ASSERT_TRUE(view_equals<T>(out, want))
                    << "vs reference: " << describe(seed, trial, w, h, se, op, mode, true);
            }
    }
}

// The runs kernel's pair levels (pair_levels.hpp): lines at angles whose periods differ (steps
// pointing left and right, horizontal and vertical runs, one to four pair levels over level 0
// or a doubling level), on images one off its tiles (128 words wide, 32 or 64 rows), erosion,
// dilation and opening under every border mode the general path takes, aligned rows and
// strided views, against the reference (the CPU for L = 255).
TYPED_TEST(MorphologyCuda, RunsPairLevelsEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    constexpr std::int64_t P = 4 / static_cast<std::int64_t>(sizeof(T));
    const std::uint64_t seed = 2026;
    std::mt19937_64 rng(seed);
    const std::int64_t sizes[][2] = {{128 * P + 1, 33}, {256 * P - 1, 31}, {37, 65}};
    const double angles[] = {5, 20, 30, 37, 60, 80, 100, 120, 150, 165};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 250);
        for (const std::int64_t L : {17, 41, 101, 255})
            for (const double angle : angles) {
                ++trial;
                const auto se = structuring_element::line(L, angle);
                const auto mode = all_modes[trial % std::size(all_modes)];
                const border bm = make_border<T>(mode);
                const auto op = trial % 3 == 0 ? morphology_op::opening
                                : trial % 3 == 1 ? morphology_op::erosion
                                                 : morphology_op::dilation;
                const auto want = L > 101 ? run_cpu<T>(op, img.view(), se, bm) : reference::morphology<T>(op, img.view(), se, bm);
                ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, trial % 2 == 0, want))
                    << "vs reference: " << describe(seed, trial, w, h, se, op, mode, trial % 2 == 0);
            }
    }
}

// Openings and closings (and top-hats) by one horizontal line, and by one vertical line for
// float32, take one fused kernel under ignore and constant borders (fused_opening.cuh): sizes
// one off its 256-row bands and 16-column strips, images shorter than the line's reach, odd and
// even lengths (origins), lengths 1, 2, 101 and 1001, misaligned views, NaN for float32.
TYPED_TEST(MorphologyCuda, FusedLineOpeningsEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261127;
    std::mt19937_64 rng(seed);
    const std::int64_t sizes[][2] = {{65, 257}, {64, 256}, {63, 255}, {17, 513}, {33, 511}, {257, 65},
                                     {256, 64}, {255, 63}, {40, 30},  {5, 3},    {1, 1},    {130, 9}};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 200, std::is_floating_point_v<T> ? 0.002 : 0);
        for (const std::int64_t L : {1, 2, 3, 8, 41, 64, 101, 1001}) {
            ++trial;
            const auto se = trial % 2 ? structuring_element::vline(L) : structuring_element::hline(L);
            const border_mode mode = trial % 3 == 0 ? border_mode::constant : border_mode::ignore;
            const border bm = make_border<T>(mode);
            for (auto op : {morphology_op::opening, morphology_op::closing,
                            trial % 4 == 0 ? morphology_op::white_tophat : morphology_op::black_tophat}) {
                const auto want = reference::morphology<T>(op, img.view(), se, bm);
                const bool strided = trial % 5 < 2;
                ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, strided, want))
                    << "vs reference: " << describe(seed, trial, w, h, se, op, mode, strided);
            }
        }
    }
}

// Uint8 and uint16 openings and closings (top-hats too) by one vertical line of up to 64 / 104
// pixels stream down 128-byte strips on rows aligned to 16 bytes (fused_opening.cuh); longer
// lines (65, 105) and float32 take other kernels: widths one off the strips and the 16-byte
// chunks, heights from one row to many segments, odd and even lengths, the origin in the middle
// and at the top (a column mask), both paddings, guards around the output.
TYPED_TEST(MorphologyCuda, StreamedVerticalOpeningsEqualReference) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261207;
    std::mt19937_64 rng(seed);
    const std::int64_t sizes[][2] = {{127, 700}, {128, 3}, {129, 200}, {300, 1}, {17, 513}, {1, 90}, {260, 64}};
    const morphology_op ops[] = {morphology_op::opening, morphology_op::closing, morphology_op::white_tophat,
                                 morphology_op::black_tophat};
    int trial = 0;
    for (const auto& s : sizes) {
        const std::int64_t w = s[0], h = s[1];
        const auto img = random_image<T>(rng, w, h, 200);
        for (const std::int64_t L : {2, 3, 4, 17, 64, 65, 101, 104, 105}) {
            ++trial;
            const footprint_mask column{1, L, 0, 0, std::vector<std::uint8_t>(static_cast<std::size_t>(L), 1)};
            const auto se = trial % 3 ? structuring_element::vline(L) : structuring_element::from_mask(column);
            const border bm = make_border<T>(trial % 2 ? border_mode::constant : border_mode::ignore);
            const auto op = ops[trial % 4];
            const auto want = reference::morphology<T>(op, img.view(), se, bm);
            auto in = make_aligned_view<T>(rng, w, h);
            copy<T>(img.view(), in.view);
            auto out = make_aligned_view<T>(rng, w, h);
            morphology<T>(op, device_view<const T>(in.view), out.view, se, bm);
            ASSERT_TRUE(view_equals(out, want)) << "vs reference: " << describe(seed, trial, w, h, se, op, bm.mode, false);
        }
    }
}

// The fused kernels' bands and tiles on a large image, both axes, against the CPU.
TYPED_TEST(MorphologyCuda, FusedLineOpeningsLargeImageEqualCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 8001;
    std::mt19937_64 rng(seed);
    const auto img = random_image<T>(rng, 2051, 1539, 256);
    int trial = 0;
    for (const std::int64_t L : {41, 100, 101, 301})
        for (const bool vertical : {true, false}) {
            ++trial;
            const auto se = vertical ? structuring_element::vline(L) : structuring_element::hline(L);
            const auto op = trial % 2 ? morphology_op::opening : morphology_op::closing;
            const border bm = make_border<T>(trial % 3 == 0 ? border_mode::constant : border_mode::ignore);
            const auto want = run_cpu<T>(op, img.view(), se, bm);
            ASSERT_TRUE(cuda_equals<T>(op, img.view(), se, bm, rng, trial % 3 == 1, want))
                << "vs CPU: " << describe(seed, trial, 2051, 1539, se, op, bm.mode, trial % 3 == 1);
        }
}

// Horizontal uint8 lines shorter than 256 pixels on aligned rows take the doubling kernel
// (row_doubling.cuh), for erosions and dilations and for openings and closings in one kernel: a
// warp per row segment, so rows of one to several segments, segment ends at every alignment the
// line's arms give, both stages' paddings.
TYPED_TEST(MorphologyCuda, FusedRowDoublingEqualsCpu) {
    GRANULA_REQUIRE_GPU();
    using T = TypeParam;
    const std::uint64_t seed = 20261202;
    std::mt19937_64 rng(seed);
    int trial = 0;
    for (const std::int64_t w : {1, 17, 700, 1024, 1025, 2051, 4100, 8000}) {
        const auto img = random_image<T>(rng, w, 9, 256);
        for (const std::int64_t L : {2, 3, 16, 17, 41, 64, 101, 128, 129, 200, 255}) {
            ++trial;
            const morphology_op ops[] = {morphology_op::opening, morphology_op::closing, morphology_op::erosion,
                                         morphology_op::dilation, morphology_op::white_tophat};
            const auto op = ops[trial % 5];
            const border bm = make_border<T>(trial % 3 == 0 ? border_mode::constant : border_mode::ignore);
            const auto se = structuring_element::hline(L);
            const auto want = run_cpu<T>(op, img.view(), se, bm);
            auto in = make_aligned_view<T>(rng, w, 9);
            copy<T>(img.view(), in.view);
            auto out = make_aligned_view<T>(rng, w, 9);
            morphology<T>(op, device_view<const T>(in.view), out.view, se, bm);
            ASSERT_TRUE(view_equals(out, want)) << "vs CPU: " << describe(seed, trial, w, 9, se, op, bm.mode, false);
        }
    }
}

// NaN anywhere in the window gives NaN, on the GPU exactly as in the reference; also a NaN cval.
TEST(MorphologyCudaNaN, NaNInputsEqualReference) {
    GRANULA_REQUIRE_GPU();
    const std::uint64_t seed = 31337;
    std::mt19937_64 rng(seed);
    int trial = 0;
    for (const auto& shape : {std::pair<std::int64_t, std::int64_t>{41, 23}, {200, 9}, {9, 200}}) {
        const auto img = random_image<float>(rng, shape.first, shape.second, 100, 0.02);
        for (std::int64_t L : {2, 3, 9, 40, 70, 150}) {
            ++trial;
            for (const auto& se : {structuring_element::hline(L), structuring_element::vline(L),
                                   structuring_element::rectangle(L / 4 + 1, L / 5 + 1)})
                for (auto mode : all_modes)
                    for (auto op : all_ops) {
                        const border bm{mode, trial % 3 == 0 ? std::numeric_limits<double>::quiet_NaN() : 0.25};
                        const auto want = reference::morphology<float>(op, img.view(), se, bm);
                        ASSERT_TRUE(cuda_equals<float>(op, img.view(), se, bm, rng, trial % 2 == 0, want))
                            << "vs reference: "
                            << describe(seed, trial, img.width(), img.height(), se, op, mode, trial % 2 == 0);
                    }
        }
    }
}

// Input and output may be the same view.
TEST(MorphologyCudaInPlace, SameViewEqualsCpu) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(5);
    const auto img = random_image<std::uint8_t>(rng, 301, 177, 256);
    for (const auto& se : {structuring_element::hline(40), structuring_element::rectangle(9, 70)}) {
        const auto want = run_cpu<std::uint8_t>(morphology_op::closing, img.view(), se, {});
        auto dev = upload<std::uint8_t>(img.view());
        closing(dev.view(), dev.view(), se);
        const auto got = download<std::uint8_t>(dev.view());
        ASSERT_TRUE(equal_images<std::uint8_t>(got.view(), want.view())) << se.to_string();
    }
}

#if defined(GRANULA_TEST_CUDART)
// Work runs on the stream it is given: queue it on a fresh stream, synchronise only that one.
TEST(MorphologyCudaStreams, RunsOnTheGivenStream) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(8);
    const auto img = random_image<float>(rng, 1000, 600, 256);
    const auto se = structuring_element::rectangle(101, 31);
    const auto want = run_cpu<float>(morphology_op::black_tophat, img.view(), se, {border_mode::reflect, 0});
    cudaStream_t raw = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), cudaSuccess);
    {
        const stream s(raw);
        device_image<float> in(1000, 600), out(1000, 600);
        copy<float>(img.view(), in.view(), s);
        black_tophat(in.view(), out.view(), se, {border_mode::reflect, 0}, s);
        host_image<float> got(1000, 600);
        copy<float>(out.view(), got.view(), s);
        s.synchronize();
        EXPECT_TRUE(equal_images<float>(got.view(), want.view()));
    }
    cudaStreamDestroy(raw);
}
#endif

// ---- errors -----------------------------------------------------------------------------------------
TEST(MorphologyCudaErrors, MismatchedOutputSize) {
    GRANULA_REQUIRE_GPU();
    device_image<std::uint8_t> in(40, 30), out(40, 31);
    EXPECT_THROW(erosion(in.view(), out.view(), structuring_element::hline(3)), invalid_argument);
    device_image<float> fin(40, 30), fout(39, 30);
    EXPECT_THROW(gradient(fin.view(), fout.view(), structuring_element::square(3)), invalid_argument);
}

TEST(MorphologyCudaErrors, UnrepresentableCval) {
    GRANULA_REQUIRE_GPU();
    device_image<std::uint8_t> in(8, 8), out(8, 8);
    EXPECT_THROW(erosion(in.view(), out.view(), structuring_element::hline(3), {border_mode::constant, 300.0}),
                 invalid_argument);
}

// Without a GPU, asking for device work is a clear error (cuda_error when the backend is built,
// unsupported when it is not), never a crash. The views are never dereferenced.
TEST(MorphologyCudaErrors, DeviceWorkWithoutGpu) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this test needs a machine without one";
    alignas(16) static std::uint8_t fake[64];
    const device_view<const std::uint8_t> in(fake, 8, 8);
    const device_view<std::uint8_t> out(fake, 8, 8);
    try {
        erosion(in, out, structuring_element::hline(3));
        FAIL() << "expected an error";
    } catch (const cuda_error& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    } catch (const unsupported& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    }
    EXPECT_ANY_THROW((device_image<float>(16, 16)));
}

}  // namespace
}  // namespace granula
