// granula orientation IMAGE --length L --angles N: the supremum of the openings by lines over N
// angles (infimum of closings) and a hue-coded map of the angle that attains it, with a colour
// wheel legend (Karas et al. 2015, Fig. 1).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "granula/io/io.hpp"
#include "line_commands.hpp"

namespace granula::cli {

namespace {

constexpr option_spec orientation_options[] = {
    length_option,
    angles_option,
    closing_option,
    {"out-dir", "DIR",
     "write STEM_supremum.png (STEM_infimum with --closing; .npy for float32) and STEM_orientation.png here, STEM "
     "the input's name (default: .)"},
    device_option,
    algorithm_option,
    to_grey_option,
};

// Hue h in [0, 1) at full saturation and value v in [0, 1], as 8-bit RGB.
void hsv_to_rgb(double h, double v, std::uint8_t* rgb) {
    const double sector = h * 6.0;
    const int i = static_cast<int>(std::floor(sector)) % 6;
    const double f = sector - std::floor(sector);
    const double ramp_up = f, ramp_down = 1.0 - f;
    double r = 0, g = 0, b = 0;
    switch (i) {
    case 0: r = 1, g = ramp_up; break;
    case 1: r = ramp_down, g = 1; break;
    case 2: g = 1, b = ramp_up; break;
    case 3: g = ramp_down, b = 1; break;
    case 4: r = ramp_up, b = 1; break;
    default: r = 1, b = ramp_down; break;
    }
    rgb[0] = static_cast<std::uint8_t>(std::lround(255.0 * v * r));
    rgb[1] = static_cast<std::uint8_t>(std::lround(255.0 * v * g));
    rgb[2] = static_cast<std::uint8_t>(std::lround(255.0 * v * b));
}

double hue_of(double angle) {
    const double a = std::fmod(std::fmod(angle, 180.0) + 180.0, 180.0);
    return a / 180.0;
}

// The legend in the top-right corner: a disc whose colour at each direction (counter-clockwise
// on screen) is that of lines of that direction, on a black square.
void draw_wheel(host_view<std::uint8_t> rgb, std::int64_t width, std::int64_t height) {
    const std::int64_t radius = std::clamp<std::int64_t>(std::min(width, height) / 10, 0, 48);
    if (radius < 4) return;  // too small an image for a legend
    const std::int64_t cx = width - radius - 2, cy = radius + 1;
    const double pi = std::acos(-1.0);
    for (std::int64_t y = cy - radius - 1; y <= cy + radius + 1; ++y)
        for (std::int64_t x = cx - radius - 1; x <= cx + radius + 1; ++x) {
            std::uint8_t* p = rgb.row(y) + 3 * x;
            const double dx = static_cast<double>(x - cx), dy = static_cast<double>(y - cy);
            if (dx * dx + dy * dy > static_cast<double>(radius * radius)) {
                p[0] = p[1] = p[2] = 0;
                continue;
            }
            hsv_to_rgb(hue_of(std::atan2(-dy, dx) * 180.0 / pi), 1.0, p);
        }
}

}  // namespace

int run_orientation(std::span<const std::string_view> arguments) {
    const command& self = find_command("orientation");
    const parsed_arguments parsed = parse_arguments(arguments, orientation_options, "orientation");
    if (parsed.help) {
        print_command_help(self, orientation_options);
        return 0;
    }
    if (parsed.positional.size() != 1)
        throw usage_error("orientation needs one IMAGE; see 'granula orientation --help'");
    const line_params params = parse_line_params(parsed, "orientation");
    const std::vector<double> angles = parse_angle_count(parsed, 180);
    const device where = parse_device_option(parsed);
    const std::string input(parsed.positional[0]);
    const bool closing = params.kind == line_filter_kind::closing;
    const std::string map_path = output_path(parsed, input, "orientation.png");
    const any_host_image image = io::read_image(input, {.to_grey = parsed.has_flag("to-grey")});
    // PNG for 8- and 16-bit images, NPY for float32 (which PNG cannot hold).
    const std::string extremum_path = output_path(
        parsed, input,
        std::string(closing ? "infimum" : "supremum") + (image.type() == pixel_type::float32 ? ".npy" : ".png"));
    const std::int64_t w = image.width(), h = image.height();
    const any_host_image extremum = make_host_image(image.type(), w, h);
    host_image<std::int32_t> orientation(w, h);
    as_usage_error([&] { filter_angles(image, angles, params, where, extremum.view(), orientation.view(), {}); });

    // Brightness: the line response, the extremum scaled to [0, 1] over the image (inverted for
    // closings, whose response is dark).
    host_image<std::uint8_t> rgb(3 * w, h);
    visit_pixel_type(image.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const host_view<const T> e = extremum.as<const T>();
        double lo = INFINITY, hi = -INFINITY;  // over the finite values
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x)
                if (std::isfinite(static_cast<double>(e(y, x))))
                    lo = std::min(lo, static_cast<double>(e(y, x))), hi = std::max(hi, static_cast<double>(e(y, x)));
        const double range = hi > lo ? hi - lo : 1.0;
        for (std::int64_t y = 0; y < h; ++y)
            for (std::int64_t x = 0; x < w; ++x) {
                const double value = static_cast<double>(e(y, x));  // NaN and -inf: 0, +inf: 1
                double v = std::isfinite(value) ? (value - lo) / range : value > 0 ? 1.0 : 0.0;
                if (closing) v = 1.0 - v;
                hsv_to_rgb(hue_of(angles[orientation.view()(y, x)]), std::clamp(v, 0.0, 1.0),
                           rgb.view().row(y) + 3 * x);
            }
    });
    draw_wheel(rgb.view(), w, h);
    io::write_image(extremum_path, extremum.view());
    io::write_rgb_png(map_path, host_view<const std::uint8_t>(rgb.view()));
    std::printf("%s\n%s\n", extremum_path.c_str(), map_path.c_str());
    return 0;
}

}  // namespace granula::cli
