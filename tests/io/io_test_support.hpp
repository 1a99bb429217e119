// Helpers for the file I/O tests: a scratch directory per test, random images, exact (bitwise)
// comparison, raw file bytes, and an assertion that a read fails with io_error naming the file.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "granula/core/any_image.hpp"
#include "granula/core/error.hpp"
#include "granula/io/io.hpp"

namespace granula::io_test {

namespace fs = std::filesystem;

// A fresh directory for each test, removed afterwards.
class scratch_dir {
public:
    scratch_dir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        path_ = fs::temp_directory_path() /
                ("granula-io-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" +
                 std::to_string(std::random_device{}()));
        fs::create_directories(path_);
    }
    ~scratch_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    fs::path path_;
};

inline std::vector<std::uint8_t> file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_text(const std::string& path, const std::string& text) {
    write_bytes(path, std::vector<std::uint8_t>(text.begin(), text.end()));
}

// Random pixels over the type's whole range; float32 includes negatives, infinities and NaN.
template <class T>
host_image<T> random_image(std::int64_t width, std::int64_t height, std::uint32_t seed) {
    host_image<T> image(width, height);
    std::mt19937 rng(seed);
    for (std::int64_t y = 0; y < height; ++y) {
        for (std::int64_t x = 0; x < width; ++x) {
            if constexpr (std::is_floating_point_v<T>) {
                const std::uint32_t r = rng();
                image.view()(y, x) = r % 97 == 0   ? std::numeric_limits<float>::quiet_NaN()
                                     : r % 89 == 0 ? -std::numeric_limits<float>::infinity()
                                                   : std::uniform_real_distribution<float>(-1e6f, 1e6f)(rng);
            } else {
                image.view()(y, x) = static_cast<T>(rng());
            }
        }
    }
    return image;
}

// Pixel-for-pixel equality of two views, comparing bits (so NaN equals the same NaN).
template <class T>
::testing::AssertionResult same_pixels(host_view<const T> expected, host_view<const T> actual) {
    if (expected.width() != actual.width() || expected.height() != actual.height())
        return ::testing::AssertionFailure() << "size " << actual.width() << "x" << actual.height() << ", expected "
                                             << expected.width() << "x" << expected.height();
    for (std::int64_t y = 0; y < expected.height(); ++y)
        for (std::int64_t x = 0; x < expected.width(); ++x)
            if (std::memcmp(&expected(y, x), &actual(y, x), sizeof(T)) != 0)
                return ::testing::AssertionFailure() << "pixel (row " << y << ", col " << x << ") is " << +actual(y, x)
                                                     << ", expected " << +expected(y, x);
    return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult same_pixels(host_view<const T> expected, const any_host_image& actual) {
    if (actual.type() != pixel_type_of<T>)
        return ::testing::AssertionFailure() << "pixel type " << to_string(actual.type()) << ", expected "
                                             << to_string(pixel_type_of<T>);
    return same_pixels<T>(expected, actual.as<const T>());
}

// Reading `path` throws io_error whose message starts with the path and contains `reason`.
inline ::testing::AssertionResult read_fails(const std::string& path, const std::string& reason = "",
                                             io::read_options options = {}) {
    try {
        io::read_image(path, options);
    } catch (const io_error& e) {
        const std::string message = e.what();
        if (message.rfind(path + ": ", 0) != 0)
            return ::testing::AssertionFailure() << "message does not start with the file name: " << message;
        if (message.find(reason) == std::string::npos)
            return ::testing::AssertionFailure() << "message lacks '" << reason << "': " << message;
        if (message.find('\n') != std::string::npos)
            return ::testing::AssertionFailure() << "message spans lines: " << message;
        return ::testing::AssertionSuccess();
    } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << "threw something other than io_error: " << e.what();
    }
    return ::testing::AssertionFailure() << "reading " << path << " succeeded";
}

inline ::testing::AssertionResult write_fails(const std::string& path, const any_host_view& image,
                                              const std::string& reason = "") {
    try {
        io::write_image(path, image);
    } catch (const io_error& e) {
        const std::string message = e.what();
        if (message.rfind(path + ": ", 0) != 0 || message.find(reason) == std::string::npos)
            return ::testing::AssertionFailure() << "unexpected message: " << message;
        return ::testing::AssertionSuccess();
    } catch (const std::exception& e) {
        return ::testing::AssertionFailure() << "threw something other than io_error: " << e.what();
    }
    return ::testing::AssertionFailure() << "writing " << path << " succeeded";
}

// BT.601 luma rounded half up, computed independently of the library's integer formula.
inline double reference_luma(double r, double g, double b) { return std::floor((299 * r + 587 * g + 114 * b) / 1000 + 0.5); }

}  // namespace granula::io_test
