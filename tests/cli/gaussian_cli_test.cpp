// granula gaussian, run as a separate process: its output files equal the C++ API's results,
// and every mistake gives one "granula: error:" line with exit status 2 (usage) or 1 (runtime).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "granula/io/io.hpp"
#include "cli/cli_run.hpp"
#include "io/io_test_support.hpp"

namespace granula {
namespace {

using io_test::scratch_dir;
using cli_test::cli_result;
using cli_test::expect_error;
using cli_test::run_cli;

std::string data_file(const std::string& name) { return std::string(GRANULA_DATA_DIR) + "/" + name; }

TEST(GaussianCli, Float32OutputEqualsTheApi) {
    scratch_dir dir;
    const cli_result r = run_cli({"gaussian", data_file("camera.png"), dir.file("out.npy"), "--sigma", "2,5",
                                  "--order", "0,1", "--mode", "mirror", "--device", "cpu", "--time"},
                                 dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("gaussian on cpu"), std::string::npos) << r.err;
    const any_host_image in = io::read_image(data_file("camera.png"));
    gaussian_params p;
    p.sigma = {2, 5};
    p.order = {0, 1};
    p.mode = {border_mode::mirror, border_mode::mirror};
    const auto want = gaussian<std::uint8_t>(in.view().as<const std::uint8_t>(), p);
    const any_host_image got = io::read_image(dir.file("out.npy"));
    ASSERT_EQ(got.type(), pixel_type::float32);
    const auto g = got.view().as<const float>();
    for (std::int64_t y = 0; y < want.height(); ++y)
        for (std::int64_t x = 0; x < want.width(); ++x) ASSERT_EQ(g(y, x), want.view()(y, x)) << y << "," << x;
}

TEST(GaussianCli, InputTypeOutput) {
    scratch_dir dir;
    const cli_result r = run_cli({"gaussian", data_file("coins16.png"), dir.file("out.png"), "--sigma", "7",
                                  "--method", "deriche", "--output-type", "input", "--device", "cpu"},
                                 dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const any_host_image in = io::read_image(data_file("coins16.png"));
    ASSERT_EQ(in.type(), pixel_type::uint16);
    const auto src = in.view().as<const std::uint16_t>();
    host_image<std::uint16_t> want(src.width(), src.height());
    gaussian_params p = gaussian_params::isotropic(7);
    p.method = gaussian_method::deriche;
    gaussian<std::uint16_t, std::uint16_t>(src, want.view(), p);
    const any_host_image got = io::read_image(dir.file("out.png"));
    const auto g = got.view().as<const std::uint16_t>();
    for (std::int64_t y = 0; y < src.height(); ++y)
        for (std::int64_t x = 0; x < src.width(); ++x) ASSERT_EQ(g(y, x), want.view()(y, x));
}

TEST(GaussianCli, CudaEqualsTheDeviceApiAndTimesComputeApart) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA device: --device cuda is tested as an error instead";
    scratch_dir dir;
    const cli_result r = run_cli({"gaussian", data_file("camera.png"), dir.file("out.npy"), "--sigma", "3",
                                  "--order", "1,0", "--device", "cuda", "--time"},
                                 dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.rfind("granula: gaussian on cuda: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(" ms host<->device transfers"), std::string::npos) << r.err;
    const any_host_image in = io::read_image(data_file("camera.png"));
    const auto src = in.view().as<const std::uint8_t>();
    gaussian_params p = gaussian_params::isotropic(3);
    p.order = {1, 0};
    const device_image<std::uint8_t> d_in = upload<std::uint8_t>(src);
    device_image<float> d_out(src.width(), src.height());
    gaussian<std::uint8_t, float>(device_view<const std::uint8_t>(d_in.view()), d_out.view(), p);
    host_image<float> want(src.width(), src.height());
    copy<float>(device_view<const float>(d_out.view()), want.view());
    stream{}.synchronize();
    const any_host_image got = io::read_image(dir.file("out.npy"));
    ASSERT_EQ(got.type(), pixel_type::float32);
    const auto g = got.view().as<const float>();
    for (std::int64_t y = 0; y < src.height(); ++y)
        for (std::int64_t x = 0; x < src.width(); ++x) ASSERT_EQ(g(y, x), want.view()(y, x)) << y << "," << x;
}

TEST(GaussianCli, ErrorsAreOneLineWithTheRightStatus) {
    scratch_dir dir;
    const std::string in = data_file("camera.png"), out = dir.file("o.npy");
    expect_error({"gaussian", in, out}, 2, "--sigma");
    expect_error({"gaussian", in}, 2, "IN and OUT");
    expect_error({"gaussian", in, out, "--sigma", "-1"}, 2, "sigma on axis 0");
    expect_error({"gaussian", in, out, "--sigma", "nan"}, 2, "sigma");
    expect_error({"gaussian", in, out, "--sigma", "1,2,3"}, 2, "one value or two");
    expect_error({"gaussian", in, out, "--sigma", "4", "--order", "3"}, 2, "allowed: 0, 1, 2");
    expect_error({"gaussian", in, out, "--sigma", "4", "--method", "yvv", "--order", "1"}, 2, "order 0 only");
    expect_error({"gaussian", in, out, "--sigma", "4", "--method", "box"}, 2, "unknown Gaussian method");
    expect_error({"gaussian", in, out, "--sigma", "4", "--method", "yvv", "--split", "3way"}, 2,
                 "unknown Gaussian split");
    expect_error({"gaussian", in, out, "--sigma", "4", "--split", "two_way"}, 2, "applies to the yvv methods");
    expect_error({"gaussian", in, out, "--sigma", "4", "--method", "yvv", "--split", "two_way", "--device", "cpu"}, 1,
                 "CUDA backend only");
    expect_error({"gaussian", in, out, "--sigma", "4", "--mode", "ignore"}, 2, "ignore");
    expect_error({"gaussian", in, out, "--sigma", "4", "--mode", "bounce"}, 2, "unknown border mode");
    expect_error({"gaussian", in, out, "--sigma", "4", "--output-type", "int"}, 2, "--output-type");
    expect_error({"gaussian", in, dir.file("o.png"), "--sigma", "4"}, 1, "--output-type input");
    expect_error({"gaussian", dir.file("missing.png"), out, "--sigma", "4"}, 1, "missing.png");
}

}  // namespace
}  // namespace granula
