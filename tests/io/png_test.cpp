// PNG specifics, with fixtures written by libpng directly (not by granula): low bit depths,
// 16-bit byte order, interlacing, transparency, and colour that is refused unless converted.
#include <gtest/gtest.h>
#include <png.h>

#include <csetjmp>

#include "io/io_test_support.hpp"

namespace granula::io_test {
namespace {

// A PNG as libpng stores it: packed rows (big-endian 16-bit samples), optional palette and tRNS.
struct png_fixture {
    png_uint_32 width = 0;
    png_uint_32 height = 0;
    int bit_depth = 8;
    int colour_type = PNG_COLOR_TYPE_GRAY;
    bool interlaced = false;
    std::vector<std::vector<png_byte>> rows{};
    std::vector<png_color> palette{};
    std::vector<png_byte> palette_alpha{};
    bool grey_transparent = false;
};

// Plain C data only in this frame: libpng may longjmp back into it.
bool write_fixture_step(png_structp png, png_infop info, std::FILE* file, const png_fixture* f, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_init_io(png, file);
    png_set_IHDR(png, info, f->width, f->height, f->bit_depth, f->colour_type,
                 f->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (!f->palette.empty()) png_set_PLTE(png, info, f->palette.data(), static_cast<int>(f->palette.size()));
    if (!f->palette_alpha.empty())
        png_set_tRNS(png, info, f->palette_alpha.data(), static_cast<int>(f->palette_alpha.size()), nullptr);
    png_color_16 grey_key{};
    if (f->grey_transparent) png_set_tRNS(png, info, nullptr, 0, &grey_key);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    return true;
}

void write_fixture(const std::string& path, png_fixture& f) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    std::vector<png_bytep> rows;
    for (auto& r : f.rows) rows.push_back(r.data());
    const bool ok = write_fixture_step(png, info, file, &f, rows.data());
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    ASSERT_TRUE(ok);
}

// Packs values of `bits` bits per sample, most significant first, as PNG rows do.
std::vector<png_byte> pack_row(const std::vector<int>& values, int bits) {
    std::vector<png_byte> row((values.size() * bits + 7) / 8);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t bit = i * bits;
        row[bit / 8] |= static_cast<png_byte>(values[i] << (8 - bits - bit % 8));
    }
    return row;
}

// 1-bit files read as 0/1 bytes (read_image) and straight into bit images (read_bits), plain
// and interlaced, widths around the byte and the 64-bit word.
TEST(IoPng, OneBitReadsAsZeroAndOne) {
    scratch_dir dir;
    for (const png_uint_32 width : {13u, 64u, 71u})
        for (const bool interlaced : {false, true}) {
            png_fixture f{.width = width, .height = 9, .bit_depth = 1, .interlaced = interlaced};
            std::vector<std::vector<int>> values;
            for (png_uint_32 y = 0; y < f.height; ++y) {
                values.emplace_back();
                for (png_uint_32 x = 0; x < f.width; ++x) values.back().push_back((x * 7 + y * 3) % 5 < 2);
                f.rows.push_back(pack_row(values.back(), 1));
            }
            write_fixture(dir.file("bits.png"), f);
            const auto image = io::read_image(dir.file("bits.png"));
            ASSERT_EQ(image.type(), pixel_type::uint8);
            const auto bits = io::read_bits(dir.file("bits.png"));
            ASSERT_EQ(bits.width(), width);
            ASSERT_EQ(bits.height(), 9);
            for (png_uint_32 y = 0; y < f.height; ++y) {
                for (png_uint_32 x = 0; x < f.width; ++x) {
                    EXPECT_EQ(image.as<std::uint8_t>()(y, x), values[y][x]) << y << "," << x;
                    EXPECT_EQ(bits.view()(y, x), values[y][x] == 1) << y << "," << x << " interlaced " << interlaced;
                }
                if (width % 64) {
                    EXPECT_EQ(bits.view().row(y)[width / 64] >> (width % 64), 0u) << "bits past the width";
                }
            }
        }
}

TEST(IoPng, ReadBitsRefusesDeeperPngs) {
    scratch_dir dir;
    png_fixture f{.width = 3, .height = 1, .bit_depth = 8};
    f.rows.push_back({0, 255, 0});
    write_fixture(dir.file("grey8.png"), f);
    try {
        io::read_bits(dir.file("grey8.png"));
        ADD_FAILURE() << "no io_error";
    } catch (const io_error& e) {
        EXPECT_NE(std::string(e.what()).find("8-bit grey PNG; read_bits reads 1-bit grey PNG"), std::string::npos)
            << e.what();
    }
}

TEST(IoPng, TwoAndFourBitGreyScaleToEightBits) {
    scratch_dir dir;
    for (int bits : {2, 4}) {
        png_fixture f{.width = 9, .height = 2, .bit_depth = bits};
        const int max = (1 << bits) - 1;
        std::vector<int> values;
        for (int x = 0; x < 9; ++x) values.push_back(x % (max + 1));
        f.rows = {pack_row(values, bits), pack_row(values, bits)};
        const std::string path = dir.file("grey" + std::to_string(bits) + ".png");
        write_fixture(path, f);
        const auto image = io::read_image(path);
        ASSERT_EQ(image.type(), pixel_type::uint8);
        for (int x = 0; x < 9; ++x) EXPECT_EQ(image.as<std::uint8_t>()(1, x), values[x] * 255 / max);
    }
}

TEST(IoPng, SixteenBitIsBigEndianInTheFile) {
    scratch_dir dir;
    png_fixture f{.width = 3, .height = 1, .bit_depth = 16};
    f.rows = {{0x12, 0x34, 0xAB, 0xCD, 0x00, 0x01}};
    write_fixture(dir.file("sixteen.png"), f);
    const auto image = io::read_image(dir.file("sixteen.png"));
    ASSERT_EQ(image.type(), pixel_type::uint16);
    EXPECT_EQ(image.as<std::uint16_t>()(0, 0), 0x1234);
    EXPECT_EQ(image.as<std::uint16_t>()(0, 1), 0xABCD);
    EXPECT_EQ(image.as<std::uint16_t>()(0, 2), 0x0001);

    // And granula writes big-endian too: the first sample's bytes appear in that order.
    host_image<std::uint16_t> one(1, 1);
    one.view()(0, 0) = 0xBEEF;
    io::write_image(dir.file("written.png"), one.view());
    png_image check{};
    check.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&check, dir.file("written.png").c_str()));
    EXPECT_EQ(PNG_IMAGE_SAMPLE_COMPONENT_SIZE(check.format), 2);
    png_image_free(&check);
    EXPECT_EQ(io::read_image(dir.file("written.png")).as<std::uint16_t>()(0, 0), 0xBEEF);
}

TEST(IoPng, InterlacedEqualsPlain) {
    scratch_dir dir;
    const auto image = random_image<std::uint8_t>(33, 19, 3);
    png_fixture f{.width = 33, .height = 19, .bit_depth = 8, .interlaced = true};
    for (int y = 0; y < 19; ++y) f.rows.emplace_back(image.view().row(y), image.view().row(y) + 33);
    write_fixture(dir.file("adam7.png"), f);
    EXPECT_TRUE(same_pixels<std::uint8_t>(image.view(), io::read_image(dir.file("adam7.png"))));
}

TEST(IoPng, GreyWithTransparentKeyStaysGrey) {
    scratch_dir dir;
    png_fixture f{.width = 4, .height = 1, .bit_depth = 8, .grey_transparent = true};
    f.rows = {{0, 10, 200, 255}};
    write_fixture(dir.file("key.png"), f);
    const auto image = io::read_image(dir.file("key.png"));
    ASSERT_EQ(image.type(), pixel_type::uint8);
    EXPECT_EQ(image.as<std::uint8_t>()(0, 2), 200);
}

struct rgb {
    int r, g, b;
};
const std::vector<rgb> colours = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}, {0, 0, 0},
                                  {12, 200, 99}, {1, 1, 2}, {128, 64, 32}};

TEST(IoPng, ColourNeedsConversion) {
    scratch_dir dir;
    png_fixture rgb_png{.width = 8, .height = 1, .bit_depth = 8, .colour_type = PNG_COLOR_TYPE_RGB};
    rgb_png.rows.emplace_back();
    for (const auto& c : colours)
        rgb_png.rows[0].insert(rgb_png.rows[0].end(), {png_byte(c.r), png_byte(c.g), png_byte(c.b)});
    write_fixture(dir.file("rgb.png"), rgb_png);
    EXPECT_TRUE(read_fails(dir.file("rgb.png"), "colour (RGB) PNG"));
    EXPECT_TRUE(read_fails(dir.file("rgb.png"), "to_grey"));

    const auto grey = io::read_image(dir.file("rgb.png"), {.to_grey = true});
    ASSERT_EQ(grey.type(), pixel_type::uint8);
    for (std::size_t i = 0; i < colours.size(); ++i)
        EXPECT_EQ(grey.as<std::uint8_t>()(0, i), reference_luma(colours[i].r, colours[i].g, colours[i].b)) << i;
    EXPECT_EQ(grey.as<std::uint8_t>()(0, 0), 76);   // 0.299 * 255 = 76.245
    EXPECT_EQ(grey.as<std::uint8_t>()(0, 1), 150);  // 0.587 * 255 = 149.685
    EXPECT_EQ(grey.as<std::uint8_t>()(0, 2), 29);   // 0.114 * 255 = 29.07
    EXPECT_EQ(grey.as<std::uint8_t>()(0, 3), 255);
}

TEST(IoPng, RgbaPaletteAndGreyAlphaConvertTooIgnoringAlpha) {
    scratch_dir dir;
    png_fixture rgba{.width = 8, .height = 1, .bit_depth = 8, .colour_type = PNG_COLOR_TYPE_RGB_ALPHA};
    png_fixture palette{.width = 8, .height = 1, .bit_depth = 8, .colour_type = PNG_COLOR_TYPE_PALETTE};
    rgba.rows.emplace_back();
    palette.rows.emplace_back();
    for (std::size_t i = 0; i < colours.size(); ++i) {
        const auto& c = colours[i];
        rgba.rows[0].insert(rgba.rows[0].end(), {png_byte(c.r), png_byte(c.g), png_byte(c.b), png_byte(i * 30)});
        palette.palette.push_back({png_byte(c.r), png_byte(c.g), png_byte(c.b)});
        palette.palette_alpha.push_back(png_byte(255 - i));
        palette.rows[0].push_back(static_cast<png_byte>(colours.size() - 1 - i));
    }
    png_fixture grey_alpha{.width = 2, .height = 1, .bit_depth = 16, .colour_type = PNG_COLOR_TYPE_GRAY_ALPHA};
    grey_alpha.rows = {{0x01, 0x02, 0, 0, 0xFF, 0xFE, 0x80, 0}};
    write_fixture(dir.file("rgba.png"), rgba);
    write_fixture(dir.file("palette.png"), palette);
    write_fixture(dir.file("grey_alpha.png"), grey_alpha);

    EXPECT_TRUE(read_fails(dir.file("rgba.png"), "RGBA"));
    EXPECT_TRUE(read_fails(dir.file("palette.png"), "palette"));
    EXPECT_TRUE(read_fails(dir.file("grey_alpha.png"), "grey+alpha"));

    const auto from_rgba = io::read_image(dir.file("rgba.png"), {.to_grey = true});
    const auto from_palette = io::read_image(dir.file("palette.png"), {.to_grey = true});
    for (std::size_t i = 0; i < colours.size(); ++i) {
        const auto& c = colours[i];
        EXPECT_EQ(from_rgba.as<std::uint8_t>()(0, i), reference_luma(c.r, c.g, c.b)) << i;
        EXPECT_EQ(from_palette.as<std::uint8_t>()(0, colours.size() - 1 - i), reference_luma(c.r, c.g, c.b)) << i;
    }
    const auto from_grey_alpha = io::read_image(dir.file("grey_alpha.png"), {.to_grey = true});
    ASSERT_EQ(from_grey_alpha.type(), pixel_type::uint16);
    EXPECT_EQ(from_grey_alpha.as<std::uint16_t>()(0, 0), 0x0102);
    EXPECT_EQ(from_grey_alpha.as<std::uint16_t>()(0, 1), 0xFFFE);
}

TEST(IoPng, SixteenBitColourConvertsAtSixteenBits) {
    scratch_dir dir;
    png_fixture f{.width = 2, .height = 1, .bit_depth = 16, .colour_type = PNG_COLOR_TYPE_RGB};
    // (65535, 0, 0) and (1000, 40000, 65535), big-endian.
    f.rows = {{0xFF, 0xFF, 0, 0, 0, 0, 0x03, 0xE8, 0x9C, 0x40, 0xFF, 0xFF}};
    write_fixture(dir.file("rgb16.png"), f);
    const auto grey = io::read_image(dir.file("rgb16.png"), {.to_grey = true});
    ASSERT_EQ(grey.type(), pixel_type::uint16);
    EXPECT_EQ(grey.as<std::uint16_t>()(0, 0), reference_luma(65535, 0, 0));
    EXPECT_EQ(grey.as<std::uint16_t>()(0, 1), reference_luma(1000, 40000, 65535));
}

TEST(IoPng, ToGreyLeavesGreyUntouched) {
    scratch_dir dir;
    const auto image = random_image<std::uint16_t>(21, 8, 4);
    io::write_image(dir.file("g.png"), image.view());
    EXPECT_TRUE(same_pixels<std::uint16_t>(image.view(), io::read_image(dir.file("g.png"), {.to_grey = true})));
}

}  // namespace
}  // namespace granula::io_test
