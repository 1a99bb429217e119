// Bad files of every format: missing, directories, empty, garbage, truncated at random offsets,
// randomly corrupted, and headers that declare impossible sizes. Each must throw io_error that
// names the file -- never crash, hang, print, or throw anything else. (Run it under the
// sanitize preset to check memory safety as well.)
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include "io/io_test_support.hpp"

namespace granula::io_test {
namespace {

struct sample_file {
    const char* extension;
    pixel_type type;
};

std::vector<sample_file> sample_files() {
    std::vector<sample_file> files = {{".png", pixel_type::uint8},  {".png", pixel_type::uint16},
                                      {".pgm", pixel_type::uint8},  {".pgm", pixel_type::uint16},
                                      {".pfm", pixel_type::float32}, {".npy", pixel_type::uint8},
                                      {".npy", pixel_type::uint16}, {".npy", pixel_type::float32}};
    if (io::tiff_supported())
        for (pixel_type t : {pixel_type::uint8, pixel_type::uint16, pixel_type::float32}) files.push_back({".tif", t});
    return files;
}

std::string name_of(const sample_file& f) { return std::string(f.extension + 1) + "_" + std::string(to_string(f.type)); }

// A valid file of the format, as bytes.
std::vector<std::uint8_t> valid_file(const scratch_dir& dir, const sample_file& f, std::uint32_t seed) {
    const std::string path = dir.file(std::string("valid") + f.extension);
    visit_pixel_type(f.type, [&]<class T>(type_tag<T>) { io::write_image(path, random_image<T>(23, 17, seed).view()); });
    return file_bytes(path);
}

class IoFuzz : public ::testing::TestWithParam<sample_file> {};

TEST_P(IoFuzz, EveryTruncationFails) {
    scratch_dir dir;
    const auto bytes = valid_file(dir, GetParam(), 1);
    std::mt19937 rng(42);
    std::vector<std::size_t> cuts = {0, 1, 2, 7, 8, 16, bytes.size() / 2, bytes.size() - 2, bytes.size() - 1};
    for (int i = 0; i < 40; ++i) cuts.push_back(rng() % bytes.size());
    for (std::size_t cut : cuts) {
        const std::string path = dir.file(std::string("cut") + GetParam().extension);
        write_bytes(path, std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
        EXPECT_TRUE(read_fails(path)) << "cut at " << cut << " of " << bytes.size();
    }
}

TEST_P(IoFuzz, CorruptedBytesReadOrFailCleanly) {
    scratch_dir dir;
    const auto bytes = valid_file(dir, GetParam(), 2);
    std::mt19937 rng(7);
    int failures = 0;
    for (int i = 0; i < 300; ++i) {
        auto damaged = bytes;
        // Headers matter most: half of the damage lands in the first 64 bytes.
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) {
            const std::size_t at = (rng() % 2) ? rng() % std::min<std::size_t>(64, damaged.size()) : rng() % damaged.size();
            damaged[at] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        }
        const std::string path = dir.file(std::string("damaged") + GetParam().extension);
        write_bytes(path, damaged);
        try {
            const auto image = io::read_image(path);
            EXPECT_GE(image.width(), 0);
        } catch (const io_error& e) {
            ++failures;
            EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "iteration " << i << " threw something other than io_error: " << e.what();
        }
    }
    RecordProperty("failures", failures);
}

TEST_P(IoFuzz, GarbageAndEmptyFilesFail) {
    scratch_dir dir;
    std::mt19937 rng(3);
    const std::string path = dir.file(std::string("garbage") + GetParam().extension);
    for (std::size_t size : {0, 1, 5, 100, 4096}) {
        std::vector<std::uint8_t> garbage(size);
        for (auto& b : garbage) b = static_cast<std::uint8_t>(rng());
        write_bytes(path, garbage);
        EXPECT_TRUE(read_fails(path)) << size << " random bytes";
    }
    write_text(path, "just some text, clearly not an image\n");
    EXPECT_TRUE(read_fails(path));
}

INSTANTIATE_TEST_SUITE_P(AllFormats, IoFuzz, ::testing::ValuesIn(sample_files()),
                         [](const auto& info) { return name_of(info.param); });

TEST(IoErrors, MissingFilesDirectoriesAndUnknownExtensions) {
    scratch_dir dir;
    for (const char* ext : {".png", ".tif", ".pgm", ".pfm", ".npy"}) {
        if (std::string(ext) == ".tif" && !io::tiff_supported()) continue;
        EXPECT_TRUE(read_fails(dir.file(std::string("missing") + ext), "cannot open: No such file or directory")) << ext;
        fs::create_directory(dir.file(std::string("folder") + ext));
        EXPECT_TRUE(read_fails(dir.file(std::string("folder") + ext), "is a directory")) << ext;
    }
    write_text(dir.file("image.jpg"), "\xff\xd8\xff");
    EXPECT_TRUE(read_fails(dir.file("image.jpg"), "unknown file extension '.jpg'; the format is chosen by extension"));
    EXPECT_TRUE(read_fails(dir.file("README"), "has no file extension"));
}

TEST(IoErrors, UnreadableFile) {
    if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their permissions";
    scratch_dir dir;
    io::write_image(dir.file("locked.png"), random_image<std::uint8_t>(2, 2, 1).view());
    fs::permissions(dir.file("locked.png"), fs::perms::none);
    EXPECT_TRUE(read_fails(dir.file("locked.png"), "Permission denied"));
}

TEST(IoErrors, WrongFormatBehindAnExtension) {
    scratch_dir dir;
    io::write_image(dir.file("real.npy"), random_image<std::uint8_t>(4, 4, 1).view());
    fs::copy_file(dir.file("real.npy"), dir.file("fake.png"));
    fs::copy_file(dir.file("real.npy"), dir.file("fake.pgm"));
    EXPECT_TRUE(read_fails(dir.file("fake.png"), "not a PNG file"));
    EXPECT_TRUE(read_fails(dir.file("fake.pgm"), "not a Netpbm file"));
    io::write_image(dir.file("real.png"), random_image<std::uint8_t>(4, 4, 1).view());
    fs::copy_file(dir.file("real.png"), dir.file("fake.npy"));
    EXPECT_TRUE(read_fails(dir.file("fake.npy"), "not an NPY file"));
}

// A PNG chunk: length, type, data, CRC.
void append_chunk(std::vector<std::uint8_t>& png, const char* type, const std::vector<std::uint8_t>& data) {
    const auto put32 = [&](std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<std::uint8_t>(v >> s));
    };
    put32(static_cast<std::uint32_t>(data.size()));
    const std::size_t start = png.size();
    png.insert(png.end(), type, type + 4);
    png.insert(png.end(), data.begin(), data.end());
    put32(static_cast<std::uint32_t>(crc32(0, png.data() + start, static_cast<uInt>(png.size() - start))));
}

TEST(IoErrors, PngDeclaringMorePixelsThanItCanHoldFailsBeforeAllocating) {
    scratch_dir dir;
    std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    // 1,000,000 x 1,000,000 8-bit grey: a terabyte from a file of a hundred bytes.
    append_chunk(png, "IHDR", {0x00, 0x0F, 0x42, 0x40, 0x00, 0x0F, 0x42, 0x40, 8, 0, 0, 0, 0});
    std::vector<std::uint8_t> zeros(1000, 0), packed(compressBound(1000));
    uLongf packed_size = packed.size();
    ASSERT_EQ(compress(packed.data(), &packed_size, zeros.data(), zeros.size()), Z_OK);
    packed.resize(packed_size);
    append_chunk(png, "IDAT", packed);
    append_chunk(png, "IEND", {});
    write_bytes(dir.file("huge.png"), png);
    EXPECT_TRUE(read_fails(dir.file("huge.png"), "declares 1000000x1000000 pixels, more than its"));

    // A bad CRC in the header is corruption, reported as such.
    png[29] ^= 0xFF;
    write_bytes(dir.file("bad_crc.png"), png);
    EXPECT_TRUE(read_fails(dir.file("bad_crc.png"), "corrupt PNG header"));
}

}  // namespace
}  // namespace granula::io_test
