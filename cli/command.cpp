#include "command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "granula/core/any_image.hpp"
#include "granula/core/error.hpp"
#include "granula/io/io.hpp"

namespace granula::cli {

bool parsed_arguments::has_flag(std::string_view name) const {
    return std::find(flags.begin(), flags.end(), name) != flags.end();
}

std::optional<std::string_view> parsed_arguments::value(std::string_view name) const {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return std::string_view(it->second);
}

parsed_arguments parse_arguments(std::span<const std::string_view> arguments, std::span<const option_spec> options,
                                 std::string_view command) {
    const std::string see_help = "; see 'granula " + std::string(command) + " --help'";
    parsed_arguments parsed;
    bool only_positional = false;
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        const std::string_view arg = arguments[i];
        if (only_positional || arg.size() < 2 || arg[0] != '-') {
            parsed.positional.push_back(arg);
            continue;
        }
        if (arg == "--") {
            only_positional = true;
            continue;
        }
        if (arg == "-h" || arg == "--help") {
            parsed.help = true;
            return parsed;
        }
        if (!arg.starts_with("--")) throw usage_error("unknown option '" + std::string(arg) + "'" + see_help);
        std::string_view name = arg.substr(2);
        std::optional<std::string_view> inline_value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const auto spec = std::find_if(options.begin(), options.end(), [&](const option_spec& o) { return o.name == name; });
        if (spec == options.end())
            throw usage_error("unknown option '--" + std::string(name) + "' for " + std::string(command) + see_help);
        if (spec->value_name.empty()) {
            if (inline_value) throw usage_error("option --" + std::string(name) + " takes no value");
            parsed.flags.emplace_back(name);
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= arguments.size()) throw usage_error("option --" + std::string(name) + " needs a value" + see_help);
            inline_value = arguments[++i];
        }
        parsed.values.insert_or_assign(std::string(name), std::string(*inline_value));
    }
    return parsed;
}

double parse_number(std::string_view option, std::string_view text) {
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || std::isnan(value))
        throw usage_error("--" + std::string(option) + " needs a number, got '" + std::string(text) + "'");
    return value;
}

long long parse_integer(std::string_view option, std::string_view text, long long min_value, long long max_value) {
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < min_value ||
        value > max_value)
        throw usage_error("--" + std::string(option) + " needs a whole number >= " + std::to_string(min_value) +
                          " and <= " + std::to_string(max_value) + ", got '" + std::string(text) + "'");
    return value;
}

structuring_element parse_footprint(std::string_view text) {
    if (!text.starts_with("mask:")) return structuring_element::parse(text);
    const std::string path(text.substr(5));
    const any_host_image image = io::read_image(path);
    return visit_pixel_type(image.type(), [&]<class T>(type_tag<T>) {
        const host_view<const T> v = image.as<const T>();
        footprint_mask mask;
        mask.width = v.width(), mask.height = v.height(), mask.origin_x = v.width() / 2, mask.origin_y = v.height() / 2;
        T on{};
        for (std::int64_t y = 0; y < v.height(); ++y)
            for (std::int64_t x = 0; x < v.width(); ++x) {
                const T value = v(y, x);
                if (value != T{} && on == T{}) on = value;
                if (value != T{} && value != on)
                    throw invalid_argument("footprint mask " + path + " is not binary: it has more than one non-zero value");
                mask.mask.push_back(value != T{} ? 1 : 0);
            }
        return structuring_element::from_mask(std::move(mask));
    });
}

void print_option(std::string_view name, std::string_view value_name, std::string_view help) {
    std::string syntax = "--";
    syntax += name;
    if (!value_name.empty()) {
        syntax += ' ';
        syntax += value_name;
    }
    std::printf("  %-26s %.*s\n", syntax.c_str(), static_cast<int>(help.size()), help.data());
}

void print_command_help(const command& c, std::span<const option_spec> options) {
    std::printf("usage: granula %.*s %.*s\n\n%.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                static_cast<int>(c.usage.size()), c.usage.data(), static_cast<int>(c.summary.size()), c.summary.data());
    if (!options.empty()) std::printf("\noptions:\n");
    for (const auto& o : options) print_option(o.name, o.value_name, o.help);
}

}  // namespace granula::cli
