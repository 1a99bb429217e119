// Flat structuring elements (GUIDE §1 "Structuring elements", "Lines").
//
// Every element reports its exact footprint (a boolean mask with its origin), so a result can
// be reproduced with any other library, and its decomposition: a union of terms, each a
// translated Minkowski sum of line segments, which is exactly the footprint. The origin of an
// extent of n pixels is at index n/2 (floor).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace granula {

// The bounds of a set of offsets, inclusive.
struct offset_box {
    std::int64_t x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};

// A digital line segment, or a periodic line: `length` pixels at offsets (k - origin) * (dx, dy),
// k = 0..length-1. (1, 0) is a horizontal run (x grows right), (0, 1) a vertical one (y grows
// down); a longer step (e.g. (26, -15)) is a periodic line, whose pixels are a period apart.
struct line_segment {
    std::int64_t length = 1;
    int dx = 1;
    int dy = 0;
    std::int64_t origin = 0;  // index of the origin pixel along the segment
    bool horizontal() const { return dx == 1 && dy == 0; }
    bool vertical() const { return dx == 0 && dy == 1; }
    // The bounds of its offsets.
    offset_box box() const {
        const std::int64_t a = -origin, b = length - 1 - origin;
        return {std::min(a * dx, b * dx), std::max(a * dx, b * dx), std::min(a * dy, b * dy), std::max(a * dy, b * dy)};
    }
    friend bool operator==(const line_segment&, const line_segment&) = default;
};

// One term of a decomposition: the offsets (offset_x, offset_y) + s0 ⊕ s1 ⊕ ... over its segments
// (no segments: the single offset).
struct decomposition_term {
    std::int64_t offset_x = 0;
    std::int64_t offset_y = 0;
    std::vector<line_segment> segments;
    friend bool operator==(const decomposition_term&, const decomposition_term&) = default;
};

// The footprint as a boolean mask, row-major, with the origin's (row, col) in it.
struct footprint_mask {
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::int64_t origin_x = 0;
    std::int64_t origin_y = 0;
    std::vector<std::uint8_t> mask;  // width * height entries, 1 = member
    bool at(std::int64_t y, std::int64_t x) const { return mask[static_cast<std::size_t>(y * width + x)] != 0; }
    friend bool operator==(const footprint_mask&, const footprint_mask&) = default;
};

class structuring_element {
public:
    enum class kind { rectangle, line, disk, diamond, octagon, ellipse, mask };

    // A horizontal line of `length` >= 1 pixels (a length x 1 rectangle).
    static structuring_element hline(std::int64_t length);
    // A vertical line of `length` >= 1 pixels (a 1 x length rectangle).
    static structuring_element vline(std::int64_t length);
    // A width x height rectangle, both >= 1.
    static structuring_element rectangle(std::int64_t width, std::int64_t height);
    static structuring_element square(std::int64_t size) { return rectangle(size, size); }
    // A digital line of exactly `length` >= 1 pixels, one per step along its dominant axis, at
    // `angle` degrees counter-clockwise from +x (modulo 180), through the origin at index
    // length/2. Its slope is snapped to a fraction p/q, q <= max_line_period: the simplest that
    // keeps the line's ends within a quarter pixel of the exact slope's (every pixel within 3/4
    // of a pixel of the exact line), or the nearest where none does (at most 1/128 off); exact at
    // 0, 45, 90, 135 degrees. Pixel k sits at floor(t * p / q + 1/2) across from
    // t = k - length/2 on the dominant axis.
    static structuring_element line(std::int64_t length, double angle);
    static constexpr std::int64_t max_line_period = 64;
    // The Euclidean disk x^2 + y^2 <= r^2, r >= 0 (scikit-image's disk, MATLAB's strel('disk', r, 0)).
    static structuring_element disk(std::int64_t radius);
    // MATLAB's strel('disk', r, n): the radial decomposition of Adams (1993) into n = 4, 6 or 8
    // periodic lines (Jones & Soille 1996), plus a horizontal and a vertical run where those fall
    // short of r. A symmetric polygon of up to 2n sides that approximates the Euclidean disk: it
    // reaches r - 1 along the axes and up to 10% past r between them (docs/semantics.md), and
    // costs O(1) per pixel per line whatever r. n = 0, and any n with r < 3, is the exact
    // disk(r), as in MATLAB.
    static structuring_element disk(std::int64_t radius, int periodic_lines);
    // |x| + |y| <= r, r >= 0 (scikit-image's and MATLAB's diamond).
    static structuring_element diamond(std::int64_t radius);
    // scikit-image's octagon(m, n): horizontal and vertical sides of m >= 1 pixels, slanted
    // sides of n >= 1 pixels; (m + 2n) x (m + 2n).
    static structuring_element octagon(std::int64_t m, std::int64_t n);
    // scikit-image's ellipse(width, height): (x / (width + 1))^2 + (y / (height + 1))^2 < 1, a
    // (2 width + 1) x (2 height + 1) box, width and height >= 1.
    static structuring_element ellipse(std::int64_t width, std::int64_t height);
    // Any mask with at least one set pixel and its origin inside the mask's box.
    static structuring_element from_mask(footprint_mask mask);

    // Parses the CLI syntax: "hline:L", "vline:L", "rect:WxH", "square:N", "line:L:ANGLE",
    // "disk:R", "disk:R:N" (N periodic lines), "diamond:R", "octagon:M:N", "ellipse:WxH".
    // Throws invalid_argument naming the allowed forms. (Masks from files are read by the CLI:
    // "mask:FILE.png".)
    static structuring_element parse(std::string_view spec);
    static std::string spec_syntax();

    kind shape() const { return kind_; }
    // The footprint's box.
    std::int64_t width() const { return width_; }
    std::int64_t height() const { return height_; }
    // The origin's column and row in the box.
    std::int64_t origin_x() const { return origin_x_; }
    std::int64_t origin_y() const { return origin_y_; }

    // The exact set of offsets, as a mask with its origin (drawn from the decomposition).
    footprint_mask footprint() const;
    // Terms whose union is exactly the footprint (relative to its origin). Rectangles are one
    // term, their horizontal and vertical side (1x1 pieces left out); lines at other angles a
    // periodic line plus one period's runs; octagons and periodic-line disks one term of lines
    // (collinear ones merged); other shapes their row or column runs, whichever are fewer.
    const std::vector<decomposition_term>& decomposition() const { return terms_; }
    // The element reflected through its origin: the offsets -b for every offset b, in the
    // mirrored box (origin at width - 1 - origin_x, height - 1 - origin_y). Exact on the
    // decomposition: each term's offset is negated and each segment counted from its other end.
    // An element equal to its reflection (a disk, an odd rectangle) comes back unchanged.
    structuring_element reflected() const;
    // The same pixels with the origin at column x, row y of the box (0 <= x < width,
    // 0 <= y < height; invalid_argument otherwise): every offset moves by
    // (origin_x - x, origin_y - y). Rectangles stay separable (their sides' origins move).
    structuring_element with_origin(std::int64_t x, std::int64_t y) const;

    // True when the decomposition is one term at offset (0, 0) of horizontal and vertical
    // segments: such elements take the separable fast path.
    bool separable() const;
    // The CLI spelling, e.g. "rect:15x3", "line:31:30" ("mask:WxH" for masks and for
    // reflected or re-origined elements, which have none).
    std::string to_string() const;

    // Equal footprints (the same offsets), however they were made.
    friend bool operator==(const structuring_element& a, const structuring_element& b);

    // For a line() longer than an image of width x height needs, under borders that read one
    // value off the image (ignore, constant): its middle 2 E + 1 pixels, of the same slope
    // (line(2 E + 1, angle) may snap to another), E the image's extent along its dominant axis.
    // From any pixel of the image, the original's pixels with |t| > E fall off the image, as its
    // pixels t = -E and t = E do, so the erosion and dilation of that image are the same by both;
    // the cost, which follows the line's reach, stays bounded by the image's size. Any other
    // element comes back unchanged.
    structuring_element shortened_for(std::int64_t width, std::int64_t height) const;

private:
    structuring_element(kind k, std::string spec, std::vector<decomposition_term> terms);
    // A line's slope across its dominant axis, p / q, as snapped (line()).
    struct line_slope {
        bool along_x = true;  // x is the dominant axis
        std::int64_t p = 0, q = 1;
    };
    // line() of this slope.
    static structuring_element digital_line(std::int64_t length, double angle, line_slope slope);
    // A mask element of these terms in this box (which may be wider than the terms reach).
    static structuring_element in_box(std::vector<decomposition_term> terms, std::int64_t width, std::int64_t height,
                                      std::int64_t origin_x, std::int64_t origin_y);
    kind kind_ = kind::rectangle;
    std::string spec_;
    std::int64_t width_ = 1, height_ = 1, origin_x_ = 0, origin_y_ = 0;  // the footprint's box
    std::vector<decomposition_term> terms_;
    double line_angle_ = 0;     // line() only: its angle as given
    line_slope line_slope_{};  // line() only: its snapped slope (shortened_for keeps it)
};

}  // namespace granula
