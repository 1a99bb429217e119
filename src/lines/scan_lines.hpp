// The scan lines of an angle (include/granula/lines/lines.hpp): one table shared by the CPU and
// CUDA backends, so both read exactly the same pixels.
#pragma once

#include <cstdint>
#include <vector>

namespace granula::detail {

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
    std::int64_t row_begin(std::int64_t c) const;
    std::int64_t row_end(std::int64_t c) const;
};

// Throws invalid_argument for a non-finite angle.
scan_lines make_scan_lines(double angle_degrees, std::int64_t width, std::int64_t height);

// The extent of the dominant axis (height for steep angles, width for flat ones): the longest
// scan line of that angle.
std::int64_t scan_line_extent(double angle_degrees, std::int64_t width, std::int64_t height);

}  // namespace granula::detail
