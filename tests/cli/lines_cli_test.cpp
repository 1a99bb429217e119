// 'granula orientation | spectrum | granulometry | deskew' run as separate processes: their files
// and printed values equal the C++ API's results, and every mistake gives one "granula: error:"
// line with exit status 2 (usage) or 1 (runtime).
#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "granula/io/io.hpp"
#include "cli/cli_run.hpp"
#include "io/io_test_support.hpp"
#include "support/require_gpu.hpp"

namespace granula::cli_test {
namespace {

using io_test::scratch_dir;

std::string data_file(const std::string& name) { return std::string(GRANULA_DATA_DIR) + "/" + name; }

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(read_text(path));
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> fields;
        std::size_t start = 0;
        for (std::size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
            fields.push_back(line.substr(start, comma - start));
        fields.push_back(line.substr(start));
        rows.push_back(fields);
    }
    return rows;
}

// Horizontal bright stripes 3 pixels thick on a dark 60x40 image.
std::string write_stripes(const scratch_dir& dir, host_image<std::uint8_t>& img) {
    img = host_image<std::uint8_t>(60, 40);
    for (std::int64_t y = 0; y < 40; ++y)
        for (std::int64_t x = 0; x < 60; ++x) img.view()(y, x) = (y % 8) < 3 ? 200 : 20;
    const std::string path = dir.file("stripes.png");
    io::write_image(path, host_view<const std::uint8_t>(img.view()));
    return path;
}

TEST(CliLines, OrientationWritesTheExtremumAndAHueMap) {
    scratch_dir dir;
    host_image<std::uint8_t> img;
    const std::string input = write_stripes(dir, img);
    const cli_result r = run_cli(
        {"orientation", input, "--length", "9", "--angles", "12", "--out-dir", dir.file(""), "--device", "cpu"}, dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string supremum = dir.file("stripes_supremum.png"), map = dir.file("stripes_orientation.png");
    EXPECT_EQ(r.out, supremum + "\n" + map + "\n");
    host_image<std::uint8_t> expected(60, 40);
    host_image<std::int32_t> orientation(60, 40);
    host_line_outputs<std::uint8_t> outputs;
    outputs.extremum = expected.view();
    outputs.orientation = orientation.view();
    const auto angles = evenly_spaced_angles(12);
    line_filter_angles<std::uint8_t>(img.view(), angles, {9}, outputs);
    const any_host_image got = io::read_image(supremum);
    for (std::int64_t y = 0; y < 40; ++y)
        for (std::int64_t x = 0; x < 60; ++x) ASSERT_EQ(got.as<std::uint8_t>()(y, x), expected.view()(y, x));

    png_image png;
    std::memset(&png, 0, sizeof png);
    png.version = PNG_IMAGE_VERSION;
    ASSERT_TRUE(png_image_begin_read_from_file(&png, map.c_str()));
    EXPECT_EQ(png.format & PNG_FORMAT_FLAG_COLOR, PNG_FORMAT_FLAG_COLOR);  // an RGB file
    EXPECT_EQ(png.width, 60u);
    EXPECT_EQ(png.height, 40u);
    png.format = PNG_FORMAT_RGB;
    std::vector<std::uint8_t> rgb(PNG_IMAGE_SIZE(png));
    ASSERT_TRUE(png_image_finish_read(&png, nullptr, rgb.data(), 0, nullptr));
    const auto pixel = [&](int y, int x) { return &rgb[(y * 60 + x) * 3]; };
    // A stripe at 0 degrees: full red; between the stripes: black (no response).
    EXPECT_EQ(pixel(33, 5)[0], 255);
    EXPECT_EQ(pixel(33, 5)[1], 0);
    EXPECT_EQ(pixel(33, 5)[2], 0);
    EXPECT_EQ(pixel(36, 5)[0] + pixel(36, 5)[1] + pixel(36, 5)[2], 0);
    // The legend's wheel in the top-right corner: its rightmost point (0 degrees) is red, its top
    // (90 degrees) cyan.
    const int radius = 4, cx = 60 - radius - 2, cy = radius + 1;
    EXPECT_GT(pixel(cy, cx + radius - 1)[0], 200);
    EXPECT_LT(pixel(cy, cx + radius - 1)[1], 60);
    EXPECT_LT(pixel(cy - radius + 1, cx)[0], 60);
    EXPECT_GT(pixel(cy - radius + 1, cx)[1], 200);
}

// float32 images: the infimum of closings as NPY (PNG holds no float32), the map as PNG.
TEST(CliLines, OrientationOfFloatImagesWritesNpy) {
    scratch_dir dir;
    const std::string input = std::string(GRANULA_DATA_DIR) + "/page_float32.npy";
    const cli_result r = run_cli({"orientation", input, "--length", "15", "--angles", "8", "--closing", "--out-dir",
                                  dir.file(""), "--device", "cpu"},
                                 dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const any_host_image page = io::read_image(input);
    host_image<float> expected(page.width(), page.height());
    host_line_outputs<float> outputs;
    outputs.extremum = expected.view();
    line_params p{15};
    p.kind = line_filter_kind::closing;
    line_filter_angles<float>(page.as<const float>(), evenly_spaced_angles(8), p, outputs);
    const any_host_image got = io::read_image(dir.file("page_float32_infimum.npy"));
    for (std::int64_t y = 0; y < page.height(); ++y)
        for (std::int64_t x = 0; x < page.width(); ++x) ASSERT_EQ(got.as<float>()(y, x), expected.view()(y, x));
    EXPECT_TRUE(std::filesystem::exists(dir.file("page_float32_orientation.png")));
}

TEST(CliLines, SpectrumCsvAndSvg) {
    scratch_dir dir;
    host_image<std::uint8_t> img;
    const std::string input = write_stripes(dir, img);
    const cli_result r = run_cli(
        {"spectrum", input, "--length", "21", "--angles", "8", "--out-dir", dir.file(""), "--device", "cpu"}, dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto angles = evenly_spaced_angles(8);
    std::vector<double> spectrum(8);
    host_line_outputs<std::uint8_t> outputs;
    outputs.spectrum = spectrum;
    line_filter_angles<std::uint8_t>(img.view(), angles, {21}, outputs);
    const auto rows = read_csv(dir.file("stripes_spectrum.csv"));
    ASSERT_EQ(rows.size(), 9u);
    EXPECT_EQ(rows[0], (std::vector<std::string>{"angle", "sum"}));
    for (std::size_t i = 0; i < 8; ++i) {
        EXPECT_EQ(std::stod(rows[i + 1][0]), angles[i]);
        EXPECT_EQ(std::stod(rows[i + 1][1]), spectrum[i]);
    }
    EXPECT_GT(spectrum[0], spectrum[4]);  // the stripes' angle has the largest sum
    const std::string svg = read_text(dir.file("stripes_spectrum.svg"));
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
    EXPECT_NE(svg.find("<polyline"), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(CliLines, GranulometryCsv) {
    scratch_dir dir;
    host_image<std::uint8_t> img;
    const std::string input = write_stripes(dir, img);
    const std::string csv = dir.file("g.csv");
    for (const bool closing : {false, true}) {
        std::vector<std::string> args = {"granulometry", input, "--lengths", "1:31:5", "--angles", "4",
                                         "--out",        csv,   "--device",  "cpu"};
        if (closing) args.push_back("--closing");
        const cli_result r = run_cli(args, dir);
        ASSERT_EQ(r.status, 0) << r.err;
        const std::vector<std::int64_t> lengths = {1, 6, 11, 16, 21, 26, 31};
        line_params p;
        if (closing) p.kind = line_filter_kind::closing;
        const auto sums = line_granulometry<std::uint8_t>(img.view(), lengths, evenly_spaced_angles(4), p);
        const auto rows = read_csv(csv);
        ASSERT_EQ(rows.size(), lengths.size() + 1);
        EXPECT_EQ(rows[0], (std::vector<std::string>{"length", "sum", "pattern_spectrum"}));
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            EXPECT_EQ(std::stoll(rows[i + 1][0]), lengths[i]);
            EXPECT_EQ(std::stod(rows[i + 1][1]), sums[i]);
            if (i + 1 < lengths.size())
                EXPECT_EQ(std::stod(rows[i + 1][2]), closing ? sums[i + 1] - sums[i] : sums[i] - sums[i + 1]);
            else
                EXPECT_EQ(rows[i + 1][2], "");
        }
    }
    const cli_result to_stdout = run_cli({"granulometry", input, "--lengths", "3:5", "--device", "cpu"}, dir);
    ASSERT_EQ(to_stdout.status, 0) << to_stdout.err;
    EXPECT_EQ(to_stdout.out.rfind("length,sum,pattern_spectrum\n3,", 0), 0u) << to_stdout.out;
}

TEST(CliLines, DeskewPrintsTheAngleAndStraightens) {
    scratch_dir dir;
    const any_host_image file = io::read_image(data_file("page.png"));
    const host_view<const std::uint8_t> page = file.as<const std::uint8_t>();
    host_image<std::uint8_t> tilted(page.width(), page.height());
    rotate<std::uint8_t>(page, tilted.view(), 4.0, 255);
    const std::string input = dir.file("tilted.png"), output = dir.file("straight.png");
    io::write_image(input, host_view<const std::uint8_t>(tilted.view()));
    const cli_result r = run_cli({"deskew", input, "--range", "-6:6", "--step", "0.1", "--out", output}, dir);
    ASSERT_EQ(r.status, 0) << r.err;
    deskew_params p;
    p.first = -6, p.last = 6;
    const double angle = detect_rotation<std::uint8_t>(tilted.view(), p).angle;
    char printed[32];
    std::snprintf(printed, sizeof printed, "%.2f\n", angle);
    EXPECT_EQ(r.out, printed);
    EXPECT_NEAR(angle, 4.0 - 0.28, 0.1);  // the page's own skew is -0.28 by this method
    host_image<std::uint8_t> expected(page.width(), page.height());
    rotate<std::uint8_t>(host_view<const std::uint8_t>(tilted.view()), expected.view(), -angle, 255);
    const any_host_image got = io::read_image(output);
    for (std::int64_t y = 0; y < page.height(); ++y)
        for (std::int64_t x = 0; x < page.width(); ++x) ASSERT_EQ(got.as<std::uint8_t>()(y, x), expected.view()(y, x));
    const cli_result closing = run_cli({"deskew", input, "--method", "closing", "--length", "100", "--fill", "0"}, dir);
    EXPECT_EQ(closing.status, 0) << closing.err;
}

// --device cuda writes the same files as --device cpu.
TEST(CliLinesGpu, CudaEqualsTheCpu) {
    GRANULA_REQUIRE_GPU();
    scratch_dir dir;
    host_image<std::uint8_t> img;
    const std::string input = write_stripes(dir, img);
    for (const std::string device : {"cpu", "cuda"}) {
        const std::string out = dir.file(device);
        std::filesystem::create_directories(out);
        for (const std::string command : {"orientation", "spectrum"}) {
            const cli_result r = run_cli(
                {command, input, "--length", "15", "--angles", "30", "--out-dir", out, "--device", device}, dir);
            ASSERT_EQ(r.status, 0) << device << " " << command << ": " << r.err;
        }
        const cli_result r =
            run_cli({"granulometry", input, "--lengths", "3:31:4", "--out", out + "/g.csv", "--device", device}, dir);
        ASSERT_EQ(r.status, 0) << device << ": " << r.err;
    }
    for (const std::string file :
         {"stripes_supremum.png", "stripes_orientation.png", "stripes_spectrum.csv", "stripes_spectrum.svg", "g.csv"})
        EXPECT_EQ(read_text(dir.file("cuda/" + file)), read_text(dir.file("cpu/" + file))) << file;
}

TEST(CliLines, Errors) {
    const std::string page = data_file("page.png");  // 384x191
    expect_error({"orientation", page}, 2, "needs --length");
    expect_error({"orientation", page, "--length", "0"}, 2, "--length");
    expect_error({"orientation", page, "--length", "5", "--angles", "0"}, 2, "--angles");
    expect_error({"orientation", page, "--length", "385", "--device", "cpu"}, 2, "does not fit");
    expect_error({"orientation", page, "--length", "5", "--algorithm", "fast"}, 2, "allowed: auto, fifo, stack");
    expect_error({"orientation", page, "--length", "5", "--colour"}, 2, "unknown option '--colour'");
    expect_error({"orientation"}, 2, "IMAGE");
    expect_error({"spectrum", page, "--length", "-3"}, 2, "--length");
    expect_error({"spectrum", page, "--length", "200", "--angles", "4", "--device", "cpu"}, 2, "does not fit");
    expect_error({"granulometry", page}, 2, "needs --lengths");
    expect_error({"granulometry", page, "--lengths", "0:9"}, 2, ">= 1");
    expect_error({"granulometry", page, "--lengths", "5:201:0"}, 2, "step");
    expect_error({"granulometry", page, "--lengths", "5:1.5"}, 2, "whole numbers");
    expect_error({"granulometry", page, "--lengths", "5:201:2", "--device", "cpu"}, 2, "does not fit");
    expect_error({"deskew", page, "--step", "0"}, 2, "step");
    expect_error({"deskew", page, "--range", "10:-10"}, 2, "empty");
    expect_error({"deskew", page, "--range", "10"}, 2, "FIRST:LAST");
    expect_error({"deskew", page, "--method", "hough"}, 2, "allowed: text, closing");
    expect_error({"deskew", page, "--length", "400"}, 2, "does not fit");
    expect_error({"deskew", page, "--out", "x.pfm"}, 1, "PFM holds float32");
    expect_error({"deskew", data_file("missing.png")}, 1, "missing.png");
    if (!cuda_available()) expect_error({"spectrum", page, "--length", "5", "--device", "cuda"}, 1, "CUDA");
}

}  // namespace
}  // namespace granula::cli_test
