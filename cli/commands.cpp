// The CLI commands beside the registry's image-to-image operations. Each lives in its own file
// (cli/<name>_command.cpp) and is listed here once.
#include <algorithm>

#include "command.hpp"
#include "granula/lines/lines.hpp"

namespace granula::cli {

int run_info(std::span<const std::string_view> arguments);
int run_gaussian(std::span<const std::string_view> arguments);
int run_label(std::span<const std::string_view> arguments);
int run_orientation(std::span<const std::string_view> arguments);
int run_spectrum(std::span<const std::string_view> arguments);
int run_deskew(std::span<const std::string_view> arguments);
int run_granulometry(std::span<const std::string_view> arguments);
int run_hit_or_miss(std::span<const std::string_view> arguments);
template <line_filter_kind kind>  // one function for line_opening, line_closing, ... (line_filter_command.cpp)
int run_line_filter(std::span<const std::string_view> arguments);

std::span<const command> commands() {
    constexpr std::string_view line_filter_usage =
        "IN OUT --length L (--angle A | --angles N --reduce max|min) [options]";
    static constexpr command table[] = {
        {"info", "print each image file's size and pixel type", "IMAGE... [options]", &run_info},
        {"gaussian", "Gaussian smoothing or derivatives (float32 result by default)", "IN OUT --sigma S[,S] [options]",
         &run_gaussian},
        {"label", "label connected components; write labels, a grey-coded PNG, statistics", "IMAGE [options]", &run_label},
        {"line_opening", "opening along the scan lines of an angle, or its max or min over N angles",
         line_filter_usage, &run_line_filter<line_filter_kind::opening>},
        {"line_closing", "closing along the scan lines of an angle, or its max or min over N angles",
         line_filter_usage, &run_line_filter<line_filter_kind::closing>},
        {"line_erosion", "erosion along the scan lines of an angle, or its max or min over N angles",
         line_filter_usage, &run_line_filter<line_filter_kind::erosion>},
        {"line_dilation", "dilation along the scan lines of an angle, or its max or min over N angles",
         line_filter_usage, &run_line_filter<line_filter_kind::dilation>},
        {"orientation", "supremum of linear openings over angles and a hue-coded orientation map (PNG)",
         "IMAGE --length L [options]", &run_orientation},
        {"spectrum", "angular spectrum of linear openings or closings, as CSV and an SVG plot",
         "IMAGE --length L [options]", &run_spectrum},
        {"deskew", "detect a scanned page's rotation; print it and write the straightened page", "SCAN [options]",
         &run_deskew},
        {"granulometry", "size distribution by linear openings or closings over a range of lengths (CSV)",
         "IMAGE --lengths FIRST:LAST[:STEP] [options]", &run_granulometry},
        {"hit_or_miss", "binary hit-or-miss of a 0/1 image (non-zero is 1): foreground all 1 and background all 0",
         "IN OUT --foreground SE --background SE [options]", &run_hit_or_miss},
    };
    return table;
}

const command& find_command(std::string_view name) {
    const auto all = commands();
    const auto it = std::find_if(all.begin(), all.end(), [&](const command& c) { return c.name == name; });
    if (it == all.end()) throw std::logic_error("granula bug: no CLI command named '" + std::string(name) + "'");
    return *it;
}

}  // namespace granula::cli
