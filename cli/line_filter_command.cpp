// granula line_opening | line_closing | line_erosion | line_dilation IN OUT --length L --angle A:
// the linear filter along the scan lines of one angle (Karas et al. 2015), or with --angles N
// --reduce max|min the maximum or minimum over N angles of the filtered images at each pixel.
#include <optional>
#include <string>
#include <vector>

#include "granula/core/config.hpp"
#include "granula/io/io.hpp"
#include "line_commands.hpp"
#include "timed_run.hpp"

namespace granula::cli {

namespace {

constexpr option_spec line_filter_options[] = {
    length_option,
    {"angle", "A", "the scan lines' angle in degrees, counter-clockwise from +x (or --angles)"},
    {"angles", "N", "N angles evenly spaced over [0, 180) degrees instead of one; needs --reduce"},
    {"reduce", "max|min", "with --angles: write the maximum or the minimum over the angles at each pixel"},
    {"mode", "MODE", "border: ignore, constant, nearest or reflect (default: ignore)"},
    {"cval", "V", "the value outside the image for --mode constant (default: 0)"},
    algorithm_option,
    device_option,
    threads_option,
    to_grey_option,
    time_option,
};

// One angle (no reduction), or several and the extremum to take over them.
struct angle_choice {
    std::vector<double> angles;
    std::optional<angle_reduction> reduction;
};

angle_choice parse_angle_choice(const parsed_arguments& parsed, const std::string& name, const std::string& see_help) {
    const auto angle = parsed.value("angle"), count = parsed.value("angles"), reduce = parsed.value("reduce");
    if (angle.has_value() == count.has_value())
        throw usage_error((angle ? "give --angle or --angles, not both" : name + " needs --angle A or --angles N") +
                          see_help);
    if (angle) {
        if (reduce) throw usage_error("--reduce needs --angles N: one --angle leaves nothing to reduce" + see_help);
        return {{parse_number("angle", *angle)}, std::nullopt};
    }
    if (!reduce)
        throw usage_error("--angles needs --reduce max or min: the extremum over the angles to write" + see_help);
    const angle_reduction reduction = as_usage_error([&] { return parse_angle_reduction(*reduce); });
    return {parse_angle_count(parsed, 0), reduction};  // --angles is given
}

}  // namespace

template <line_filter_kind kind>
int run_line_filter(std::span<const std::string_view> arguments) {
    const std::string name = "line_" + std::string(to_string(kind));
    const parsed_arguments parsed = parse_arguments(arguments, line_filter_options, name);
    if (parsed.help) {
        print_command_help(find_command(name), line_filter_options);
        return 0;
    }
    const std::string see_help = "; see 'granula " + name + " --help'";
    if (parsed.positional.size() != 2) throw usage_error(name + " needs IN and OUT" + see_help);
    line_params params = parse_line_params(parsed, name);
    params.kind = kind;
    const angle_choice choice = parse_angle_choice(parsed, name, see_help);
    if (const auto m = parsed.value("mode"))
        params.mode.mode = as_usage_error([&] { return parse_border_mode(*m); });
    if (const auto c = parsed.value("cval")) params.mode.cval = parse_number("cval", *c);
    if (const auto threads = parse_threads_option(parsed)) set_num_threads(*threads);
    const bool time = parsed.has_flag("time");
    const device where = parse_device_option(parsed);

    const std::string output(parsed.positional[1]);
    const any_host_image image =
        io::read_image(std::string(parsed.positional[0]), {.to_grey = parsed.has_flag("to-grey")});
    io::check_write_format(output, image.type());
    const any_host_image result = make_host_image(image.type(), image.width(), image.height());
    const run_timings t = as_usage_error([&] {
        return visit_pixel_type(image.type(), [&]<class T>(type_tag<T>) {
            const auto filter = [&]<class Space>(image_view<const T, Space> in, image_view<T, Space> out) {
                if (!choice.reduction) {
                    line_filter<T>(in, out, choice.angles[0], params);
                    return;
                }
                line_angle_outputs<Space, T> outputs;
                outputs.extremum = out;
                outputs.reduction = *choice.reduction;
                line_filter_angles<T>(in, choice.angles, params, outputs);
            };
            return run_timed<T, T>(where, image.as<const T>(), result.as<T>(), time, filter);
        });
    });
    if (time) print_timings(name, where, t);
    io::write_image(output, result.view());
    return 0;
}

template int run_line_filter<line_filter_kind::opening>(std::span<const std::string_view>);
template int run_line_filter<line_filter_kind::closing>(std::span<const std::string_view>);
template int run_line_filter<line_filter_kind::erosion>(std::span<const std::string_view>);
template int run_line_filter<line_filter_kind::dilation>(std::span<const std::string_view>);

}  // namespace granula::cli
