// Brute-force binary references for what the grey path cannot check:
// hit-or-miss, and the AND/OR of a 0/1 image over an explicit list of offsets
// (the general line-segment pass). Pixels are uint8 0/1, one byte each; nothing
// here is shared with the bit-packed code.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "granula/core/image.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula::reference {

// f(y, x), or `outside` when (y, x) is not in the image.
inline std::uint8_t bit_or_pad(host_view<const std::uint8_t> f, std::int64_t y, std::int64_t x, std::uint8_t outside) {
    if (y < 0 || x < 0 || y >= f.height() || x >= f.width()) return outside;
    return f(y, x) ? 1 : 0;
}

// out(p) = AND (or OR) of f(p + o) over the offsets o = (dx, dy), `outside`
// beyond the image.
inline host_image<std::uint8_t> combine_offsets(host_view<const std::uint8_t> f,
                                                const std::vector<std::pair<std::int64_t, std::int64_t>>& offsets,
                                                bool use_or, std::uint8_t outside) {
    host_image<std::uint8_t> out(f.width(), f.height());
    for (std::int64_t y = 0; y < f.height(); ++y)
        for (std::int64_t x = 0; x < f.width(); ++x) {
            std::uint8_t v = use_or ? 0 : 1;
            for (const auto& [dx, dy] : offsets) {
                const std::uint8_t b = bit_or_pad(f, y + dy, x + dx, outside);
                v = use_or ? (v | b) : (v & b);
            }
            out.view()(y, x) = v;
        }
    return out;
}

// Hit-or-miss: 1 where every foreground offset lands on a 1 and every
// background offset on a 0. Outside the image: with `ignore_border` the offset
// takes no part, otherwise the pixel is `cval`.
inline host_image<std::uint8_t> hit_or_miss(host_view<const std::uint8_t> f, const structuring_element& foreground,
                                            const structuring_element& background, bool ignore_border,
                                            std::uint8_t cval) {
    const footprint_mask fg = foreground.footprint(), bg = background.footprint();
    host_image<std::uint8_t> out(f.width(), f.height());
    for (std::int64_t y = 0; y < f.height(); ++y)
        for (std::int64_t x = 0; x < f.width(); ++x) {
            bool hit = true;
            for (int which = 0; which < 2 && hit; ++which) {
                const footprint_mask& m = which == 0 ? fg : bg;
                const std::uint8_t want = which == 0 ? 1 : 0;
                for (std::int64_t j = 0; j < m.height && hit; ++j)
                    for (std::int64_t i = 0; i < m.width && hit; ++i) {
                        if (!m.at(j, i)) continue;
                        const std::int64_t yy = y + j - m.origin_y, xx = x + i - m.origin_x;
                        const bool inside = yy >= 0 && xx >= 0 && yy < f.height() && xx < f.width();
                        if (!inside && ignore_border) continue;
                        const std::uint8_t v = inside ? (f(yy, xx) ? 1 : 0) : cval;
                        if (v != want) hit = false;
                    }
            }
            out.view()(y, x) = hit ? 1 : 0;
        }
    return out;
}

}  // namespace granula::reference
