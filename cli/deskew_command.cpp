// granula deskew SCAN: the rotation of a scanned page (detect_rotation, lines.hpp); prints the
// angle in degrees and, with --out, writes the page rotated back by it.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "granula/geometry/geometry.hpp"
#include "granula/io/io.hpp"
#include "line_commands.hpp"

namespace granula::cli {

namespace {

constexpr option_spec deskew_options[] = {
    {"range", "FIRST:LAST", "angles tried, in degrees counter-clockwise (default: -10:10)"},
    {"step", "S", "step between the angles tried, > 0 (default: 0.1)"},
    {"method", "text|closing",
     "text: openings along the joined text lines (text pages); closing: the paper's closings by long lines (staves, "
     "ruled lines) (default: text)"},
    {"length", "L", "line length in pixels (default: 0.6 x the image width, its height for a range around 90)"},
    {"out", "FILE", "write the straightened page (rotated by minus the angle), the input's pixel type"},
    {"fill", "V", "value of the pixels the rotation brings in (default: the page's largest value, white paper)"},
    to_grey_option,
};

}  // namespace

int run_deskew(std::span<const std::string_view> arguments) {
    const command& self = find_command("deskew");
    const parsed_arguments parsed = parse_arguments(arguments, deskew_options, "deskew");
    if (parsed.help) {
        print_command_help(self, deskew_options);
        return 0;
    }
    if (parsed.positional.size() != 1) throw usage_error("deskew needs one SCAN image; see 'granula deskew --help'");
    deskew_params p;
    if (const auto r = parsed.value("range")) {
        const number_range range = parse_range("range", *r, false);
        p.first = range.first, p.last = range.last;
    }
    if (const auto s = parsed.value("step")) p.step = parse_number("step", *s);
    if (const auto m = parsed.value("method")) p.method = as_usage_error([&] { return parse_deskew_method(*m); });
    if (const auto l = parsed.value("length")) p.length = parse_integer("length", *l, 1, 1LL << 31);
    const auto out_path = parsed.value("out");
    std::optional<double> fill;
    if (const auto f = parsed.value("fill")) fill = parse_number("fill", *f);

    const std::string input(parsed.positional[0]);
    const any_host_image page = io::read_image(input, {.to_grey = parsed.has_flag("to-grey")});
    if (out_path) io::check_write_format(std::string(*out_path), page.type());
    const deskew_result result = as_usage_error([&] {
        return visit_pixel_type(
            page.type(), [&](auto tag) { return detect_rotation(page.as<const typename decltype(tag)::type>(), p); });
    });
    std::printf("%.2f\n", result.angle);
    if (!out_path) return 0;
    const any_host_image straight = make_host_image(page.type(), page.width(), page.height());
    visit_pixel_type(page.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const host_view<const T> in = page.as<const T>();
        double value = 0;
        if (fill) {
            value = *fill;
        } else {
            value = -INFINITY;
            for (std::int64_t y = 0; y < in.height(); ++y)
                for (std::int64_t x = 0; x < in.width(); ++x)
                    if (!std::isnan(static_cast<double>(in(y, x))))
                        value = std::max(value, static_cast<double>(in(y, x)));
        }
        as_usage_error([&] { rotate<T>(in, straight.as<T>(), -result.angle, value); });
    });
    io::write_image(std::string(*out_path), straight.view());
    return 0;
}

}  // namespace granula::cli
