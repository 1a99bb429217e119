// The scan lines of an angle (include/granula/lines/lines.hpp): one table shared by the CPU and
// CUDA backends, so both read exactly the same pixels.
#pragma once

#include <cstdint>
#include <vector>

#include "core/border_index.hpp"  // GRANULA_HOST_DEVICE

namespace granula::detail {

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
    std::vector<std::int32_t> shift;     // one per oriented row
    std::int64_t first_line = 0, end_line = 0;  // lines c in [first_line, end_line) touch the image

    std::int64_t line_count() const { return end_line - first_line; }
    std::int64_t row_begin(std::int64_t c) const { return scan_line_row_begin(shift.data(), rows, columns, c); }
    std::int64_t row_end(std::int64_t c) const { return scan_line_row_end(shift.data(), rows, columns, c); }
};

// Throws invalid_argument for a non-finite angle.
scan_lines make_scan_lines(double angle_degrees, std::int64_t width, std::int64_t height);

// The extent of the dominant axis (height for steep angles, width for flat ones): the longest
// scan line of that angle.
std::int64_t scan_line_extent(double angle_degrees, std::int64_t width, std::int64_t height);

}  // namespace granula::detail
