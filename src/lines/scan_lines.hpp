// The scan lines of an angle (include/granula/lines/lines.hpp), in integer arithmetic, so the
// CPU and CUDA backends read exactly the same pixels.
#pragma once

#include <cstdint>
#include <vector>

#include "core/border_index.hpp"  // GRANULA_HOST_DEVICE

namespace granula::detail {

// The slope k in units of 2^-32 (exact at 0, ±1), and the column offset of oriented row `row`:
// floor(row k + 1/2), exact in 64-bit integers for rows below 2^31.
constexpr int scan_slope_bits = 32;
GRANULA_HOST_DEVICE inline std::int32_t scan_line_shift(std::int64_t row, std::int64_t slope_fixed) {
    return static_cast<std::int32_t>((row * slope_fixed + (std::int64_t{1} << (scan_slope_bits - 1))) >>
                                     scan_slope_bits);
}

// The rows [row_begin, row_end) of line c that lie inside the image, from its shift table
// (rows entries, monotone): x = c + shift[row] moves by at most one column per row, so they are
// one interval, found by binary search. Shared by scan_lines (host) and the CUDA kernels.
GRANULA_HOST_DEVICE inline std::int64_t scan_line_row_begin(const std::int32_t* shift, std::int64_t rows,
                                                            std::int64_t columns, std::int64_t c) {
    const bool rising = rows == 0 || shift[rows - 1] >= shift[0];
    std::int64_t lo = 0, hi = rows;  // first row whose column is inside the image
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        const bool before = rising ? c + shift[mid] < 0 : c + shift[mid] >= columns;
        if (before) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

GRANULA_HOST_DEVICE inline std::int64_t scan_line_row_end(const std::int32_t* shift, std::int64_t rows,
                                                          std::int64_t columns, std::int64_t c) {
    const bool rising = rows == 0 || shift[rows - 1] >= shift[0];
    std::int64_t lo = 0, hi = rows;  // first row whose column has left the image
    while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        const bool inside = rising ? c + shift[mid] < columns : c + shift[mid] >= 0;
        if (inside) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The lines of one angle, described on the "oriented" image: the input itself for steep angles,
// its transpose for flat ones, so that every line has one pixel per oriented row. Line c has its
// pixel of oriented row r at oriented column c + shift[r]; shift[0] = 0 and shift is monotone,
// so each line's pixels inside the image are consecutive rows [row_begin(c), row_end(c)).
struct scan_lines {
    bool transposed = false;        // flat angle: oriented (row, column) = input (column, row)
    std::int64_t rows = 0, columns = 0;  // of the oriented image
    std::int64_t slope_fixed = 0;        // shift[r] = scan_line_shift(r, slope_fixed)
    std::vector<std::int32_t> shift;     // one per oriented row, when asked for (the CPU's)
    std::int64_t first_line = 0, end_line = 0;  // lines c in [first_line, end_line) touch the image

    std::int64_t line_count() const { return end_line - first_line; }
    std::int64_t row_begin(std::int64_t c) const { return scan_line_row_begin(shift.data(), rows, columns, c); }
    std::int64_t row_end(std::int64_t c) const { return scan_line_row_end(shift.data(), rows, columns, c); }
};

// The angle in [0, 180): the lines of θ and θ + 180 are the same.
double angle_modulo_180(double angle_degrees);

// Throws invalid_argument for a non-finite angle. with_table: fill `shift` (the CUDA backend
// builds its tables on the device). The diagonals have one pixel per row as well as per column:
// they are flat lines (along the columns) unless diagonals_down_rows. Down the rows, a line's
// pixels come in the same order at 135 degrees and in the reverse order at 45, where a window
// [i - before, i + after] then covers the same pixels only when before = after (odd λ).
scan_lines make_scan_lines(double angle_degrees, std::int64_t width, std::int64_t height, bool with_table,
                           bool diagonals_down_rows);

// The extent of the dominant axis (height for steep angles, width for flat ones): the longest
// scan line of that angle.
std::int64_t scan_line_extent(double angle_degrees, std::int64_t width, std::int64_t height);

}  // namespace granula::detail
