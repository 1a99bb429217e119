// What every granula CLI command shares: usage errors, option parsing and help layout.
//
// Image-to-image operations come from the operation registry (main.cpp). Commands whose inputs,
// parameters or outputs do not fit that shape (several output files, a CSV, a plot) are listed in
// commands.cpp: a name, a one-line summary and a run function over the arguments after the name.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "granula/core/config.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula::cli {

inline constexpr int exit_runtime_error = 1;
inline constexpr int exit_usage_error = 2;

// --time's clock: milliseconds since `start`.
using clock_type = std::chrono::steady_clock;
inline double milliseconds_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

// A mistake in the command line (exit status 2), as opposed to a failure while running (1).
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct option_spec {
    std::string_view name;        // "--name" on the command line
    std::string_view value_name;  // shown in help; empty for a flag
    std::string_view help;
};

// "--name VALUE", "--name=VALUE" and "--flag" options, positional arguments, "--" ending options.
struct parsed_arguments {
    std::vector<std::string_view> positional;
    std::map<std::string, std::string, std::less<>> values;  // options that take a value
    std::vector<std::string> flags;                           // flags given
    bool help = false;                                        // -h or --help was given

    bool has_flag(std::string_view name) const;
    std::optional<std::string_view> value(std::string_view name) const;
};

// Throws usage_error for an unknown option, a missing value or a value given to a flag; `command`
// names the command in the message ("see 'granula COMMAND --help'").
parsed_arguments parse_arguments(std::span<const std::string_view> arguments, std::span<const option_spec> options,
                                 std::string_view command);

// Number parsing for option values; the message names the option.
double parse_number(std::string_view option, std::string_view text);
long long parse_integer(std::string_view option, std::string_view text, long long min_value, long long max_value);

// Options that several commands take, with the same meaning.
inline constexpr option_spec threads_option{"threads", "N", "CPU threads; 0: all hardware threads (default: 0)"};
inline constexpr option_spec time_option{"time", "", "print the compute time, file I/O excluded, on stderr"};
// --threads, if given.
inline std::optional<int> parse_threads_option(const parsed_arguments& parsed) {
    const auto text = parsed.value("threads");
    if (!text) return std::nullopt;
    return static_cast<int>(parse_integer("threads", *text, 0, max_threads));
}

struct command {
    std::string_view name;
    std::string_view summary;
    std::string_view usage;  // after "granula NAME", e.g. "IMAGE [options]"
    int (*run)(std::span<const std::string_view> arguments);
};

// A --footprint value: structuring_element::parse's forms, or "mask:FILE" for a binary image
// file (two levels, 0 and non-zero; origin at its centre). A mask that is not binary is an
// invalid_argument, an unreadable file an io_error.
structuring_element parse_footprint(std::string_view text);

// "  --name VALUE    help" in two columns.
void print_option(std::string_view name, std::string_view value_name, std::string_view help);

// "usage: granula NAME USAGE", the summary and the options: what a command prints for --help.
void print_command_help(const command& c, std::span<const option_spec> options);

// The commands beside the registry's operations (commands.cpp).
std::span<const command> commands();
const command& find_command(std::string_view name);  // one of commands(), by name

}  // namespace granula::cli
