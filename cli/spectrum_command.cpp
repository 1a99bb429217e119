// granula spectrum IMAGE --length L --angles N: the angular spectrum σ(α) (Karas et al. 2015,
// Eq. 6), the sum of the image's opening (closing) by line(L, α) for each angle, as CSV and as
// an SVG plot.
#include <algorithm>
#include <cstdio>

#include "granula/io/io.hpp"
#include "line_commands.hpp"

namespace granula::cli {

namespace {

constexpr option_spec spectrum_options[] = {
    length_option,
    angles_option,
    closing_option,
    {"out-dir", "DIR", "write STEM_spectrum.csv and STEM_spectrum.svg here, STEM the input's name (default: .)"},
    device_option,
    algorithm_option,
    to_grey_option,
};

std::string csv_of(std::span<const double> angles, std::span<const double> spectrum) {
    std::string text = "angle,sum\n";
    char line[96];
    for (std::size_t i = 0; i < angles.size(); ++i) {
        std::snprintf(line, sizeof line, "%.17g,%.17g\n", angles[i], spectrum[i]);
        text += line;
    }
    return text;
}

// A line plot of the spectrum over 0..180 degrees, axes labelled, in plain SVG.
std::string svg_of(std::span<const double> angles, std::span<const double> spectrum, const std::string& title) {
    constexpr double width = 640, height = 360, left = 80, right = 20, top = 40, bottom = 50;
    const auto [lo_it, hi_it] = std::minmax_element(spectrum.begin(), spectrum.end());
    const double lo = *lo_it, hi = *hi_it, range = hi > lo ? hi - lo : 1.0;
    const auto px = [&](double angle) { return left + (width - left - right) * angle / 180.0; };
    const auto py = [&](double value) { return height - bottom - (height - top - bottom) * (value - lo) / range; };
    std::string svg;
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
        width, height, width, height);
    svg += buf;
    std::string escaped;
    for (const char c : title)
        escaped += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
    std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">", width / 2);
    svg += buf + escaped + "</text>\n";
    std::snprintf(buf, sizeof buf, "<path d=\"M%g %gH%gM%g %gV%g\" stroke=\"black\" fill=\"none\"/>\n", left,
                  height - bottom, width - right, left, top, height - bottom);
    svg += buf;
    for (int a = 0; a <= 180; a += 30) {
        std::snprintf(
            buf, sizeof buf,
            "<path d=\"M%g %gv5\" stroke=\"black\"/><text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%d</text>\n", px(a),
            height - bottom, px(a), height - bottom + 18, a);
        svg += buf;
    }
    std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">angle (degrees)</text>\n",
                  (left + width - right) / 2, height - 10);
    svg += buf;
    std::snprintf(buf, sizeof buf,
                  "<text transform=\"translate(16 %g) rotate(-90)\" text-anchor=\"middle\">sum</text>\n",
                  (top + height - bottom) / 2);
    svg += buf;
    for (const double v : {lo, hi}) {
        std::snprintf(buf, sizeof buf, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.4g</text>\n", left - 6, py(v) + 4,
                      v);
        svg += buf;
    }
    svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"";
    for (std::size_t i = 0; i < angles.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%s%.2f,%.2f", i ? " " : "", px(angles[i]), py(spectrum[i]));
        svg += buf;
    }
    svg += "\"/>\n</svg>\n";
    return svg;
}

}  // namespace

int run_spectrum(std::span<const std::string_view> arguments) {
    const command& self = find_command("spectrum");
    const parsed_arguments parsed = parse_arguments(arguments, spectrum_options, "spectrum");
    if (parsed.help) {
        print_command_help(self, spectrum_options);
        return 0;
    }
    if (parsed.positional.size() != 1) throw usage_error("spectrum needs one IMAGE; see 'granula spectrum --help'");
    const line_params params = parse_line_params(parsed, "spectrum");
    const std::vector<double> angles = parse_angle_count(parsed, 180);
    const device where = parse_device_option(parsed);
    const std::string input(parsed.positional[0]);
    const any_host_image image = io::read_image(input, {.to_grey = parsed.has_flag("to-grey")});
    std::vector<double> spectrum(angles.size());
    as_usage_error([&] { filter_angles(image, angles, params, where, {}, {}, spectrum); });

    const std::string csv_path = output_path(parsed, input, "spectrum.csv");
    const std::string svg_path = output_path(parsed, input, "spectrum.svg");
    const bool closing = params.kind == line_filter_kind::closing;
    write_text_file(csv_path, csv_of(angles, spectrum));
    write_text_file(svg_path, svg_of(angles, spectrum,
                                     std::string("angular spectrum of ") + (closing ? "closings" : "openings") +
                                         ", length " + std::to_string(params.length) + ": " + input));
    std::printf("%s\n%s\n", csv_path.c_str(), svg_path.c_str());
    return 0;
}

}  // namespace granula::cli
