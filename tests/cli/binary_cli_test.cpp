// The binary operations through the granula command line: output equals the C++ API on 0/1
// data, and a non-binary cval is one error line with exit status 1.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "granula/io/io.hpp"
#include "io/io_test_support.hpp"

namespace granula {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Runs the CLI with `args` (no shell metacharacters in them); returns the exit status and stderr.
std::pair<int, std::string> run_cli(const std::vector<std::string>& args, const std::string& err_file) {
    std::string command = GRANULA_CLI_PATH;
    for (const auto& a : args) command += " '" + a + "'";
    command += " >/dev/null 2>'" + err_file + "'";
    const int raw = std::system(command.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : 128, read_text(err_file)};
}

TEST(BinaryCli, EqualsTheApiOnBinaryData) {
    io_test::scratch_dir dir;
    // A 0/1 image with its last columns not a multiple of 64.
    host_image<std::uint8_t> img(203, 61);
    for (std::int64_t y = 0; y < img.height(); ++y)
        for (std::int64_t x = 0; x < img.width(); ++x) img.view()(y, x) = ((x * 7 + y * 13) % 11) < 8 ? 1 : 0;
    io::write_image(dir.file("in.png"), img.view());
    for (const char* op : {"binary_erosion", "binary_dilation", "binary_opening", "binary_closing"}) {
        const auto [status, err] = run_cli({op, dir.file("in.png"), dir.file("out.png"), "--footprint", "rect:9x4",
                                            "--mode", "reflect", "--device", "cpu"},
                                           dir.file("err.txt"));
        ASSERT_EQ(status, 0) << err;
        const any_host_image out = io::read_image(dir.file("out.png"));
        host_image<std::uint8_t> want(img.width(), img.height());
        find_operation(op).run_host(img.view(), any_host_view(want.view()),
                                    {structuring_element::rectangle(9, 4), {border_mode::reflect}});
        const host_view<std::uint8_t> got = out.as<std::uint8_t>();
        for (std::int64_t y = 0; y < img.height(); ++y)
            for (std::int64_t x = 0; x < img.width(); ++x) ASSERT_EQ(got(y, x), want.view()(y, x)) << op;
    }
}

// hit_or_miss: ones whose left neighbour is 0 (foreground the origin, background the pixel to
// its left, a 3x1 mask file with its origin at the centre), on the CPU, against the C++ API; a
// missing element is a usage error.
TEST(BinaryCli, HitOrMissEqualsTheApi) {
    io_test::scratch_dir dir;
    host_image<std::uint8_t> img(131, 17), left(3, 1);
    for (std::int64_t y = 0; y < img.height(); ++y)
        for (std::int64_t x = 0; x < img.width(); ++x) img.view()(y, x) = ((x * 5 + y * 3) % 7) < 4 ? 1 : 0;
    left.view()(0, 0) = 1, left.view()(0, 1) = 0, left.view()(0, 2) = 0;
    io::write_image(dir.file("in.png"), img.view());
    io::write_image(dir.file("left.png"), left.view());
    const auto [status, err] = run_cli({"hit_or_miss", dir.file("in.png"), dir.file("out.png"), "--foreground",
                                        "square:1", "--background", "mask:" + dir.file("left.png"), "--mode",
                                        "constant", "--cval", "0", "--device", "cpu"},
                                       dir.file("err.txt"));
    ASSERT_EQ(status, 0) << err;
    const any_host_image out = io::read_image(dir.file("out.png"));
    const host_bit_image bits = pack<std::uint8_t>(img.view());
    host_bit_image want(img.width(), img.height());
    hit_or_miss(bits.view(), want.view(), structuring_element::square(1),
                structuring_element::from_mask({.width = 3, .height = 1, .origin_x = 1, .origin_y = 0, .mask = {1, 0, 0}}),
                {border_mode::constant, 0});
    std::int64_t hits = 0;
    for (std::int64_t y = 0; y < img.height(); ++y)
        for (std::int64_t x = 0; x < img.width(); ++x) {
            ASSERT_EQ(out.as<std::uint8_t>()(y, x), want.view()(y, x) ? 1 : 0) << y << "," << x;
            hits += want.view()(y, x);
            const bool left_is_zero = x == 0 || img.view()(y, x - 1) == 0;
            ASSERT_EQ(want.view()(y, x), img.view()(y, x) == 1 && left_is_zero) << y << "," << x;
        }
    EXPECT_GT(hits, 0);
    const auto [missing, missing_err] =
        run_cli({"hit_or_miss", dir.file("in.png"), dir.file("out.png"), "--foreground", "square:1"}, dir.file("err.txt"));
    EXPECT_EQ(missing, 2);
    EXPECT_NE(missing_err.find("needs --background"), std::string::npos) << missing_err;
}

TEST(BinaryCli, NonBinaryCvalIsOneErrorLine) {
    io_test::scratch_dir dir;
    host_image<std::uint8_t> img(5, 5);
    fill<std::uint8_t>(img.view(), 1);
    io::write_image(dir.file("in.png"), img.view());
    const auto [status, err] = run_cli(
        {"binary_erosion", dir.file("in.png"), dir.file("out.png"), "--mode", "constant", "--cval", "2"},
        dir.file("err.txt"));
    EXPECT_EQ(status, 1);
    EXPECT_EQ(err.rfind("granula: error: ", 0), 0u) << err;
    EXPECT_NE(err.find("cval 0 or 1"), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
}

}  // namespace
}  // namespace granula
