#include "lines/scan_lines.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "granula/core/error.hpp"

namespace granula::detail {

double angle_modulo_180(double angle_degrees) {
    const double a = std::fmod(angle_degrees, 180.0);
    return a < 0 ? a + 180.0 : a;
}

namespace {

struct reduced_angle {
    bool steep;    // |sin| > |cos|: one pixel per image row
    double slope;  // k: column offset per row (steep) or row offset per column (flat)
};

reduced_angle reduce(double angle_degrees, bool diagonals_down_rows) {
    if (!std::isfinite(angle_degrees))
        throw invalid_argument("angle must be a finite number of degrees, got " + std::to_string(angle_degrees));
    const double a = angle_modulo_180(angle_degrees);
    const bool steep = (a > 45.0 && a < 135.0) || (diagonals_down_rows && (a == 45.0 || a == 135.0));
    // Exact slopes on the axes and diagonals, so that the lines there are the footprint lines.
    if (a == 0.0 || a == 90.0) return {steep, 0.0};
    if (a == 45.0) return {steep, -1.0};
    if (a == 135.0) return {steep, 1.0};
    const double radians = a * (3.14159265358979323846 / 180.0);
    // y grows down, so a line rising to the right has a negative row offset per column.
    return {steep, steep ? -std::cos(radians) / std::sin(radians) : -std::tan(radians)};
}

}  // namespace

scan_lines make_scan_lines(double angle_degrees, std::int64_t width, std::int64_t height, bool with_table,
                           bool diagonals_down_rows) {
    const reduced_angle r = reduce(angle_degrees, diagonals_down_rows);
    scan_lines lines;
    lines.transposed = !r.steep;
    lines.rows = r.steep ? height : width;
    lines.columns = r.steep ? width : height;
    lines.slope_fixed = std::llround(std::ldexp(r.slope, scan_slope_bits));
    if (with_table) {
        lines.shift.resize(static_cast<std::size_t>(lines.rows));
        for (std::int64_t row = 0; row < lines.rows; ++row) lines.shift[row] = scan_line_shift(row, lines.slope_fixed);
    }
    const std::int32_t last = lines.rows > 0 ? scan_line_shift(lines.rows - 1, lines.slope_fixed) : 0;
    lines.first_line = -static_cast<std::int64_t>(std::max(0, last));
    lines.end_line = lines.columns - std::min(0, last);
    return lines;
}

std::int64_t scan_line_extent(double angle_degrees, std::int64_t width, std::int64_t height) {
    return reduce(angle_degrees, false).steep ? height : width;
}

}  // namespace granula::detail
