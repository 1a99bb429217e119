// CPU kernels for 1-D min/max windows along rows and columns: van Herk/Gil-Werman for long
// windows (3 comparisons per pixel whatever the length), direct comparisons for short ones
// (along the rows by doubling, ceil(log2 L) comparisons).
//
// Both directions run the same lane-parallel kernel, window_rows(), over "rows of lanes":
//  - vertical: the rows are image rows (a band of columns at a time), so each comparison is a
//    contiguous vector operation across columns;
//  - horizontal: a strip of K image rows is transposed into a buffer whose rows hold one
//    column of the strip (K lanes), filtered as above, and transposed back, so the recursion
//    of van Herk/Gil-Werman runs across K rows at once instead of along one row.
// This file is compiled once per instruction set; GRANULA_SIMD_SCALAR marks the copy built
// with vectorisation off, which uses scalar transposes too.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/border_index.hpp"
#include "core/cpu_lane_window.hpp"
#include "core/cpu_streaming_stores.hpp"
#include "core/parallel.hpp"
#include "core/recent_results.hpp"
#include "morphology/cpu/morphology_kernels.hpp"
#include "morphology/run_growth.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

using detail::line_pass;

// Vertical and sheared windows up to this length are computed directly (L - 1 comparisons beat
// vHGW's 3 plus its buffer traffic); measured with bench/cpu_morphology.
constexpr std::int64_t direct_window_max = 5;
// Horizontal windows up to this length run along the rows by doubling (ceil(log2 L) passes over
// a row in L1) instead of through transposed strips. AVX2 (Zen 3), 4096x4096, one thread, A/B:
// uint8 L = 7 / 15 4.1-4.6 / 5.0-5.6 ms against 6.2-6.4 / 6.3-7.1 transposed, float32 L = 15
// 14.1-15.7 against 17.2-20.7; even at 31, slower from 63 (docs/benchmarks.md).
constexpr std::int64_t horizontal_direct_max = 15;

// Scratch memory of the calling thread, kept between calls. The strip and band buffers are a
// few hundred KiB, above malloc's mmap threshold: fresh ones were mapped, faulted in and
// unmapped on every call, and the unmapping stalled the other thread (2 threads ran no faster
// than 1). Each call site uses its own slot.
enum scratch_slot {
    slot_columns,
    slot_filtered,
    slot_suffix,
    slot_prefix,
    slot_pad_row,
    slot_shear_source_a,
    slot_shear_source_b,
    slot_shear_output,
    slot_runs,
    slot_grown,
    slot_grown_next,
    slot_pairs,
    slot_pair_first,
    slot_pair_second,
    slot_pair_pads,
    slot_pair_edge,
    slot_count
};

struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{64}); }
};

template <class T>
T* thread_scratch(scratch_slot slot, std::int64_t count) {
    struct block {
        std::unique_ptr<std::byte, aligned_delete> data;
        std::size_t bytes = 0;
    };
    thread_local block blocks[slot_count];
    block& b = blocks[slot];
    const std::size_t need = static_cast<std::size_t>(std::max<std::int64_t>(count, 1)) * sizeof(T);
    if (b.bytes < need) {
        b.data.reset(static_cast<std::byte*>(::operator new(need, std::align_val_t{64})));
        b.bytes = need;
    }
    return reinterpret_cast<T*>(b.data.get());
}

template <class T>
T source_value(const T* row, std::int64_t i, std::int64_t n, const line_pass<T>& pass) {
    const std::int64_t j = detail::border_index(i, n, pass.mode);
    return j < 0 ? pass.pad : row[j];
}

// ---- horizontal ---------------------------------------------------------------------------------

// Short windows: each row is copied with its padding into a buffer and filtered along itself
// by doubling (window_row_doubling).
// A load from the page offset of a store still in flight waits for it (4K aliasing), so the
// row buffers sit at chosen offsets in their pages: each doubling pass reads a buffer that lies
// ahead of the one it writes (work_a and work_b half a page apart, padded a quarter page ahead
// of work_a), and the last pass's buffer a quarter page ahead of the output row 0. Where the
// allocator put them, uint8 hline:15 openings in mode reflect (4096x4096, one thread) took 4.2,
// 8 or 15 ms from one process to the next, square:15 erosions 4.0 or 8.5.
template <class Op, class T>
void horizontal_direct(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, std::int64_t before,
                       std::int64_t L) {
    constexpr std::int64_t page = 4096;
    const std::int64_t n = in.width(), m = n + L - 1;
    const std::int64_t rows_per_task = std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(n, 1));
    const std::int64_t tasks = (in.height() + rows_per_task - 1) / rows_per_task;
    // The buffer the last pass reads: padded (no doubling pass), else work_a after an odd number
    // of passes, work_b after an even one (window_row_doubling).
    std::int64_t doublings = 0;
    for (std::int64_t p = 1; 2 * p <= L; p *= 2) ++doublings;
    const std::int64_t padded_at = page / 4, a_at = 0, b_at = page / 2;
    const std::int64_t last_at = doublings == 0 ? padded_at : doublings % 2 ? a_at : b_at;
    const auto out_at = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(out.row(0)) % page);
    const std::int64_t shift = ((out_at + page / 4 - last_at) % page + page) % page / 64 * 64;
    const std::int64_t span = (m * static_cast<std::int64_t>(sizeof(T)) + page - 1) / page * page + page;
    detail::parallel_for(tasks, in.pixel_count(), [&](std::int64_t task) {
        const auto block = reinterpret_cast<std::uintptr_t>(thread_scratch<std::byte>(slot_columns, 3 * span + 2 * page));
        const std::uintptr_t base = (block + page - 1) / page * page + static_cast<std::uintptr_t>(shift);
        const auto placed = [&](std::int64_t k, std::int64_t at) {
            return reinterpret_cast<T*>(base + static_cast<std::uintptr_t>(k * span + at));
        };
        T* const padded = placed(0, padded_at);
        T* const work_a = placed(1, a_at);
        T* const work_b = placed(2, b_at);
        const std::int64_t y_end = std::min(in.height(), (task + 1) * rows_per_task);
        for (std::int64_t y = task * rows_per_task; y < y_end; ++y) {
            const T* row = in.row(y);
            for (std::int64_t j = 0; j < before; ++j) padded[j] = source_value(row, j - before, n, pass);
            std::memcpy(padded + before, row, n * sizeof(T));
            for (std::int64_t j = before + n; j < m; ++j) padded[j] = source_value(row, j - before, n, pass);
            window_row_doubling<Op, T>(padded, out.row(y), work_a, work_b, n, L);
        }
    });
}

// Float keys: an int32 whose signed order is the float order (with -0 < +0), NaN mapped below
// every number for erosion and above for dilation, so that NaN propagates through integer
// min/max. The running min/max of the transposed strip then has integer latency (1 cycle)
// instead of the 4-instruction NaN-aware float chain; measured 2x faster.
inline std::int32_t float_key(float f, bool nan_low) {
    std::int32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::int32_t key = bits ^ ((bits >> 31) & 0x7fffffff);
    return f != f ? (nan_low ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int32_t>::max())
                  : key;
}
inline float key_float(std::int32_t key) {
    const std::int32_t bits = key ^ ((key >> 31) & 0x7fffffff);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Converts a float buffer to keys in place (and back); memcpy keeps the type punning defined.
inline std::int32_t* floats_to_keys(float* data, std::int64_t count, bool nan_low) {
    auto* bytes = reinterpret_cast<unsigned char*>(data);
    for (std::int64_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, bytes + 4 * i, 4);
        const std::int32_t k = float_key(f, nan_low);
        std::memcpy(bytes + 4 * i, &k, 4);
    }
    return reinterpret_cast<std::int32_t*>(data);
}
inline void keys_to_floats(float* data, std::int64_t count) {
    auto* bytes = reinterpret_cast<unsigned char*>(data);
    for (std::int64_t i = 0; i < count; ++i) {
        std::int32_t k;
        std::memcpy(&k, bytes + 4 * i, 4);
        const float f = key_float(k);
        std::memcpy(bytes + 4 * i, &f, 4);
    }
}

template <class Op>
struct key_op;
template <class T>
struct key_op<min_op<T>> {
    using type = min_op<std::int32_t>;
};
template <class T>
struct key_op<max_op<T>> {
    using type = max_op<std::int32_t>;
};

// The window pass over a transposed strip: columns (n + L - 1 rows of K lanes) -> filtered.
template <class Op, std::int64_t K, class T>
void filter_columns(T* columns, T* filtered, std::int64_t n, std::int64_t L, T* suffix, T* prefix) {
    const auto row = [](auto* base) { return [base](std::int64_t i) { return base + i * K; }; };
    if constexpr (std::is_same_v<T, float>) {
        constexpr bool nan_low = std::is_same_v<Op, min_op<float>>;
        std::int32_t* keys = floats_to_keys(columns, (n + L - 1) * K, nan_low);
        auto* filtered_keys = reinterpret_cast<std::int32_t*>(filtered);
        window_rows<typename key_op<Op>::type, K, std::int32_t>(row(keys), row(filtered_keys), n, L, K,
                                                                reinterpret_cast<std::int32_t*>(suffix),
                                                                reinterpret_cast<std::int32_t*>(prefix));
        keys_to_floats(filtered, n * K);
    } else {
        window_rows<Op, K, T>(row(columns), row(filtered), n, L, K, suffix, prefix);
    }
}

// How far ahead along each row the transposed horizontal pass prefetches (128 and 256 bytes
// measured alike, 512 and 1024 slower).
constexpr std::int64_t row_prefetch_bytes = 256;

// One pass of a horizontal chain, its window clipped to the row length n.
template <class T>
struct row_window {
    line_pass<T> pass;
    std::int64_t before = 0, L = 1;
};

template <class T>
row_window<T> clipped_window(const line_pass<T>& pass, std::int64_t n) {
    const std::int64_t before = detail::clip_arm(pass.before, n), after = detail::clip_arm(pass.after, n);
    return {pass, before, before + after + 1};
}

// Each strip of K rows is transposed into a buffer, every pass of `chain` runs on it in turn
// (a pass's result, padded by the next pass's border mode, is the next pass's input) and the
// strip is transposed back: an opening by a horizontal line reads and writes the image once.
template <class T>
void horizontal_transposed(host_view<const T> in, host_view<T> out, std::span<const row_window<T>> chain) {
    constexpr std::int64_t N = block_n<T>, G = group_columns<T>;
    // Lanes: rows of the strip processed together, 32 bytes: one AVX2 register per transposed
    // row (64 bytes measured 2x slower: GCC splits wider vectors through memory).
    constexpr std::int64_t K = 32 / sizeof(T);
    std::int64_t longest = 1;
    for (const auto& w : chain) longest = std::max(longest, w.L);
    const std::int64_t n = in.width(), m = n + longest - 1, height = in.height();
    const std::int64_t strips = (height + K - 1) / K;
    const std::int64_t tasks = std::min<std::int64_t>(strips, 4 * std::max(1, num_threads()));
    // Columns are transposed G at a time, in groups from the output's first whole line, one
    // from column 0 for the columns before it and one ending at the last column for those past
    // the last whole group; each of those two overlaps its neighbour, whose columns it gathers
    // and writes again with the same values. Groups cut from column 0 split a line in every
    // row of numpy's arrays (16 bytes into one): uint8 hline:101 opening of a 4096x4096 array,
    // 2 threads, 1.67 ms against 1.33 for an aligned one; its columns before the first line
    // and past the last group element by element instead of by overlapping groups: 2.3 ms.
    std::vector<std::int64_t> groups;
    if (n >= G) {
        const std::int64_t head = columns_before_line(out) % G;
        if (head > 0) groups.push_back(0);
        std::int64_t x = head;
        for (; x + G <= n; x += G) groups.push_back(x);
        if (x < n) groups.push_back(n - G);
    }
    detail::parallel_for(tasks, in.pixel_count(), [&](std::int64_t task) {
        T* columns = thread_scratch<T>(slot_columns, m * K);
        T* next = thread_scratch<T>(slot_filtered, m * K);
        T* const suffix = thread_scratch<T>(slot_suffix, longest * K);
        T* const prefix = thread_scratch<T>(slot_prefix, K);
        const std::int64_t before = chain.front().before;
        const line_pass<T>& first = chain.front().pass;
        const std::int64_t strip_begin = strips * task / tasks, strip_end = strips * (task + 1) / tasks;
        for (std::int64_t strip = strip_begin; strip < strip_end; ++strip) {
            const std::int64_t y0 = strip * K, rows = std::min(K, height - y0);
            const T* src_rows[K];
            T* dst_rows[K];
            for (std::int64_t k = 0; k < K; ++k) {
                src_rows[k] = in.row(y0 + std::min(k, rows - 1));  // lanes past the image repeat a row
                dst_rows[k] = out.row(y0 + std::min(k, rows - 1));
            }
            const bool grouped = rows == K && !groups.empty();
            if (grouped)
                for (const std::int64_t x : groups) {
                    // The hardware prefetchers keep up with the K row streams only when rows are
                    // a multiple of 4 KiB apart: without this, uint8 hline:29 took 4.4 ms at a
                    // row stride of 4160 bytes against 2.3 ms at 4096 (2.1 ms for both with it).
                    for (std::int64_t k = 0; k < K; ++k)
                        __builtin_prefetch(src_rows[k] + x + row_prefetch_bytes / sizeof(T));
                    for (std::int64_t h = 0; h < K; h += N)
                        gather_group<T>(src_rows + h, x, columns + (before + x) * K + h, K);
                }
            else
                for (std::int64_t c = 0; c < n; ++c)
                    for (std::int64_t k = 0; k < K; ++k) columns[(before + c) * K + k] = src_rows[k][c];
            // Padding columns, left and right of the image: copies of the transposed image
            // columns (gathered element by element from the rows, they cost uint8 hline:255
            // openings in mode reflect twice mode ignore's time).
            const auto pad_column = [&](std::int64_t j) {
                const std::int64_t c = detail::border_index(j - before, n, first.mode);
                if (c < 0)
                    std::fill_n(columns + j * K, K, first.pad);
                else
                    std::memcpy(columns + j * K, columns + (before + c) * K, K * sizeof(T));
            };
            for (std::int64_t j = 0; j < before; ++j) pad_column(j);
            for (std::int64_t j = before + n; j < n + chain.front().L - 1; ++j) pad_column(j);
            for (std::size_t i = 0; i < chain.size(); ++i) {
                const row_window<T>& w = chain[i];
                // The result goes where the next pass reads it, inside that pass's padding.
                const row_window<T>* then = i + 1 < chain.size() ? &chain[i + 1] : nullptr;
                T* const result = next + (then ? then->before : 0) * K;
                if (w.pass.maximum)
                    filter_columns<max_op<T>, K>(columns, result, n, w.L, suffix, prefix);
                else
                    filter_columns<min_op<T>, K>(columns, result, n, w.L, suffix, prefix);
                if (then) {
                    const auto pad_from_result = [&](std::int64_t j) {
                        const std::int64_t c = detail::border_index(j - then->before, n, then->pass.mode);
                        if (c < 0)
                            std::fill_n(next + j * K, K, then->pass.pad);
                        else
                            std::memcpy(next + j * K, result + c * K, K * sizeof(T));
                    };
                    for (std::int64_t j = 0; j < then->before; ++j) pad_from_result(j);
                    for (std::int64_t j = then->before + n; j < n + then->L - 1; ++j) pad_from_result(j);
                }
                std::swap(columns, next);
            }
            const T* const filtered = columns;
            if (grouped)
                for (const std::int64_t x : groups)
                    for (std::int64_t h = 0; h < K; h += N)
                        scatter_group<T>(filtered + x * K + h, K, dst_rows + h, x);
            else
                for (std::int64_t c = 0; c < n; ++c)
                    for (std::int64_t k = 0; k < rows; ++k) dst_rows[k][c] = filtered[c * K + k];
        }
    });
}

// ---- vertical -----------------------------------------------------------------------------------
// The rows a vertical pass reads, extended by its border: padded row i is image row
// border_index(i - first) or a row of padding values (this thread's scratch, alive until its
// next use of slot_pad_row).
template <class T>
std::unique_ptr<const T*[]> padded_rows(host_view<const T> in, const line_pass<T>& pass, std::int64_t first,
                                        std::int64_t count) {
    std::unique_ptr<const T*[]> rows(new const T*[count]);
    T* const pad_row = thread_scratch<T>(slot_pad_row, in.width());
    std::fill_n(pad_row, in.width(), pass.pad);
    for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t r = detail::border_index(i - first, in.height(), pass.mode);
        rows[i] = r < 0 ? pad_row : in.row(r);
    }
    return rows;
}

// Where a strip's result rows go: columns [c0, c1) of `out`, computed over the strip's lanes
// from x0. The strips at either end of a row, narrower, reach into their neighbour's columns
// (in is not out) and write only their own; whole strips on the output's cache lines stream
// their rows past the cache.
template <class T>
struct strip_writer {
    static constexpr std::int64_t S = strip_lanes<T>;
    host_view<T> out;
    std::int64_t c0, c1, x0;
    bool streamed;

    strip_writer(host_view<T> out_, std::int64_t c0_, std::int64_t c1_)
        : out(out_), c0(c0_), c1(c1_), x0(std::min(c0_, out_.width() - S)),
          streamed(c1_ - c0_ == S && reinterpret_cast<std::uintptr_t>(out_.row(0) + c0_) % 64 == 0 &&
                   (out_.stride() * static_cast<std::int64_t>(sizeof(T))) % 64 == 0) {}

    [[gnu::always_inline]] void store(std::int64_t y, const strip_row<T>& row) const {
        T* const dst = out.row(y) + c0;
        if (streamed) {
            for (std::int64_t k = 0; k < strip_row<T>::count; ++k)
                store_through(dst + k * strip_row<T>::lanes, row.v[k]);
        } else {
            T values[S];
            row.store(values);
            std::memcpy(dst, values + (c0 - x0), static_cast<std::size_t>(c1 - c0) * sizeof(T));
        }
    }
};

// Where the rows of both images are contiguous and out's start inside a cache line (numpy's large
// arrays start 16 bytes into one), line_aligned_chunks' first and last chunks are short: a row's
// head and tail columns. As strips of their own, each would compute a whole strip and store its
// rows' lines in parts, each part reading its line from memory first. Instead one strip, the
// seam, takes each row's tail and the next row's head as one run of memory: seam row r is row
// r's last `tail` columns, then row r + 1's first `head`, for r from -1 to n - 1, and its results
// are whole lines, stored past the cache. The two halves of a seam row meet the border at
// different rows, so seam rows with a half off the image are assembled half by half. 4096x4096
// uint8, line(101, 90), rows 16 or 48 bytes into a line, against the two short strips
// (docs/benchmarks.md, stop 64), two threads: opening 1.38-1.64 -> 1.17-1.40 ms, erosion
// 1.15-1.31 -> 0.94-1.06 (one thread: 0-5% faster).
struct row_seam {
    std::int64_t head = 0, tail = 0;  // the first and the last chunk's columns; head 0: no seam
};
template <class T>
row_seam find_seam(host_view<const T> in, host_view<T> out, const std::vector<std::int64_t>& cuts) {
    constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
    const std::int64_t width = out.width(), chunks = static_cast<std::int64_t>(cuts.size()) - 1;
    const std::int64_t head = cuts[1] - cuts[0], tail = width - cuts[static_cast<std::size_t>(chunks - 1)];
    const bool on = chunks >= 2 && head < line && head + tail <= strip_lanes<T> && in.stride() == width &&
                    out.stride() == width && in.height() == out.height() && columns_before_line(out) == head;
    return on ? row_seam{head, tail} : row_seam{};
}

// Seam row r by halves: lane l < tail from tail_lane(row, l), the others from head_lane(row,
// l - tail), given image rows r and r + 1 as the border maps them (-1: the pad).
template <class T, class TailLane, class HeadLane>
void assemble_seam_row(T* row, const row_seam& seam, std::int64_t r, std::int64_t n, border_mode mode, T pad,
                       TailLane&& tail_lane, HeadLane&& head_lane) {
    const std::int64_t rt = detail::border_index(r, n, mode), rh = detail::border_index(r + 1, n, mode);
    for (std::int64_t lane = 0; lane < strip_lanes<T>; ++lane)
        row[lane] = lane < seam.tail ? (rt < 0 ? pad : tail_lane(rt, lane))
                                     : (rh < 0 ? pad : head_lane(rh, lane - seam.tail));
}

// The seam's padded rows for a pass whose padded row i is image row i - before: seam row
// i - before - 1, `count` of them. The image's own memory where both of a seam row's rows are on
// the image; the others assembled here by halves.
template <class T>
struct seam_rows {
    std::vector<const T*> rows;
    std::vector<T> assembled;

    seam_rows(host_view<const T> in, const row_seam& seam, const line_pass<T>& pass, std::int64_t before,
              std::int64_t count)
        : rows(static_cast<std::size_t>(count)) {
        constexpr std::int64_t S = strip_lanes<T>;
        const std::int64_t n = in.height(), x0 = in.width() - seam.tail;
        const auto inside = [&](std::int64_t r) { return r >= 0 && r + 1 < n; };
        std::int64_t edges = 0;
        for (std::int64_t i = 0; i < count; ++i) edges += inside(i - before - 1) ? 0 : 1;
        assembled.resize(static_cast<std::size_t>(edges * S));
        T* row = assembled.data();
        for (std::int64_t i = 0; i < count; ++i) {
            const std::int64_t r = i - before - 1;
            if (inside(r)) {
                rows[static_cast<std::size_t>(i)] = in.row(r) + x0;
                continue;
            }
            assemble_seam_row(
                row, seam, r, n, pass.mode, pass.pad, [&](std::int64_t y, std::int64_t l) { return in.row(y)[x0 + l]; },
                [&](std::int64_t y, std::int64_t l) { return in.row(y)[l]; });
            rows[static_cast<std::size_t>(i)] = row;
            row += S;
        }
    }
};

// Seam row x - 1's results: whole lines past the cache, or at the image's first and last row
// the half on the image.
template <class T>
[[gnu::always_inline]] inline void store_seam_row(host_view<T> out, const row_seam& seam, std::int64_t x,
                                                  const strip_row<T>& row) {
    const std::int64_t r = x - 1, n = out.height(), x0 = out.width() - seam.tail;
    if (r >= 0 && r + 1 < n) {
        for (std::int64_t k = 0; k < (seam.head + seam.tail) / strip_row<T>::lanes; ++k)
            store_through(out.row(r) + x0 + k * strip_row<T>::lanes, row.v[k]);
        return;
    }
    T values[strip_lanes<T>];
    row.store(values);
    if (r >= 0) std::memcpy(out.row(r) + x0, values, static_cast<std::size_t>(seam.tail) * sizeof(T));
    if (r + 1 < n) std::memcpy(out.row(r + 1), values + seam.tail, static_cast<std::size_t>(seam.head) * sizeof(T));
}

// Runs `pass(in, out)` on copies one strip wide, for images narrower than a strip (the lanes
// past the width are zeros, and a vertical pass keeps lanes apart).
template <class T, class Pass>
void through_one_strip(host_view<const T> in, host_view<T> out, Pass&& pass) {
    constexpr std::int64_t S = strip_lanes<T>;
    const std::int64_t width = in.width();
    host_image<T> wide_in(S, in.height()), wide_out(S, out.height());
    for (std::int64_t y = 0; y < in.height(); ++y)
        std::fill_n(std::copy_n(in.row(y), width, wide_in.view().row(y)), S - width, T{});
    pass(host_view<const T>(wide_in.view()), wide_out.view());
    for (std::int64_t y = 0; y < out.height(); ++y) std::copy_n(wide_out.view().row(y), width, out.row(y));
}

// A pass's windows at result rows [lo, hi] of one strip (lanes from x0) of `rows`, each read
// once: store(k, window) takes result row lo + k.
template <class Op, class T, class Store>
void strip_windows(const T* const* rows, std::int64_t x0, std::int64_t lo, std::int64_t hi, std::int64_t L, T* held,
                   Store&& store) {
    streamed_window<Op, T> pass(held, L);
    strip_row<T> window;
    std::int64_t k = 0;
    for (std::int64_t i = lo; i < hi + L; ++i) {
        if (i + strip_prefetch_rows < hi + L) prefetch_lanes(rows[i + strip_prefetch_rows] + x0, strip_lanes<T>);
        if (pass.push(strip_row<T>::load(rows[i] + x0), window)) store(k++, window);
    }
}

// Output row j is the window at image row j - top (out may have more rows than in). Streamed:
// van Herk/Gil-Werman down strips of strip_bytes, each row read once, the window's buffer in
// the L1 cache and the rows stored past the cache (streamed_window, as the vertical pair's
// stages). Otherwise down bands of columns as wide as a block of L rows in the L2 cache allows,
// whose plain stores of long row pieces leave the result in the cache for a pass that reads it
// next. 4096x4096, one / two threads (docs/benchmarks.md, "2026-12-05 (stop 61)"): erosion by
// vline(255) in bands uint8 2.4-2.5 / 1.5-1.6 ms and float 22-24 / 8-10, streamed 1.8-1.9 /
// 0.9-1.0 and 11-14 / 4.5-5.4; square(15) uint8, the horizontal pass reading the vertical one's
// result, 2.9-3.1 / 2.0-2.1 with bands, 4.1 / 2.3 streamed.
template <class Op, class T>
void vertical(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, std::int64_t before,
              std::int64_t L, std::int64_t top, bool streamed) {
    constexpr std::int64_t S = strip_lanes<T>;
    const std::int64_t n = out.height(), width = in.width();
    if (streamed && L > direct_window_max && width < S) {
        through_one_strip(in, out, [&](host_view<const T> wide_in, host_view<T> wide_out) {
            vertical<Op, T>(wide_in, wide_out, pass, before, L, top, true);
        });
        return;
    }
    const std::unique_ptr<const T*[]> rows = padded_rows(in, pass, before + top, n + L - 1);
    if (L <= direct_window_max) {
        // Bands of rows, each a contiguous vector operation over the whole width.
        const std::int64_t band = std::max<std::int64_t>(1, n / (4 * std::max(1, num_threads())));
        detail::parallel_for((n + band - 1) / band, in.pixel_count(), [&](std::int64_t task) {
            const std::int64_t x0 = task * band, count = std::min(band, n - x0);
            window_rows_direct<Op, T>([&](std::int64_t i) { return rows[x0 + i]; },
                                      [&](std::int64_t x) { return out.row(x0 + x); }, count, L, width);
        });
        return;
    }
    if (streamed) {
        const std::vector<std::int64_t> cuts = line_aligned_chunks(out, S);
        const auto chunks = static_cast<std::int64_t>(cuts.size()) - 1;
        const row_seam seam = top == 0 ? find_seam(in, out, cuts) : row_seam{};
        // With a seam, task 0 runs it in place of the first and the last chunk.
        detail::parallel_for(seam.head > 0 ? chunks - 1 : chunks, in.pixel_count(), [&](std::int64_t task) {
            T* const held = thread_scratch<T>(slot_suffix, L * S);
            if (seam.head > 0 && task == 0) {
                const seam_rows<T> seam_in(in, seam, pass, before, n + L);
                strip_windows<Op>(seam_in.rows.data(), 0, 0, n, L, held,
                                  [&](std::int64_t x, const strip_row<T>& window) { store_seam_row(out, seam, x, window); });
            } else {
                const strip_writer<T> writer(out, cuts[static_cast<std::size_t>(task)],
                                             cuts[static_cast<std::size_t>(task) + 1]);
                strip_windows<Op>(rows.get(), writer.x0, 0, n - 1, L, held,
                                  [&](std::int64_t y, const strip_row<T>& window) { writer.store(y, window); });
            }
            stream_fence();
        });
        return;
    }
    // Bands of columns narrow enough that a block of L rows (512 KiB) stays in the L2 cache, and
    // at least one per thread (short windows would otherwise make the whole width one band).
    constexpr std::int64_t lane_align = 64 / sizeof(T);
    const std::int64_t per_thread = (width + std::max(1, num_threads()) - 1) / std::max(1, num_threads());
    std::int64_t w = std::min<std::int64_t>((std::int64_t{512} * 1024 / sizeof(T)) / L, per_thread);
    w = std::max(lane_align, w / lane_align * lane_align);
    w = std::min(w, width);
    const std::int64_t bands = (width + w - 1) / w;
    detail::parallel_for(bands, in.pixel_count(), [&](std::int64_t band) {
        const std::int64_t c0 = band * w, cw = std::min(w, width - c0);
        T* const suffix = thread_scratch<T>(slot_suffix, L * cw);
        T* const prefix = thread_scratch<T>(slot_prefix, cw);
        window_rows<Op, 0, T>([&](std::int64_t i) { return rows[i] + c0; }, [&](std::int64_t x) { return out.row(x) + c0; }, n,
                           L, cw, suffix, prefix);
    });
}

// ---- vertical pair ------------------------------------------------------------------------------
// Runs `fn` with the Op of a window's pass.
template <class T, class Fn>
void with_op(const row_window<T>& w, Fn&& fn) {
    if (w.pass.maximum)
        fn(max_op<T>{});
    else
        fn(min_op<T>{});
}

// Two vertical passes (an opening's or closing's stages), windows clipped to the height, down
// strips of strip_bytes: the first pass's rows go straight into the second, so the image is
// read once and written once and every other access stays in the L1 cache. The second pass's
// padding rows that repeat rows of the first's result (border modes other than ignore and
// constant) are computed apart, before a strip's stream.
template <class T>
void vertical_pair(host_view<const T> in, host_view<T> out, const row_window<T>& a, const row_window<T>& b) {
    constexpr std::int64_t S = strip_lanes<T>;
    const std::int64_t n = in.height(), width = in.width();
    if (width < S) {
        through_one_strip(in, out, [&](host_view<const T> wide_in, host_view<T> wide_out) {
            vertical_pair<T>(wide_in, wide_out, a, b);
        });
        return;
    }
    const std::unique_ptr<const T*[]> rows = padded_rows(in, a.pass, a.before, n + a.L - 1);
    // Strips start on the output's cache lines: numpy's rows start 16 bytes into one, and
    // strips cut from the row's start would share a line in every row and stream none of their
    // stores.
    const std::vector<std::int64_t> cuts = line_aligned_chunks(out, S);
    const auto chunks = static_cast<std::int64_t>(cuts.size()) - 1;
    const bool pads_constant = detail::pads_with_one_value(b.pass.mode);
    // The first pass's windows at its result rows [lo, hi] of a strip (padded rows strip_rows[i]
    // + x0), into `edge` (hi - lo + 1 strip rows): the results the second pass's border repeats.
    const auto first_pass_rows = [&](const T* const* strip_rows, std::int64_t x0, std::int64_t lo, std::int64_t hi,
                                     T* edge) {
        if (hi >= lo)
            with_op(a, [&]<class Op>(Op) {
                strip_windows<Op>(strip_rows, x0, lo, hi, a.L, thread_scratch<T>(slot_pair_first, a.L * S),
                                  [&](std::int64_t k, const strip_row<T>& window) { window.store(edge + k * S); });
            });
    };
    // Both passes down one strip: strip_rows[i] + x0 is padded row i (outputs + a.L - 1 of them);
    // pads holds the second pass's padding rows, b.before above the strip's results, then those
    // below; edge_lanes(k, row) may change the first pass's result row k before the second pass
    // takes it; store(x, row) takes result row x.
    const auto stream_strip = [&](const T* const* strip_rows, std::int64_t x0, std::int64_t outputs, const T* pads,
                                  auto&& edge_lanes, auto&& store) {
        T* const held_a = thread_scratch<T>(slot_pair_first, a.L * S);
        T* const held_b = thread_scratch<T>(slot_pair_second, b.L * S);
        with_op(a, [&]<class OpA>(OpA) {
            with_op(b, [&]<class OpB>(OpB) {
                streamed_window<OpA, T> first(held_a, a.L);
                streamed_window<OpB, T> second(held_b, b.L);
                strip_row<T> middle, result;
                std::int64_t x = 0, k = 0;
                const auto into_second = [&](const strip_row<T>& row) __attribute__((always_inline)) {
                    if (second.push(row, result)) store(x++, result);
                };
                for (std::int64_t j = 0; j < b.before; ++j) into_second(strip_row<T>::load(pads + j * S));
                for (std::int64_t i = 0; i < outputs + a.L - 1; ++i) {
                    if (i + strip_prefetch_rows < outputs + a.L - 1)
                        prefetch_lanes(strip_rows[i + strip_prefetch_rows] + x0, S);
                    if (first.push(strip_row<T>::load(strip_rows[i] + x0), middle)) {
                        edge_lanes(k++, middle);
                        into_second(middle);
                    }
                }
                for (std::int64_t j = b.before; j < b.L - 1; ++j) into_second(strip_row<T>::load(pads + j * S));
            });
        });
        stream_fence();
    };
    const row_seam seam = find_seam(in, out, cuts);
    const auto no_edge = [](std::int64_t, strip_row<T>&) __attribute__((always_inline)) {};
    // With a seam, task 0 runs it in place of the first and the last chunk.
    detail::parallel_for(seam.head > 0 ? chunks - 1 : chunks, 2 * in.pixel_count(), [&](std::int64_t task) {
        T* const pads = thread_scratch<T>(slot_pair_pads, std::max<std::int64_t>(b.L - 1, 1) * S);
        if (seam.head == 0 || task > 0) {
            const strip_writer<T> writer(out, cuts[static_cast<std::size_t>(task)],
                                         cuts[static_cast<std::size_t>(task) + 1]);
            // Padding row j: image row j - b.before above the image, n + j - b.before below it,
            // as the border maps them.
            const auto row_of = [&](std::int64_t j) {
                return detail::border_index(j < b.before ? j - b.before : n + j - b.before, n, b.pass.mode);
            };
            if (pads_constant) {
                std::fill_n(pads, (b.L - 1) * S, b.pass.pad);
            } else {
                // Above the image, then below it: each side's rows are near its own edge.
                for (const auto [j_begin, j_end] : {std::pair{std::int64_t{0}, b.before}, std::pair{b.before, b.L - 1}}) {
                    std::int64_t lo = n, hi = -1;  // the image rows whose first-pass results the side repeats
                    for (std::int64_t j = j_begin; j < j_end; ++j)
                        if (const std::int64_t r = row_of(j); r >= 0) lo = std::min(lo, r), hi = std::max(hi, r);
                    T* const edge = thread_scratch<T>(slot_pair_edge, std::max<std::int64_t>(hi - lo + 1, 1) * S);
                    first_pass_rows(rows.get(), writer.x0, lo, hi, edge);
                    for (std::int64_t j = j_begin; j < j_end; ++j) {
                        const std::int64_t r = row_of(j);
                        if (r < 0)
                            std::fill_n(pads + j * S, S, b.pass.pad);
                        else
                            std::memcpy(pads + j * S, edge + (r - lo) * S, S * sizeof(T));
                    }
                }
            }
            stream_strip(rows.get(), writer.x0, n, pads, no_edge,
                         [&](std::int64_t y, const strip_row<T>& row)
                             __attribute__((always_inline)) { writer.store(y, row); });
            return;
        }
        const seam_rows<T> seam_in(in, seam, a.pass, a.before, n + a.L);
        // The second pass reads seam rows -1 - b.before .. n - 1 + b.L - 1 - b.before; those with a
        // half off the image take, for that half, the first pass's result at the row the border
        // maps it to: image row y's tail lanes are seam row y's, its head lanes seam row y - 1's.
        // Seam row s's first-pass result is result s + 1 of the seam strip.
        const auto seam_row_of = [&](std::int64_t j) {  // padding row j's seam row
            return j < b.before ? j - b.before - 1 : n + j - b.before;
        };
        // Seam row -1's tail is image row -1, seam row n - 1's head image row n: the halves the
        // second pass reads of those two rows as its border gives them.
        T above_tail[S], below_head[S];
        // Above the image (padding rows j < b.before, and above_tail), then below it.
        for (const bool top : {true, false}) {
            const std::int64_t j_begin = top ? 0 : b.before, j_end = top ? b.before : b.L - 1;
            const std::int64_t edge_row = detail::border_index(top ? -1 : n, n, b.pass.mode);
            std::int64_t lo = n, hi = -1;  // seam rows whose first-pass results the side repeats
            const auto need = [&](std::int64_t seam_row) { lo = std::min(lo, seam_row), hi = std::max(hi, seam_row); };
            for (std::int64_t j = j_begin; j < j_end; ++j) {
                const std::int64_t u = seam_row_of(j);
                if (const std::int64_t rt = detail::border_index(u, n, b.pass.mode); rt >= 0) need(rt);
                if (const std::int64_t rh = detail::border_index(u + 1, n, b.pass.mode); rh >= 0) need(rh - 1);
            }
            if (edge_row >= 0) need(top ? edge_row : edge_row - 1);
            T* const edge = thread_scratch<T>(slot_pair_edge, std::max<std::int64_t>(hi - lo + 1, 1) * S);
            first_pass_rows(seam_in.rows.data(), 0, lo + 1, hi + 1, edge);
            const auto tail_lane = [&](std::int64_t y, std::int64_t l) { return edge[(y - lo) * S + l]; };
            const auto head_lane = [&](std::int64_t y, std::int64_t l) { return edge[(y - 1 - lo) * S + seam.tail + l]; };
            for (std::int64_t j = j_begin; j < j_end; ++j)
                assemble_seam_row(pads + j * S, seam, seam_row_of(j), n, b.pass.mode, b.pass.pad, tail_lane, head_lane);
            if (top)
                for (std::int64_t l = 0; l < seam.tail; ++l)
                    above_tail[l] = edge_row < 0 ? b.pass.pad : tail_lane(edge_row, l);
            else
                for (std::int64_t l = 0; l < S - seam.tail; ++l)
                    below_head[l] = edge_row < 0 ? b.pass.pad : head_lane(edge_row, l);
        }
        const auto edge_lanes = [&](std::int64_t k, strip_row<T>& row) __attribute__((always_inline)) {
            if (k != 0 && k != n) return;
            T values[S];
            row.store(values);
            if (k == 0) std::copy_n(above_tail, seam.tail, values);
            if (k == n) std::copy_n(below_head, S - seam.tail, values + seam.tail);
            row = strip_row<T>::load(values);
        };
        stream_strip(seam_in.rows.data(), 0, n + 1, pads, edge_lanes,
                     [&](std::int64_t x, const strip_row<T>& row)
                         __attribute__((always_inline)) { store_seam_row(out, seam, x, row); });
    });
}

// ---- sheared (periodic lines) -------------------------------------------------------------------
// The paths of step (dx, dy), dy >= 1, are the columns of a sheared image: for each row residue
// r < dy, virtual row i is image row r + i dy moved dx i columns to the left, so virtual column
// c at virtual row i is image pixel (c + i dx, r + i dy). The vertical kernel then runs down
// virtual columns. Bands of virtual columns visit only the virtual rows where some of their
// lanes fall inside the output; lanes outside read `pad` and are not written back. The output
// is the window of in's frame at `at`, out.width() x out.height().
template <class Op, class T>
void sheared(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, int dx, int dy,
             detail::pixel_shift at) {
    const std::int64_t width = in.width(), height = in.height();
    const std::int64_t ox0 = at.x, ox1 = at.x + out.width(), oy0 = at.y, oy1 = at.y + out.height();
    const std::int64_t max_rows = (height + dy - 1) / dy;
    const std::int64_t before = detail::clip_arm(pass.before, max_rows), after = detail::clip_arm(pass.after, max_rows);
    const std::int64_t L = before + after + 1;
    constexpr std::int64_t lane_align = 64 / sizeof(T);
    std::int64_t w = (std::int64_t{512} * 1024 / sizeof(T)) / L;
    w = std::max(lane_align, w / lane_align * lane_align);
    // Narrow bands: a band visits only the rows where its lanes meet the image (about
    // (width + band) / |dx| of them), and its rows are partly off the image, which costs a copy,
    // for about band / |dx| rows at each end.
    w = std::min(w, dx == 0 ? std::max<std::int64_t>(out.width(), lane_align) : 4 * lane_align);
    // Virtual columns that reach the output somewhere: c + i dx in [ox0, ox1) for some i.
    const std::int64_t drift = (max_rows - 1) * std::abs(dx);
    const std::int64_t c_begin = dx > 0 ? ox0 - drift : ox0, c_end = dx < 0 ? ox1 + drift : ox1;
    const std::int64_t bands = (c_end - c_begin + w - 1) / w;
    const auto ceil_div = [](std::int64_t a, std::int64_t b) { return -detail::floor_div(-a, b); };

    detail::parallel_for(dy * bands, in.pixel_count(), [&](std::int64_t task) {
        const std::int64_t residue = task / bands, c0 = c_begin + (task % bands) * w;
        const std::int64_t cw = std::min(w, c_end - c0);
        const std::int64_t rows = (height - residue + dy - 1) / dy;
        // Virtual rows in the output's rows where [c0 + i dx, c0 + cw - 1 + i dx] meets [ox0, ox1).
        std::int64_t i_lo = std::max<std::int64_t>(0, ceil_div(oy0 - residue, dy));
        std::int64_t i_hi = std::min(rows - 1, detail::floor_div(oy1 - 1 - residue, dy));
        if (dx > 0) {
            i_lo = std::max(i_lo, ceil_div(ox0 - (c0 + cw - 1), dx));
            i_hi = std::min(i_hi, detail::floor_div(ox1 - 1 - c0, dx));
        } else if (dx < 0) {
            i_lo = std::max(i_lo, ceil_div(c0 - (ox1 - 1), -dx));
            i_hi = std::min(i_hi, detail::floor_div(c0 + cw - 1 - ox0, -dx));
        }
        if (i_lo > i_hi) return;
        const std::int64_t n = i_hi - i_lo + 1;

        T* const pad_row = thread_scratch<T>(slot_pad_row, cw);
        std::fill_n(pad_row, cw, pass.pad);
        T* const partial[2] = {thread_scratch<T>(slot_shear_source_a, cw), thread_scratch<T>(slot_shear_source_b, cw)};
        int next_partial = 0;
        // Virtual row i of the band: a pointer into the image when all lanes are inside.
        const auto source = [&](std::int64_t j) -> const T* {
            const std::int64_t i = i_lo - before + j;
            if (i < 0 || i >= rows) return pad_row;
            const std::int64_t x0 = c0 + i * dx;
            const T* row = in.row(residue + i * dy);
            if (x0 >= 0 && x0 + cw <= width) return row + x0;
            T* buffer = partial[next_partial];
            next_partial ^= 1;  // the direct kernel holds two source rows at once
            const std::int64_t a = std::clamp<std::int64_t>(-x0, 0, cw), b = std::clamp(width - x0, a, cw);
            std::fill_n(buffer, a, pass.pad);
            if (a < b) std::memcpy(buffer + a, row + x0 + a, (b - a) * sizeof(T));
            std::fill_n(buffer + b, cw - b, pass.pad);
            return buffer;
        };
        // Output rows are requested in order, once each: a partial row is written back when the
        // next one is requested (and at the end).
        T* const partial_out = thread_scratch<T>(slot_shear_output, cw);
        std::int64_t pending = -1;
        const auto flush = [&] {
            if (pending < 0) return;
            const std::int64_t x0 = c0 + pending * dx - ox0;
            const std::int64_t a = std::max<std::int64_t>(0, -x0), b = std::min(cw, out.width() - x0);
            if (a < b)
                std::memcpy(out.row(residue + pending * dy - oy0) + x0 + a, partial_out + a, (b - a) * sizeof(T));
            pending = -1;
        };
        const auto destination = [&](std::int64_t j) -> T* {
            flush();
            const std::int64_t i = i_lo + j, x0 = c0 + i * dx - ox0;
            if (x0 >= 0 && x0 + cw <= out.width()) return out.row(residue + i * dy - oy0) + x0;
            pending = i;
            return partial_out;
        };
        if (L <= direct_window_max) {
            window_rows_direct<Op, T>(source, destination, n, L, cw);
        } else {
            T* const suffix = thread_scratch<T>(slot_suffix, L * cw);
            T* const prefix = thread_scratch<T>(slot_prefix, cw);
            window_rows<Op, 0, T>(source, destination, n, L, cw, suffix, prefix);
        }
        flush();
    });
}

template <class Op, class T>
void accumulate_rows(host_view<T> acc, host_view<const T> src, const std::vector<detail::pixel_shift>& shifts) {
    const std::int64_t width = acc.width(), height = acc.height();
    detail::parallel_for(height, acc.pixel_count() * static_cast<std::int64_t>(shifts.size()), [&](std::int64_t y) {
        T* __restrict a = acc.row(y);
        for (const auto& s : shifts) {
            const std::int64_t ys = y + s.y;
            if (ys < 0 || ys >= src.height()) continue;
            const std::int64_t x_begin = std::max<std::int64_t>(0, -s.x), x_end = std::min(width, src.width() - s.x);
            const T* __restrict b = src.row(ys) + s.x;
            for (std::int64_t x = x_begin; x < x_end; ++x) a[x] = Op::apply(a[x], b[x]);
        }
    });
}

// acc[r][x] = Op of acc[r][x] (unless `initialise`) and base[r * row_step + offsets[k] + x] over
// every k, x < w, for Rows output rows at once. A strip of four registers per row stays in
// registers across all the sources, so each source costs one load and one operation per vector
// instead of loading and storing acc again (count >= 1), and each offset read serves every row.
// The last, partial strip goes through a buffer: base must be readable register_strip<T>
// elements past every offsets[k] + w (+ the rows' steps).
template <class Op, std::int64_t Rows, class T>
void accumulate_offsets(T* const* acc, const T* __restrict base, std::int64_t row_step, const std::int64_t* offsets,
                        std::size_t count, std::int64_t w, bool initialise) {
    constexpr std::int64_t strip = register_strip<T>, lanes = strip / 4;
    using block = lane_block<T, lanes>;
    const auto load = [](const T* p) {
        block v;
        std::memcpy(&v, p, sizeof(block));
        return v;
    };
    const auto strip_at = [&](T* const* a, std::int64_t x) {
        block v[Rows][4];
        for (std::int64_t r = 0; r < Rows; ++r) {
            const T* p = initialise ? base + r * row_step + offsets[0] + x : a[r];
            for (std::int64_t j = 0; j < 4; ++j) v[r][j] = load(p + j * lanes);
        }
        for (std::size_t k = initialise ? 1 : 0; k < count; ++k) {
            const T* q = base + offsets[k] + x;
            for (std::int64_t r = 0; r < Rows; ++r)
                for (std::int64_t j = 0; j < 4; ++j)
                    v[r][j] = block_apply<Op>(v[r][j], load(q + r * row_step + j * lanes));
        }
        for (std::int64_t r = 0; r < Rows; ++r)
            for (std::int64_t j = 0; j < 4; ++j) std::memcpy(a[r] + j * lanes, &v[r][j], sizeof(block));
    };
    std::int64_t x = 0;
    for (; x + strip <= w; x += strip) {
        T* rows[Rows];
        for (std::int64_t r = 0; r < Rows; ++r) rows[r] = acc[r] + x;
        strip_at(rows, x);
    }
    if (x < w) {
        T tail[Rows][strip]{};
        T* rows[Rows];
        for (std::int64_t r = 0; r < Rows; ++r) {
            std::memcpy(tail[r], acc[r] + x, (w - x) * sizeof(T));
            rows[r] = tail[r];
        }
        strip_at(rows, x);
        for (std::int64_t r = 0; r < Rows; ++r) std::memcpy(acc[r] + x, tail[r], (w - x) * sizeof(T));
    }
}

// Shifts of one run length, split into pairs read from one pair image and the rest.
struct paired_shifts {
    struct pairs {
        detail::pixel_shift d;                   // the pair image is min(run(p), run(p + d))
        std::vector<detail::pixel_shift> starts;  // read at each start
    };
    std::vector<pairs> pair_images;
    std::vector<detail::pixel_shift> singles;
};

// A pair image (or a grown length) costs about as much as this many reads of it (one pass over
// the tile's buffer, which is larger than the tile), so it is built only for at least that many
// pairs. 16 rather than 8 (4096x4096 uint8 erosions, calls alternated in one process, AMD EPYC
// Zen 3 build VM): random:64 3% faster on one thread (769 reads and 18 passes -> 852 and 10),
// 7% on two; disk:31 0-6%, disk:10 2-3%, ellipse:41x21 9-13%; 4 and 6 were slower than 8.
constexpr std::size_t min_pairs = 16;

// The shifts not yet paired, one bit per shift of their bounding box, a row of 64-bit words per
// shift row with a zero word on each side, so that the window of a row moved by up to 64 bits
// either way is two word reads (pair_shifts counts every candidate offset by popcounts).
class shift_bits {
public:
    explicit shift_bits(const std::vector<detail::pixel_shift>& shifts) : x0_(shifts[0].x), y0_(shifts[0].y) {
        std::int64_t x1 = x0_, y1 = y0_;
        for (const auto& s : shifts)
            x0_ = std::min(x0_, s.x), x1 = std::max(x1, s.x), y0_ = std::min(y0_, s.y), y1 = std::max(y1, s.y);
        height_ = y1 - y0_ + 1;
        words_ = (x1 - x0_ + 64) / 64;
        bits_.assign(static_cast<std::size_t>(height_ * (words_ + 2)), 0);
        for (const auto& s : shifts) set(s, true);
    }
    bool test(detail::pixel_shift s) const {
        const std::int64_t x = s.x - x0_, y = s.y - y0_;
        if (x < 0 || y < 0 || x >= 64 * words_ || y >= height_) return false;
        return (row(y)[1 + x / 64] >> (x % 64)) & 1;
    }
    void set(detail::pixel_shift s, bool value) {
        const std::int64_t x = s.x - x0_;
        std::uint64_t& word = row(s.y - y0_)[1 + x / 64];
        const std::uint64_t bit = std::uint64_t{1} << (x % 64);
        word = value ? word | bit : word & ~bit;
    }
    // How many set shifts s have s + (dx, dy) set too (dy >= 0, |dx| <= 64).
    std::int64_t count_pairs(std::int64_t dx, std::int64_t dy) const {
        std::int64_t count = 0;
        for (std::int64_t y = 0; y + dy < height_; ++y)
            for (std::int64_t k = 0; k < words_; ++k)
                count += std::popcount(row(y)[1 + k] & window(row(y + dy), 64 * (1 + k) + dx));
        return count;
    }

private:
    const std::uint64_t* row(std::int64_t y) const { return bits_.data() + y * (words_ + 2); }
    std::uint64_t* row(std::int64_t y) { return bits_.data() + y * (words_ + 2); }
    // Bits [position, position + 64) of a padded row.
    static std::uint64_t window(const std::uint64_t* r, std::int64_t position) {
        const std::int64_t q = position / 64, b = position % 64;
        return b == 0 ? r[q] : (r[q] >> b) | (r[q + 1] << (64 - b));
    }
    std::int64_t x0_, y0_, height_ = 0, words_ = 0;
    std::vector<std::uint64_t> bits_;
};

// Greedily pairs shifts s and s + d, d taken from a small window, the most frequent d first
// (a random 64x64 mask: its ~500 single-pixel runs pair up at about 100 shifts of (2, 0), 30
// of (3, 0), ...). Overlapping runs may pair: min is idempotent, and both are in the element.
inline paired_shifts pair_shifts(const std::vector<detail::pixel_shift>& shifts) {
    paired_shifts result;
    if (shifts.size() < 2 * min_pairs) {
        result.singles = shifts;
        return result;
    }
    shift_bits left(shifts);  // shifts not yet paired
    std::vector<detail::pixel_shift> order = shifts;
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.y != b.y ? a.y < b.y : a.x < b.x; });
    constexpr std::int64_t reach = 8;
    std::vector<detail::pixel_shift> candidates;
    for (std::int64_t dy = 0; dy <= reach; ++dy)
        for (std::int64_t dx = dy == 0 ? 1 : -reach; dx <= reach; ++dx) candidates.push_back({dx, dy});
    // Pairing only clears shifts, so a candidate's last count bounds its count now: one whose
    // bound is no more than the best so far cannot win and is not counted again.
    std::vector<std::int64_t> bound(candidates.size(), std::numeric_limits<std::int64_t>::max());
    for (;;) {
        std::int64_t best = 0;
        detail::pixel_shift best_d{};
        for (std::size_t c = 0; c < candidates.size(); ++c) {
            if (bound[c] <= best) continue;
            bound[c] = left.count_pairs(candidates[c].x, candidates[c].y);
            if (bound[c] > best) best = bound[c], best_d = candidates[c];
        }
        if (best < static_cast<std::int64_t>(min_pairs)) break;
        paired_shifts::pairs p{best_d, {}};
        for (const auto& s : order) {
            const detail::pixel_shift t{s.x + best_d.x, s.y + best_d.y};
            if (left.test(s) && left.test(t)) left.set(s, false), left.set(t, false), p.starts.push_back(s);
        }
        if (p.starts.size() < min_pairs) {  // fewer left disjoint than counted: undo, stop
            for (const auto& s : p.starts) left.set(s, true), left.set({s.x + best_d.x, s.y + best_d.y}, true);
            break;
        }
        result.pair_images.push_back(std::move(p));
    }
    for (const auto& s : shifts)
        if (left.test(s)) result.singles.push_back(s);
    return result;
}

// The run lengths grown in the tile buffers, each from the one before in one pass (min of it at
// p and at p + (difference) steps, so at most doubling it), and where each is read: a run of
// length L is read from the longest grown length s <= L, at ceil(L / s) places that cover it
// (overlapping: min is idempotent). Chosen by dynamic programming over the lengths to minimise
// passes (min_pairs reads each) plus reads: a random 64x64 mask grows 1 to 5 and reads its
// longer runs two or more times (4 passes instead of 13); disk:31, most lengths twice, grows 1,
// 2, 4, 8, 16, 31 (5 passes instead of 60; growing 1 to 61 instead of a pass a length took its
// erosion of 4096x4096 uint8 from 38 to 18 ms on one thread).
struct grown_length {
    std::int64_t length = 1;
    std::vector<detail::pixel_shift> shifts;  // where reads of this length start
};

inline std::vector<grown_length> growth_plan(const std::vector<detail::shifted_runs>& runs, bool vertical) {
    const std::int64_t longest = runs.back().length;
    std::vector<std::int64_t> count(static_cast<std::size_t>(longest + 1), 0);
    for (const auto& r : runs) count[static_cast<std::size_t>(r.length)] += static_cast<std::int64_t>(r.shifts.size());
    // Each length grown costs a pass (min_pairs reads), at most doubling it.
    std::vector<grown_length> plan;
    for (const std::int64_t t : detail::cheapest_growth(count, 2, [](std::int64_t, std::int64_t) {
             return static_cast<std::int64_t>(min_pairs);
         }))
        plan.push_back(grown_length{t, {}});
    for (const auto& r : runs) {
        auto g = std::prev(std::upper_bound(plan.begin(), plan.end(), r.length,
                                            [](std::int64_t l, const grown_length& g) { return l < g.length; }));
        for (const auto& start : r.shifts)
            for (std::int64_t at = 0;; at += g->length) {
                const std::int64_t along = std::min(at, r.length - g->length);
                g->shifts.push_back(vertical ? detail::pixel_shift{start.x, start.y + along}
                                             : detail::pixel_shift{start.x + along, start.y});
                if (along == r.length - g->length) break;
            }
    }
    return plan;
}

// growth_plan's lengths and each one's pairs (pair_shifts) for a set of runs, kept for the last
// 16 sets planned: a random 64x64 mask's took 0.12 ms of its 0.23 ms erosion of an 8x8 image.
struct run_rows_plan {
    std::vector<grown_length> grown;
    std::vector<paired_shifts> paired;
};
inline run_rows_plan plan_run_rows(const std::vector<detail::shifted_runs>& runs, bool vertical) {
    static detail::recent_results<std::pair<std::vector<detail::shifted_runs>, bool>, run_rows_plan, 16> recent;
    return recent.get({runs, vertical}, [&] {
        run_rows_plan plan{growth_plan(runs, vertical), {}};
        for (const auto& g : plan.grown) plan.paired.push_back(pair_shifts(g.shifts));
        return plan;
    });
}

// Runs of increasing length, a tile of output pixels at a time. The tile's source pixels are
// copied into a buffer, with the pixels off `src` neutral, so that no read needs clipping, and
// at a row stride that is not a multiple of 4 KiB (in place, the 64 rows a mask reads for one
// output row fell into the same L1 sets). Each length growth_plan grows costs one pass over the
// buffer, one operation per pixel. The tile is narrow enough that the rows one output row reads
// of a buffer stay in the L1 cache while all shifts of one length are accumulated in registers
// (accumulate_offsets).
template <class Op, class T>
void accumulate_run_rows(host_view<T> acc, host_view<const T> src, const std::vector<detail::shifted_runs>& runs,
                         bool vertical, bool maximum, bool initialise) {
    const std::int64_t width = acc.width(), height = acc.height(), longest = runs.back().length;
    std::int64_t min_y = runs[0].shifts[0].y, max_y = min_y, min_x = runs[0].shifts[0].x, max_x = min_x, work = 0;
    for (const auto& r : runs) {
        work += static_cast<std::int64_t>(r.shifts.size());
        for (const auto& s : r.shifts)
            min_y = std::min(min_y, s.y), max_y = std::max(max_y, s.y), min_x = std::min(min_x, s.x),
            max_x = std::max(max_x, s.x);
    }
    const run_rows_plan plan = plan_run_rows(runs, vertical);
    const std::vector<grown_length>& grown_lengths = plan.grown;
    const std::vector<paired_shifts>& planned = plan.paired;
    const T neutral = detail::neutral_value<T>(maximum);
    constexpr std::int64_t tile_rows = 256, tile_columns = 256 / sizeof(T);
    const std::int64_t row_tiles = (height + tile_rows - 1) / tile_rows;
    const std::int64_t column_tiles = (width + tile_columns - 1) / tile_columns;
    detail::parallel_for(row_tiles * column_tiles, acc.pixel_count() * (work + longest), [&](std::int64_t tile) {
        const std::int64_t y0 = tile / column_tiles * tile_rows, y1 = std::min(height, y0 + tile_rows);
        const std::int64_t c0 = tile % column_tiles * tile_columns, c1 = std::min(width, c0 + tile_columns);
        // Buffer pixel (j, i) is source pixel (c0 + min_x + j, y0 + min_y + i); grown pixel (j, i)
        // the run starting there. Both have one stride, so a growth step is one loop over the
        // whole buffer (the columns past a row's runs compute values nobody reads).
        const std::int64_t rows = y1 - y0 + max_y - min_y;
        const std::int64_t raw_rows = rows + (vertical ? longest - 1 : 0);
        const std::int64_t stride = c1 - c0 + max_x - min_x + (vertical ? 0 : longest - 1);
        const std::int64_t step = vertical ? stride : 1, xs = c0 + min_x, ys = y0 + min_y;
        // Slack past the last row: the growth's reads one run along, accumulate_offsets' last strip.
        const std::int64_t slack = longest + register_strip<T>;
        T* const raw = thread_scratch<T>(slot_runs, raw_rows * stride + slack);
        for (std::int64_t i = 0; i < raw_rows; ++i) {
            T* r = raw + i * stride;
            if (ys + i < 0 || ys + i >= src.height()) {
                std::fill_n(r, stride, neutral);
                continue;
            }
            const std::int64_t a = std::clamp<std::int64_t>(-xs, 0, stride);
            const std::int64_t b = std::clamp(src.width() - xs, a, stride);
            std::fill_n(r, a, neutral);
            std::memcpy(r + a, src.row(ys + i) + xs + a, (b - a) * sizeof(T));
            std::fill_n(r + b, stride - b, neutral);
        }
        std::fill_n(raw + raw_rows * stride, slack, neutral);
        // Every buffer is as large as the raw one: the reads that cover a long run from a shorter
        // length start further along it than the runs do.
        const std::int64_t buffer = raw_rows * stride + slack;
        T* const grown_buffers[2] = {grown_lengths.size() > 1 ? thread_scratch<T>(slot_grown, buffer) : nullptr,
                                     grown_lengths.size() > 2 ? thread_scratch<T>(slot_grown_next, buffer) : nullptr};
        const T* grown = raw;
        T* const pair_image = thread_scratch<T>(slot_pairs, buffer);
        std::vector<std::int64_t> offsets;
        bool written = !initialise;
        // acc = Op of acc and base at each shift, two output rows at a time: each offset read
        // serves both (four rows spilled registers).
        const auto accumulate_shifts = [&](const T* base, const std::vector<detail::pixel_shift>& shifts) {
            if (shifts.empty()) return;
            offsets.clear();
            for (const auto& s : shifts) offsets.push_back((s.y - min_y) * stride + s.x - min_x);
            std::int64_t y = y0;
            for (; y + 2 <= y1; y += 2) {
                T* const rows2[2] = {acc.row(y) + c0, acc.row(y + 1) + c0};
                accumulate_offsets<Op, 2>(rows2, base + (y - y0) * stride, stride, offsets.data(), offsets.size(),
                                          c1 - c0, !written);
            }
            if (y < y1) {
                T* const row = acc.row(y) + c0;
                accumulate_offsets<Op, 1>(&row, base + (y - y0) * stride, stride, offsets.data(), offsets.size(),
                                          c1 - c0, !written);
            }
            written = true;
        };
        // A grown length is valid wherever the pixels it covers lie in the raw buffer.
        std::int64_t valid = buffer;
        for (std::size_t k = 0; k < grown_lengths.size(); ++k) {
            if (k > 0) {
                const std::int64_t along = (grown_lengths[k].length - grown_lengths[k - 1].length) * step;
                valid -= along;
                T* const target = grown_buffers[(k - 1) % 2];
                combine<Op, 0>(target, grown, grown + along, valid);
                grown = target;
            }
            accumulate_shifts(grown, planned[k].singles);
            for (const auto& p : planned[k].pair_images) {
                // Every pixel a pair's start reads has its partner inside the valid part (both are
                // reads of the element).
                const std::int64_t d = p.d.y * stride + p.d.x;
                combine<Op, 0>(pair_image, grown, grown + d, valid - d);
                accumulate_shifts(pair_image, p.starts);
            }
        }
    });
}

template <class T, template <class> class Op>
void run_horizontal_direct(host_view<const T> in, host_view<T> out, const row_window<T>& w) {
    horizontal_direct<Op<T>, T>(in, out, w.pass, w.before, w.L);
}

template <class T, template <class> class Op>
void run_vertical(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, std::int64_t top, bool streamed) {
    // Clipped to the output's rows too: a clipped window at a row off the image still covers them.
    const std::int64_t n = std::max(in.height(), out.height());
    const std::int64_t before = detail::clip_arm(pass.before, n), after = detail::clip_arm(pass.after, n);
    vertical<Op<T>, T>(in, out, pass, before, before + after + 1, top, streamed);
}

template <class T>
void vertical_one(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, std::int64_t top, bool streamed) {
    if (pass.maximum)
        run_vertical<T, max_op>(in, out, pass, top, streamed);
    else
        run_vertical<T, min_op>(in, out, pass, top, streamed);
}

}  // namespace

template <class T>
void horizontal_passes(host_view<const T> in, host_view<T> out, std::span<const line_pass<T>> passes) {
    std::vector<row_window<T>> chain;
    for (const auto& pass : passes) chain.push_back(clipped_window(pass, in.width()));
    // Short windows are faster straight along the rows than transposed, one pass at a time.
    const bool any_short = std::any_of(chain.begin(), chain.end(),
                                       [](const row_window<T>& w) { return w.L <= horizontal_direct_max; });
    if (!any_short) {
        horizontal_transposed<T>(in, out, chain);
        return;
    }
    host_view<const T> source = in;
    for (const auto& w : chain) {
        if (w.L > horizontal_direct_max)
            horizontal_transposed<T>(source, out, std::span<const row_window<T>>(&w, 1));
        else if (w.pass.maximum)
            run_horizontal_direct<T, max_op>(source, out, w);
        else
            run_horizontal_direct<T, min_op>(source, out, w);
        source = out;  // horizontal passes may run in place
    }
}

template <class T>
void vertical_passes(host_view<const T> in, host_view<T> out, std::span<const line_pass<T>> passes,
                     bool result_read_next) {
    if (passes.size() == 1)
        vertical_one<T>(in, out, passes.front(), 0, !result_read_next);
    else
        vertical_pair<T>(in, out, clipped_window(passes[0], in.height()), clipped_window(passes[1], in.height()));
}

template <class T>
void vertical_pass(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, std::int64_t top) {
    vertical_one<T>(in, out, pass, top, false);
}

template <class T>
void sheared_pass(host_view<const T> in, host_view<T> out, const line_pass<T>& pass, int dx, int dy,
                  detail::pixel_shift at) {
    if (pass.maximum)
        sheared<max_op<T>, T>(in, out, pass, dx, dy, at);
    else
        sheared<min_op<T>, T>(in, out, pass, dx, dy, at);
}

template <class T>
void accumulate_shifted(host_view<T> acc, host_view<const T> src, const std::vector<detail::pixel_shift>& shifts,
                        bool maximum) {
    if (maximum)
        accumulate_rows<max_op<T>, T>(acc, src, shifts);
    else
        accumulate_rows<min_op<T>, T>(acc, src, shifts);
}

template <class T>
void accumulate_runs(host_view<T> acc, host_view<const T> src, const std::vector<detail::shifted_runs>& runs,
                     bool vertical, bool maximum, bool initialise) {
    if (runs.empty()) return;
    if (maximum)
        accumulate_run_rows<max_op<T>, T>(acc, src, runs, vertical, maximum, initialise);
    else
        accumulate_run_rows<min_op<T>, T>(acc, src, runs, vertical, maximum, initialise);
}

#define GRANULA_INSTANTIATE(type, name)                                                                       \
    template void horizontal_passes<type>(host_view<const type>, host_view<type>,                            \
                                          std::span<const line_pass<type>>);                                 \
    template void vertical_passes<type>(host_view<const type>, host_view<type>,                              \
                                        std::span<const line_pass<type>>, bool);                             \
    template void vertical_pass<type>(host_view<const type>, host_view<type>, const line_pass<type>&,         \
                                      std::int64_t);                                                        \
    template void sheared_pass<type>(host_view<const type>, host_view<type>, const line_pass<type>&, int, int,  \
                                     detail::pixel_shift);                                                   \
    template void accumulate_shifted<type>(host_view<type>, host_view<const type>,                           \
                                           const std::vector<detail::pixel_shift>&, bool);                  \
    template void accumulate_runs<type>(host_view<type>, host_view<const type>,                              \
                                        const std::vector<detail::shifted_runs>&, bool, bool, bool);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::GRANULA_SIMD_NAMESPACE
