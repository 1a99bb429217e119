// Runs a shift program (morphology/shift_program.hpp) a row at a time: at step t every stage
// makes one row, sources first, each a fixed number of rows ahead of the result (its lead), so
// that the rows a stage reads were made at this step or a few steps before. Each stage keeps
// those rows in a ring; the rings of a band of columns fit in the L2 cache, so the source is
// read once and the result written once, and every read of a stage is a load and a min per
// vector from the cache.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "core/border_index.hpp"
#include "core/cpu_lane_window.hpp"
#include "core/cpu_streaming_stores.hpp"
#include "core/parallel.hpp"
#include "morphology/cpu/stream_kernels.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

// Source rows fetched this many steps before they are copied (2 to 8 measured alike, with the
// prefetches at the copy).
constexpr std::int64_t source_prefetch_rows = 4;

// Ring bytes of one task: about the L2 cache.
constexpr std::int64_t ring_budget = std::int64_t{1} << 21;

// Results of at least this many bytes go out past the cache; smaller ones stay in it for what
// reads them next. Erosions, uint8, one thread, stores past the cache against plain ones (ms):
// 512x512 disk:1 0.068 / 0.047, square:3 0.060 / 0.051, line:63:30 0.213 / 0.198; 1024x1024
// 3-5% faster plain; 2048x2048 mixed (square:3 0.455 / 0.369, line:63:30 1.07 / 1.24);
// 4096x4096 square:3 1.39 / 2.20, line:63:30 4.3 / 5.0.
constexpr std::int64_t through_bytes_min = std::int64_t{2} << 20;

// dst[x] = Op over k of src[k][x], x < n (a multiple of register_strip<T>), count >= 1; the
// cache lines of fetch[0, fetch_n) are prefetched along the way.
template <class Op, class T, std::size_t Count, bool Through = false>
inline void combine(T* __restrict dst, const T* const* src, std::size_t count, std::int64_t n, const T* fetch,
                    std::int64_t fetch_n) {
    constexpr std::int64_t line = 64 / sizeof(T);
    constexpr std::int64_t lanes = register_strip<T> / 4;
    using block = lane_block<T, lanes>;
    const auto load = [](const T* p) {
        block v;
        std::memcpy(&v, p, sizeof(block));
        return v;
    };
    if constexpr (Count > 0) count = Count;
    // Prefetched a line apart from the line fetch starts in: from fetch itself, a row that starts
    // inside a line (numpy's, 16 bytes in) had its last line missed, a demand miss every row
    // (4096x4096 uint8 openings 16 bytes into a line, one thread, toggled call by call in one
    // process: square:7 5.7-5.8 -> 5.2-5.4 ms, line:101:30 9.0-9.2 -> 8.8-8.9).
    const auto into_line = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(fetch) % 64 / sizeof(T));
    fetch -= into_line;
    fetch_n += into_line;
    for (std::int64_t x = 0; x < n; x += register_strip<T>) {
        for (std::int64_t f = x; f < std::min(x + register_strip<T>, fetch_n); f += line) __builtin_prefetch(fetch + f);
        const T* p = src[0] + x;
        block a0 = load(p), a1 = load(p + lanes), a2 = load(p + 2 * lanes), a3 = load(p + 3 * lanes);
        for (std::size_t k = 1; k < count; ++k) {
            const T* q = src[k] + x;
            a0 = block_apply<Op>(a0, load(q));
            a1 = block_apply<Op>(a1, load(q + lanes));
            a2 = block_apply<Op>(a2, load(q + 2 * lanes));
            a3 = block_apply<Op>(a3, load(q + 3 * lanes));
        }
        if constexpr (Through) {
            store_through(dst + x, a0), store_through(dst + x + lanes, a1);
            store_through(dst + x + 2 * lanes, a2), store_through(dst + x + 3 * lanes, a3);
        } else {
            std::memcpy(dst + x, &a0, sizeof(block));
            std::memcpy(dst + x + lanes, &a1, sizeof(block));
            std::memcpy(dst + x + 2 * lanes, &a2, sizeof(block));
            std::memcpy(dst + x + 3 * lanes, &a3, sizeof(block));
        }
    }
}

// Counts up to 6 (a line's pieces read at most piece_reads_max, shift_program.hpp) unrolled, the
// sources' pointers in registers: 4096x4096 uint8 openings by line:101:30 and line:101:60, one
// thread, 2-4% faster than through the loop over a runtime count (stages of 6 reads).
static_assert(detail::piece_reads_max <= 6, "combine_any unrolls the pieces' stages");
template <class Op, class T, bool Through = false>
inline void combine_any(T* dst, const T* const* src, std::size_t count, std::int64_t n, const T* fetch = nullptr,
                        std::int64_t fetch_n = 0) {
    switch (count) {
    case 2: combine<Op, T, 2, Through>(dst, src, count, n, fetch, fetch_n); return;
    case 3: combine<Op, T, 3, Through>(dst, src, count, n, fetch, fetch_n); return;
    case 4: combine<Op, T, 4, Through>(dst, src, count, n, fetch, fetch_n); return;
    case 5: combine<Op, T, 5, Through>(dst, src, count, n, fetch, fetch_n); return;
    case 6: combine<Op, T, 6, Through>(dst, src, count, n, fetch, fetch_n); return;
    default: combine<Op, T, 0, Through>(dst, src, count, n, fetch, fetch_n);
    }
}

// The combine of a stage: its min, max or difference.
template <class T, bool Through = false>
auto combine_of(const detail::shift_stage& stage) {
    if (stage.difference) return combine_any<difference_op<T>, T, Through>;
    return stage.maximum ? combine_any<max_op<T>, T, Through> : combine_any<min_op<T>, T, Through>;
}

struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{64}); }
};

// Copying a source row into a ring row that starts at nearly the same offset in a 4 KiB page
// runs several times slower (4K aliasing: the copy's loads wait on its stores to the same page
// offsets). line:63:7 erosion, 4096x4096 uint8, one thread: 9.2 ms with the rings at the
// input's page offset, 3.6 ms at any offset two cache lines or more away from it; which offset
// the rings got depended on the heap, so the same call took either time. The offset in a page
// at which the rings start, then: the one that keeps the rows of the source's ring (`rows`
// rows `row_bytes` apart, copied to `column_bytes` into each) farthest from the source rows'.
constexpr std::int64_t page_bytes = 4096;
inline std::int64_t rings_page_offset(const void* source, std::int64_t rows, std::int64_t row_bytes,
                                      std::int64_t column_bytes) {
    const auto source_offset = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(source) % page_bytes);
    std::int64_t best = 0, best_distance = -1;
    for (std::int64_t start = 0; start < page_bytes; start += 64) {
        std::int64_t distance = page_bytes;
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::int64_t d = (start + r * row_bytes + column_bytes - source_offset) % page_bytes;
            const std::int64_t apart = std::abs(d);  // either way round the page
            distance = std::min({distance, apart, page_bytes - apart});
        }
        if (distance > best_distance) best = start, best_distance = distance;
    }
    return best;
}

// Where each stage's rows and columns lie relative to the result's, and how many it keeps.
struct stage_layout {
    std::int64_t lead = 0;            // at step t the stage makes row t + lead
    std::int64_t low = 0, high = 0;   // rows [y0 + low, y1 + high) are needed for results [y0, y1)
    std::int64_t left = 0, right = 0; // columns [x0 + left, x1 + right) likewise
    std::int64_t ring = 1;            // rows kept: from the oldest a consumer reads to the newest
};

std::vector<stage_layout> layout_of(const detail::shift_program& program) {
    const std::size_t count = program.stages.size() + 1;
    std::vector<stage_layout> s(count);
    std::vector<bool> seen(count, false);
    seen[count - 1] = true;
    for (std::size_t c = count - 1; c >= 1; --c)
        for (const auto& r : program.stages[c - 1].reads) {
            const auto j = static_cast<std::size_t>(r.stage);
            const stage_layout& k = s[c];
            const stage_layout wanted{k.lead + r.dy, k.low + r.dy, k.high + r.dy, k.left + r.dx, k.right + r.dx, 1};
            if (!seen[j]) {
                s[j] = wanted;
                seen[j] = true;
            }
            s[j].lead = std::max(s[j].lead, wanted.lead);
            s[j].low = std::min(s[j].low, wanted.low), s[j].high = std::max(s[j].high, wanted.high);
            s[j].left = std::min(s[j].left, wanted.left), s[j].right = std::max(s[j].right, wanted.right);
        }
    // Ring: from the oldest row a consumer reads at a step to the newest made, exactly (rounded
    // up to powers of two, line:255:30's rings took 1.1 MB instead of 0.82 against an L2 cache
    // of 512 KiB on Zen 3: 10.0-10.6 ms against 9.2-9.5 in a C++ driver).
    std::vector<std::int64_t> oldest(count, std::numeric_limits<std::int64_t>::max());
    for (std::size_t c = 1; c < count; ++c)
        for (const auto& r : program.stages[c - 1].reads)
            oldest[r.stage] = std::min(oldest[r.stage], s[c].lead + r.dy);
    for (std::size_t j = 0; j + 1 < count; ++j) s[j].ring = s[j].lead - oldest[j] + 1;
    return s;
}

}  // namespace

template <class T>
void run_shift_program(host_view<const T> in, host_view<T> out, const detail::shift_program& program,
                       border_mode mode, T pad, T clip_pad) {
    const std::vector<stage_layout> layout = layout_of(program);
    const bool past_cache = out.pixel_count() * static_cast<std::int64_t>(sizeof(T)) >= through_bytes_min;
    const std::size_t count = layout.size(), last = count - 1;
    const std::int64_t width = in.width(), height = in.height(), S = register_strip<T>;
    const auto round_up = [S](std::int64_t n) { return (n + S - 1) / S * S; };
    // Bands of whole rows while the rings fit the budget (narrower bands recompute the
    // stages' margins: line:255:30 took 7.0 ms in bands of 2048 bytes against 5.7 in one);
    // each band's rows split among the threads (parallel_rows).
    std::int64_t ring_rows = 0, margin = 0, depth = 0;
    for (std::size_t j = 0; j < last; ++j) {
        ring_rows += layout[j].ring;
        margin = std::max(margin, layout[j].right - layout[j].left);
        depth = std::max(depth, layout[j].high - layout[j].low);
    }
    const std::int64_t row_bytes = (width + margin + 2 * S) * static_cast<std::int64_t>(sizeof(T));
    std::int64_t bands = std::clamp<std::int64_t>(ring_rows * row_bytes / ring_budget, 1,
                                                  std::max<std::int64_t>(1, width / (4 * S)));
    const std::int64_t band_width = round_up((width + bands - 1) / bands);
    bands = (width + band_width - 1) / band_width;
    // Each part recomputes `depth` rows above it, at most half its own rows: at a quarter, as
    // before, a fused opening by line:255:30 (depth 256) of a 2048x2048 image ran as one part,
    // on one thread whatever the count.
    const std::int64_t part_rows_min = 2 * depth + 1;

    const auto run_part = [&](std::int64_t band, detail::row_part& part) {
        const std::int64_t x0 = band * band_width, x1 = std::min(width, x0 + band_width);
        const std::int64_t y0 = part.begin(), y1 = part.first_end();
        // Stage j's ring: layout[j].ring rows of stride[j] elements from rings + offset[j], each
        // from column x0 + left.
        std::vector<std::int64_t> stride(count), offset(count);
        std::int64_t total = 0;
        for (std::size_t j = 0; j < last; ++j) {
            stride[j] = round_up(x1 - x0 + layout[j].right - layout[j].left) + S;
            offset[j] = total;
            total += stride[j] * layout[j].ring;
        }
        thread_local std::unique_ptr<std::byte, aligned_delete> memory;
        thread_local std::size_t memory_bytes = 0;
        const std::size_t need = static_cast<std::size_t>(total + S) * sizeof(T) + 2 * page_bytes;  // a page start, an offset
        if (memory_bytes < need) {
            memory.reset(static_cast<std::byte*>(::operator new(need, std::align_val_t{64})));
            memory_bytes = need;
            std::memset(memory.get(), 0, need);  // lanes past a row's end are read, never used
        }
        // The source rows' columns [sx0, sx1) go to the source's ring, those of the image
        // [inside_begin, inside_end) copied (load_source).
        const std::int64_t sx0 = x0 + layout[0].left, sx1 = sx0 + stride[0];
        const std::int64_t inside_begin = std::clamp<std::int64_t>(0, sx0, sx1);
        const std::int64_t inside_end = std::clamp<std::int64_t>(width, inside_begin, sx1);
        const std::int64_t page_offset =
            rings_page_offset(in.row(0) + inside_begin, layout[0].ring, stride[0] * static_cast<std::int64_t>(sizeof(T)),
                              (inside_begin - sx0) * static_cast<std::int64_t>(sizeof(T)));
        const auto page_start = (reinterpret_cast<std::uintptr_t>(memory.get()) + page_bytes - 1) / page_bytes * page_bytes;
        T* const rings = reinterpret_cast<T*>(page_start + static_cast<std::uintptr_t>(page_offset));
        T* const tail = rings + total;  // the last strip of a result row, past its end
        // Every ring row a step touches, as a cursor moved a row down its ring after each step:
        // stage c's cursors are [first[c], first[c + 1]), the row it makes (c < last) then its
        // reads. The step then does no ring arithmetic per read (a chain of dependent loads of
        // tables that every step's rows evict from L1: 9% of line:255:30's samples in perf).
        std::vector<T*> cursor, last_row;             // a cursor at its ring's last row goes back to the first
        std::vector<std::int64_t> step_of, back_of;   // a row's stride, from the last row to the first
        std::vector<std::size_t> first(count + 1, 0);
        const auto add_cursor = [&](std::size_t j, std::int64_t lag, std::int64_t column) {
            // At the first step stage j's newest row is the ring's first; lag < ring.
            const std::int64_t back = stride[j] * (layout[j].ring - 1);
            T* const begin = rings + offset[j] + column;
            cursor.push_back(begin + (lag == 0 ? 0 : layout[j].ring - lag) * stride[j]);
            last_row.push_back(begin + back);
            step_of.push_back(stride[j]);
            back_of.push_back(back);
        };
        for (std::size_t c = 0; c < count; ++c) {
            first[c] = cursor.size();
            if (c < last) add_cursor(c, 0, 0);
            if (c > 0)
                for (const auto& r : program.stages[c - 1].reads) {
                    const auto j = static_cast<std::size_t>(r.stage);
                    add_cursor(j, layout[j].lead - (layout[c].lead + r.dy), layout[c].left + r.dx - layout[j].left);
                }
        }
        first[count] = cursor.size();
        const bool padded = detail::pads_with_one_value(mode);
        // Columns from used_end on are read into lanes that no result keeps: pad, not the mode's
        // pixels (a strip or two past the row: computed by border_index, they cost square:3 in
        // mode reflect 3.8 ms against 1.4 in mode ignore, 4096x4096 uint8).
        const std::int64_t used_end = std::clamp<std::int64_t>(x1 + layout[0].right, inside_end, sx1);
        // The image column of each margin column [sx0, inside_begin) and [inside_end, used_end),
        // the same on every row: border_index per pixel of every row cost line:255:30 (margins
        // of 220 columns) 2.5 ms against 1.45 in mode ignore, 2048x2048 uint8, one thread.
        std::vector<std::int64_t> margin_source;
        if (!padded) {
            for (std::int64_t x = sx0; x < inside_begin; ++x) margin_source.push_back(detail::border_index(x, width, mode));
            for (std::int64_t x = inside_end; x < used_end; ++x) margin_source.push_back(detail::border_index(x, width, mode));
        }
        const std::int64_t left_margin = inside_begin - sx0;
        const auto load_source = [&](std::int64_t y) {
            T* row = cursor[0];
            const std::int64_t ys = detail::border_index(y, height, mode);
            if (ys < 0) {
                std::fill_n(row, stride[0], pad);
                return;
            }
            const T* src = in.row(ys);
            if (padded) {
                std::fill_n(row, inside_begin - sx0, pad);
                std::fill_n(row + (inside_end - sx0), sx1 - inside_end, pad);
            } else {
                const std::int64_t* from = margin_source.data();
                for (std::int64_t i = 0; i < left_margin; ++i) row[i] = src[from[i]];
                from += left_margin;
                T* const right = row + (inside_end - sx0);
                for (std::int64_t i = 0; i < used_end - inside_end; ++i) right[i] = src[from[i]];
                std::fill_n(row + (used_end - sx0), sx1 - used_end, pad);
            }
            std::memcpy(row + (inside_begin - sx0), src + inside_begin, (inside_end - inside_begin) * sizeof(T));
        };
        std::vector<const T*> shifted;
        // The source rows come from memory a row a step, between steps that work in the cache:
        // each is prefetched a few steps ahead, along the loop of the stage with the most reads
        // (spread over its work; a loop of prefetches at the copy stalled on the memory
        // requests in flight: bench_cpu_morphology line:255:30 9.5-10.7 ms against 8.7-9.4).
        const auto reads_of = [&](std::size_t c) { return program.stages[c - 1].reads.size(); };
        std::size_t fetch_stage = 1;
        for (std::size_t c = 2; c < count; ++c)
            if (reads_of(c) > reads_of(fetch_stage)) fetch_stage = c;
        // What each stage does at a step, in one small table, so that the step loads no chains
        // of values (with the cursors alone, the step's code still had 14% of line:255:30's
        // samples in perf, waiting on the layout's and the program's fields; 4% with the table).
        using combine_fn = void (*)(T*, const T* const*, std::size_t, std::int64_t, const T*, std::int64_t);
        struct stage_step {
            std::int64_t begin, end, lead, n;  // it makes row t + lead, n elements, at steps [begin, end)
            T* const* cursors;                 // its row's cursor (not the last stage), then its reads'
            std::size_t reads;
            combine_fn combine;
            bool clip;
        };
        std::vector<stage_step> steps(count);
        for (std::size_t c = 0; c < count; ++c) {
            const stage_layout& k = layout[c];
            steps[c] = {y0 + k.low - k.lead, y1 + k.high - k.lead, k.lead, round_up(x1 - x0 + k.right - k.left),
                        cursor.data() + first[c], c > 0 ? reads_of(c) : 0, nullptr, false};
            if (c > 0) {
                const detail::shift_stage& stage = program.stages[c - 1];
                steps[c].combine = combine_of<T>(stage);
                steps[c].clip = stage.clip_to_image;
            }
        }
        const combine_fn combine_through = combine_of<T, true>(program.stages.back());
        std::int64_t t0 = y0;
        for (const auto& s : steps) t0 = std::min(t0, s.begin);
        const stage_step& result_step = steps[last];
        for (std::int64_t t = t0; t < y1; ++t) {
            // The result row of this step must still be this part's (another thread may have
            // taken the part's second half), asked before the step's stages, which make rows for
            // it and the rows after it.
            if (t >= result_step.begin && !part.owns(t + result_step.lead)) break;
            const T* fetch = nullptr;  // the source row prefetched at this step, fetch_n elements
            if (const std::int64_t ahead = t + layout[0].lead + source_prefetch_rows; ahead >= 0 && ahead < height)
                fetch = in.row(ahead) + inside_begin;
            const std::int64_t fetch_n = fetch ? inside_end - inside_begin : 0;
            for (std::size_t c = 0; c < count; ++c) {
                const stage_step& k = steps[c];
                if (t < k.begin || t >= k.end) continue;
                const std::int64_t y = t + k.lead;
                if (c == 0) {
                    load_source(y);
                    continue;
                }
                const combine_fn combine = k.combine;
                const std::size_t reads = k.reads;
                const T* const prefetch = c == fetch_stage ? fetch : nullptr;
                const std::int64_t prefetch_n = c == fetch_stage ? fetch_n : 0;
                if (c < last) {
                    T* const row = k.cursors[0];
                    T* const* const sources = k.cursors + 1;
                    const std::int64_t n = k.n;
                    combine(row, sources, reads, n, prefetch, prefetch_n);
                    if (k.clip) {
                        const std::int64_t left = x0 + layout[c].left;
                        const std::int64_t a = std::clamp<std::int64_t>(-left, 0, n);
                        const std::int64_t b = y < 0 || y >= height ? a : std::clamp(width - left, a, n);
                        std::fill_n(row, a, clip_pad);
                        std::fill_n(row + b, n - b, clip_pad);
                    }
                    continue;
                }
                T* const* const sources = k.cursors;
                T* const dst = out.row(y) + x0;
                const std::int64_t full = (x1 - x0) / S * S;
                // Large results past the cache from the first 64-byte boundary (numpy's large
                // arrays start 16 bytes past one); the elements before it and after the last
                // whole strip through the tail buffer, its whole lines past the cache too
                // (store_row), so that no cache line is written both ways. Stored by plain stores,
                // the tail's lines were read from memory first: 4096x4096 uint8 opening by
                // line:101:30, one thread, input and output 16 bytes into a line 9.1-9.5 ms, 8.7-9.2
                // streamed (8.4-8.8 both on a line).
                const std::int64_t aligned = elements_to_line(dst);
                if (past_cache && reinterpret_cast<std::uintptr_t>(dst) % sizeof(T) == 0 && full >= 2 * S) {
                    const std::int64_t through = (full - aligned) / S * S;
                    if (aligned > 0) {
                        combine(tail, sources, reads, S, nullptr, 0);
                        std::memcpy(dst, tail, aligned * sizeof(T));
                    }
                    shifted.assign(sources, sources + reads);
                    for (auto& p : shifted) p += aligned;
                    combine_through(dst + aligned, shifted.data(), shifted.size(), through, prefetch, prefetch_n);
                    if (aligned + through < full) {
                        for (auto& p : shifted) p += through;
                        combine(tail, shifted.data(), shifted.size(), S, nullptr, 0);
                        store_row(dst + aligned + through, tail, full - aligned - through);
                    }
                } else {
                    combine(dst, sources, reads, full, prefetch, prefetch_n);
                }
                if (full < x1 - x0) {
                    shifted.assign(sources, sources + reads);
                    for (auto& p : shifted) p += full;
                    combine(tail, shifted.data(), reads, S, nullptr, 0);
                    if (past_cache)
                        store_row(dst + full, tail, x1 - x0 - full);
                    else
                        std::memcpy(dst + full, tail, (x1 - x0 - full) * sizeof(T));
                }
            }
            for (std::size_t i = 0; i < cursor.size(); ++i)
                cursor[i] = cursor[i] == last_row[i] ? cursor[i] - back_of[i] : cursor[i] + step_of[i];
        }
        stream_fence();  // the stores past the cache are visible before the part ends
    };
    for (std::int64_t band = 0; band < bands; ++band)
        detail::parallel_rows(height, part_rows_min, in.pixel_count() * static_cast<std::int64_t>(count) / bands,
                              [&](detail::row_part& part) { run_part(band, part); });
}

#define GRANULA_INSTANTIATE(type, name)                                                                       \
    template void run_shift_program<type>(host_view<const type>, host_view<type>, const detail::shift_program&, \
                                          border_mode, type, type);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::GRANULA_SIMD_NAMESPACE
