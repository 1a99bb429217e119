// Every format writes and reads back every pixel type it can hold, bit for bit, at awkward sizes
// and from strided sub-views; the types a format cannot hold are refused with io_error.
#include <gtest/gtest.h>

#include <cctype>

#include "io/io_test_support.hpp"

namespace granula::io_test {
namespace {

struct format_case {
    const char* extension;
    pixel_type type;
};

std::vector<format_case> writable_formats() {
    std::vector<format_case> cases = {
        {".png", pixel_type::uint8},  {".png", pixel_type::uint16},  {".pgm", pixel_type::uint8},
        {".pgm", pixel_type::uint16}, {".pnm", pixel_type::uint16},  {".pfm", pixel_type::float32},
        {".npy", pixel_type::uint8},  {".npy", pixel_type::uint16},  {".npy", pixel_type::float32},
    };
    if (io::tiff_supported())
        for (pixel_type t : {pixel_type::uint8, pixel_type::uint16, pixel_type::float32}) {
            cases.push_back({".tif", t});
            cases.push_back({".tiff", t});
        }
    return cases;
}

std::string case_name(const format_case& c) { return std::string(c.extension + 1) + "_" + std::string(to_string(c.type)); }

class IoRoundTrip : public ::testing::TestWithParam<format_case> {};

TEST_P(IoRoundTrip, WholeImagesOfAwkwardSizes) {
    const format_case c = GetParam();
    scratch_dir dir;
    std::uint32_t seed = 1;
    for (auto [width, height] : {std::pair{1, 1}, {1, 17}, {17, 1}, {37, 23}, {1000, 700}}) {
        visit_pixel_type(c.type, [&]<class T>(type_tag<T>) {
            const auto image = random_image<T>(width, height, seed++);
            const std::string path = dir.file("image" + std::to_string(width) + "x" + std::to_string(height) + c.extension);
            io::write_image(path, image.view());
            EXPECT_TRUE(same_pixels<T>(image.view(), io::read_image(path))) << path << ", seed " << seed - 1;
        });
    }
}

TEST_P(IoRoundTrip, StridedSubView) {
    const format_case c = GetParam();
    scratch_dir dir;
    visit_pixel_type(c.type, [&]<class T>(type_tag<T>) {
        const auto big = random_image<T>(61, 45, 99);
        const auto part = big.view().subview(7, 5, 29, 31);  // stride 61, width 29
        const std::string path = dir.file(std::string("part") + c.extension);
        io::write_image(path, any_host_view(part));
        EXPECT_TRUE(same_pixels<T>(part, io::read_image(path)));
    });
}

TEST_P(IoRoundTrip, ExtensionCaseDoesNotMatter) {
    const format_case c = GetParam();
    scratch_dir dir;
    std::string upper = c.extension;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    visit_pixel_type(c.type, [&]<class T>(type_tag<T>) {
        const auto image = random_image<T>(9, 4, 5);
        const std::string path = dir.file("IMAGE" + upper);
        io::write_image(path, image.view());
        EXPECT_TRUE(same_pixels<T>(image.view(), io::read_image(path)));
    });
}

INSTANTIATE_TEST_SUITE_P(AllFormats, IoRoundTrip, ::testing::ValuesIn(writable_formats()),
                         [](const auto& info) { return case_name(info.param); });

TEST(IoWrite, FormatsRefuseTypesTheyCannotHold) {
    scratch_dir dir;
    const auto f = random_image<float>(4, 4, 1);
    const auto u8 = random_image<std::uint8_t>(4, 4, 1);
    const auto u16 = random_image<std::uint16_t>(4, 4, 1);
    EXPECT_TRUE(write_fails(dir.file("f.png"), f.view(), "PNG cannot hold float32"));
    EXPECT_TRUE(write_fails(dir.file("f.pgm"), f.view(), "float32"));
    EXPECT_TRUE(write_fails(dir.file("u8.pfm"), u8.view(), "PFM holds float32"));
    EXPECT_TRUE(write_fails(dir.file("u16.pfm"), u16.view(), "PFM holds float32"));
    EXPECT_TRUE(write_fails(dir.file("u8.ppm"), u8.view(), ".pgm"));
    EXPECT_TRUE(write_fails(dir.file("u8.jpg"), u8.view(), "unknown file extension '.jpg'"));
    EXPECT_TRUE(write_fails(dir.file("noextension"), u8.view(), "has no file extension"));
    // check_write_format() refuses the same without an image or the file system.
    EXPECT_THROW(io::check_write_format(dir.file("f.png"), pixel_type::float32), io_error);
    EXPECT_THROW(io::check_write_format(dir.file("u8.pfm"), pixel_type::uint8), io_error);
    EXPECT_THROW(io::check_write_format(dir.file("u8.jpg"), pixel_type::uint8), io_error);
    EXPECT_NO_THROW(io::check_write_format(dir.file("missing-dir/f.npy"), pixel_type::float32));
    EXPECT_NO_THROW(io::check_write_format(dir.file("u16.PNG"), pixel_type::uint16));
    // A refused write creates no file.
    for (const char* name : {"f.png", "f.pgm", "u8.pfm", "u16.pfm", "u8.ppm", "u8.jpg"})
        EXPECT_FALSE(fs::exists(dir.file(name))) << name;
}

TEST(IoWrite, EmptyImagesOnlyAsNpy) {
    scratch_dir dir;
    host_image<std::uint8_t> empty(0, 5);
    for (const char* ext : {".png", ".pgm", ".tif"}) {
        if (std::string(ext) == ".tif" && !io::tiff_supported()) continue;
        EXPECT_TRUE(write_fails(dir.file(std::string("empty") + ext), empty.view(), "empty")) << ext;
    }
    io::write_image(dir.file("no_columns.npy"), empty.view());  // 5 rows of nothing
    EXPECT_EQ(io::read_image(dir.file("no_columns.npy")).height(), 5);
    host_image<float> empty_float(3, 0);
    EXPECT_TRUE(write_fails(dir.file("empty.pfm"), empty_float.view(), "empty"));
    io::write_image(dir.file("empty.npy"), empty_float.view());
    const auto back = io::read_image(dir.file("empty.npy"));
    EXPECT_EQ(back.type(), pixel_type::float32);
    EXPECT_EQ(back.width(), 3);
    EXPECT_EQ(back.height(), 0);
}

TEST(IoWrite, UnwritablePathsFailAndLeaveNothing) {
    scratch_dir dir;
    const auto image = random_image<std::uint8_t>(4, 4, 1);
    for (const char* ext : {".png", ".pgm", ".npy", ".tif"}) {
        if (std::string(ext) == ".tif" && !io::tiff_supported()) continue;
        EXPECT_TRUE(write_fails(dir.file("missing-dir/out") + ext, image.view())) << ext;
        // A directory where the file should go is not removed or replaced.
        fs::create_directory(dir.file(std::string("a-directory") + ext));
        EXPECT_TRUE(write_fails(dir.file(std::string("a-directory") + ext), image.view())) << ext;
        EXPECT_TRUE(fs::is_directory(dir.file(std::string("a-directory") + ext))) << ext;
    }
}

TEST(IoWrite, OverwritesAnExistingFile) {
    scratch_dir dir;
    const std::string path = dir.file("again.png");
    io::write_image(path, random_image<std::uint16_t>(50, 40, 1).view());
    const auto second = random_image<std::uint8_t>(3, 2, 2);
    io::write_image(path, second.view());
    EXPECT_TRUE(same_pixels<std::uint8_t>(second.view(), io::read_image(path)));
}

// Bit images through 1-bit PNG and TIFF: the same bits back, widths around the byte and the
// word; a view of a wider image writes only its own pixels; read_image sees the same 0/1.
TEST(IoBits, RoundTripThroughOneBitFiles) {
    scratch_dir dir;
    std::mt19937_64 rng(11);
    for (const char* ext : {".png", ".tif"}) {
        if (std::string(ext) == ".tif" && !io::tiff_supported()) continue;
        for (const std::int64_t width : {1, 7, 8, 9, 63, 64, 65, 130}) {
            host_bit_image wide(width + 64, 5);
            for (std::int64_t y = 0; y < 5; ++y)
                for (std::int64_t w = 0; w < wide.view().row_words(); ++w) wide.view().row(y)[w] = rng();
            const const_host_bit_view bits = static_cast<const host_bit_image&>(wide).view().subview(64, 0, width, 5);
            const std::string path = dir.file("bits" + std::to_string(width) + ext);
            io::write_bits(path, bits);
            const auto back = io::read_bits(path);
            const auto grey = io::read_image(path);
            ASSERT_EQ(back.width(), width);
            ASSERT_EQ(back.height(), 5);
            for (std::int64_t y = 0; y < 5; ++y) {
                for (std::int64_t x = 0; x < width; ++x) {
                    ASSERT_EQ(back.view()(y, x), bits(y, x)) << ext << " width " << width << " at " << y << "," << x;
                    ASSERT_EQ(grey.as<std::uint8_t>()(y, x), bits(y, x) ? 1 : 0) << ext << " read_image";
                }
                if (width % 64) {
                    ASSERT_EQ(back.view().row(y)[width / 64] >> (width % 64), 0u) << "bits past the width";
                }
            }
        }
    }
}

TEST(IoBits, OtherFormatsAndEmptyImagesAreClearErrors) {
    scratch_dir dir;
    const auto expect_io_error = [](auto&& f, const std::string& words) {
        try {
            f();
            ADD_FAILURE() << "no io_error; expected one mentioning '" << words << "'";
        } catch (const io_error& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    io::write_image(dir.file("grey.npy"), random_image<std::uint8_t>(4, 4, 1).view());
    expect_io_error([&] { io::read_bits(dir.file("grey.npy")); }, "read_bits reads 1-bit PNG and TIFF");
    host_bit_image bits(10, 2), empty(0, 3);
    expect_io_error([&] { io::write_bits(dir.file("bits.pgm"), bits.view()); }, "write_bits writes 1-bit .png and .tif");
    expect_io_error([&] { io::write_bits(dir.file("empty.png"), empty.view()); }, "empty");
    expect_io_error([&] { io::read_bits(dir.file("missing.png")); }, "missing.png");
    write_text(dir.file("short.png"), "\x89PNG\r\n\x1a\n");
    expect_io_error([&] { io::read_bits(dir.file("short.png")); }, "short.png");
}

}  // namespace
}  // namespace granula::io_test
