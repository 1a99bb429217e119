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
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "granula/core/any_image.hpp"
#include "granula/core/border.hpp"
#include "granula/core/config.hpp"
#include "granula/core/device.hpp"
#include "granula/core/error.hpp"
#include "granula/io/io.hpp"
#include "granula/operations.hpp"

#include "command.hpp"
#include "timed_run.hpp"

namespace {

using namespace granula;

using namespace granula::cli;

// Options every operation takes besides the parameters the registry lists for it.
constexpr option_spec common_options[] = {
    {"device", "auto|cpu|cuda", "where to compute; auto: CUDA when a GPU is present, else the CPU (default: auto)"},
    threads_option,
    {"to-grey", "", "convert colour input to grey (BT.601 luma) instead of refusing it"},
    time_option,
    {"help", "", "show this help"},
};

constexpr std::string_view file_formats =
    "Files: .png, .tif/.tiff, .pgm/.pnm, .pfm, .npy (chosen by extension; .ppm read only).\n"
    "The output has the input's size and pixel type (uint8, uint16 or float32).\n";

std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

// Sets the operation argument a registry parameter names from its command-line text. Parse
// errors from the library (a bad footprint or mode) are usage errors too.
void apply_parameter(const operation_info& op, std::string_view name, std::string_view value, operation_args& args) {
    try {
        if (name == "footprint")
            args.footprint = parse_footprint(value);
        else if (name == "convention")
            args.compatibility = parse_convention(value);
        else if (name == "mode")  // after "convention", whose default border "default" names
            args.mode.mode = parse_mode_parameter(value, args.compatibility);
        else if (name == "cval")
            args.mode.cval = parse_number(name, value);
        else
            throw std::logic_error("the command line cannot set parameter '" + std::string(name) + "' of " +
                                   std::string(op.name) + " (granula bug: teach apply_parameter)");
    } catch (const granula::invalid_argument& e) {
        throw usage_error("--" + std::string(name) + ": " + e.what());
    }
}

std::string upper(std::string_view text) {
    std::string result(text);
    for (char& c : result) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return result;
}

// Every operation and command as "name  summary" lines, names in one column.
void print_entries(const char* indent) {
    std::vector<std::pair<std::string_view, std::string_view>> entries;
    for (const auto& op : operations()) entries.emplace_back(op.name, op.summary);
    for (const auto& c : commands()) entries.emplace_back(c.name, c.summary);
    std::size_t width = 0;
    for (const auto& [name, summary] : entries) width = std::max(width, name.size());
    for (const auto& [name, summary] : entries)
        std::printf("%s%-*.*s  %.*s\n", indent, static_cast<int>(width), static_cast<int>(name.size()), name.data(),
                    static_cast<int>(summary.size()), summary.data());
}

void print_general_help() {
    std::printf(
        "usage: granula <operation> INPUT OUTPUT [options]\n"
        "       granula <command> [arguments]\n"
        "       granula <operation or command> --help\n"
        "       granula --list | --version | --help\n\n"
        "Fast mathematical morphology and region analysis on CPUs and NVIDIA GPUs.\n\n"
        "operations and commands:\n");
    print_entries("  ");
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
invocation parse_operation_command(std::span<const std::string_view> arguments) {
    invocation inv;
    try {
        // "binary-erosion" names binary_erosion: hyphens are the usual spelling of commands.
        std::string name(arguments[0]);
        std::replace(name.begin(), name.end(), '-', '_');
        inv.op = &find_operation(name);
    } catch (const granula::invalid_argument& e) {
        throw usage_error(e.what());
    }
    const operation_info& op = *inv.op;
    std::vector<std::string> value_names;  // option_spec holds views: keep the upper-cased names alive
    value_names.reserve(op.parameters.size());
    std::vector<option_spec> options;
    for (const auto& p : op.parameters) options.push_back({p.name, value_names.emplace_back(upper(p.name)), p.help});
    options.insert(options.end(), std::begin(common_options), std::end(common_options));

    const parsed_arguments parsed = parse_arguments(arguments.subspan(1), options, op.name);
    inv.help = parsed.help;
    if (inv.help) return inv;

    for (const auto& p : op.parameters) apply_parameter(op, p.name, parsed.value(p.name).value_or(p.default_value), inv.args);
    if (const auto d = parsed.value("device")) {
        try {
            inv.requested_device = parse_device(*d);
        } catch (const granula::invalid_argument& e) {
            throw usage_error("--device: " + std::string(e.what()));
        }
    }
    inv.threads = parse_threads_option(parsed);
    inv.to_grey = parsed.has_flag("to-grey");
    inv.time = parsed.has_flag("time");

    const std::string see_help = "; see 'granula " + std::string(op.name) + " --help'";
    const auto& files = parsed.positional;
    if (files.size() < 2)
        throw usage_error(std::string(op.name) + " needs " + (files.empty() ? "INPUT and OUTPUT files" : "an OUTPUT file") +
                          see_help);
    if (files.size() > 2) throw usage_error("unexpected argument '" + std::string(files[2]) + "'" + see_help);
    inv.input = files[0];
    inv.output = files[1];
    return inv;
}

int run(const invocation& inv) {
    const operation_info& op = *inv.op;
    if (inv.threads) set_num_threads(*inv.threads);
    const device where = resolve_device(inv.requested_device);

    const any_host_image input = io::read_image(inv.input, {.to_grey = inv.to_grey});
    io::check_write_format(inv.output, input.type());
    const any_host_image output = make_host_image(input.type(), input.width(), input.height());

    const run_timings t = visit_pixel_type(input.type(), [&]<class T>(type_tag<T>) {
        return run_timed<T, T>(where, input.as<const T>(), output.as<T>(), inv.time,
                               [&]<class Space>(image_view<const T, Space> in, image_view<T, Space> out) {
                                   if constexpr (std::is_same_v<Space, host_memory>)
                                       op.run_host(any_host_view(in), any_host_view(out), inv.args);
                                   else
                                       op.run_device(any_device_view(in), any_device_view(out), inv.args, stream{});
                               });
    });
    if (inv.time) print_timings(op.name, where, t);
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
        print_entries("");
        return 0;
    }
    if (first.starts_with("-"))
        throw usage_error("unknown option '" + std::string(first) +
                          "'; expected an operation, --list, --version or --help");

    for (const command& c : commands())
        if (c.name == first) return c.run(std::span(arguments).subspan(1));
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
    } catch (const granula::out_of_memory& e) {
        std::fprintf(stderr, "granula: error: %s\n", e.what());
        return exit_runtime_error;
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
