#include "line_commands.hpp"

#include <filesystem>
#include <fstream>
#include <limits>

#include "granula/core/error.hpp"

namespace granula::cli {

line_params parse_line_params(const parsed_arguments& parsed, std::string_view command, bool length_required) {
    line_params p;
    const auto length = parsed.value("length");
    if (!length && length_required)
        throw usage_error(std::string(command) + " needs --length; see 'granula " + std::string(command) + " --help'");
    p.length = length ? parse_integer("length", *length, 1, std::numeric_limits<std::int32_t>::max()) : 0;
    if (parsed.has_flag("closing")) p.kind = line_filter_kind::closing;
    if (const auto a = parsed.value("algorithm"))
        p.algorithm = as_usage_error([&] { return parse_line_algorithm(*a); });
    return p;
}

std::vector<double> parse_angle_count(const parsed_arguments& parsed, std::int64_t fallback) {
    const auto text = parsed.value("angles");
    const std::int64_t n = text ? parse_integer("angles", *text, 1, max_line_angles) : fallback;
    return evenly_spaced_angles(n);
}

device parse_device_option(const parsed_arguments& parsed) {
    const device where = as_usage_error([&] { return parse_device(parsed.value("device").value_or("auto")); });
    return resolve_device(where);
}

number_range parse_range(std::string_view option, std::string_view text, bool step_allowed) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t colon; (colon = text.find(':', start)) != std::string_view::npos; start = colon + 1)
        parts.push_back(text.substr(start, colon - start));
    parts.push_back(text.substr(start));
    if (parts.size() != 2 && !(step_allowed && parts.size() == 3))
        throw usage_error("--" + std::string(option) + " takes FIRST:LAST" + (step_allowed ? "[:STEP]" : "") +
                          ", got '" + std::string(text) + "'");
    number_range r;
    r.first = parse_number(option, parts[0]);
    r.last = parse_number(option, parts[1]);
    if (parts.size() == 3) r.step = parse_number(option, parts[2]);
    return r;
}

std::string output_path(const parsed_arguments& parsed, std::string_view input, std::string_view suffix) {
    const std::filesystem::path dir(std::string(parsed.value("out-dir").value_or(".")));
    return (dir / (std::filesystem::path(std::string(input)).stem().string() + "_" + std::string(suffix))).string();
}

void write_text_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw io_error(path + ": cannot open for writing");
    out << text;
    out.close();
    if (!out) throw io_error(path + ": write failed");
}

void filter_angles(const any_host_image& image, std::span<const double> angles, const line_params& params, device where,
                   const any_host_view& extremum, host_view<std::int32_t> orientation, std::span<double> spectrum) {
    visit_pixel_type(image.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const host_view<const T> in = image.as<const T>();
        if (where != device::cuda) {
            host_line_outputs<T> out;
            if (extremum.data) out.extremum = extremum.as<T>();
            out.orientation = orientation;
            out.spectrum = spectrum;
            line_filter_angles<T>(in, angles, params, out);
            return;
        }
        const device_image<T> d_in = upload<T>(in);
        const std::int64_t w = extremum.data ? in.width() : 0, h = extremum.data ? in.height() : 0;
        device_image<T> d_extremum(w, h);
        device_image<std::int32_t> d_orientation(orientation.width(), orientation.height());
        device_line_outputs<T> out;
        out.extremum = d_extremum.view();
        out.orientation = d_orientation.view();
        out.spectrum = spectrum;
        line_filter_angles<T>(device_view<const T>(d_in.view()), angles, params, out);
        if (extremum.data) copy<T>(device_view<const T>(d_extremum.view()), extremum.as<T>());
        if (!orientation.empty())
            copy<std::int32_t>(device_view<const std::int32_t>(d_orientation.view()), orientation);
        stream{}.synchronize();
    });
}

}  // namespace granula::cli
