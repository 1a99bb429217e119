// The CUDA Gaussian against the CPU backend (which the CPU tests check against the reference):
// within 1e-5 of the image's scale for the block-parallel recursion and fir, on sizes that
// cut lines into one, several and partial chunks, strided device sub-views, every pixel type,
// border mode and order. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#if defined(GRANULA_TEST_CUDART)
#include <cuda_runtime.h>
#endif

#include "granula/granula.hpp"
#include "support/random_images.hpp"
#include "support/require_gpu.hpp"

namespace granula {
namespace {


constexpr border_mode modes[] = {border_mode::constant, border_mode::nearest, border_mode::reflect,
                                 border_mode::mirror, border_mode::wrap};

using test_support::random_uniform_image;

// Runs params on the GPU through strided device views and on the CPU; returns the largest
// difference relative to the larger of the input's and the result's scale. odd_strides: rows
// an odd number of elements apart, starting off any alignment (else the device's padded rows,
// from column x0 of the buffer on).
template <class T, class U>
double gpu_vs_cpu(std::mt19937_64& rng, std::int64_t w, std::int64_t h, const gaussian_params& p,
                  bool odd_strides = false, std::int64_t x0 = 3) {
    const auto in = random_uniform_image<T>(rng, w, h);
    host_image<U> want(w, h);
    bool done = false;
    if constexpr (std::is_same_v<U, float>) {
        // auto resolves per axis, and differently on the CPU (recursive5 above the fir threshold):
        // the CPU runs what the GPU resolves to, one axis at a time (its own order of passes).
        done = p.method == gaussian_method::automatic;
        for (int axis = 0; done && axis < 2; ++axis) {
            gaussian_params one = p;
            one.sigma[1 - axis] = 0;
            one.method = resolve_gaussian_method(p.method, p.sigma[axis], device::cuda);
            if (axis == 0)
                gaussian<T, U>(host_view<const T>(in.view()), want.view(), one);
            else
                gaussian<U, U>(host_view<const U>(want.view()), want.view(), one);
        }
    }
    if (!done) gaussian<T, U>(host_view<const T>(in.view()), want.view(), p);
    const std::int64_t in_stride = w + 5 + w % 2, out_stride = w + 3 + w % 2;
    device_image<T> din_buffer(odd_strides ? in_stride * h + 3 : w + 5, odd_strides ? 1 : h + 2);
    device_image<U> dout_buffer(odd_strides ? out_stride * h + 1 : w + 3, odd_strides ? 1 : h + 1);
    const device_view<T> din = odd_strides ? device_view<T>(din_buffer.view().data() + 3, w, h, in_stride)
                                           : din_buffer.view().subview(x0, 1, w, h);
    const device_view<U> dout = odd_strides ? device_view<U>(dout_buffer.view().data() + 1, w, h, out_stride)
                                            : dout_buffer.view().subview(1, 1, w, h);
    copy<T>(host_view<const T>(in.view()), din);
    gaussian<T, U>(device_view<const T>(din), dout, p);
    const host_image<U> got = download<U>(device_view<const U>(dout));
    double scale = 1e-30, diff = 0;
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            scale = std::max({scale, std::abs(double(in.view()(y, x))), std::abs(double(want.view()(y, x)))});
            diff = std::max(diff, std::abs(double(got.view()(y, x)) - double(want.view()(y, x))));
        }
    if constexpr (!std::is_floating_point_v<U>) return diff;  // integer results: in units of the type
    return diff / scale;
}

const std::int64_t sizes[][2] = {{1, 1}, {1, 23}, {19, 1}, {37, 29}, {300, 257}, {70, 600}};

TEST(GaussianCuda, EqualsTheCpuForDericheAndFirEveryModeOrderAndSize) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(11);
    for (auto [w, h] : sizes)
        for (border_mode m : modes)
            for (gaussian_method method : {gaussian_method::deriche, gaussian_method::fir})
                for (int order = 0; order <= 2; ++order) {
                    gaussian_params p;
                    p.method = method;
                    p.sigma = {method == gaussian_method::fir ? 1.7 : 4.5, method == gaussian_method::fir ? 2.2 : 9.0};
                    p.order = {order, (order + 1) % 3};
                    p.mode = {m, m};
                    p.cval = 3.0;
                    const std::string what = std::string(to_string(method)) + " " + std::string(to_string(m)) +
                                             " order " + std::to_string(order) + " size " + std::to_string(w) + "x" +
                                             std::to_string(h);
                    EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p)), 1e-5) << what;
                    if (order == 0) {
                        EXPECT_LE((gpu_vs_cpu<std::uint8_t, float>(rng, w, h, p)), 1e-5) << what;
                        EXPECT_LE((gpu_vs_cpu<std::uint16_t, std::uint16_t>(rng, w, h, p)), 1.0) << what;
                        EXPECT_LE((gpu_vs_cpu<std::uint8_t, std::uint8_t>(rng, w, h, p)), 1.0) << what;
                    }
                }
}

// fir runs one tiled kernel per axis while the taps fit (up to 511 per axis), one thread per
// pixel beyond; auto mixes fir and deriche axes (sigmas where the CPU's auto picks the same
// methods).
TEST(GaussianCuda, FirTilesLongKernelsAndMixedAxes) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(14);
    struct setting {
        gaussian_method method;
        double s0, s1;
    };
    const setting settings[] = {{gaussian_method::fir, 5.0, 12.0},      {gaussian_method::fir, 20.0, 3.0},
                                {gaussian_method::fir, 0.0, 6.0},       {gaussian_method::fir, 6.0, 0.0},
                                {gaussian_method::fir, 15.9, 15.9},     {gaussian_method::automatic, 20.0, 2.5},
                                {gaussian_method::automatic, 2.5, 40.0}};
    for (const setting& c : settings)
        for (border_mode m : modes) {
            gaussian_params p;
            p.method = c.method;
            p.sigma = {c.s0, c.s1};
            p.order = {m == border_mode::wrap ? 1 : 0, m == border_mode::mirror ? 2 : 0};
            p.mode = {m, m};
            p.cval = -2.0;
            const std::string what = std::string(to_string(c.method)) + " " + std::string(to_string(m)) + " sigma " +
                                     std::to_string(c.s0) + ", " + std::to_string(c.s1);
            EXPECT_LE((gpu_vs_cpu<float, float>(rng, 131, 197, p)), 1e-5) << what;
        }
    gaussian_params p = gaussian_params::isotropic(7.0);
    p.method = gaussian_method::fir;
    EXPECT_LE((gpu_vs_cpu<std::uint8_t, std::uint8_t>(rng, 150, 70, p)), 1.0);
    EXPECT_LE((gpu_vs_cpu<std::uint16_t, float>(rng, 64, 128, p)), 1e-5);
}

// The fir tiles' edges: 32 columns x 256 rows down the columns, 32 rows x 128 columns along
// the rows; sizes one off those, 1 x N and N x 1, radii beyond the tile and the image, the
// one-thread-per-pixel pass past 511 taps (sigma 70), odd strides, every mode, order and
// input type.
TEST(GaussianCuda, FirTileEdgesRadiiAndStrides) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(17);
    const std::int64_t edge_sizes[][2] = {{31, 257}, {33, 255}, {129, 513}, {128, 256}, {1, 700}, {700, 1}, {260, 40}};
    const double sigmas[][2] = {{1.2, 0.8}, {9.5, 40.0}, {70.0, 3.0}};
    for (auto [w, h] : edge_sizes)
        for (auto [s0, s1] : sigmas)
            for (border_mode m : modes)
                for (int order = 0; order <= 2; ++order) {
                    gaussian_params p;
                    p.method = gaussian_method::fir;
                    p.sigma = {s0, s1};
                    p.order = {order, (order + 2) % 3};
                    p.mode = {m, m};
                    p.cval = 1.5;
                    const std::string what = std::string(to_string(m)) + " order " + std::to_string(order) + " sigma " +
                                             std::to_string(s0) + ", " + std::to_string(s1) + " size " +
                                             std::to_string(w) + "x" + std::to_string(h);
                    EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, true)), 1e-5) << what;
                    if (order == 0) {
                        EXPECT_LE((gpu_vs_cpu<std::uint8_t, std::uint8_t>(rng, w, h, p, true)), 1.0) << what;
                        EXPECT_LE((gpu_vs_cpu<std::uint16_t, float>(rng, w, h, p)), 1e-5) << what;
                    }
                }
}

// The row pass takes float rows 16-byte aligned (the image between the passes; a float input's
// rows) by bulk copy, with the border's samples filled in at the rows' ends, others staged by
// the lanes: rows alone from aligned and odd views, both axes from every type; widths one off
// a segment (512) and a 16-float line, heights one off a block's rows (32), radius 1-3 (taps
// behind 3-1 zero taps), 5, 20 and 255 (the largest tile).
TEST(GaussianCuda, FirRowsBulkCopyEdgesRadiiAndLayouts) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(19);
    const std::int64_t shapes[][2] = {{511, 33}, {512, 31}, {513, 65}, {1028, 3}, {1541, 2}, {12, 40}, {20, 1}};
    const double sigmas[] = {0.3, 0.5, 0.7, 1.2, 5.0, 63.7};
    for (auto [w, h] : shapes)
        for (double s : sigmas)
            for (border_mode m : modes) {
                gaussian_params p;
                p.method = gaussian_method::fir;
                p.sigma = {0, s};
                p.mode = {m, m};
                p.cval = 2.5;
                const std::string what = std::string(to_string(m)) + " sigma " + std::to_string(s) + " size " +
                                         std::to_string(w) + "x" + std::to_string(h);
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, false, 4)), 1e-5) << what;
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, true)), 1e-5) << what;
                EXPECT_LE((gpu_vs_cpu<std::uint8_t, float>(rng, w, h, p, false, 4)), 1e-5) << what;
                p.sigma = {1.5, s};
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, true)), 1e-5) << what;
                EXPECT_LE((gpu_vs_cpu<std::uint8_t, std::uint8_t>(rng, w, h, p)), 1.0) << what;
                EXPECT_LE((gpu_vs_cpu<std::uint16_t, std::uint16_t>(rng, w, h, p, true)), 1.0) << what;
            }
}

// Down the columns float images 16-byte aligned take their tiles (128 rows, 4 tiles per block)
// by bulk copy, rows outside the image filled in through the border mode; others are staged by
// the threads: columns alone from aligned and odd views and from uint8, both axes from float;
// heights one off a tile and a block's tiles, several blocks down a column, widths one off 32,
// radius 1, 5, 20, 100 and 255 (tiles of 1 to 3 boxes).
TEST(GaussianCuda, FirColumnsBulkCopyEdgesRadiiAndLayouts) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(23);
    const std::int64_t shapes[][2] = {{31, 127}, {33, 129}, {64, 512}, {20, 513}, {100, 1}, {40, 1100}};
    const double sigmas[] = {0.3, 1.2, 5.0, 25.0, 63.7};
    for (auto [w, h] : shapes)
        for (double s : sigmas)
            for (border_mode m : modes) {
                gaussian_params p;
                p.method = gaussian_method::fir;
                p.sigma = {s, 0};
                p.mode = {m, m};
                p.cval = -1.5;
                const std::string what = std::string(to_string(m)) + " sigma " + std::to_string(s) + " size " +
                                         std::to_string(w) + "x" + std::to_string(h);
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, false, 4)), 1e-5) << what;
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, true)), 1e-5) << what;
                EXPECT_LE((gpu_vs_cpu<std::uint8_t, float>(rng, w, h, p, false, 4)), 1e-5) << what;
                p.sigma = {s, 1.5};
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, false, 4)), 1e-5) << what;
            }
}

// An infinite or NaN sample reaches exactly the outputs within the radius, as on the CPU (scipy's
// sum over the 2r + 1 taps): the tile kernels' zero taps past the radius (up to 3 a side) read
// samples there too, and 0 x inf must not turn the outputs beside that reach into NaN. +inf and
// NaN pixels in the middle, near the ends and at the corners; each axis alone and both; radii
// 1-3 (1-3 lead zeros along the rows), 20 and 22; bulk copies (aligned rows) and the lanes'
// staging (odd strides); orders 0-2 (order 1's centre tap is 0: 0 x inf there is NaN on both).
TEST(GaussianCuda, FirNonFiniteSamplesReachOnlyTheirRadius) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(29);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::int64_t shapes[][2] = {{600, 300}, {45, 530}};
    const double sigmas[] = {0.3, 0.5, 0.7, 5.0, 5.6};
    for (auto [w, h] : shapes) {
        auto in = random_uniform_image<float>(rng, w, h);
        const std::int64_t at[][3] = {{w / 2, h / 2, 0}, {w / 3, h / 5, 1}, {0, 0, 0}, {w - 1, h - 1, 1},
                                      {w - 2, 7, 0},     {5, h - 3, 0}};
        for (auto [x, y, is_nan] : at) in.view()(y, x) = is_nan ? nan : inf;
        for (double s : sigmas)
            for (int axes = 0; axes < 3; ++axes)
                for (int order = 0; order <= 2; ++order)
                    for (bool odd : {false, true}) {
                        gaussian_params p;
                        p.method = gaussian_method::fir;
                        p.sigma = {axes == 1 ? 0.0 : s, axes == 0 ? 0.0 : s};
                        p.order = {order, order};
                        p.mode = {border_mode::reflect, border_mode::constant};
                        p.cval = 0.5;
                        const auto want = gaussian<float>(host_view<const float>(in.view()), p);
                        const std::int64_t stride = odd ? w + 3 : (w + 31) / 32 * 32;
                        device_image<float> buffer(stride * h + 1, 1);
                        const device_view<float> din(buffer.view().data() + (odd ? 1 : 0), w, h, stride);
                        device_image<float> dout(w, h);
                        copy<float>(host_view<const float>(in.view()), din);
                        gaussian<float, float>(device_view<const float>(din), dout.view(), p);
                        const auto got = download<float>(device_view<const float>(dout.view()));
                        double scale = 10;  // the inputs' (finite) range, or the result's where larger
                        for (std::int64_t yy = 0; yy < h; ++yy)
                            for (std::int64_t xx = 0; xx < w; ++xx)
                                if (std::isfinite(want.view()(yy, xx)))
                                    scale = std::max(scale, std::abs(double(want.view()(yy, xx))));
                        int wrong = 0, nans = 0;
                        for (std::int64_t yy = 0; yy < h; ++yy)
                            for (std::int64_t xx = 0; xx < w; ++xx) {
                                const float g = got.view()(yy, xx), e = want.view()(yy, xx);
                                nans += std::isnan(e);
                                const bool same = std::isnan(e) || std::isinf(e)
                                                      ? (std::isnan(g) && std::isnan(e)) || g == e
                                                      : std::abs(double(g) - double(e)) <= 1e-5 * scale;
                                wrong += !same;
                            }
                        EXPECT_EQ(wrong, 0) << w << "x" << h << " sigma " << s << " axes " << axes << " order "
                                            << order << (odd ? " odd stride" : " aligned");
                        EXPECT_GT(nans, 0);  // the NaN pixels reach the result
                    }
    }
}

TEST(GaussianCuda, OneAxisLargeSigmaAndLargeImage) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(12);
    gaussian_params p;
    p.method = gaussian_method::deriche;
    p.sigma = {0, 150.0};
    EXPECT_LE((gpu_vs_cpu<float, float>(rng, 1000, 40, p)), 1e-5);
    p.sigma = {150.0, 0};
    EXPECT_LE((gpu_vs_cpu<float, float>(rng, 40, 1000, p)), 1e-5);
    p = gaussian_params::isotropic(20.0);
    EXPECT_LE((gpu_vs_cpu<float, float>(rng, 2048, 1536, p)), 1e-5);
    p = gaussian_params::isotropic(0.0);  // sigma 0: a conversion only
    EXPECT_EQ((gpu_vs_cpu<std::uint16_t, float>(rng, 33, 17, p)), 0.0);
}

TEST(GaussianCuda, Recursive6IsCpuOnlyForNow) {
    GRANULA_REQUIRE_GPU();
    device_image<float> img(16, 16);
    gaussian_params p = gaussian_params::isotropic(5.0);
    p.method = gaussian_method::recursive6;
    try {
        gaussian<float, float>(device_view<const float>(img.view()), img.view(), p);
        ADD_FAILURE() << "no exception";
    } catch (const unsupported& e) {
        EXPECT_NE(std::string(e.what()).find("recursive6"), std::string::npos) << e.what();
    }
}

// The block-parallel recursion's cuts: lines of many chunks and a partial one, line counts that
// are not a multiple of a block's, extensions longer than the line (sigma 70), each axis alone
// and both, odd strides; then long lines (625 and 4375 chunks, each axis).
TEST(GaussianCuda, DericheChunksEveryModeAxisAndStride) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(16);
    const std::int64_t cut_sizes[][2] = {{1000, 45}, {45, 1000}, {290, 263}, {33, 1}, {1, 700}, {513, 31}};
    for (auto [w, h] : cut_sizes)
        for (border_mode m : modes)
            for (double sigma : {1.2, 70.0})
                for (int axes = 0; axes < 3; ++axes) {
                    gaussian_params p;
                    p.method = gaussian_method::deriche;
                    p.sigma = {axes == 1 ? 0.0 : sigma, axes == 0 ? 0.0 : 0.7 * sigma};
                    p.order = {axes == 2 && m == border_mode::reflect ? 1 : 0, axes == 2 && m == border_mode::wrap ? 2 : 0};
                    p.mode = {m, m};
                    p.cval = -1.5;
                    const std::string what = std::string(to_string(m)) + " sigma " + std::to_string(sigma) + " axes " +
                                             std::to_string(axes) + " size " + std::to_string(w) + "x" + std::to_string(h);
                    EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p, true)), 1e-5) << what;
                    EXPECT_LE((gpu_vs_cpu<std::uint8_t, std::uint8_t>(rng, w, h, p, true)), 1.0) << what;
                }
    for (std::int64_t length : {20000, 140000})
        for (border_mode m : {border_mode::reflect, border_mode::constant}) {
            gaussian_params p;
            p.method = gaussian_method::deriche;
            p.mode = {m, m};
            p.sigma = {0.0, 9.0};
            EXPECT_LE((gpu_vs_cpu<float, float>(rng, length, 3, p)), 1e-5) << "rows of " << length;
            p.sigma = {9.0, 0.0};
            EXPECT_LE((gpu_vs_cpu<float, float>(rng, 3, length, p, true)), 1e-5) << "columns of " << length;
        }
}

// The recursion's tiles (8 chunks of 32 samples from the line's first, 32 lines per block;
// states move between the kernels per tile): lengths one off a multiple of 256, lines shorter
// than a chunk, line counts one past a block's 32; each axis alone.
TEST(GaussianCuda, DericheTilesLineLengthsAndExtensions) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(18);
    for (std::int64_t n : {1, 31, 32, 250, 256, 257, 506, 512, 513, 768, 1100})
        for (border_mode m : {border_mode::nearest, border_mode::reflect, border_mode::wrap})
            for (double sigma : {2.0, 30.0}) {
                gaussian_params p;
                p.method = gaussian_method::deriche;
                p.mode = {m, m};
                const std::string what = std::string(to_string(m)) + " sigma " + std::to_string(sigma) + " length " +
                                         std::to_string(n);
                p.sigma = {0.0, sigma};
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, n, 33, p)), 1e-5) << "rows, " << what;
                p.sigma = {sigma, 0.0};
                EXPECT_LE((gpu_vs_cpu<float, float>(rng, 33, n, p, true)), 1e-5) << "columns, " << what;
            }
}

// The entry states of the line's ends (the recursions over the whole border extension): for
// wrap, reflect and mirror computed from the line's own states, so sigmas far beyond the line
// (the extension repeats it many times) and lines shorter than a chunk, of 2 and 3 samples
// (mirror's period 2n - 2), one off a chunk and a tile, of whole tiles (no cut last tile: one
// output launch), and lines of 6 tiles, whose middle tiles lie beyond the reach of both ends at
// the smaller sigmas; every mode and order, each axis.
TEST(GaussianCuda, DericheEntryStatesEveryModeOrderAndLength) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(19);
    for (std::int64_t n : {1, 2, 3, 4, 5, 31, 33, 255, 256, 257, 512, 700, 1500})
        for (border_mode m : modes)
            for (double sigma : {3.0, 40.0, 400.0})
                for (int order = 0; order <= 2; ++order) {
                    gaussian_params p;
                    p.method = gaussian_method::deriche;
                    p.mode = {m, m};
                    p.cval = 0.5;
                    p.order = {order, order};
                    const std::string what = std::string(to_string(m)) + " sigma " + std::to_string(sigma) +
                                             " order " + std::to_string(order) + " length " + std::to_string(n);
                    p.sigma = {0.0, sigma};
                    EXPECT_LE((gpu_vs_cpu<float, float>(rng, n, 5, p)), 1e-5) << "rows, " << what;
                    p.sigma = {sigma, 0.0};
                    EXPECT_LE((gpu_vs_cpu<float, float>(rng, 5, n, p, true)), 1e-5) << "columns, " << what;
                }
}

#if defined(GRANULA_TEST_CUDART)
// Work runs on the stream it is given: queue everything on a fresh stream and synchronise only
// that one. The recursion's lines cut their last tile on both axes (1000 x 700), on neither
// (512 x 768: one output launch per axis) and on one (768 x 300).
TEST(GaussianCuda, RunsOnTheGivenStream) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(21);
    cudaStream_t raw = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), cudaSuccess);
    const std::pair<std::int64_t, std::int64_t> shapes[] = {{1000, 700}, {512, 768}, {768, 300}};
    for (auto [w, h] : shapes)
        for (border_mode m : {border_mode::reflect, border_mode::nearest}) {
            const auto img = random_uniform_image<float>(rng, w, h);
            gaussian_params p = gaussian_params::isotropic(20.0);
            p.method = gaussian_method::deriche;
            p.mode = {m, m};
            const auto want = gaussian<float>(host_view<const float>(img.view()), p);
            const stream s(raw);
            device_image<float> in(w, h), out(w, h);
            host_image<float> got(w, h);
            copy<float>(host_view<const float>(img.view()), in.view(), s);
            gaussian<float, float>(device_view<const float>(in.view()), out.view(), p, s);
            copy<float>(device_view<const float>(out.view()), got.view(), s);
            s.synchronize();
            double diff = 0;
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t x = 0; x < w; ++x)
                    diff = std::max(diff, std::abs(double(got.view()(y, x)) - double(want.view()(y, x))));
            EXPECT_LE(diff, 1e-4) << w << "x" << h << " " << to_string(m);  // inputs in [0, 10)
        }
    cudaStreamDestroy(raw);
}
#endif

TEST(GaussianCuda, InPlace) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(13);
    const auto in = random_uniform_image<float>(rng, 129, 65);
    const gaussian_params p = gaussian_params::isotropic(5.0);
    gaussian_params on_cpu = p;  // the method auto picks on the GPU
    on_cpu.method = resolve_gaussian_method(p.method, 5.0, device::cuda);
    const auto want = gaussian<float>(host_view<const float>(in.view()), on_cpu);
    device_image<float> d = upload<float>(host_view<const float>(in.view()));
    gaussian<float, float>(device_view<const float>(d.view()), d.view(), p);
    const auto got = download<float>(device_view<const float>(d.view()));
    for (std::int64_t y = 0; y < 65; ++y)
        for (std::int64_t x = 0; x < 129; ++x) ASSERT_NEAR(got.view()(y, x), want.view()(y, x), 1e-4);
}

// The seed paper's one-way scheme and the exact two-way split are the CPU's sequential recursion.
TEST(GaussianCuda, YvvOneWayAndExactTwoWayEqualTheCpu) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(14);
    for (auto [w, h] : sizes)
        for (border_mode m : modes)
            for (gaussian_method method : {gaussian_method::yvv1995, gaussian_method::yvv2002})
                for (gaussian_split split : {gaussian_split::one_way, gaussian_split::two_way_exact}) {
                    gaussian_params p;
                    p.method = method;
                    p.split = split;
                    p.sigma = {2.5, 9.0};
                    p.mode = {m, m};
                    p.cval = 3.0;
                    const std::string what = std::string(to_string(method)) + " " + std::string(to_string(split)) +
                                             " " + std::string(to_string(m)) + " size " + std::to_string(w) + "x" +
                                             std::to_string(h);
                    EXPECT_LE((gpu_vs_cpu<float, float>(rng, w, h, p)), 1e-5) << what;
                    EXPECT_LE((gpu_vs_cpu<std::uint8_t, float>(rng, w, h, p)), 1e-5) << what;
                    EXPECT_LE((gpu_vs_cpu<std::uint8_t, std::uint8_t>(rng, w, h, p)), 1.0) << what;
                }
}

// The paper's two-way split: the middle pixel of each line is the sampled Gaussian (fir with the
// same truncate), and the halves, started from it instead of from each other's outputs, are off
// the sequential recursion by far more than rounding, yet still a blur of the input.
TEST(GaussianCuda, YvvTwoWayIsThePapersApproximation) {
    GRANULA_REQUIRE_GPU();
    std::mt19937_64 rng(15);
    const std::int64_t w = 301, h = 40;
    const auto in = random_uniform_image<float>(rng, w, h);
    gaussian_params p;
    p.method = gaussian_method::yvv1995;
    p.sigma = {0, 6.0};  // along the rows only
    p.mode = {border_mode::reflect, border_mode::reflect};
    const auto sequential = gaussian<float>(host_view<const float>(in.view()), p);
    gaussian_params fir = p;
    fir.method = gaussian_method::fir;
    const auto sampled = gaussian<float>(host_view<const float>(in.view()), fir);
    p.split = gaussian_split::two_way;
    const device_image<float> din = upload<float>(host_view<const float>(in.view()));
    device_image<float> dout(w, h);
    gaussian<float, float>(device_view<const float>(din.view()), dout.view(), p);
    const auto got = download<float>(device_view<const float>(dout.view()));
    double scale = 0, off = 0, off_blur = 0;
    for (std::int64_t y = 0; y < h; ++y) {
        EXPECT_NEAR(got.view()(y, w / 2), sampled.view()(y, w / 2), 1e-5) << "row " << y;
        for (std::int64_t x = 0; x < w; ++x) {
            scale = std::max(scale, std::abs(double(in.view()(y, x))));
            off = std::max(off, std::abs(double(got.view()(y, x)) - sequential.view()(y, x)));
            off_blur = std::max(off_blur, std::abs(double(in.view()(y, x)) - sequential.view()(y, x)));
        }
    }
    EXPECT_GT(off, 1e-3 * scale);
    EXPECT_LT(off, 0.5 * off_blur);
}

}  // namespace
}  // namespace granula
