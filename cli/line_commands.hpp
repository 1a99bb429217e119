// What the linear-filter commands (orientation, spectrum, granulometry, deskew) share: their
// common options, reading them, running the many-angle filter on the CPU or the GPU, and the
// names of the files they write.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "granula/core/any_image.hpp"
#include "granula/core/device.hpp"
#include "granula/lines/lines.hpp"

namespace granula::cli {

inline constexpr option_spec length_option{"length", "L", "line length in pixels, >= 1; required"};
inline constexpr option_spec angles_option{"angles", "N",
                                           "N angles evenly spaced over [0, 180) degrees (default: 180)"};
inline constexpr option_spec closing_option{"closing", "", "closings (dark structure) instead of openings (bright)"};
inline constexpr option_spec algorithm_option{"algorithm", "auto|fifo|stack",
                                              "the scan-line algorithm (default: auto)"};
inline constexpr option_spec device_option{"device", "auto|cpu|cuda",
                                           "where to compute; auto: CUDA when a GPU is present (default: auto)"};
inline constexpr option_spec to_grey_option{"to-grey", "",
                                            "read colour input as grey (BT.601 luma) instead of refusing it"};

// --length (required unless `required` is false, then 0), --closing, --algorithm.
line_params parse_line_params(const parsed_arguments& parsed, std::string_view command, bool length_required = true);
// --angles N (default `fallback`) as evenly spaced angles.
std::vector<double> parse_angle_count(const parsed_arguments& parsed, std::int64_t fallback);
// --device, resolved (default: auto).
device parse_device_option(const parsed_arguments& parsed);
// "A:B" (step `default_step` unless given) or "A:B:STEP" -> three numbers; `option` names it.
struct number_range {
    double first = 0, last = 0, step = 1;
};
number_range parse_range(std::string_view option, std::string_view text, bool step_allowed);

// DIR/STEM_SUFFIX where STEM is the input file's name without its extension.
std::string output_path(const parsed_arguments& parsed, std::string_view input, std::string_view suffix);

// line_filter_angles on the chosen device: the host outputs are filled from the device's.
void filter_angles(const any_host_image& image, std::span<const double> angles, const line_params& params, device where,
                   const any_host_view& extremum, host_view<std::int32_t> orientation, std::span<double> spectrum);

// Writes a text file (CSV, SVG); an io_error names the file when it cannot.
void write_text_file(const std::string& path, const std::string& text);

// Turns the library's invalid_argument (a bad parameter the user gave) into a usage error.
template <class F>
decltype(auto) as_usage_error(F&& f) {
    try {
        return f();
    } catch (const granula::invalid_argument& e) {
        throw usage_error(e.what());
    }
}

}  // namespace granula::cli
