// PGM, PPM, PFM and NPY files crafted byte by byte, as other programs write them: header
// comments, maxval, both PFM byte orders with rows bottom to top, every NPY dtype and version,
// and the layouts that are refused with a message saying what to do.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "io/io_test_support.hpp"

namespace granula::io_test {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

void append(std::vector<std::uint8_t>& bytes, std::initializer_list<int> values) {
    for (int v : values) bytes.push_back(static_cast<std::uint8_t>(v));
}

void append_float(std::vector<std::uint8_t>& bytes, float value, std::endian order) {
    std::uint8_t b[4];
    std::memcpy(b, &value, 4);
    if (order != std::endian::native) std::swap(b[0], b[3]), std::swap(b[1], b[2]);
    bytes.insert(bytes.end(), b, b + 4);
}

TEST(IoNetpbm, PgmWithCommentsAndSmallMaxval) {
    scratch_dir dir;
    auto bytes = bytes_of("P5\n# written by a scanner\n3 # width\n2\n# maxval next\n15\n");
    append(bytes, {0, 1, 2, 13, 14, 15});
    write_bytes(dir.file("small.pgm"), bytes);
    const auto image = io::read_image(dir.file("small.pgm"));
    ASSERT_EQ(image.type(), pixel_type::uint8);
    ASSERT_EQ(image.width(), 3);
    ASSERT_EQ(image.height(), 2);
    EXPECT_EQ(image.as<std::uint8_t>()(1, 0), 13);  // values are kept, not rescaled to 255
    EXPECT_EQ(image.as<std::uint8_t>()(1, 2), 15);
}

TEST(IoNetpbm, SixteenBitPgmIsBigEndianAndKeepsValues) {
    scratch_dir dir;
    auto bytes = bytes_of("P5 2 1 4095\n");
    append(bytes, {0x0F, 0xFF, 0x01, 0x02});
    write_bytes(dir.file("twelve.pnm"), bytes);
    const auto image = io::read_image(dir.file("twelve.pnm"));
    ASSERT_EQ(image.type(), pixel_type::uint16);
    EXPECT_EQ(image.as<std::uint16_t>()(0, 0), 4095);
    EXPECT_EQ(image.as<std::uint16_t>()(0, 1), 0x0102);
}

TEST(IoNetpbm, BadPgmHeadersAndSamples) {
    scratch_dir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"P5\n3 2\n300\n\x01\x02", "truncated: a 3x2 image needs 12 bytes"},
        {"P5\n2 1\n15\n\x10\x01", "exceeds the declared maxval 15"},
        {"P5\n2 1\n0\n\x00\x00", "maxval must be 1..65535"},
        {"P5\n2 1\n70000\n", "maxval 70000 is larger than 65535"},
        {"P5\n-2 1\n255\n", "not a whole number"},
        {"P5\n0 7\n255\n", "empty 0x7"},
        {"P5\n2", "truncated header"},
        {"P2\n2 1\n255\n1 2\n", "P2 is not supported"},
        {"P4\n8 1\n\xff", "P4 is not supported"},
        {"P7\n", "not a Netpbm file"},
        {"GIF89a", "not a Netpbm file"},
        {"P5\n99999999 99999999\n255\nabc", "truncated: a 99999999x99999999 image needs"},
    };
    int i = 0;
    for (const auto& [content, reason] : cases) {
        const std::string path = dir.file("bad" + std::to_string(i++) + ".pgm");
        write_text(path, content);
        EXPECT_TRUE(read_fails(path, reason)) << content;
    }
}

TEST(IoNetpbm, PpmOnlyWithConversion) {
    scratch_dir dir;
    auto bytes = bytes_of("P6\n2 1\n255\n");
    append(bytes, {255, 0, 0, 10, 200, 30});
    write_bytes(dir.file("colour.ppm"), bytes);
    EXPECT_TRUE(read_fails(dir.file("colour.ppm"), "colour (PPM)"));
    const auto grey = io::read_image(dir.file("colour.ppm"), {.to_grey = true});
    ASSERT_EQ(grey.type(), pixel_type::uint8);
    EXPECT_EQ(grey.as<std::uint8_t>()(0, 0), 76);
    EXPECT_EQ(grey.as<std::uint8_t>()(0, 1), reference_luma(10, 200, 30));

    auto wide = bytes_of("P6\n1 1\n65535\n");
    append(wide, {0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC});
    write_bytes(dir.file("wide.pnm"), wide);
    const auto grey16 = io::read_image(dir.file("wide.pnm"), {.to_grey = true});
    ASSERT_EQ(grey16.type(), pixel_type::uint16);
    EXPECT_EQ(grey16.as<std::uint16_t>()(0, 0), reference_luma(0x1234, 0x5678, 0x9ABC));
}

TEST(IoNetpbm, PfmBothByteOrdersBottomRowFirst) {
    scratch_dir dir;
    // A 2x2 image whose top row is (1, 2) and bottom row (3, 4): the file starts with the bottom row.
    for (auto [scale, order] : {std::pair{"-1.0", std::endian::little}, {"1.0", std::endian::big}, {"-0.5", std::endian::little}}) {
        auto bytes = bytes_of(std::string("Pf\n2 2\n") + scale + "\n");
        for (float v : {3.f, 4.f, 1.f, 2.f}) append_float(bytes, v, order);
        const std::string path = dir.file(std::string("order") + (order == std::endian::big ? "big" : "little") + scale + ".pfm");
        write_bytes(path, bytes);
        const auto image = io::read_image(path);
        ASSERT_EQ(image.type(), pixel_type::float32);
        const auto v = image.as<const float>();
        EXPECT_EQ(v(0, 0), 1.f) << scale;
        EXPECT_EQ(v(0, 1), 2.f) << scale;
        EXPECT_EQ(v(1, 0), 3.f) << scale;
        EXPECT_EQ(v(1, 1), 4.f) << scale;
    }
}

TEST(IoNetpbm, WrittenPfmIsLittleEndianBottomUp) {
    scratch_dir dir;
    host_image<float> image(1, 2);
    image.view()(0, 0) = 1.5f;  // top
    image.view()(1, 0) = -2.f;  // bottom
    io::write_image(dir.file("w.pfm"), image.view());
    auto expected = bytes_of("Pf\n1 2\n-1.0\n");
    append_float(expected, -2.f, std::endian::little);
    append_float(expected, 1.5f, std::endian::little);
    EXPECT_EQ(file_bytes(dir.file("w.pfm")), expected);
}

TEST(IoNetpbm, PfmColourAndBadScale) {
    scratch_dir dir;
    auto colour = bytes_of("PF\n1 1\n-1\n");
    for (float v : {1.f, 0.5f, 0.25f}) append_float(colour, v, std::endian::little);
    write_bytes(dir.file("colour.pfm"), colour);
    EXPECT_TRUE(read_fails(dir.file("colour.pfm"), "colour (PF) PFM"));
    const auto grey = io::read_image(dir.file("colour.pfm"), {.to_grey = true});
    EXPECT_FLOAT_EQ(grey.as<const float>()(0, 0), 0.299f + 0.587f * 0.5f + 0.114f * 0.25f);

    write_text(dir.file("zero.pfm"), "Pf\n1 1\n0\n\0\0\0\0");
    EXPECT_TRUE(read_fails(dir.file("zero.pfm"), "scale '0' must be a non-zero number"));
    write_text(dir.file("nan.pfm"), "Pf\n1 1\nnan\n\0\0\0\0");
    EXPECT_TRUE(read_fails(dir.file("nan.pfm"), "must be a non-zero number"));
    write_text(dir.file("short.pfm"), "Pf\n2 2\n-1\n\0\0\0\0");
    EXPECT_TRUE(read_fails(dir.file("short.pfm"), "truncated"));
}

// An .npy file as numpy writes it (version 1 or 2/3, header padded to 64 bytes).
std::vector<std::uint8_t> npy_file(const std::string& dict, const std::vector<std::uint8_t>& data, int major = 1) {
    std::vector<std::uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), 0};
    const std::size_t length_bytes = major == 1 ? 2 : 4;
    std::string header = dict;
    while ((bytes.size() + length_bytes + header.size() + 1) % 64) header += ' ';
    header += '\n';
    for (std::size_t i = 0; i < length_bytes; ++i) bytes.push_back(static_cast<std::uint8_t>(header.size() >> (8 * i)));
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.insert(bytes.end(), data.begin(), data.end());
    return bytes;
}

TEST(IoNpy, EveryDtypeAndVersion) {
    scratch_dir dir;
    write_bytes(dir.file("u1.npy"), npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", {1, 2, 3, 4, 5, 6}));
    const auto u1 = io::read_image(dir.file("u1.npy"));
    ASSERT_EQ(u1.type(), pixel_type::uint8);
    ASSERT_EQ(u1.width(), 3);
    ASSERT_EQ(u1.height(), 2);
    EXPECT_EQ(u1.as<std::uint8_t>()(1, 0), 4);

    write_bytes(dir.file("u2.npy"), npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (1, 2), }", {0x34, 0x12, 0xFF, 0xFF}, 2));
    EXPECT_EQ(io::read_image(dir.file("u2.npy")).as<std::uint16_t>()(0, 0), 0x1234);
    write_bytes(dir.file("u2be.npy"), npy_file("{\"descr\": \">u2\", \"fortran_order\": False, \"shape\": (1, 1)}", {0x12, 0x34}, 3));
    EXPECT_EQ(io::read_image(dir.file("u2be.npy")).as<std::uint16_t>()(0, 0), 0x1234);

    std::vector<std::uint8_t> little, big;
    append_float(little, -3.25f, std::endian::little);
    append_float(big, -3.25f, std::endian::big);
    write_bytes(dir.file("f4.npy"), npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", little));
    write_bytes(dir.file("f4be.npy"), npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1), }", big));
    EXPECT_EQ(io::read_image(dir.file("f4.npy")).as<float>()(0, 0), -3.25f);
    EXPECT_EQ(io::read_image(dir.file("f4be.npy")).as<float>()(0, 0), -3.25f);

    write_bytes(dir.file("bool.npy"), npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (1, 3), }", {0, 1, 7}));
    const auto b1 = io::read_image(dir.file("bool.npy"));
    ASSERT_EQ(b1.type(), pixel_type::uint8);
    EXPECT_EQ(b1.as<std::uint8_t>()(0, 0), 0);
    EXPECT_EQ(b1.as<std::uint8_t>()(0, 1), 1);
    EXPECT_EQ(b1.as<std::uint8_t>()(0, 2), 1);
}

TEST(IoNpy, WrittenHeaderIsWhatNumpyWrites) {
    scratch_dir dir;
    host_image<std::uint16_t> image(3, 2);
    fill<std::uint16_t>(image.view(), 0x0102);
    io::write_image(dir.file("w.npy"), image.view());
    std::vector<std::uint8_t> data;
    for (int i = 0; i < 6; ++i) append(data, {0x02, 0x01});
    EXPECT_EQ(file_bytes(dir.file("w.npy")),
              npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }", data));
}

// Label images: int32 '<i4' and int64 '<i8', little-endian, row-major; only as .npy.
TEST(IoNpy, WrittenLabelsAreInt32OrInt64) {
    scratch_dir dir;
    host_image<std::int32_t> narrow(2, 1);
    narrow.view()(0, 0) = 1, narrow.view()(0, 1) = 0x01020304;
    io::write_labels(dir.file("l4.npy"), host_view<const std::int32_t>(narrow.view()));
    EXPECT_EQ(file_bytes(dir.file("l4.npy")), npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }",
                                                       {1, 0, 0, 0, 4, 3, 2, 1}));
    host_image<std::int64_t> wide(1, 2);
    wide.view()(0, 0) = 0x0102030405060708ll, wide.view()(1, 0) = 3;
    io::write_labels(dir.file("l8.npy"), host_view<const std::int64_t>(wide.view()));
    EXPECT_EQ(file_bytes(dir.file("l8.npy")), npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }",
                                                       {8, 7, 6, 5, 4, 3, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0}));
    EXPECT_THROW(io::write_labels(dir.file("l8.tif"), host_view<const std::int64_t>(wide.view())), io_error);
    EXPECT_THROW(io::write_labels(dir.file("l4.png"), host_view<const std::int32_t>(narrow.view())), io_error);
}

TEST(IoNpy, RefusedLayoutsSayWhatToDo) {
    scratch_dir dir;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", "dtype '<f8' is not supported"},
        {"{'descr': '<i2', 'fortran_order': False, 'shape': (1, 1), }", "astype"},
        {"{'descr': '|u1', 'fortran_order': True, 'shape': (1, 1), }", "Fortran"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 3), }", "shape (1, 1, 3); granula reads 2-D"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (8,), }", "shape (8,)"},
        {"{'descr': [('r', '|u1')], 'fortran_order': False, 'shape': (1, 1), }", "structured dtype"},
        {"{'descr': '|u1', 'fortran_order': False, }", "is missing"},
        {"{'descr': '|u1', 'fortran_order': maybe, 'shape': (1, 1), }", "True or False"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (1, x), }", "whole numbers"},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (100000, 100000), }", "truncated: a (100000, 100000) array needs"},
        {"['not', 'a', 'dict']", "corrupt NPY header"},
    };
    int i = 0;
    for (const auto& [dict, reason] : cases) {
        const std::string path = dir.file("bad" + std::to_string(i++) + ".npy");
        write_bytes(path, npy_file(dict, {1, 2, 3, 4, 5, 6, 7, 8}));
        EXPECT_TRUE(read_fails(path, reason)) << dict;
    }
    auto future = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1), }", {1});
    future[6] = 4;
    write_bytes(dir.file("v4.npy"), future);
    EXPECT_TRUE(read_fails(dir.file("v4.npy"), "version 4 is not supported"));
    auto huge_header = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1), }", {1}, 2);
    huge_header[8] = huge_header[9] = huge_header[10] = 0x7F;
    write_bytes(dir.file("huge_header.npy"), huge_header);
    EXPECT_TRUE(read_fails(dir.file("huge_header.npy"), "corrupt NPY header"));
}

}  // namespace
}  // namespace granula::io_test
