#include "granula/morphology/structuring_element.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

#include "core/border_index.hpp"
#include "granula/core/error.hpp"

namespace granula {
namespace {

std::int64_t check_extent(std::int64_t value, const char* what) {
    if (value < 1)
        throw invalid_argument(std::string("structuring element ") + what + " must be >= 1, got " +
                               std::to_string(value));
    return value;
}

// Radii may be 0 (a single pixel), as in scikit-image and MATLAB.
std::int64_t check_radius(std::int64_t value) {
    if (value < 0) throw invalid_argument("structuring element radius must be >= 0, got " + std::to_string(value));
    return value;
}

// The most pixels a footprint mask is built with (256 MiB of bytes): the masks of exact disks,
// diamonds and ellipses, and footprint(). Larger boxes would exhaust memory or overflow their
// area; an element with a larger box is still usable where its decomposition needs no mask.
constexpr std::int64_t max_mask_pixels = std::int64_t{1} << 28;

// A box's area is at most `limit` (no overflow for any sides).
bool area_at_most(std::int64_t width, std::int64_t height, std::int64_t limit = max_mask_pixels) {
    return width <= limit && height <= limit && width * height <= limit;
}

invalid_argument mask_too_large(const std::string& what) {
    return invalid_argument(what + " is too large for a footprint mask: its box holds more than " +
                            std::to_string(max_mask_pixels) + " pixels");
}

// An angle in degrees, modulo 180, in [0, 180).
double angle_mod_180(double angle) {
    const double a = std::fmod(angle, 180.0);
    return a < 0 ? a + 180.0 : a;
}

// Lines within 45 degrees of the x axis (an angle modulo 180) take one pixel per column.
bool x_dominant(double a) { return a <= 45.0 || a >= 135.0; }

// Parses a whole decimal integer; false on anything else.
bool parse_int(std::string_view text, std::int64_t& value) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

bool parse_double(std::string_view text, double& value) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

// The terms of a mask: its row runs, or its column runs when those are fewer. Offsets are
// relative to the mask's origin; a run of one pixel is a term without segments.
std::vector<decomposition_term> run_terms(const footprint_mask& m) {
    const auto runs = [&](bool by_rows) {
        std::vector<decomposition_term> terms;
        const std::int64_t lines = by_rows ? m.height : m.width, along = by_rows ? m.width : m.height;
        const auto member = [&](std::int64_t line, std::int64_t i) { return by_rows ? m.at(line, i) : m.at(i, line); };
        for (std::int64_t line = 0; line < lines; ++line)
            for (std::int64_t i = 0; i < along;) {
                if (!member(line, i)) {
                    ++i;
                    continue;
                }
                std::int64_t end = i;
                while (end < along && member(line, end)) ++end;
                decomposition_term t;
                t.offset_x = (by_rows ? i : line) - m.origin_x;
                t.offset_y = (by_rows ? line : i) - m.origin_y;
                if (end - i > 1) t.segments.push_back({end - i, by_rows ? 1 : 0, by_rows ? 0 : 1, 0});
                terms.push_back(std::move(t));
                i = end;
            }
        return terms;
    };
    auto rows = runs(true), columns = runs(false);
    return columns.size() < rows.size() ? columns : rows;
}

// A mask of (2 half_width + 1) x (2 half_height + 1) with its origin at the centre, set where
// member(dx, dy) holds for the offsets from the origin. `spec` names the element in errors.
template <class Member>
footprint_mask centred_mask(const std::string& spec, std::int64_t half_width, std::int64_t half_height,
                            Member member) {
    const bool fits = half_width <= max_mask_pixels && half_height <= max_mask_pixels &&  // 2 half + 1 in range
                      area_at_most(2 * half_width + 1, 2 * half_height + 1);
    if (!fits) throw mask_too_large(spec);
    const std::int64_t width = 2 * half_width + 1, height = 2 * half_height + 1;
    footprint_mask m;
    m.width = width;
    m.height = height;
    m.origin_x = width / 2;
    m.origin_y = height / 2;
    m.mask.resize(static_cast<std::size_t>(width * height));
    for (std::int64_t y = 0; y < height; ++y)
        for (std::int64_t x = 0; x < width; ++x)
            m.mask[static_cast<std::size_t>(y * width + x)] = member(x - m.origin_x, y - m.origin_y) ? 1 : 0;
    return m;
}

// The slope p/q for v (|v| <= 1) of a line of `length` pixels: the closest fraction with
// q <= Q for the smallest bound Q <= max_q at which the line's ends, length / 2 pixels from its
// origin, stay within a quarter pixel of the exact slope's (so every pixel within 3/4 of a pixel
// of the exact line); the closest with q <= max_q where none does. Ties to the smaller q. A
// smaller q is a shorter base, whose runs are what erosion pays for (docs/semantics.md).
std::pair<std::int64_t, std::int64_t> snap_slope(double v, std::int64_t length, std::int64_t max_q) {
    const double half_length = static_cast<double>(length / 2);
    std::int64_t best_p = 0, best_q = 1;
    double best_error = 2;
    for (std::int64_t q = 1; q <= max_q; ++q) {
        const auto p = static_cast<std::int64_t>(std::llround(v * static_cast<double>(q)));
        const double error = std::abs(v - static_cast<double>(p) / static_cast<double>(q));
        if (error < best_error - 1e-12) {
            best_error = error;
            best_p = p;
            best_q = q;
        }
        if (best_error * half_length <= 0.25 + 1e-12) break;
    }
    return {best_p, best_q};
}

std::string format_number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

}  // namespace

structuring_element::structuring_element(kind k, std::string spec, std::vector<decomposition_term> terms)
    : kind_(k), spec_(std::move(spec)), terms_(std::move(terms)) {
    // The box: the bounds of every term's offsets.
    std::int64_t x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    bool first = true;
    for (const auto& t : terms_) {
        std::int64_t lx = t.offset_x, hx = t.offset_x, ly = t.offset_y, hy = t.offset_y;
        for (const auto& s : t.segments) {
            const offset_box b = s.box();
            lx += b.x0, hx += b.x1, ly += b.y0, hy += b.y1;
        }
        x0 = first ? lx : std::min(x0, lx), x1 = first ? hx : std::max(x1, hx);
        y0 = first ? ly : std::min(y0, ly), y1 = first ? hy : std::max(y1, hy);
        first = false;
    }
    width_ = x1 - x0 + 1, height_ = y1 - y0 + 1, origin_x_ = -x0, origin_y_ = -y0;
}

structuring_element structuring_element::hline(std::int64_t length) { return rectangle(check_extent(length, "length"), 1); }
structuring_element structuring_element::vline(std::int64_t length) { return rectangle(1, check_extent(length, "length")); }

structuring_element structuring_element::rectangle(std::int64_t width, std::int64_t height) {
    check_extent(width, "width");
    check_extent(height, "height");
    decomposition_term t;
    if (width > 1) t.segments.push_back({width, 1, 0, width / 2});
    if (height > 1) t.segments.push_back({height, 0, 1, height / 2});
    const std::string spec = height == 1  ? "hline:" + std::to_string(width)
                             : width == 1 ? "vline:" + std::to_string(height)
                                          : "rect:" + std::to_string(width) + "x" + std::to_string(height);
    return {kind::rectangle, spec, {std::move(t)}};
}

structuring_element structuring_element::shortened_for(std::int64_t width, std::int64_t height) const {
    if (kind_ != kind::line) return *this;
    // One pixel per step along the dominant axis: the box's side along it is the length.
    const bool along_x = line_slope_.along_x;
    const std::int64_t length = along_x ? width_ : height_, extent = along_x ? width : height;
    // The same slope: snapping the shorter length anew could pick another.
    return length > 2 * extent + 1 ? digital_line(2 * extent + 1, line_angle_, line_slope_) : *this;
}

structuring_element structuring_element::line(std::int64_t length, double angle) {
    check_extent(length, "length");
    if (!std::isfinite(angle))
        throw invalid_argument("line angle must be a finite number of degrees, got " + format_number(angle));
    const double a = angle_mod_180(angle);
    const double radians = a * (3.14159265358979323846 / 180.0);
    const bool along_x = x_dominant(a);
    const double slope = along_x ? std::tan(radians) : std::cos(radians) / std::sin(radians);
    const auto [p, q] = snap_slope(std::clamp(slope, -1.0, 1.0), length, max_line_period);
    return digital_line(length, angle, {along_x, p, q});
}

structuring_element structuring_element::digital_line(std::int64_t length, double angle, line_slope slope) {
    // Along the dominant axis u = k - length/2; across it w = round(u p / q), half up, which keeps
    // w(u + q) = w(u) + p exact, so the line is periodic with period q.
    const bool along_x = slope.along_x;
    const std::int64_t p = slope.p, q = slope.q;
    const auto pixel = [&](std::int64_t k) {
        const std::int64_t u = k - length / 2, w = detail::floor_div(2 * u * p + q, 2 * q);
        // y grows down: a positive slope rises to the right (x-dominant) or leans right going up.
        return along_x ? std::pair{u, -w} : std::pair{-w, u};
    };
    const std::string spec = "line:" + std::to_string(length) + ":" + format_number(angle);
    const auto with_slope = [&](structuring_element se) {
        se.line_angle_ = angle;
        se.line_slope_ = slope;
        return se;
    };
    const auto [step_x, step_y] = [&] {
        const auto [x0, y0] = pixel(0);
        const auto [x1, y1] = pixel(q);
        return std::pair{x1 - x0, y1 - y0};
    }();
    if (q == 1) {  // 0, 45, 90, 135 degrees: one segment
        decomposition_term t;
        if (length > 1) t.segments.push_back({length, static_cast<int>(step_x), static_cast<int>(step_y), length / 2});
        return with_slope({kind::line, spec, {std::move(t)}});
    }
    // The pixels k in [begin, end) as a mask around the origin, and its runs.
    // The mask's box holds those pixels only, not the origin: the first q + (L mod q) pixels of a
    // long line lie up to L / 2 from it, and a box reaching the origin grew with L.
    const auto runs_of = [&](std::int64_t begin, std::int64_t end) {
        auto [x0, y0] = pixel(begin);
        std::int64_t x1 = x0, y1 = y0;
        for (std::int64_t k = begin; k < end; ++k) {
            const auto [x, y] = pixel(k);
            x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
        }
        footprint_mask m;
        m.width = x1 - x0 + 1, m.height = y1 - y0 + 1, m.origin_x = -x0, m.origin_y = -y0;
        m.mask.assign(static_cast<std::size_t>(m.width * m.height), 0);
        for (std::int64_t k = begin; k < end; ++k) {
            const auto [x, y] = pixel(k);
            m.mask[static_cast<std::size_t>((y - y0) * m.width + (x - x0))] = 1;
        }
        return run_terms(m);
    };
    const std::int64_t periods = length / q;
    if (periods < 2) return with_slope({kind::line, spec, runs_of(0, length)});
    // Pixels [0, L) are pixels [0, q + r) (r = L mod q) swept along the periodic line of
    // `periods` points, since pixel k + q is pixel k moved one step: one group of runs.
    std::vector<decomposition_term> terms = runs_of(0, length - (periods - 1) * q);
    for (auto& t : terms) t.segments.push_back({periods, static_cast<int>(step_x), static_cast<int>(step_y), 0});
    return with_slope({kind::line, spec, std::move(terms)});
}

structuring_element structuring_element::disk(std::int64_t radius) {
    check_radius(radius);
    const std::string spec = "disk:" + std::to_string(radius);
    return {kind::disk, spec, run_terms(centred_mask(spec, radius, radius, [&](std::int64_t x, std::int64_t y) {
                return x * x + y * y <= radius * radius;
            }))};
}

structuring_element structuring_element::disk(std::int64_t radius, int periodic_lines) {
    check_radius(radius);
    if (periodic_lines != 0 && periodic_lines != 4 && periodic_lines != 6 && periodic_lines != 8)
        throw invalid_argument("a disk is made of 0 (exact), 4, 6 or 8 periodic lines, got " +
                               std::to_string(periodic_lines));
    if (periodic_lines == 0) return disk(radius);
    const std::string spec = "disk:" + std::to_string(radius) + ":" + std::to_string(periodic_lines);
    if (radius < 3) {  // too small to decompose (MATLAB's rule)
        structuring_element exact = disk(radius);
        exact.spec_ = spec;
        return exact;
    }
    // The steps (x, y) of the periodic lines: MATLAB's basis vectors (row, column) transposed.
    static constexpr int steps4[][2] = {{0, 1}, {1, 1}, {1, 0}, {1, -1}};
    static constexpr int steps6[][2] = {{0, 1}, {2, 1}, {1, 2}, {1, 0}, {2, -1}, {1, -2}};
    static constexpr int steps8[][2] = {{0, 1}, {1, 2}, {1, 1}, {2, 1}, {1, 0}, {2, -1}, {1, -1}, {1, -2}};
    const auto steps = periodic_lines == 4   ? std::span<const int[2]>(steps4)
                       : periodic_lines == 6 ? std::span<const int[2]>(steps6)
                                             : std::span<const int[2]>(steps8);
    // Adams' radial extent k of each line (p. 328): the lines' sum is a 2n-gon of inradius ~r.
    // Each line has 2 rp + 1 points, rp = floor(k / |step|), which falls a little short of r.
    const double theta = 3.14159265358979323846 / (2.0 * periodic_lines);
    const double k = 2.0 * static_cast<double>(radius) / (1.0 / std::tan(theta) + 1.0 / std::sin(theta));
    decomposition_term t;
    std::int64_t reach_y = 0;  // the sum's reach along the y axis
    for (const auto& [dx, dy] : steps) {
        const auto rp = static_cast<std::int64_t>(std::floor(k / std::hypot(dx, dy)));
        if (rp > 0) t.segments.push_back({2 * rp + 1, dx, dy, rp});
        reach_y += rp * std::abs(dy);
    }
    // A horizontal and a vertical run of 2 (r - reach) - 1 pixels make up the shortfall (when at
    // least 3); each merges with the periodic line of the same step.
    const std::int64_t extra = 2 * (radius - reach_y) - 1;
    if (extra >= 3)
        for (const line_segment run : {line_segment{extra, 1, 0, extra / 2}, line_segment{extra, 0, 1, extra / 2}}) {
            auto same = std::find_if(t.segments.begin(), t.segments.end(),
                                     [&](const line_segment& s) { return s.dx == run.dx && s.dy == run.dy; });
            if (same == t.segments.end())
                t.segments.push_back(run);
            else
                same->length += run.length - 1, same->origin += run.origin;
        }
    // Horizontal and vertical lines first: the passes run in this order.
    std::stable_partition(t.segments.begin(), t.segments.end(),
                          [](const line_segment& s) { return s.horizontal() || s.vertical(); });
    return {kind::disk, spec, {std::move(t)}};
}

structuring_element structuring_element::diamond(std::int64_t radius) {
    check_radius(radius);
    const std::string spec = "diamond:" + std::to_string(radius);
    return {kind::diamond, spec, run_terms(centred_mask(spec, radius, radius, [&](std::int64_t x, std::int64_t y) {
                return std::abs(x) + std::abs(y) <= radius;
            }))};
}

structuring_element structuring_element::octagon(std::int64_t m, std::int64_t n) {
    check_extent(m, "side m");
    check_extent(n, "slanted side n");
    // The (m + 2n)-square with its corners cut at 45 degrees is the Minkowski sum of a
    // horizontal and a vertical run of m pixels and two diagonals of n + 1 pixels: four 1-D
    // passes, O(1) per pixel whatever the size. The offsets centre it (origin at size / 2).
    // With m = 1 (a diamond) the diagonals alone reach every other pixel only: the pixels of
    // the other parity are a second term, the diamond of radius n - 1 (one pixel when n = 1).
    const std::int64_t c = (m + 2 * n) / 2;
    const auto diagonals = [](std::int64_t length) {
        std::vector<line_segment> d;
        if (length > 1) d = {{length, 1, 1, 0}, {length, 1, -1, 0}};
        return d;
    };
    decomposition_term t{-c, n - c, {}};
    if (m > 1) t.segments = {{m, 1, 0, 0}, {m, 0, 1, 0}};
    for (const line_segment& d : diagonals(n + 1)) t.segments.push_back(d);
    std::vector<decomposition_term> terms{std::move(t)};
    if (m == 1) terms.push_back({1 - c, n - c, diagonals(n)});
    return {kind::octagon, "octagon:" + std::to_string(m) + ":" + std::to_string(n), std::move(terms)};
}

structuring_element structuring_element::ellipse(std::int64_t width, std::int64_t height) {
    check_extent(width, "width");
    check_extent(height, "height");
    const double a = static_cast<double>(width + 1), b = static_cast<double>(height + 1);
    const auto inside = [&](std::int64_t x, std::int64_t y) {
        return (x / a) * (x / a) + (y / b) * (y / b) < 1.0;
    };
    const std::string spec = "ellipse:" + std::to_string(width) + "x" + std::to_string(height);
    return {kind::ellipse, spec, run_terms(centred_mask(spec, width, height, inside))};
}

structuring_element structuring_element::from_mask(footprint_mask mask) {
    if (mask.width < 1 || mask.height < 1)
        throw invalid_argument("footprint mask is empty (" + std::to_string(mask.width) + "x" +
                               std::to_string(mask.height) + "); it needs at least 1x1 pixels");
    if (mask.mask.size() != static_cast<std::size_t>(mask.width * mask.height))
        throw invalid_argument("footprint mask has " + std::to_string(mask.mask.size()) + " entries for " +
                               std::to_string(mask.width) + "x" + std::to_string(mask.height));
    if (mask.origin_x < 0 || mask.origin_x >= mask.width || mask.origin_y < 0 || mask.origin_y >= mask.height)
        throw invalid_argument("footprint origin (row " + std::to_string(mask.origin_y) + ", col " +
                               std::to_string(mask.origin_x) + ") is outside the " + std::to_string(mask.height) +
                               "x" + std::to_string(mask.width) + " mask");
    if (std::none_of(mask.mask.begin(), mask.mask.end(), [](std::uint8_t v) { return v != 0; }))
        throw invalid_argument("footprint mask has no set pixel; an element needs at least one");
    for (auto& v : mask.mask) v = v != 0;
    return in_box(run_terms(mask), mask.width, mask.height, mask.origin_x, mask.origin_y);
}

structuring_element structuring_element::in_box(std::vector<decomposition_term> terms, std::int64_t width,
                                                std::int64_t height, std::int64_t origin_x, std::int64_t origin_y) {
    structuring_element se(kind::mask, "mask:" + std::to_string(width) + "x" + std::to_string(height), std::move(terms));
    // The box is the one given, empty border rows and columns included.
    se.width_ = width, se.height_ = height, se.origin_x_ = origin_x, se.origin_y_ = origin_y;
    return se;
}

structuring_element structuring_element::reflected() const {
    std::vector<decomposition_term> terms = terms_;
    for (auto& t : terms) {
        t.offset_x = -t.offset_x, t.offset_y = -t.offset_y;
        // The offsets (k - origin) * step, k = 0 .. length - 1, negated are (k' - (length - 1 - origin)) * step.
        for (auto& s : t.segments) s.origin = s.length - 1 - s.origin;
    }
    structuring_element mirrored = in_box(std::move(terms), width_, height_, width_ - 1 - origin_x_, height_ - 1 - origin_y_);
    // Symmetric elements keep their name and decomposition. Comparing footprints costs the box's
    // area (a long line's is far beyond memory): larger elements come back mirrored.
    constexpr std::int64_t max_compared_pixels = std::int64_t{1} << 22;
    const bool comparable = terms_ == mirrored.terms_ || area_at_most(width_, height_, max_compared_pixels);
    return comparable && mirrored == *this ? *this : mirrored;
}

structuring_element structuring_element::with_origin(std::int64_t x, std::int64_t y) const {
    if (x < 0 || x >= width_ || y < 0 || y >= height_)
        throw invalid_argument("footprint origin (row " + std::to_string(y) + ", col " + std::to_string(x) +
                               ") is outside the " + std::to_string(height_) + "x" + std::to_string(width_) + " footprint");
    const std::int64_t dx = origin_x_ - x, dy = origin_y_ - y;  // every offset moves by (dx, dy)
    if (dx == 0 && dy == 0) return *this;
    std::vector<decomposition_term> terms = terms_;
    // A rectangle (its sides fill the box) stays separable, the fast path: the origins of its
    // sides move, not its term.
    std::int64_t area = 1;
    for (const auto& s : terms.front().segments) area *= s.length;
    if (separable() && area == width_ * height_)
        for (auto& s : terms.front().segments) s.origin -= s.horizontal() ? dx : dy;
    else
        for (auto& t : terms) t.offset_x += dx, t.offset_y += dy;
    return in_box(std::move(terms), width_, height_, x, y);
}

std::string structuring_element::spec_syntax() {
    return "hline:L, vline:L, rect:WxH, square:N, line:L:ANGLE, disk:R, disk:R:N (N = 4, 6 or 8 periodic lines), "
           "diamond:R, octagon:M:N or ellipse:WxH (integers >= 1, ANGLE in degrees)";
}

structuring_element structuring_element::parse(std::string_view spec) {
    const auto bad = [&](const std::string& why) -> invalid_argument {
        return invalid_argument("bad footprint '" + std::string(spec) + "': " + why + "; allowed: " + spec_syntax());
    };
    const auto colon = spec.find(':');
    if (colon == std::string_view::npos) throw bad("missing ':'");
    const std::string_view name = spec.substr(0, colon), args = spec.substr(colon + 1);
    const auto two = [&](char separator, const char* form) {
        const auto at = args.find(separator);
        std::int64_t a = 0, b = 0;
        if (at == std::string_view::npos || !parse_int(args.substr(0, at), a) || !parse_int(args.substr(at + 1), b))
            throw bad(std::string("expected ") + form + " after '" + std::string(name) + ":'");
        if (a < 1 || b < 1) throw bad("sizes must be >= 1");
        return std::pair{a, b};
    };
    if (name == "disk" && args.find(':') != std::string_view::npos) {
        const auto [r, n] = two(':', "R:N");
        if (n != 4 && n != 6 && n != 8) throw bad("a disk's N is 4, 6 or 8 periodic lines");
        return disk(r, static_cast<int>(n));
    }
    if (name == "hline" || name == "vline" || name == "square" || name == "disk" || name == "diamond") {
        std::int64_t a = 0;
        if (!parse_int(args, a)) throw bad("expected one integer after ':'");
        if (a < 1) throw bad("sizes must be >= 1");
        if (name == "hline") return hline(a);
        if (name == "vline") return vline(a);
        if (name == "square") return square(a);
        if (name == "disk") return disk(a);
        return diamond(a);
    }
    if (name == "rect") {
        const auto [w, h] = two('x', "WxH");
        return rectangle(w, h);
    }
    if (name == "ellipse") {
        const auto [w, h] = two('x', "WxH");
        return ellipse(w, h);
    }
    if (name == "octagon") {
        const auto [m, n] = two(':', "M:N");
        return octagon(m, n);
    }
    if (name == "line") {
        const auto at = args.find(':');
        std::int64_t length = 0;
        double angle = 0;
        if (at == std::string_view::npos || !parse_int(args.substr(0, at), length) ||
            !parse_double(args.substr(at + 1), angle))
            throw bad("expected L:ANGLE after 'line:'");
        if (length < 1) throw bad("sizes must be >= 1");
        if (!std::isfinite(angle)) throw bad("the angle must be a finite number of degrees");
        return line(length, angle);
    }
    throw bad("unknown shape '" + std::string(name) + "'");
}

footprint_mask structuring_element::footprint() const {
    if (!area_at_most(width_, height_))
        throw mask_too_large("the footprint of " + spec_ + " (" + std::to_string(width_) + "x" +
                             std::to_string(height_) + ")");
    footprint_mask f;
    f.width = width_, f.height = height_, f.origin_x = origin_x_, f.origin_y = origin_y_;
    f.mask.assign(static_cast<std::size_t>(width_ * height_), 0);
    // Each term: its offset swept along every segment in turn, each point kept once (a sum of
    // many segments revisits points). Partial sums stay in the box: every segment holds offset 0.
    const auto index = [&](std::int64_t x, std::int64_t y) {
        return static_cast<std::size_t>((y + origin_y_) * width_ + x + origin_x_);
    };
    std::vector<std::uint8_t> seen(f.mask.size(), 0);
    std::vector<std::pair<std::int64_t, std::int64_t>> points, next;
    for (const auto& t : terms_) {
        points.assign(1, {t.offset_x, t.offset_y});
        for (const auto& s : t.segments) {
            next.clear();
            for (const auto& [x, y] : points)
                for (std::int64_t k = 0; k < s.length; ++k) {
                    const std::int64_t px = x + (k - s.origin) * s.dx, py = y + (k - s.origin) * s.dy;
                    if (!seen[index(px, py)]) seen[index(px, py)] = 1, next.emplace_back(px, py);
                }
            for (const auto& [x, y] : next) seen[index(x, y)] = 0;
            points.swap(next);
        }
        for (const auto& [x, y] : points) f.mask[index(x, y)] = 1;
    }
    return f;
}

bool structuring_element::separable() const {
    return terms_.size() == 1 && terms_[0].offset_x == 0 && terms_[0].offset_y == 0 &&
           std::all_of(terms_[0].segments.begin(), terms_[0].segments.end(),
                       [](const line_segment& s) { return s.horizontal() || s.vertical(); });
}

std::string structuring_element::to_string() const { return spec_; }

bool operator==(const structuring_element& a, const structuring_element& b) {
    if (a.width_ != b.width_ || a.height_ != b.height_ || a.origin_x_ != b.origin_x_ || a.origin_y_ != b.origin_y_)
        return false;
    return a.terms_ == b.terms_ || a.footprint().mask == b.footprint().mask;
}

}  // namespace granula
