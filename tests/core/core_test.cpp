// The image model, pixel types, border names, device selection and settings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/parallel.hpp"
#include "core/recent_results.hpp"
#include "granula/granula.hpp"

namespace granula {
namespace {

TEST(Views, SubviewsShareMemoryAndCheckBounds) {
    host_image<std::uint16_t> img(10, 6);
    for (std::int64_t y = 0; y < 6; ++y)
        for (std::int64_t x = 0; x < 10; ++x) img.view()(y, x) = static_cast<std::uint16_t>(y * 10 + x);
    const auto sub = img.view().subview(3, 2, 4, 3);
    EXPECT_EQ(sub.width(), 4);
    EXPECT_EQ(sub.stride(), 10);
    EXPECT_EQ(sub(1, 2), 35);
    EXPECT_TRUE(overlaps(sub, img.view()));
    EXPECT_FALSE(overlaps(img.view().subview(0, 0, 10, 2), img.view().subview(0, 2, 10, 2)));
    EXPECT_THROW(img.view().subview(8, 0, 3, 1), invalid_argument);
    EXPECT_THROW(img.view().subview(0, 0, 1, 7), invalid_argument);
    EXPECT_THROW(host_view<std::uint8_t>(nullptr, 4, 4, 4), invalid_argument);
    std::uint8_t buf[16];
    EXPECT_THROW(host_view<std::uint8_t>(buf, 5, 2, 4), invalid_argument);  // stride < width
    EXPECT_THROW(host_view<std::uint8_t>(buf, -1, 2, 4), invalid_argument);
}

TEST(Views, HostAndDeviceViewsAreDistinctTypes) {
    static_assert(!std::is_convertible_v<device_view<std::uint8_t>, host_view<std::uint8_t>>);
    static_assert(!std::is_convertible_v<host_view<std::uint8_t>, device_view<std::uint8_t>>);
    static_assert(std::is_convertible_v<host_view<std::uint8_t>, host_view<const std::uint8_t>>);
    static_assert(!std::is_convertible_v<host_view<const std::uint8_t>, host_view<std::uint8_t>>);
    static_assert(!std::is_copy_constructible_v<host_image<float>>);
    static_assert(std::is_nothrow_move_constructible_v<host_image<float>>);
}

TEST(Images, SixtyFourBitSizes) {
    // 50000 x 50000 = 2.5e9 pixels: more than 2^31, addressed with 64-bit offsets.
    host_image<std::uint8_t> big(50000, 50000);
    auto v = big.view();
    v(49999, 49999) = 7;
    v(0, 0) = 3;
    EXPECT_EQ(v.row(49999)[49999], 7);
    EXPECT_EQ(v.pixel_count(), 2'500'000'000LL);
    EXPECT_THROW(host_image<std::uint8_t>(std::int64_t{1} << 40, std::int64_t{1} << 40), invalid_argument);
}

TEST(Images, AllocationFailureSaysHowMuch) {
    // 2^62 bytes: past any address space, whatever the kernel's overcommit setting.
    try {
        host_image<std::uint8_t> huge(std::int64_t{1} << 31, std::int64_t{1} << 31);
        FAIL() << "a 2^62-byte image was allocated";
    } catch (const out_of_memory& e) {
        EXPECT_STREQ(e.what(), "out of memory: an image of 4.29e+09 GiB could not be allocated");
        const std::bad_alloc& as_standard = e;  // what callers (and nanobind) catch
        EXPECT_STREQ(as_standard.what(), e.what());
    }
}

TEST(PixelTypes, OneListForNamesSizesAndDispatch) {
    EXPECT_EQ(parse_pixel_type("uint16"), pixel_type::uint16);
    EXPECT_EQ(to_string(pixel_type::float32), "float32");
    EXPECT_EQ(size_of(pixel_type::uint16), 2u);
    EXPECT_EQ(pixel_type_names(), "uint8, uint16, float32");
    EXPECT_THROW(parse_pixel_type("float64"), invalid_argument);
    const auto bytes = visit_pixel_type(pixel_type::float32, []<class T>(type_tag<T>) { return sizeof(T); });
    EXPECT_EQ(bytes, 4u);
    const any_host_image img = make_host_image(pixel_type::uint16, 3, 2);
    EXPECT_EQ(img.type(), pixel_type::uint16);
    EXPECT_NO_THROW(img.as<std::uint16_t>());
    EXPECT_THROW(img.as<float>(), invalid_argument);
}

TEST(Borders, NamesRoundTrip) {
    for (auto m : {border_mode::ignore, border_mode::constant, border_mode::nearest, border_mode::reflect,
                   border_mode::mirror, border_mode::wrap})
        EXPECT_EQ(parse_border_mode(to_string(m)), m);
    EXPECT_THROW(parse_border_mode("replicate"), invalid_argument);
}

TEST(Devices, SelectionAndErrors) {
    EXPECT_EQ(parse_device("auto"), device::automatic);
    EXPECT_THROW(parse_device("gpu"), invalid_argument);
    EXPECT_EQ(resolve_device(device::cpu), device::cpu);
    if (cuda_available()) {
        EXPECT_EQ(resolve_device(device::automatic), device::cuda);
    } else {
        EXPECT_EQ(resolve_device(device::automatic), device::cpu);
        EXPECT_ANY_THROW(resolve_device(device::cuda));
        EXPECT_ANY_THROW((device_image<std::uint8_t>(4, 4)));
    }
}

// The CPU backend's thread pool (src/core/parallel.cpp): every item runs exactly once, also
// when a body starts a nested run and when two threads call at once (the pool runs one caller's
// items, the other runs its own).
template <class Body>
void run_on_pool(std::int64_t n, int threads, Body& body) {
    detail::run_parallel(
        n, threads, [](void* context, std::int64_t i) { (*static_cast<Body*>(context))(i); }, &body);
}

TEST(Threads, EveryItemOnceNestedAndConcurrent) {
    auto caller = [](int seed, std::atomic<int>& errors) {
        for (int round = 0; round < 300; ++round) {
            const std::int64_t n = 1 + (seed * 7 + round * 13) % 40;
            std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
            auto body = [&](std::int64_t i) {
                runs[static_cast<std::size_t>(i)] += 1;
                if (i == 0 && round % 5 == 0) {
                    std::vector<std::atomic<int>> inner(6);
                    auto nested = [&](std::int64_t j) { inner[static_cast<std::size_t>(j)] += 1; };
                    run_on_pool(6, 2, nested);
                    for (const auto& r : inner) errors += r != 1;
                }
            };
            run_on_pool(n, 1 + round % 3, body);
            for (const auto& r : runs) errors += r != 1;
        }
    };
    std::atomic<int> errors{0};
    std::thread other(caller, 1, std::ref(errors));
    caller(2, errors);
    other.join();
    EXPECT_EQ(errors.load(), 0);
}

// Rows split among threads as they arrive (run_rows): every row made exactly once, every part
// split off with at least min_rows rows, a refused row refused again, also with two callers at
// once (one of them then runs its rows alone).
TEST(Threads, RowPartsMakeEveryRowOnce) {
    auto caller = [](int seed, std::atomic<int>& errors, std::atomic<int>& splits) {
        for (int round = 0; round < 200; ++round) {
            const std::int64_t rows = 1 + (seed * 31 + round * 17) % 500, min_rows = 1 + round % 7;
            std::vector<std::atomic<int>> made(static_cast<std::size_t>(rows));
            std::atomic<int> parts{0};
            auto body = [&](detail::row_part& part) {
                parts += 1;
                errors += part.begin() > 0 && part.first_end() - part.begin() < min_rows;
                std::int64_t y = part.begin();
                for (; y < part.first_end() && part.owns(y); ++y) {
                    made[static_cast<std::size_t>(y)] += 1;
                    std::this_thread::yield();  // time for another thread to come
                }
                errors += y < part.first_end() && part.owns(y);  // once refused, a row stays refused
            };
            detail::run_rows(
                rows, min_rows, 1 + round % 3,
                [](void* context, detail::row_part& part) { (*static_cast<decltype(body)*>(context))(part); }, &body);
            for (const auto& m : made) errors += m != 1;
            splits += parts.load() > 1;
        }
    };
    std::atomic<int> errors{0}, splits{0};
    std::thread other(caller, 1, std::ref(errors), std::ref(splits));
    caller(2, errors, splits);
    other.join();
    EXPECT_EQ(errors.load(), 0);
    std::printf("rounds with more than one part: %d of 400\n", splits.load());
}

// A child forked while another thread keeps the pool busy runs every item on its calling thread
// and returns (the parent's pool state, copied mid-job, must not stall it).
TEST(Threads, ForkedChildRunsItsItems) {
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        std::atomic<std::int64_t> sink{0};
        auto body = [&](std::int64_t i) { sink += i; };
        while (!stop) run_on_pool(64, 2, body);
    });
    for (int attempt = 0; attempt < 20; ++attempt) {
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            alarm(10);  // a stalled child dies of SIGALRM instead of hanging the test
            std::vector<std::atomic<int>> runs(50);
            auto body = [&](std::int64_t i) { runs[static_cast<std::size_t>(i)] += 1; };
            for (int round = 0; round < 20; ++round) run_on_pool(50, 2, body);
            for (const auto& r : runs)
                if (r != 20) _exit(1);
            _exit(0);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "attempt " << attempt << " status " << status;
    }
    stop = true;
    busy.join();
}

TEST(Settings, ThreadsAndSimdSwitch) {
    const int before = num_threads();
    set_num_threads(1);
    EXPECT_EQ(num_threads(), 1);
    set_num_threads(0);
    EXPECT_EQ(num_threads(), before);
    EXPECT_THROW(set_num_threads(-2), invalid_argument);
    EXPECT_THROW(set_num_threads(max_threads + 1), invalid_argument);
    EXPECT_EQ(num_threads(), before);  // a refused count changes nothing
    set_num_threads(max_threads);
    EXPECT_EQ(num_threads(), max_threads);
    set_num_threads(0);
    const bool simd = simd_enabled();
    set_simd_enabled(false);
    EXPECT_EQ(simd_target(), "scalar");
    set_simd_enabled(simd);
    EXPECT_FALSE(build_info().empty());
}

// Kept results come back without a second call; past the last `Kept` keys the oldest is made
// again; threads asking at once all get the right value.
TEST(RecentResults, KeepsTheLastKeys) {
    detail::recent_results<int, int, 2> recent;
    int made = 0;
    const auto square = [&](int k) { return recent.get(k, [&] { return ++made, k * k; }); };
    EXPECT_EQ(square(3), 9);
    EXPECT_EQ(square(3), 9);
    EXPECT_EQ(made, 1);
    EXPECT_EQ(square(4), 16);
    EXPECT_EQ(square(5), 25);  // 3 leaves
    EXPECT_EQ(made, 3);
    EXPECT_EQ(square(4), 16);
    EXPECT_EQ(made, 3);
    EXPECT_EQ(square(3), 9);
    EXPECT_EQ(made, 4);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i)
                if (const int k = (i + t) % 5; recent.get(k, [k] { return k * k; }) != k * k) ++wrong;
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace granula
