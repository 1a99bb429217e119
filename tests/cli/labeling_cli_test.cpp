// 'granula label' run as a separate process: its NPY labels and statistics CSV equal the C++
// API's, the grey-coded PNG gives each component one grey level and the background 0, and every
// mistake gives one "granula: error:" line with exit status 2 (usage) or 1 (runtime).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "granula/io/io.hpp"
#include "cli/cli_run.hpp"
#include "io/io_test_support.hpp"

namespace granula::cli_test {
namespace {

using io_test::scratch_dir;

// The int32 values of a 2-D '<i4' NPY file written by granula.
std::vector<std::int32_t> read_npy_int32(const std::string& path, std::int64_t expected_count) {
    const std::string bytes = read_text(path);
    EXPECT_GE(bytes.size(), 10u);
    const std::size_t header = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    EXPECT_NE(bytes.find("'<i4'"), std::string::npos);
    std::vector<std::int32_t> values(static_cast<std::size_t>(expected_count));
    EXPECT_EQ(bytes.size(), 10 + header + values.size() * 4);
    if (bytes.size() == 10 + header + values.size() * 4) std::memcpy(values.data(), bytes.data() + 10 + header, values.size() * 4);
    return values;
}

TEST(CliLabel, OutputsEqualTheApi) {
    scratch_dir dir;
    std::mt19937_64 rng(6201);
    host_image<std::uint8_t> img(67, 45);
    std::uniform_int_distribution<int> v(0, 2);
    for (std::int64_t y = 0; y < 45; ++y)
        for (std::int64_t x = 0; x < 67; ++x) img.view()(y, x) = static_cast<std::uint8_t>(v(rng) == 0 ? 0 : v(rng) + 1);
    const std::string input = dir.file("in.png");
    io::write_image(input, host_view<const std::uint8_t>(img.view()));
    // Both GPU methods give the CPU's labels and statistics too.
    std::vector<std::vector<std::string>> backends = {{"--device", "cpu"}};
    if (cuda_available()) {
        backends.push_back({"--device", "cuda"});
        backends.push_back({"--device", "cuda", "--method", "tile_merge"});
    }
    for (const auto& backend : backends)
        for (int connectivity : {1, 2}) {
            host_image<std::int32_t> expected(67, 45);
            region_statistics stats;
            const std::int64_t n = label<std::uint8_t>(img.view(), expected.view(), connectivity, 0, &stats);
            const std::string npy = dir.file("labels.npy"), csv = dir.file("stats.csv"), png = dir.file("colour.png");
            std::vector<std::string> args = {"label", input, "--connectivity", std::to_string(connectivity), "--labels",
                                             npy, "--stats", csv, "--colour", png};
            args.insert(args.end(), backend.begin(), backend.end());
            const cli_result r = run_cli(args, dir);
            ASSERT_EQ(r.status, 0) << r.err;
            EXPECT_EQ(r.out, input + ": " + std::to_string(n) + " components\n");
            const std::vector<std::int32_t> labels = read_npy_int32(npy, 67 * 45);
            ASSERT_EQ(labels.size(), 67u * 45u);
            for (std::int64_t y = 0; y < 45; ++y)
                for (std::int64_t x = 0; x < 67; ++x) ASSERT_EQ(labels[y * 67 + x], expected.view()(y, x));
            std::istringstream lines(read_text(csv));
            std::string line;
            std::getline(lines, line);
            EXPECT_EQ(line, "label,area,min_row,min_col,max_row,max_col,centroid_row,centroid_col,value");
            for (std::int64_t c = 0; c < n; ++c) {
                ASSERT_TRUE(std::getline(lines, line));
                std::ostringstream start;
                start << c + 1 << ',' << stats.area[c] << ',' << stats.min_row[c] << ',' << stats.min_col[c] << ','
                      << stats.max_row[c] << ',' << stats.max_col[c] << ',';
                EXPECT_EQ(line.rfind(start.str(), 0), 0u) << line;
                // The centroids are written with 17 digits: they read back as the same doubles.
                const std::size_t centroids = start.str().size();
                char* end = nullptr;
                EXPECT_EQ(std::strtod(line.c_str() + centroids, &end), stats.centroid_row[c]) << line;
                ASSERT_EQ(*end, ',') << line;
                EXPECT_EQ(std::strtod(end + 1, &end), stats.centroid_col[c]) << line;
                ASSERT_EQ(*end, ',') << line;
                EXPECT_EQ(std::string(end + 1), std::to_string(stats.value[c])) << line;
            }
            EXPECT_FALSE(std::getline(lines, line));
            // One grey level in 64..255 per component, 0 for the background.
            const any_host_image colour = io::read_image(png);
            const host_view<std::uint8_t> grey = colour.as<std::uint8_t>();
            std::map<std::int32_t, std::uint8_t> grey_of;
            for (std::int64_t y = 0; y < 45; ++y)
                for (std::int64_t x = 0; x < 67; ++x) {
                    const std::int32_t l = expected.view()(y, x);
                    if (l == 0) {
                        ASSERT_EQ(grey(y, x), 0) << "at (" << y << ", " << x << ")";
                        continue;
                    }
                    ASSERT_GE(grey(y, x), 64) << "at (" << y << ", " << x << ")";
                    ASSERT_EQ(grey_of.try_emplace(l, grey(y, x)).first->second, grey(y, x)) << "label " << l;
                }
            EXPECT_EQ(static_cast<std::int64_t>(grey_of.size()), n);
        }
}

TEST(CliLabel, Errors) {
    scratch_dir dir;
    host_image<std::uint8_t> img(5, 4);
    fill<std::uint8_t>(img.view(), 1);
    const std::string input = dir.file("in.png");
    io::write_image(input, host_view<const std::uint8_t>(img.view()));
    host_image<float> f(5, 4);
    fill<float>(f.view(), 1.0f);
    const std::string float_input = dir.file("in.pfm");
    io::write_image(float_input, host_view<const float>(f.view()));
    for (const char* connectivity : {"0", "3", "-1", "x", "1.5"})
        expect_error({"label", input, "--connectivity", connectivity}, 2, "connectivity");
    host_image<std::uint8_t> no_pixels(0, 4);
    const std::string empty_input = dir.file("empty.npy");
    io::write_image(empty_input, host_view<const std::uint8_t>(no_pixels.view()));
    expect_error({"label", empty_input, "--device", "cpu"}, 1, "empty");
    expect_error({"label", input, "--labels", dir.file("out.png")}, 2, ".npy");
    expect_error({"label", input, "--labels", dir.file("out.tif")}, 2, "TIFF");
    expect_error({"label"}, 2, "IMAGE");
    expect_error({"label", float_input, "--device", "cpu"}, 1, "float32");
    expect_error({"label", dir.file("missing.png")}, 1, "missing.png");
    expect_error({"label", input, "--method", "bke"}, 2, "tile_merge");
    expect_error({"label", input, "--method", "tile_merge", "--device", "cpu"}, 1, "GPU method");
}

}  // namespace
}  // namespace granula::cli_test
