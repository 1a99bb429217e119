// Flat structuring elements (GUIDE §1 "Structuring elements").
//
// Every element reports its exact footprint (a boolean mask with its origin), so a result can
// be reproduced with any other library, and its decomposition into line segments whose
// Minkowski sum is the element. The origin of an extent of n pixels is at index n/2 (floor).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace granula {

// A digital line segment: `length` pixels at offsets k*(dx, dy) - origin*(dx, dy), k = 0..length-1.
// (dx, dy) is the unit step: (1, 0) horizontal (x grows right), (0, 1) vertical (y grows down).
struct line_segment {
    std::int64_t length = 1;
    int dx = 1;
    int dy = 0;
    std::int64_t origin = 0;  // index of the origin pixel along the segment
    bool horizontal() const { return dx == 1 && dy == 0; }
    bool vertical() const { return dx == 0 && dy == 1; }
};

// The footprint as a boolean mask, row-major, with the origin's (row, col) in it.
struct footprint_mask {
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::int64_t origin_x = 0;
    std::int64_t origin_y = 0;
    std::vector<std::uint8_t> mask;  // width * height entries, 1 = member
    bool at(std::int64_t y, std::int64_t x) const { return mask[static_cast<std::size_t>(y * width + x)] != 0; }
};

class structuring_element {
public:
    enum class kind { rectangle };

    // A horizontal line of `length` >= 1 pixels (a length x 1 rectangle).
    static structuring_element hline(std::int64_t length);
    // A vertical line of `length` >= 1 pixels (a 1 x length rectangle).
    static structuring_element vline(std::int64_t length);
    // A width x height rectangle, both >= 1.
    static structuring_element rectangle(std::int64_t width, std::int64_t height);
    static structuring_element square(std::int64_t size) { return rectangle(size, size); }

    // Parses the CLI syntax: "hline:L", "vline:L", "rect:WxH", "square:N".
    // Throws invalid_argument naming the allowed forms.
    static structuring_element parse(std::string_view spec);
    static std::string spec_syntax();

    kind shape() const { return kind_; }
    std::int64_t width() const { return width_; }
    std::int64_t height() const { return height_; }

    // The exact set of offsets, as a mask with its origin.
    footprint_mask footprint() const;
    // Line segments whose Minkowski sum is exactly this element (1x1 pieces are left out, so a
    // 1x1 element decomposes into nothing: the identity).
    std::vector<line_segment> decomposition() const;
    // The CLI spelling, e.g. "rect:15x3".
    std::string to_string() const;

private:
    structuring_element(kind k, std::int64_t width, std::int64_t height);
    kind kind_ = kind::rectangle;
    std::int64_t width_ = 1;
    std::int64_t height_ = 1;
};

}  // namespace granula
