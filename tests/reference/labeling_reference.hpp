// Brute-force labelling for the tests: breadth-first flood fill from each unlabelled
// foreground pixel in raster order, so labels are 1..N in raster order of first pixels by
// construction; statistics by visiting every pixel. Shares no code with the library.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "granula/core/image.hpp"

namespace granula::reference {

// Labels as a dense row-major vector (width * height); returns them with the count.
template <class T>
std::pair<std::vector<std::int32_t>, std::int32_t> label(host_view<const T> in, int connectivity, T background) {
    const std::int64_t w = in.width(), h = in.height();
    std::vector<std::int32_t> out(static_cast<std::size_t>(w * h), 0);
    std::int32_t count = 0;
    std::deque<std::pair<std::int64_t, std::int64_t>> queue;
    for (std::int64_t y0 = 0; y0 < h; ++y0)
        for (std::int64_t x0 = 0; x0 < w; ++x0) {
            if (in(y0, x0) == background || out[y0 * w + x0] != 0) continue;
            const T v = in(y0, x0);
            out[y0 * w + x0] = ++count;
            queue.push_back({y0, x0});
            while (!queue.empty()) {
                const auto [y, x] = queue.front();
                queue.pop_front();
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        if (dy == 0 && dx == 0) continue;
                        if (connectivity == 1 && dy != 0 && dx != 0) continue;
                        const std::int64_t ny = y + dy, nx = x + dx;
                        if (ny < 0 || ny >= h || nx < 0 || nx >= w) continue;
                        if (in(ny, nx) != v || out[ny * w + nx] != 0) continue;
                        out[ny * w + nx] = count;
                        queue.push_back({ny, nx});
                    }
            }
        }
    return {out, count};
}

struct statistics {
    std::vector<std::int64_t> area, min_row, min_col, max_row, max_col;
    std::vector<double> sum_row, sum_col;
    std::vector<std::uint32_t> value;
};

// Per-component area, bounding box ([min, max) as skimage), coordinate sums and value.
template <class T>
statistics region_statistics(host_view<const T> in, const std::vector<std::int32_t>& labels, std::int32_t count) {
    const std::int64_t w = in.width(), h = in.height();
    statistics s;
    s.area.assign(count, 0);
    s.min_row.assign(count, h);
    s.min_col.assign(count, w);
    s.max_row.assign(count, 0);
    s.max_col.assign(count, 0);
    s.sum_row.assign(count, 0);
    s.sum_col.assign(count, 0);
    s.value.assign(count, 0);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            const std::int32_t l = labels[y * w + x];
            if (l == 0) continue;
            const std::size_t c = static_cast<std::size_t>(l - 1);
            ++s.area[c];
            if (y < s.min_row[c]) s.min_row[c] = y;
            if (x < s.min_col[c]) s.min_col[c] = x;
            if (y + 1 > s.max_row[c]) s.max_row[c] = y + 1;
            if (x + 1 > s.max_col[c]) s.max_col[c] = x + 1;
            s.sum_row[c] += static_cast<double>(y);
            s.sum_col[c] += static_cast<double>(x);
            s.value[c] = in(y, x);
        }
    return s;
}

}  // namespace granula::reference
