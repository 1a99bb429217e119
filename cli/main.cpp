// The granula command-line tool.
//
//   granula <operation> INPUT OUTPUT [options]   run an operation on an image file
//   granula <operation> --help                   that operation's options
//   granula --list | --version | --help
//
// Operations, their options, defaults and help all come from the operation registry
// (granula/operations.hpp): an operation added there appears here unchanged. The options every
// operation shares (device, threads, colour conversion, timing) are the only ones listed here.
//
// Every error is one line, "granula: error: <message>", on stderr, with exit status 2 for a
// usage error (unknown operation or option, missing or malformed argument) and 1 for a runtime
// error (unreadable input, unwritable output, no GPU, an operation that refuses its input).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "granula/core/any_image.hpp"
#include "granula/core/border.hpp"
#include "granula/core/config.hpp"
#include "granula/core/device.hpp"
#include "granula/core/error.hpp"
#include "granula/io/io.hpp"
#include "granula/operations.hpp"

namespace {

using namespace granula;

constexpr int exit_runtime_error = 1;
constexpr int exit_usage_error = 2;

// A mistake in the command line (exit status 2), as opposed to a failure while running.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Options every operation takes besides the parameters the registry lists for it.
struct common_option {
    std::string_view name;
    std::string_view value_name;  // empty for a flag
    std::string_view help;
};

constexpr common_option common_options[] = {
    {"device", "auto|cpu|cuda", "where to compute; auto: CUDA when a GPU is present, else the CPU (default: auto)"},
    {"threads", "N", "CPU threads; 0: all hardware threads (default: 0)"},
    {"to-grey", "", "convert colour input to grey (BT.601 luma) instead of refusing it"},
    {"time", "", "print the compute time, file I/O excluded, on stderr"},
    {"help", "", "show this help"},
};

constexpr std::string_view file_formats =
    "Files: .png, .tif/.tiff, .pgm/.pnm, .pfm, .npy (chosen by extension; .ppm read only).\n"
    "The output has the input's size and pixel type (uint8, uint16 or float32).\n";

std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

double parse_number(std::string_view option, std::string_view text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || std::isnan(value))
        throw usage_error("--" + std::string(option) + " needs a number, got '" + std::string(text) + "'");
    return value;
}

int parse_thread_count(std::string_view text) {
    int value = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < 0)
        throw usage_error("--threads needs a whole number >= 0 (0: all hardware threads), got '" + std::string(text) +
                          "'");
    return value;
}

// Sets the operation argument a registry parameter names from its command-line text. Parse
// errors from the library (a bad footprint or mode) are usage errors too.
void apply_parameter(const operation_info& op, std::string_view name, std::string_view value, operation_args& args) {
    try {
        if (name == "footprint")
            args.footprint = structuring_element::parse(value);
        else if (name == "mode")
            args.mode.mode = parse_border_mode(value);
        else if (name == "cval")
            args.mode.cval = parse_number(name, value);
        else
            throw std::logic_error("the command line cannot set parameter '" + std::string(name) + "' of " +
                                   std::string(op.name) + " (granula bug: teach apply_parameter)");
    } catch (const granula::invalid_argument& e) {
        throw usage_error("--" + std::string(name) + ": " + e.what());
    }
}

const parameter_info* find_parameter(const operation_info& op, std::string_view name) {
    for (const auto& p : op.parameters)
        if (p.name == name) return &p;
    return nullptr;
}

std::string upper(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return result;
}

// "--name VALUE" (or "--name" for a flag) and its help, in two columns.
void print_option(std::string_view name, std::string_view value_name, std::string_view help) {
    std::string syntax = "--";
    syntax += name;
    if (!value_name.empty()) {
        syntax += ' ';
        syntax += value_name;
    }
    std::printf("  %-26s %.*s\n", syntax.c_str(), static_cast<int>(help.size()), help.data());
}

void print_general_help() {
    std::printf(
        "usage: granula <operation> INPUT OUTPUT [options]\n"
        "       granula <operation> --help\n"
        "       granula --list | --version | --help\n\n"
        "Fast grey-scale morphology on CPUs and NVIDIA GPUs.\n\n"
        "operations:\n");
    std::size_t width = 0;
    for (const auto& op : operations()) width = std::max(width, op.name.size());
    for (const auto& op : operations())
        std::printf("  %-*.*s  %.*s\n", static_cast<int>(width), static_cast<int>(op.name.size()), op.name.data(),
                    static_cast<int>(op.summary.size()), op.summary.data());
    std::printf("\n%.*s\nRun 'granula <operation> --help' for an operation's options.\n",
                static_cast<int>(file_formats.size()), file_formats.data());
}

void print_operation_help(const operation_info& op) {
    std::printf("usage: granula %.*s INPUT OUTPUT [options]\n\n%.*s\n\noptions:\n", static_cast<int>(op.name.size()),
                op.name.data(), static_cast<int>(op.summary.size()), op.summary.data());
    for (const auto& p : op.parameters)
        print_option(p.name, upper(p.name), std::string(p.help) + " (default: " + std::string(p.default_value) + ")");
    for (const auto& o : common_options) print_option(o.name, o.value_name, o.help);
    std::printf("\n%.*s", static_cast<int>(file_formats.size()), file_formats.data());
}

void print_list() {
    std::size_t width = 0;
    for (const auto& op : operations()) width = std::max(width, op.name.size());
    for (const auto& op : operations())
        std::printf("%-*.*s  %.*s\n", static_cast<int>(width), static_cast<int>(op.name.size()), op.name.data(),
                    static_cast<int>(op.summary.size()), op.summary.data());
}

struct invocation {
    const operation_info* op = nullptr;
    std::string input;
    std::string output;
    operation_args args;
    device requested_device = device::automatic;
    std::optional<int> threads;
    bool to_grey = false;
    bool time = false;
    bool help = false;
};

// Parses "<operation> [arguments]". Registry defaults are applied first, then the options.
invocation parse_operation_command(const std::vector<std::string_view>& arguments) {
    invocation inv;
    try {
        inv.op = &find_operation(arguments[0]);
    } catch (const granula::invalid_argument& e) {
        throw usage_error(e.what());
    }
    const operation_info& op = *inv.op;
    const std::string see_help = "; see 'granula " + std::string(op.name) + " --help'";
    for (const auto& p : op.parameters) apply_parameter(op, p.name, p.default_value, inv.args);

    std::vector<std::string_view> files;
    bool only_files = false;
    for (std::size_t i = 1; i < arguments.size(); ++i) {
        const std::string_view arg = arguments[i];
        if (only_files || arg.size() < 2 || arg[0] != '-') {
            files.push_back(arg);
            continue;
        }
        if (arg == "--") {
            only_files = true;
            continue;
        }
        if (arg == "-h" || arg == "--help") {
            inv.help = true;
            return inv;
        }
        if (!arg.starts_with("--")) throw usage_error("unknown option '" + std::string(arg) + "'" + see_help);
        std::string_view name = arg.substr(2);
        std::optional<std::string_view> inline_value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const parameter_info* parameter = find_parameter(op, name);
        const common_option* common = nullptr;
        for (const auto& o : common_options)
            if (o.name == name) common = &o;
        if (!parameter && !common)
            throw usage_error("unknown option '--" + std::string(name) + "' for " + std::string(op.name) + see_help);

        const bool takes_value = parameter || !common->value_name.empty();
        if (!takes_value) {
            if (inline_value) throw usage_error("option --" + std::string(name) + " takes no value");
            if (name == "to-grey") inv.to_grey = true;
            if (name == "time") inv.time = true;
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= arguments.size()) throw usage_error("option --" + std::string(name) + " needs a value" + see_help);
            inline_value = arguments[++i];
        }
        if (parameter) {
            apply_parameter(op, name, *inline_value, inv.args);
        } else if (name == "device") {
            try {
                inv.requested_device = parse_device(*inline_value);
            } catch (const granula::invalid_argument& e) {
                throw usage_error("--device: " + std::string(e.what()));
            }
        } else if (name == "threads") {
            inv.threads = parse_thread_count(*inline_value);
        }
    }
    if (files.size() < 2)
        throw usage_error(std::string(op.name) + " needs " + (files.empty() ? "INPUT and OUTPUT files" : "an OUTPUT file") +
                          see_help);
    if (files.size() > 2) throw usage_error("unexpected argument '" + std::string(files[2]) + "'" + see_help);
    inv.input = files[0];
    inv.output = files[1];
    return inv;
}

using clock_type = std::chrono::steady_clock;
double milliseconds_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

struct cuda_timings {
    double compute = 0;    // the operation, synchronised
    double transfers = 0;  // upload and download
    double start_up = 0;   // CUDA context creation and, with timing, a first untimed run
};

// Runs the operation on the GPU: upload, compute, download. With `warm_up`, runs it once more
// first, untimed, so the compute time excludes CUDA's lazy loading of the kernels.
cuda_timings run_on_cuda(const operation_info& op, const any_host_image& in, const any_host_image& out,
                         const operation_args& args, bool warm_up) {
    return visit_pixel_type(in.type(), [&]<class T>(type_tag<T>) {
        const stream s{};
        cuda_timings t;
        auto start = clock_type::now();
        device_image<T>(1, 1);  // the first device allocation creates the CUDA context
        t.start_up = milliseconds_since(start);

        start = clock_type::now();
        device_image<T> device_in = upload<T>(in.as<const T>(), s);
        device_image<T> device_out(in.width(), in.height());
        s.synchronize();
        t.transfers = milliseconds_since(start);

        if (warm_up) {
            start = clock_type::now();
            op.run_device(any_device_view(device_in.view()), any_device_view(device_out.view()), args, s);
            s.synchronize();
            t.start_up += milliseconds_since(start);
        }
        start = clock_type::now();
        op.run_device(any_device_view(device_in.view()), any_device_view(device_out.view()), args, s);
        s.synchronize();
        t.compute = milliseconds_since(start);

        start = clock_type::now();
        copy<T>(device_out.view(), out.as<T>(), s);
        s.synchronize();
        t.transfers += milliseconds_since(start);
        return t;
    });
}

int run(const invocation& inv) {
    const operation_info& op = *inv.op;
    if (inv.threads) set_num_threads(*inv.threads);
    const device where = resolve_device(inv.requested_device);

    const any_host_image input = io::read_image(inv.input, {.to_grey = inv.to_grey});
    io::check_write_format(inv.output, input.type());
    const any_host_image output = make_host_image(input.type(), input.width(), input.height());

    if (where == device::cuda) {
        const cuda_timings t = run_on_cuda(op, input, output, inv.args, inv.time);
        if (inv.time)
            std::fprintf(stderr,
                         "granula: %.*s on cuda: %.3f ms compute, %.3f ms host<->device transfers "
                         "(not counted: %.1f ms CUDA start-up and a warm-up run)\n",
                         static_cast<int>(op.name.size()), op.name.data(), t.compute, t.transfers, t.start_up);
    } else {
        const auto start = clock_type::now();
        op.run_host(input.view(), output.view(), inv.args);
        const double compute = milliseconds_since(start);
        if (inv.time)
            std::fprintf(stderr, "granula: %.*s on cpu (%d threads): %.3f ms compute\n", static_cast<int>(op.name.size()),
                         op.name.data(), num_threads(), compute);
    }
    io::write_image(inv.output, output.view());
    return 0;
}

int main_with_exceptions(const std::vector<std::string_view>& arguments) {
    if (arguments.empty()) throw usage_error("no operation given; run 'granula --help' for usage");
    const std::string_view first = arguments[0];
    if (first == "--help" || first == "-h") {
        print_general_help();
        return 0;
    }
    if (first == "--version") {
        std::printf("%s, %s\n", build_info().c_str(), io::tiff_supported() ? "TIFF via libtiff" : "no TIFF support");
        return 0;
    }
    if (first == "--list") {
        print_list();
        return 0;
    }
    if (first.starts_with("-"))
        throw usage_error("unknown option '" + std::string(first) +
                          "'; expected an operation, --list, --version or --help");

    const invocation inv = parse_operation_command(arguments);
    if (inv.help) {
        print_operation_help(*inv.op);
        return 0;
    }
    return run(inv);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> arguments(argv + 1, argv + argc);
    try {
        return main_with_exceptions(arguments);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "granula: error: %s\n", one_line(e.what()).c_str());
        return exit_usage_error;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "granula: error: out of memory\n");
        return exit_runtime_error;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "granula: error: %s\n", one_line(e.what()).c_str());
        return exit_runtime_error;
    } catch (...) {
        std::fprintf(stderr, "granula: error: unexpected internal error\n");
        return exit_runtime_error;
    }
}
