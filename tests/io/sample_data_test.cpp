// The sample images shipped in data/ read as the README there describes them.
#include <gtest/gtest.h>

#include <cmath>

#include "io/io_test_support.hpp"

namespace granula::io_test {
namespace {

std::string data_file(const std::string& name) { return std::string(GRANULA_DATA_DIR) + "/" + name; }

struct expected_sample {
    const char* name;
    pixel_type type;
    std::int64_t width;
    std::int64_t height;
};

TEST(IoSampleData, ShippedImagesReadWithTheirDocumentedShape) {
    const expected_sample samples[] = {
        {"page.png", pixel_type::uint8, 384, 191},     {"camera.png", pixel_type::uint8, 512, 512},
        {"coins.png", pixel_type::uint8, 384, 303},    {"text.png", pixel_type::uint8, 448, 172},
        {"brick.png", pixel_type::uint8, 512, 512},    {"coins16.png", pixel_type::uint16, 384, 303},
        {"page_float32.npy", pixel_type::float32, 384, 191},
    };
    for (const auto& s : samples) {
        const auto image = io::read_image(data_file(s.name));
        EXPECT_EQ(image.type(), s.type) << s.name;
        EXPECT_EQ(image.width(), s.width) << s.name;
        EXPECT_EQ(image.height(), s.height) << s.name;
    }
}

TEST(IoSampleData, DerivedSamplesMatchTheirSources) {
    // page_float32.npy is page.png / 255 in float32.
    const auto page = io::read_image(data_file("page.png"));
    const auto page_float = io::read_image(data_file("page_float32.npy"));
    for (std::int64_t y = 0; y < page.height(); y += 7)
        for (std::int64_t x = 0; x < page.width(); x += 5)
            ASSERT_EQ(page_float.as<float>()(y, x), static_cast<float>(page.as<std::uint8_t>()(y, x) / 255.0));
    // coins16.png is a smoothed coins.png scaled by 256: its high byte stays close to the source
    // and its low byte is not a copy of the high byte (so a byte-order mix-up would show).
    const auto coins = io::read_image(data_file("coins.png"));
    const auto coins16 = io::read_image(data_file("coins16.png"));
    double error = 0;
    int distinct_bytes = 0;
    for (std::int64_t y = 0; y < coins.height(); ++y)
        for (std::int64_t x = 0; x < coins.width(); ++x) {
            const std::uint16_t v = coins16.as<std::uint16_t>()(y, x);
            error += std::abs(v / 256.0 - coins.as<std::uint8_t>()(y, x));
            distinct_bytes += (v >> 8) != (v & 0xFF);
        }
    EXPECT_LT(error / static_cast<double>(coins.width() * coins.height()), 8.0);
    EXPECT_GT(distinct_bytes, coins.width() * coins.height() / 2);
}

}  // namespace
}  // namespace granula::io_test
