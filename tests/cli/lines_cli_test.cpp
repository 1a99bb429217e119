// 'granula line_opening | line_closing | line_erosion | line_dilation | orientation | spectrum |
// granulometry | deskew' run as separate processes: their files and printed values equal the C++
// API's results, and every mistake gives one "granula: error:" line with exit status 2 (usage) or
// 1 (runtime).
#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
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

constexpr line_filter_kind all_line_filter_kinds[] = {line_filter_kind::opening, line_filter_kind::closing,
                                                      line_filter_kind::erosion, line_filter_kind::dilation};

std::string line_command(line_filter_kind kind) { return "line_" + std::string(to_string(kind)); }

// Random pixels of type T written to `name` (its extension picks the format).
template <class T>
host_image<T> write_random(const scratch_dir& dir, const std::string& name, std::uint32_t seed) {
    host_image<T> img = io_test::random_image<T>(61, 43, seed);
    io::write_image(dir.file(name), host_view<const T>(img.view()));
    return img;
}

template <class T>
void expect_line_filter_at_one_angle(const std::string& extension) {
    scratch_dir dir;
    const std::string input = "in." + extension, output = dir.file("out." + extension);
    const host_image<T> img = write_random<T>(dir, input, 7);
    for (const line_filter_kind kind : all_line_filter_kinds)
        for (const double angle : {30.0, 90.0}) {
            const cli_result r = run_cli({line_command(kind), dir.file(input), output, "--length", "7", "--angle",
                                          std::to_string(angle), "--device", "cpu"},
                                         dir);
            ASSERT_EQ(r.status, 0) << line_command(kind) << " " << angle << ": " << r.err;
            EXPECT_TRUE(r.out.empty() && r.err.empty()) << r.out << r.err;
            host_image<T> expected(img.width(), img.height());
            line_params p{7};
            p.kind = kind;
            line_filter<T>(img.view(), expected.view(), angle, p);
            EXPECT_TRUE(io_test::same_pixels<T>(expected.view(), io::read_image(output)))
                << line_command(kind) << " at " << angle << " degrees, " << extension;
        }
}

TEST(CliLines, LineFiltersAtOneAngleEqualLineFilter) {
    expect_line_filter_at_one_angle<std::uint8_t>("png");
    expect_line_filter_at_one_angle<std::uint16_t>("png");
    expect_line_filter_at_one_angle<float>("npy");  // with NaN and -inf among the pixels
}

// --mode, --cval, --algorithm and --threads reach line_filter; --time reports on stderr.
TEST(CliLines, LineFilterOptions) {
    scratch_dir dir;
    const host_image<std::uint8_t> img = write_random<std::uint8_t>(dir, "in.png", 11);
    const std::string output = dir.file("out.png");
    struct option_case {
        std::vector<std::string> options;
        border mode;
        line_algorithm algorithm;
    };
    const option_case cases[] = {
        {{"--mode", "constant", "--cval", "100", "--algorithm", "stack"},
         {border_mode::constant, 100},
         line_algorithm::stack},
        {{"--mode", "nearest", "--algorithm", "fifo"}, {border_mode::nearest}, line_algorithm::fifo},
        {{"--mode", "reflect"}, {border_mode::reflect}, line_algorithm::automatic},
    };
    for (const option_case& c : cases) {
        std::vector<std::string> args = {"line_closing", dir.file("in.png"), output, "--length", "9", "--angle", "-20",
                                         "--device",     "cpu",              "--threads", "1", "--time"};
        args.insert(args.end(), c.options.begin(), c.options.end());
        const cli_result r = run_cli(args, dir);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(r.err.rfind("granula: line_closing on cpu (1 threads): ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(" ms compute\n"), std::string::npos) << r.err;
        host_image<std::uint8_t> expected(img.width(), img.height());
        const line_params p{9, line_filter_kind::closing, c.mode, c.algorithm};
        line_filter<std::uint8_t>(img.view(), expected.view(), -20, p);
        EXPECT_TRUE(io_test::same_pixels<std::uint8_t>(expected.view(), io::read_image(output))) << c.options[1];
    }
}

// --angles 12 --reduce max|min: the extremum at each pixel of 12 images filtered one by one.
TEST(CliLines, LineFiltersOverAnglesTakeTheMaxOrMin) {
    scratch_dir dir;
    const host_image<std::uint16_t> img = write_random<std::uint16_t>(dir, "in.png", 13);
    const std::string output = dir.file("out.png");
    const std::int64_t w = img.width(), h = img.height();
    for (const line_filter_kind kind : all_line_filter_kinds) {
        std::vector<host_image<std::uint16_t>> filtered;
        for (int i = 0; i < 12; ++i) {
            line_params p{5};
            p.kind = kind;
            line_filter<std::uint16_t>(img.view(), filtered.emplace_back(w, h).view(), 15.0 * i, p);
        }
        for (const std::string reduce : {"max", "min"}) {
            const cli_result r = run_cli({line_command(kind), dir.file("in.png"), output, "--length", "5", "--angles",
                                          "12", "--reduce", reduce, "--device", "cpu"},
                                         dir);
            ASSERT_EQ(r.status, 0) << line_command(kind) << " " << reduce << ": " << r.err;
            host_image<std::uint16_t> expected(w, h);
            for (std::int64_t y = 0; y < h; ++y)
                for (std::int64_t x = 0; x < w; ++x) {
                    std::uint16_t e = filtered[0].view()(y, x);
                    for (const auto& f : filtered)
                        e = reduce == "max" ? std::max(e, f.view()(y, x)) : std::min(e, f.view()(y, x));
                    expected.view()(y, x) = e;
                }
            EXPECT_TRUE(io_test::same_pixels<std::uint16_t>(expected.view(), io::read_image(output)))
                << line_command(kind) << " --reduce " << reduce;
        }
    }
}

TEST(CliLines, LineFilterErrors) {
    scratch_dir dir;
    const std::string page = data_file("page.png"), out = dir.file("out.png");  // page: 384x191 uint8
    const std::vector<std::string> opening = {"line_opening", page, out, "--length", "5"};
    const auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = opening;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    expect_error(opening, 2, "line_opening needs --angle A or --angles N");
    expect_error(with({"--angle", "30", "--angles", "12"}), 2, "not both");
    expect_error(with({"--angles", "12"}), 2, "--angles needs --reduce");
    expect_error(with({"--angle", "30", "--reduce", "max"}), 2, "--reduce needs --angles");
    expect_error(with({"--angles", "12", "--reduce", "bogus"}), 2, "allowed: auto, max, min");
    expect_error(with({"--angle", "thirty"}), 2, "--angle needs a number");
    expect_error(with({"--angles", "0", "--reduce", "max"}), 2, "--angles");
    expect_error(with({"--angle", "30", "--cval", "x"}), 2, "--cval needs a number");
    expect_error(with({"--angle", "30", "--threads", "-1"}), 2, "--threads");
    expect_error(with({"--angle", "30", "--mode", "mirror"}), 2, "allowed: ignore, constant, nearest, reflect");
    expect_error(with({"--angle", "30", "--mode", "bogus"}), 2, "unknown border mode 'bogus'");
    expect_error(with({"--angle", "30", "--algorithm", "fast"}), 2, "allowed: auto, fifo, stack");
    expect_error(with({"--angle", "30", "--colour"}), 2, "unknown option '--colour'");
    expect_error({"line_closing", page, out, "--angle", "30"}, 2, "line_closing needs --length");
    expect_error({"line_erosion", page, out, "--length", "0", "--angle", "30"}, 2, "--length");
    // Like the other line commands': a length the scan lines cannot hold is the user's to fix.
    expect_error({"line_dilation", page, out, "--length", "192", "--angle", "90", "--device", "cpu"}, 2,
                 "does not fit");
    expect_error(
        {"line_opening", page, out, "--length", "200", "--angles", "12", "--reduce", "min", "--device", "cpu"}, 2,
        "does not fit");
    expect_error({"line_opening", page, "--length", "5", "--angle", "30"}, 2, "needs IN and OUT");
    expect_error({"line_opening", data_file("missing.png"), out, "--length", "5", "--angle", "30"}, 1, "missing.png");
    expect_error({"line_opening", page, dir.file("out.pfm"), "--length", "5", "--angle", "30", "--device", "cpu"}, 1,
                 "PFM holds float32");
    if (!cuda_available()) expect_error(with({"--angle", "30", "--device", "cuda"}), 1, "CUDA");
    EXPECT_FALSE(std::filesystem::exists(out));
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

// The line filters on the GPU write the CPU's images, at one angle and over angles.
TEST(CliLinesGpu, LineFiltersOnCudaEqualTheCpu) {
    GRANULA_REQUIRE_GPU();
    scratch_dir dir;
    write_random<std::uint8_t>(dir, "in.png", 17);
    const std::vector<std::vector<std::string>> angle_options = {{"--angle", "30"}, {"--angle", "45"},
                                                                 {"--angles", "12", "--reduce", "min"}};
    for (const line_filter_kind kind : all_line_filter_kinds)
        for (const auto& angles : angle_options) {
            for (const std::string device : {"cpu", "cuda"}) {
                std::vector<std::string> args = {line_command(kind), dir.file("in.png"), dir.file(device + ".png"),
                                                 "--length", "8", "--device", device, "--time"};
                args.insert(args.end(), angles.begin(), angles.end());
                const cli_result r = run_cli(args, dir);
                ASSERT_EQ(r.status, 0) << line_command(kind) << " " << angles[1] << " " << device << ": " << r.err;
                EXPECT_EQ(r.err.rfind("granula: " + line_command(kind) + " on " + device, 0), 0u) << r.err;
            }
            EXPECT_EQ(read_text(dir.file("cuda.png")), read_text(dir.file("cpu.png")))
                << line_command(kind) << " " << angles[1];
        }
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
