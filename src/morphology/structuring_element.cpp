#include "granula/morphology/structuring_element.hpp"

#include <charconv>
#include <string>

#include "granula/core/error.hpp"

namespace granula {
namespace {

std::int64_t check_extent(std::int64_t value, const char* what) {
    if (value < 1)
        throw invalid_argument(std::string("structuring element ") + what + " must be >= 1, got " +
                               std::to_string(value));
    return value;
}

// Parses a whole decimal integer; false on anything else.
bool parse_int(std::string_view text, std::int64_t& value) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

structuring_element::structuring_element(kind k, std::int64_t width, std::int64_t height)
    : kind_(k), width_(width), height_(height) {}

structuring_element structuring_element::hline(std::int64_t length) {
    return {kind::rectangle, check_extent(length, "length"), 1};
}
structuring_element structuring_element::vline(std::int64_t length) {
    return {kind::rectangle, 1, check_extent(length, "length")};
}
structuring_element structuring_element::rectangle(std::int64_t width, std::int64_t height) {
    return {kind::rectangle, check_extent(width, "width"), check_extent(height, "height")};
}

std::string structuring_element::spec_syntax() { return "hline:L, vline:L, rect:WxH or square:N (integers >= 1)"; }

structuring_element structuring_element::parse(std::string_view spec) {
    const auto bad = [&](const std::string& why) -> invalid_argument {
        return invalid_argument("bad footprint '" + std::string(spec) + "': " + why + "; allowed: " + spec_syntax());
    };
    const auto colon = spec.find(':');
    if (colon == std::string_view::npos) throw bad("missing ':'");
    const std::string_view name = spec.substr(0, colon), args = spec.substr(colon + 1);
    std::int64_t a = 0, b = 0;
    if (name == "hline" || name == "vline" || name == "square") {
        if (!parse_int(args, a)) throw bad("expected one integer after ':'");
        if (a < 1) throw bad("sizes must be >= 1");
        return name == "hline" ? hline(a) : name == "vline" ? vline(a) : square(a);
    }
    if (name == "rect") {
        const auto x = args.find('x');
        if (x == std::string_view::npos || !parse_int(args.substr(0, x), a) || !parse_int(args.substr(x + 1), b))
            throw bad("expected WxH after 'rect:'");
        if (a < 1 || b < 1) throw bad("sizes must be >= 1");
        return rectangle(a, b);
    }
    throw bad("unknown shape '" + std::string(name) + "'");
}

footprint_mask structuring_element::footprint() const {
    footprint_mask f;
    f.width = width_;
    f.height = height_;
    f.origin_x = width_ / 2;
    f.origin_y = height_ / 2;
    f.mask.assign(static_cast<std::size_t>(width_ * height_), 1);
    return f;
}

std::vector<line_segment> structuring_element::decomposition() const {
    std::vector<line_segment> parts;
    if (width_ > 1) parts.push_back({width_, 1, 0, width_ / 2});
    if (height_ > 1) parts.push_back({height_, 0, 1, height_ / 2});
    return parts;
}

std::string structuring_element::to_string() const {
    if (height_ == 1) return "hline:" + std::to_string(width_);
    if (width_ == 1) return "vline:" + std::to_string(height_);
    return "rect:" + std::to_string(width_) + "x" + std::to_string(height_);
}

}  // namespace granula
