// granula granulometry IMAGE --lengths FIRST:LAST[:STEP]: the size distribution by linear
// openings (closings), the extremum over --angles directions, as CSV length,sum,pattern_spectrum.
#include <cmath>
#include <cstdio>
#include <limits>

#include "granula/io/io.hpp"
#include "line_commands.hpp"

namespace granula::cli {

namespace {

constexpr option_spec granulometry_options[] = {
    {"lengths", "FIRST:LAST[:STEP]", "line lengths FIRST, FIRST+STEP, ... <= LAST (STEP default 1); required"},
    {"angles", "N", "N angles evenly spaced over [0, 180) degrees (default: 12)"},
    closing_option,
    {"out", "FILE.csv", "write the CSV here instead of to the standard output"},
    device_option,
    algorithm_option,
    to_grey_option,
};

std::vector<std::int64_t> parse_lengths(std::string_view text) {
    const number_range r = parse_range("lengths", text, true);
    const auto whole = [](double v) { return v == std::floor(v) && std::abs(v) < 1e15; };
    if (!whole(r.first) || !whole(r.last) || !whole(r.step))
        throw usage_error("--lengths takes whole numbers FIRST:LAST[:STEP], got '" + std::string(text) + "'");
    if (r.first < 1)
        throw usage_error("--lengths: line length " + std::string(text) + " is invalid; lengths must be >= 1");
    if (r.step < 1) throw usage_error("--lengths: the step must be >= 1, got '" + std::string(text) + "'");
    if (r.last < r.first) throw usage_error("--lengths: FIRST must not exceed LAST, got '" + std::string(text) + "'");
    if ((r.last - r.first) / r.step > 100000) throw usage_error("--lengths gives more than 100000 lengths");
    std::vector<std::int64_t> lengths;
    for (auto l = static_cast<std::int64_t>(r.first); l <= static_cast<std::int64_t>(r.last);
         l += static_cast<std::int64_t>(r.step))
        lengths.push_back(l);
    return lengths;
}

}  // namespace

int run_granulometry(std::span<const std::string_view> arguments) {
    const command& self = find_command("granulometry");
    const parsed_arguments parsed = parse_arguments(arguments, granulometry_options, "granulometry");
    if (parsed.help) {
        print_command_help(self, granulometry_options);
        return 0;
    }
    if (parsed.positional.size() != 1)
        throw usage_error("granulometry needs one IMAGE; see 'granula granulometry --help'");
    const auto lengths_text = parsed.value("lengths");
    if (!lengths_text) throw usage_error("granulometry needs --lengths; see 'granula granulometry --help'");
    const std::vector<std::int64_t> lengths = parse_lengths(*lengths_text);
    const line_params params = parse_line_params(parsed, "granulometry", false);
    const std::vector<double> angles = parse_angle_count(parsed, 12);
    const device where = parse_device_option(parsed);
    const any_host_image image =
        io::read_image(std::string(parsed.positional[0]), {.to_grey = parsed.has_flag("to-grey")});
    const std::vector<double> sums = as_usage_error([&] {
        return visit_pixel_type(image.type(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const host_view<const T> in = image.as<const T>();
            if (where != device::cuda) return line_granulometry<T>(in, lengths, angles, params);
            const device_image<T> d_in = upload<T>(in);
            return line_granulometry<T>(device_view<const T>(d_in.view()), lengths, angles, params);
        });
    });
    // The pattern spectrum at a length: what the next length removes (openings) or fills
    // (closings), so it is >= 0; empty on the last row.
    const bool closing = params.kind == line_filter_kind::closing;
    std::string csv = "length,sum,pattern_spectrum\n";
    char line[128];
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        if (i + 1 < lengths.size())
            std::snprintf(line, sizeof line, "%lld,%.17g,%.17g\n", static_cast<long long>(lengths[i]), sums[i],
                          closing ? sums[i + 1] - sums[i] : sums[i] - sums[i + 1]);
        else
            std::snprintf(line, sizeof line, "%lld,%.17g,\n", static_cast<long long>(lengths[i]), sums[i]);
        csv += line;
    }
    if (const auto out_path = parsed.value("out")) {
        write_text_file(std::string(*out_path), csv);
    } else {
        std::fputs(csv.c_str(), stdout);
    }
    return 0;
}

}  // namespace granula::cli
