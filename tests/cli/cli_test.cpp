// The granula command line, run as a separate process: every registry operation's output equals
// the C++ API's result; help, list and version come from the registry; and every mistake or
// failure gives exactly one line "granula: error: ..." on stderr with exit status 2 (usage) or
// 1 (runtime), never a crash.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "granula/granula.hpp"
#include "command.hpp"
#include "granula/io/io.hpp"
#include "io/io_test_support.hpp"

namespace granula::cli_test {
namespace {

namespace fs = std::filesystem;
using io_test::scratch_dir;

std::string data_file(const std::string& name) { return std::string(GRANULA_DATA_DIR) + "/" + name; }

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string shell_quote(const std::string& arg) {
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

struct cli_result {
    int status = -1;
    std::string out;
    std::string err;
};

cli_result run_cli(const std::vector<std::string>& args) {
    static int counter = 0;
    const fs::path capture = fs::temp_directory_path() / ("granula-cli-capture-" + std::to_string(::getpid()) + "-" +
                                                           std::to_string(counter++));
    std::string command = shell_quote(GRANULA_CLI_PATH);
    for (const auto& a : args) {
        command += ' ';
        command += shell_quote(a);
    }
    for (const char* stream : {" >", " 2>"}) {
        command += stream;
        command += shell_quote(capture.string() + (stream[1] == '>' ? ".out" : ".err"));
    }
    const int raw = std::system(command.c_str());
    cli_result result;
    result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    result.out = read_text(capture.string() + ".out");
    result.err = read_text(capture.string() + ".err");
    fs::remove(capture.string() + ".out");
    fs::remove(capture.string() + ".err");
    return result;
}

std::string describe(const std::vector<std::string>& args, const cli_result& r) {
    std::string text = "granula";
    for (const auto& a : args) text += " " + a;
    return text + "\n  exit status " + std::to_string(r.status) + "\n  stdout: " + r.out + "\n  stderr: " + r.err;
}

// The command fails with `status`, prints nothing on stdout and exactly one error line on stderr
// that contains `reason`.
::testing::AssertionResult fails_with(const std::vector<std::string>& args, int status, const std::string& reason) {
    const cli_result r = run_cli(args);
    if (r.status != status) return ::testing::AssertionFailure() << "wrong exit status: " << describe(args, r);
    if (!r.out.empty()) return ::testing::AssertionFailure() << "printed on stdout: " << describe(args, r);
    if (r.err.rfind("granula: error: ", 0) != 0 || r.err.empty() || r.err.back() != '\n' ||
        r.err.find('\n') != r.err.size() - 1)
        return ::testing::AssertionFailure() << "stderr is not one 'granula: error:' line: " << describe(args, r);
    if (r.err.find(reason) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks '" << reason << "': " << describe(args, r);
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult succeeds(const std::vector<std::string>& args) {
    const cli_result r = run_cli(args);
    if (r.status != 0 || !r.err.empty()) return ::testing::AssertionFailure() << describe(args, r);
    return ::testing::AssertionSuccess();
}

// What the C++ API computes for the same operation and arguments.
any_host_image api_result(const std::string& operation, const std::string& input, const operation_args& args,
                          bool to_grey = false) {
    const auto in = io::read_image(input, {.to_grey = to_grey});
    auto out = make_host_image(in.type(), in.width(), in.height());
    find_operation(operation).run_host(in.view(), out.view(), args);
    return out;
}

::testing::AssertionResult same_image(const any_host_image& expected, const std::string& path) {
    const auto actual = io::read_image(path);
    if (actual.type() != expected.type() || actual.width() != expected.width() || actual.height() != expected.height())
        return ::testing::AssertionFailure() << path << " has a different type or size";
    const std::size_t row_bytes = expected.width() * size_of(expected.type());
    for (std::int64_t y = 0; y < expected.height(); ++y) {
        const auto* a = static_cast<const char*>(expected.view().data) + y * expected.view().stride * size_of(expected.type());
        const auto* b = static_cast<const char*>(actual.view().data) + y * actual.view().stride * size_of(actual.type());
        if (std::memcmp(a, b, row_bytes) != 0) return ::testing::AssertionFailure() << path << " differs in row " << y;
    }
    return ::testing::AssertionSuccess();
}

operation_args make_args(const std::string& footprint, border_mode mode = border_mode::ignore, double cval = 0) {
    operation_args args;
    args.footprint = structuring_element::parse(footprint);
    args.mode = {mode, cval};
    return args;
}

TEST(CliRun, EveryRegistryOperationEqualsTheApi) {
    scratch_dir dir;
    for (const auto& op : operations()) {
        const std::string name(op.name);
        const std::string out = dir.file(name + ".png");
        ASSERT_TRUE(succeeds({name, data_file("page.png"), out, "--footprint", "rect:15x3", "--device", "cpu"}));
        EXPECT_TRUE(same_image(api_result(name, data_file("page.png"), make_args("rect:15x3")), out)) << name;
    }
}

TEST(CliRun, RegistryDefaultsApplyWhenOptionsAreLeftOut) {
    scratch_dir dir;
    ASSERT_TRUE(succeeds({"erosion", data_file("coins.png"), dir.file("out.png")}));
    operation_args defaults;
    for (const auto& p : find_operation("erosion").parameters) {
        if (p.name == "footprint") defaults.footprint = structuring_element::parse(p.default_value);
        if (p.name == "convention") defaults.compatibility = parse_convention(p.default_value);
        if (p.name == "mode") defaults.mode.mode = parse_mode_parameter(p.default_value, defaults.compatibility);
        if (p.name == "cval") defaults.mode.cval = std::stod(std::string(p.default_value));
    }
    EXPECT_TRUE(same_image(api_result("erosion", data_file("coins.png"), defaults), dir.file("out.png")));
}

TEST(CliRun, ModesFootprintsTypesAndOptionSpellings) {
    scratch_dir dir;
    const std::string wide_format = io::tiff_supported() ? ".tif" : ".png";
    struct run_case {
        std::vector<std::string> options;
        std::string operation, input, output;
        operation_args args;
    };
    const std::vector<run_case> cases = {
        {{"--footprint=hline:31", "--mode=reflect"}, "dilation", "text.png", "a.png", make_args("hline:31", border_mode::reflect)},
        {{"--mode", "constant", "--cval", "200", "--footprint", "vline:9"}, "opening", "camera.png", "b.pgm",
         make_args("vline:9", border_mode::constant, 200)},
        {{"--footprint", "square:5", "--mode", "nearest", "--threads", "1"}, "white_tophat", "coins16.png",
         "c" + wide_format, make_args("square:5", border_mode::nearest)},
        {{"--footprint", "rect:3x11", "--mode", "mirror"}, "gradient", "page_float32.npy", "d.npy",
         make_args("rect:3x11", border_mode::mirror)},
        {{"--footprint", "hline:1000", "--mode", "wrap", "--cval", "-7.5"}, "black_tophat", "page_float32.npy", "e.pfm",
         make_args("hline:1000", border_mode::wrap, -7.5)},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {c.operation};
        args.insert(args.end(), c.options.begin(), c.options.end());  // options before the files work too
        args.push_back(data_file(c.input));
        args.push_back(dir.file(c.output));
        ASSERT_TRUE(succeeds(args));
        EXPECT_TRUE(same_image(api_result(c.operation, data_file(c.input), c.args), dir.file(c.output))) << c.output;
    }
}

TEST(CliRun, FootprintShapesAndMaskFiles) {
    scratch_dir dir;
    for (const std::string spec : {"line:41:30", "disk:5", "disk:9:4", "diamond:3", "octagon:3:2", "ellipse:6x3"}) {
        const std::string out = dir.file("shape.png");
        ASSERT_TRUE(succeeds({"erosion", data_file("text.png"), out, "--footprint", spec, "--device", "cpu"}));
        EXPECT_TRUE(same_image(api_result("erosion", data_file("text.png"), make_args(spec)), out)) << spec;
    }
    // A 0/255 PNG mask, origin at its centre.
    host_image<std::uint8_t> mask(4, 3);
    const std::uint8_t pixels[] = {255, 0, 0, 255, 0, 255, 255, 0, 255, 0, 0, 0};
    std::copy(std::begin(pixels), std::end(pixels), mask.view().data());
    io::write_image(dir.file("mask.png"), any_host_view(host_view<const std::uint8_t>(mask.view())));
    footprint_mask expected{4, 3, 2, 1, {1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0}};
    operation_args args;
    args.footprint = structuring_element::from_mask(expected);
    ASSERT_TRUE(succeeds({"dilation", data_file("text.png"), dir.file("m.png"), "--footprint", "mask:" + dir.file("mask.png")}));
    EXPECT_TRUE(same_image(api_result("dilation", data_file("text.png"), args), dir.file("m.png")));
    // Not binary, empty, missing.
    mask.view()(0, 1) = 7;
    io::write_image(dir.file("grey.png"), any_host_view(host_view<const std::uint8_t>(mask.view())));
    EXPECT_TRUE(fails_with({"erosion", data_file("text.png"), dir.file("o.png"), "--footprint", "mask:" + dir.file("grey.png")},
                           2, "is not binary"));
    fill(mask.view(), std::uint8_t{0});
    io::write_image(dir.file("zero.png"), any_host_view(host_view<const std::uint8_t>(mask.view())));
    EXPECT_TRUE(fails_with({"erosion", data_file("text.png"), dir.file("o.png"), "--footprint", "mask:" + dir.file("zero.png")},
                           2, "no set pixel"));
    EXPECT_TRUE(fails_with({"erosion", data_file("text.png"), dir.file("o.png"), "--footprint", "mask:" + dir.file("none.png")},
                           1, "cannot open"));
    EXPECT_TRUE(fails_with({"erosion", data_file("text.png"), dir.file("o.png"), "--footprint", "line:9:nan"}, 2,
                           "--footprint: "));
    EXPECT_TRUE(fails_with({"erosion", data_file("text.png"), dir.file("o.png"), "--footprint", "disk:9:5"}, 2,
                           "4, 6 or 8 periodic lines"));
}

TEST(CliRun, ConventionsAndTheirDefaultBorders) {
    scratch_dir dir;
    struct convention_case {
        std::vector<std::string> options;
        convention compatibility;
        border_mode mode;
    };
    const std::vector<convention_case> cases = {
        {{"--convention", "opencv"}, convention::opencv, border_mode::ignore},
        {{"--convention", "scipy"}, convention::scipy, border_mode::reflect},  // scipy's default mode
        {{"--convention", "scipy", "--mode", "nearest"}, convention::scipy, border_mode::nearest},
        {{"--convention=matlab", "--mode", "default"}, convention::matlab, border_mode::ignore},
    };
    for (const auto& c : cases)
        for (const std::string operation : {"dilation", "opening", "gradient"}) {
            std::vector<std::string> args = {operation, data_file("text.png"), dir.file("c.png"), "--footprint", "rect:4x2"};
            args.insert(args.end(), c.options.begin(), c.options.end());
            ASSERT_TRUE(succeeds(args));
            operation_args want = make_args("rect:4x2", c.mode);
            want.compatibility = c.compatibility;
            EXPECT_TRUE(same_image(api_result(operation, data_file("text.png"), want), dir.file("c.png")))
                << operation << " " << to_string(c.compatibility);
            // An even size makes OpenCV's and MATLAB's dilations differ from granula's.
            if (operation == "dilation" && c.mode == border_mode::ignore) {
                EXPECT_FALSE(same_image(api_result(operation, data_file("text.png"), make_args("rect:4x2")), dir.file("c.png")))
                    << operation << " " << to_string(c.compatibility);
            }
        }
}

TEST(CliRun, HyphensSpellUnderscores) {
    scratch_dir dir;
    ASSERT_TRUE(succeeds({"white-tophat", data_file("page.png"), dir.file("a.png"), "--footprint", "disk:3"}));
    ASSERT_TRUE(succeeds({"white_tophat", data_file("page.png"), dir.file("b.png"), "--footprint", "disk:3"}));
    EXPECT_TRUE(same_image(io::read_image(dir.file("b.png")), dir.file("a.png")));
}

TEST(CliRun, ThreadCountsGiveTheSameOutput) {
    scratch_dir dir;
    for (const char* threads : {"1", "2", "0"}) {
        const std::string out = dir.file(std::string("t") + threads + ".png");
        ASSERT_TRUE(succeeds({"closing", data_file("camera.png"), out, "--footprint", "rect:9x7", "--threads", threads}));
        EXPECT_TRUE(same_image(api_result("closing", data_file("camera.png"), make_args("rect:9x7")), out));
    }
}

TEST(CliRun, DoubleDashEndsOptions) {
    scratch_dir dir;
    fs::copy_file(data_file("text.png"), dir.file("-dash.png"));
    ASSERT_TRUE(succeeds({"erosion", "--footprint", "hline:3", "--", dir.file("-dash.png"), dir.file("-out.png")}));
    EXPECT_TRUE(same_image(api_result("erosion", data_file("text.png"), make_args("hline:3")), dir.file("-out.png")));
}

TEST(CliRun, AutoDeviceAndCudaEqualTheCpu) {
    scratch_dir dir;
    const auto expected = api_result("dilation", data_file("coins16.png"), make_args("rect:21x5"));
    ASSERT_TRUE(succeeds({"dilation", data_file("coins16.png"), dir.file("auto.png"), "--footprint", "rect:21x5"}));
    EXPECT_TRUE(same_image(expected, dir.file("auto.png")));
    if (!cuda_available()) GTEST_SKIP() << "no CUDA device: --device cuda is tested as an error instead";
    ASSERT_TRUE(succeeds({"dilation", data_file("coins16.png"), dir.file("cuda.png"), "--footprint", "rect:21x5", "--device", "cuda"}));
    EXPECT_TRUE(same_image(expected, dir.file("cuda.png")));
    const cli_result timed = run_cli({"dilation", data_file("coins16.png"), dir.file("timed.png"), "--footprint",
                                      "rect:21x5", "--device", "cuda", "--time"});
    ASSERT_EQ(timed.status, 0) << timed.err;
    EXPECT_EQ(timed.err.rfind("granula: dilation on cuda: ", 0), 0u) << timed.err;
    EXPECT_EQ(std::count(timed.err.begin(), timed.err.end(), '\n'), 1) << timed.err;
    EXPECT_TRUE(same_image(expected, dir.file("timed.png")));
}

TEST(CliRun, TimePrintsOneLineOnStderr) {
    scratch_dir dir;
    const cli_result r = run_cli({"erosion", data_file("page.png"), dir.file("o.png"), "--time", "--device", "cpu"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(r.err.rfind("granula: erosion on cpu (", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(" ms compute\n"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

void write_rgb_png(const std::string& path) {
    std::vector<std::uint8_t> pixels(64 * 48 * 3);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 37 % 251);
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    image.width = 64;
    image.height = 48;
    image.format = PNG_FORMAT_RGB;
    ASSERT_TRUE(png_image_write_to_file(&image, path.c_str(), 0, pixels.data(), 0, nullptr));
}

TEST(CliRun, ColourInputOnlyWithToGrey) {
    scratch_dir dir;
    write_rgb_png(dir.file("colour.png"));
    EXPECT_TRUE(fails_with({"erosion", dir.file("colour.png"), dir.file("o.png")}, 1, "--to-grey"));
    EXPECT_FALSE(fs::exists(dir.file("o.png")));
    ASSERT_TRUE(succeeds({"erosion", dir.file("colour.png"), dir.file("o.png"), "--to-grey", "--footprint", "square:3"}));
    EXPECT_TRUE(same_image(api_result("erosion", dir.file("colour.png"), make_args("square:3"), true), dir.file("o.png")));
}

TEST(CliInfo, ListHelpAndVersionComeFromTheRegistry) {
    const cli_result list = run_cli({"--list"});
    ASSERT_EQ(list.status, 0);
    EXPECT_TRUE(list.err.empty());
    EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'),
              static_cast<long>(operations().size() + cli::commands().size()));
    for (const auto& c : cli::commands()) {
        EXPECT_NE(list.out.find(std::string(c.name) + " "), std::string::npos) << c.name;
        const cli_result c_help = run_cli({std::string(c.name), "--help"});
        ASSERT_EQ(c_help.status, 0) << c.name;
        EXPECT_EQ(c_help.out.rfind("usage: granula " + std::string(c.name) + " " + std::string(c.usage), 0), 0u);
    }
    const cli_result help = run_cli({"--help"});
    ASSERT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("usage: granula <operation> INPUT OUTPUT [options]"), std::string::npos);
    for (const auto& op : operations()) {
        EXPECT_NE(list.out.find(std::string(op.name) + " "), std::string::npos) << op.name;
        EXPECT_NE(list.out.find(op.summary), std::string::npos) << op.name;
        EXPECT_NE(help.out.find(op.summary), std::string::npos) << op.name;

        for (const char* flag : {"--help", "-h"}) {
            const cli_result op_help = run_cli({std::string(op.name), flag});
            ASSERT_EQ(op_help.status, 0) << op.name;
            EXPECT_TRUE(op_help.err.empty());
            EXPECT_NE(op_help.out.find("usage: granula " + std::string(op.name) + " INPUT OUTPUT"), std::string::npos);
            for (const auto& p : op.parameters) {
                EXPECT_NE(op_help.out.find("--" + std::string(p.name)), std::string::npos) << op.name << " " << p.name;
                EXPECT_NE(op_help.out.find(p.help), std::string::npos) << op.name << " " << p.name;
                EXPECT_NE(op_help.out.find("(default: " + std::string(p.default_value) + ")"), std::string::npos);
            }
            for (const char* common : {"--device", "--threads", "--to-grey", "--time"})
                EXPECT_NE(op_help.out.find(common), std::string::npos) << common;
        }
    }
    const cli_result version = run_cli({"--version"});
    ASSERT_EQ(version.status, 0);
    EXPECT_EQ(version.out.rfind(build_info(), 0), 0u) << version.out;
    EXPECT_NE(version.out.find("TIFF"), std::string::npos);
}

TEST(CliErrors, UsageMistakesExitWithTwo) {
    scratch_dir dir;
    const std::string in = data_file("page.png"), out = dir.file("out.png");
    EXPECT_TRUE(fails_with({}, 2, "no operation given"));
    EXPECT_TRUE(fails_with({"erode", in, out}, 2, "unknown operation 'erode'; known: erosion"));
    EXPECT_TRUE(fails_with({"--bogus"}, 2, "unknown option '--bogus'"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--bogus", "1"}, 2, "unknown option '--bogus' for erosion"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "-x"}, 2, "unknown option '-x'"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--footprint"}, 2, "option --footprint needs a value"));
    EXPECT_TRUE(fails_with({"erosion"}, 2, "erosion needs INPUT and OUTPUT files"));
    EXPECT_TRUE(fails_with({"erosion", in}, 2, "erosion needs an OUTPUT file"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "extra.png"}, 2, "unexpected argument 'extra.png'"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--cval", "abc"}, 2, "--cval needs a number, got 'abc'"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--cval", "nan"}, 2, "--cval needs a number"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--cval="}, 2, "--cval needs a number, got ''"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--threads", "-1"}, 2, "--threads needs a whole number >= 0"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--threads", "two"}, 2, "--threads needs a whole number"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--threads", "99999999999"}, 2, "--threads needs a whole number"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--footprint", "rect:0x3"}, 2, "--footprint: "));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--footprint", "hline:-4"}, 2, "--footprint: "));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--footprint", "circle:3"}, 2, "--footprint: "));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--convention", "octave"}, 2,
                           "--convention: unknown convention 'octave'; allowed: granula, opencv, scipy, matlab"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--mode", "edge"}, 2,
                           "--mode: unknown border mode 'edge'; allowed: default, ignore, constant"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--mode", "bogus"}, 2, "--mode: "));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--device", "tpu"}, 2, "--device: unknown device 'tpu'"));
    EXPECT_TRUE(fails_with({"erosion", in, out, "--to-grey=yes"}, 2, "option --to-grey takes no value"));
    EXPECT_FALSE(fs::exists(out));
}

TEST(CliInfo, InfoPrintsSizeAndTypeOfEachFile) {
    const cli_result r = run_cli({"info", data_file("page.png"), data_file("coins16.png"), data_file("page_float32.npy")});
    ASSERT_EQ(r.status, 0) << r.err;
    const any_host_image page = io::read_image(data_file("page.png"));
    EXPECT_NE(r.out.find(data_file("page.png") + ": " + std::to_string(page.width()) + " x " +
                         std::to_string(page.height()) + " uint8\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("coins16.png: 384 x 303 uint16\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("page_float32.npy: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" float32\n"), std::string::npos) << r.out;
    EXPECT_TRUE(fails_with({"info"}, 2, "info needs at least one IMAGE"));
    EXPECT_TRUE(fails_with({"info", data_file("page.png"), "--bogus"}, 2, "unknown option '--bogus' for info"));
    EXPECT_TRUE(fails_with({"info", data_file("missing.png")}, 1, "cannot open"));
}

TEST(CliErrors, RuntimeFailuresExitWithOne) {
    scratch_dir dir;
    const std::string in = data_file("page.png");
    EXPECT_TRUE(fails_with({"erosion", dir.file("missing.png"), dir.file("o.png")}, 1,
                           dir.file("missing.png") + ": cannot open: No such file or directory"));
    std::ofstream(dir.file("garbage.png")) << "this is not a PNG";
    EXPECT_TRUE(fails_with({"erosion", dir.file("garbage.png"), dir.file("o.png")}, 1, "not a PNG file"));
    std::ofstream(dir.file("truncated.npy")) << "\x93NUMPY";
    EXPECT_TRUE(fails_with({"erosion", dir.file("truncated.npy"), dir.file("o.png")}, 1, "truncated.npy: "));
    EXPECT_TRUE(fails_with({"erosion", in, dir.file("no-such-dir/o.png")}, 1, "cannot create"));
    EXPECT_TRUE(fails_with({"erosion", in, dir.file("o.gif")}, 1, "unknown file extension '.gif'"));
    EXPECT_TRUE(fails_with({"erosion", data_file("page_float32.npy"), dir.file("o.png")}, 1, "PNG cannot hold float32"));
    EXPECT_TRUE(fails_with({"erosion", in, dir.file("o.png"), "--time", "--threads", "2", "--mode", "constant",
                            "--device", "cpu", "--footprint", "hline:3", "--cval", "1", "--to-grey", "extra"}, 2,
                           "unexpected argument 'extra'"));
    if (cuda_available())
        GTEST_SKIP() << "a CUDA device is present: --device cuda is tested as a success instead";
    EXPECT_TRUE(fails_with({"erosion", in, dir.file("o.png"), "--device", "cuda"}, 1, "CUDA"));
}

TEST(CliErrors, EmptyImageIsRefused) {
    scratch_dir dir;
    io::write_image(dir.file("empty.npy"), host_image<float>(0, 4).view());
    EXPECT_TRUE(fails_with({"erosion", dir.file("empty.npy"), dir.file("o.npy")}, 1, "empty"));
}

}  // namespace
}  // namespace granula::cli_test
