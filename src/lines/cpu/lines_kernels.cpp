// The vectorised CPU path of the linear filters (lines/cpu/lines_kernels.hpp).
//
// The oriented image has one pixel of every scan line per row: line c's pixel of row r is at
// column c + shift[r]. A block of `lanes` adjacent lines therefore reads a contiguous run of
// each row, starting at c0 + shift[r]: the block's samples form a band of rows x lanes in
// which each lane is one line, and the two stages are lane-parallel van Herk/Gil-Werman
// windows down the band: streamed row by row (filter_strip, as morphology's vertical pair)
// where the rows are read from the oriented image, in segments through buffers (filter_block)
// for flat lines read through the image's tiles. Samples off the
// image are the border's pad in the first stage and the second stage's outside value
// (neutral for ignore, cval for constant) in the second, which is exactly the two-stage
// operator along each line.
#include "lines/cpu/lines_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/cpu_lane_window.hpp"
#include "core/parallel.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

using detail::line_keys;

// Lines read from the oriented image (steep angles, and flat ones on the transposed image, which
// the reductions over angles use) go a strip of line_strip_bytes of keys at a time through both
// stages (filter_strip). Strips of 256 bytes against the blocks of 512 (64 for short lines) they
// replaced, bench_cpu_lines on the Intel Xeon build VM, two rounds, one / two threads: 4096x4096
// uint8 opening by line(101) at 60 degrees 5.3-5.5 -> 4.6-4.7 / 2.8-3.0 -> 2.4, at 120 degrees
// 5.8 -> 4.9-5.1 / 3.0-3.1 -> 2.7-2.9, 3000x2000 at 60 degrees 2.1 -> 1.6 / 1.1-1.2 -> 1.0; the
// 640x640 maps over 180 angles uint8 27-30 ms either way, uint16 65-68 -> 44-47, float 116-122
// -> 96; uint16 and float openings at 60 and 120 degrees within this VM's noise (uint16 10.7-12.1
// -> 11.4-13.5 ms, float 34-36 -> 31-41, one thread). Strips of 128 bytes (both buffers in the L1
// cache) were slower here: 6.3-7.4 ms at 60 degrees on one thread, their 128-byte rows off the
// lines stored by plain stores (whose lines are read first) where 256 bytes store two or three
// whole lines past the cache; 512 bytes as 256 on the openings, the maps 20% slower; 64 bytes
// the uint16 and float openings 2-3x slower. Flat lines through the image's tiles streamed so
// too were slower than their segments (filter_block; docs/benchmarks.md, stop 60).
constexpr std::int64_t line_strip_bytes = 256;

// Flat lines on the image (line_band_job::on_image) go through its tiles in blocks of
// tiled_wide_lanes, or of narrow_lanes where those count more than wide_speedup times the narrow
// lane-rows: narrow blocks (one vector register of keys) waste little on lines that leave the
// image part way; wide ones run each lane-row about twice as fast on long lines. Flat blocks of
// 512 bytes were no faster than 256 (30 and 150 degrees, one thread 23.3-24.9 -> 25.4-25.5 ms).
template <class K>
constexpr std::int64_t narrow_lanes = vector_bytes / sizeof(K);
template <class K>
constexpr std::int64_t tiled_wide_lanes = 256 / sizeof(K);
constexpr double wide_speedup = 1.25;

// Lanes per parallel task, at most: blocks (flat lines through the image's tiles) and strips.
// Strips of a task share their rows' cache lines (seam_lines), tasks do not. 2048 lanes against
// 1024 (uint8 openings by line(101), two threads, two rounds, docs/benchmarks.md stop 62): 4096x4096
// at 45 degrees 2.89-2.98 -> 2.67-2.68 ms, 3000x2000 at 60 and 120 1.07-1.15 -> 0.86-0.92, 4096x4096
// at 60 degrees 2.86-2.96 -> 3.04-3.13; the flat blocks' tasks kept 1024 (30 degrees 4.9-5.1 ->
// 5.3-5.4 with 2048).
constexpr std::int64_t lanes_per_task = 1024;
constexpr std::int64_t strip_lanes_per_task = 2048;

// A block streams down its band in segments of segment_rows(L, row bytes) rows (whole van Herk
// blocks of L rows), the erosion running a segment ahead of the dilation through buffers that
// stay in the L2 cache: the band never goes to memory, whatever the lines' length. Segments
// of 32 KiB of lanes, at least 128 rows: narrow blocks' lines (the many-angle maps) mostly
// take one segment, whose fixed costs 128-row segments paid several times.
inline std::int64_t segment_rows(std::int64_t L, std::int64_t row_bytes) {
    const std::int64_t rows = std::max<std::int64_t>(128, 32768 / row_bytes);
    return L * std::max<std::int64_t>(1, (rows + L - 1) / L);
}

// Flat lines read from and written to the image itself (line_band_job::on_image) go through
// tiles of group_columns<T> oriented rows (image columns) by the image rows their lanes cover:
// V lanes plus at most one more per oriented row, rounded up to whole groups.
template <class T>
constexpr std::int64_t tile_rows(std::int64_t lanes) {
    return (lanes + 2 * group_columns<T> - 1) / group_columns<T> * group_columns<T>;
}

// Input tiles load tile_batch at a time, their row groups interleaved. A tile's rows are one
// cache line each, an image row apart: with a row stride that is a multiple of 4 KiB they all
// fall in one set of the L1 cache, whose 12 ways (Zen 5) cannot take one gather's 16 rows in
// flight; the next tiles' lines are in the next sets. 4096x4096 uint8, line(101, 30), best of
// 90 runs alternated in one process: one tile at a time 6.64 ms (one thread) and 3.47 ms (two),
// four 6.11 and 3.30; the same image with a row stride of 4160 bytes 5.85 and 3.18 either way.
// Later, the machine quieter, best of 60: 5.41 -> 5.15 ms (one thread), 2.68 -> 2.66 (two).
// The gathers still take about a quarter of that opening, waiting on memory: 8 or 16 tiles a
// batch did not help (docs/benchmarks.md, stop 48).
// Each gather prefetches its tile's next row group. Prefetching the next batch's lines of the
// same rows instead put a whole tile's column of lines (320 rows) through one L1 set before any
// was read, where a 4 KiB row stride keeps only the last few: on the Intel build VM (one
// process, 4096x4096 uint8 openings by line(101), medians of 21, one / two threads) 30 degrees
// 13.5 -> 11.1 / 6.03 -> 5.36 ms, 150 degrees 11.9 -> 10.4 / 5.96 -> 5.29, 40 degrees 16.9 ->
// 12.0 / 6.91 -> 5.82, 10 degrees 9.5 -> 9.1 / 4.97 -> 4.82, and with a row stride of 4160
// bytes 9-14% faster as well; no prefetch at all was between the two (stop 58).
constexpr std::int64_t tile_batch = 4;

// The output goes through pieces of up to piece_columns<T> oriented rows (256 bytes of image
// columns), up to piece_rows<T>(lanes) image rows, so that each image row gets up to 256
// contiguous bytes at a time: one cache line per row per store costs about 3x the time per byte
// in memory (non-temporal stores measured alone, 4096x4096 uint8).
template <class T>
constexpr std::int64_t piece_columns = 4 * group_columns<T>;
template <class T>
constexpr std::int64_t piece_rows(std::int64_t lanes) {
    return lanes + piece_columns<T> + 2 * group_columns<T>;
}

template <class T>
struct band_scratch {
    using K = typename line_keys<T>::key;
    std::vector<K> source, second, result, suffix, prefix;
    // Flat lines on the image: the input tiles transposed (tile_batch of them) and the output
    // tile before its transpose, tile_rows<T>(lanes) x group_columns<T> each; the output piece
    // after it.
    std::vector<T> tile_in, tile_out, piece;
    // A piece's partial cache lines: `count` pixels from `from` to `to`.
    struct fragment {
        T* to;
        const T* from;
        std::int64_t count;
    };
    std::vector<fragment> fragments;  // sized once, filled by index: push_back was a call a fragment
    void reserve(std::int64_t length, std::int64_t lanes) {
        tile_in.resize(static_cast<std::size_t>(tile_batch * tile_rows<T>(lanes) * group_columns<T>));
        tile_out.resize(static_cast<std::size_t>(tile_rows<T>(lanes) * group_columns<T>));
        piece.resize(static_cast<std::size_t>(piece_rows<T>(lanes) * piece_columns<T>));
        fragments.resize(static_cast<std::size_t>(2 * piece_rows<T>(lanes)));  // two a piece row at most
        const std::int64_t S = segment_rows(length, lanes * static_cast<std::int64_t>(sizeof(K)));
        source.resize(static_cast<std::size_t>((S + length) * lanes));
        second.resize(static_cast<std::size_t>((2 * S + 2 * length) * lanes));
        result.resize(static_cast<std::size_t>(S * lanes));
        suffix.resize(static_cast<std::size_t>(length * lanes));
        prefix.resize(static_cast<std::size_t>(lanes));
    }
};

// V pixels to keys and back. Restrict and the order fixed outside the loop let them vectorise
// (with uint8 keys and pixels GCC otherwise keeps a scalar loop, for aliasing); so does
// number_key, which has no NaN test (float32 openings at 4096x4096, 60 degrees: to_key's NaN
// test kept the loop scalar, and the opening took ten times the uint8 one).
// V > 0: V values, known at compile time; V = 0: n values. Openings of unsigned pixels copy,
// by memcpy: GCC turns the plain loop into a call to memmove, even for 32 bytes.
// Float: NaN takes the lowest key, told by its bits lane by lane so that the select vectorises,
// and lift_nan raises it to the top between the stages: that is
// the NaN rule of lines/scan_line_filter.hpp in the two stages themselves, so lines with NaN
// need no other path (which cost a NaN-dense image 8x).
template <class T, std::int64_t V>
inline void to_keys(const T* __restrict in, typename line_keys<T>::key* __restrict out, bool closing,
                    std::int64_t n = V) {
    if constexpr (V > 0) n = V;
    if constexpr (std::is_same_v<T, typename line_keys<T>::key>)
        if (!closing) {
            std::memcpy(out, in, static_cast<std::size_t>(n) * sizeof(T));
            return;
        }
    const auto convert = [&]<bool Closing>(std::bool_constant<Closing>) {
        for (std::int64_t i = 0; i < n; ++i) {
            const auto key = line_keys<T>::number_key(in[i], Closing);
            if constexpr (std::is_floating_point_v<T>) {
                std::int32_t bits;
                std::memcpy(&bits, in + i, sizeof bits);
                // As arithmetic: with ?: GCC branched around number_key, lane by lane.
                const std::int32_t is_nan = (bits & 0x7fffffff) > 0x7f800000;
                out[i] = (key & (is_nan - 1)) | static_cast<std::int32_t>(static_cast<std::uint32_t>(is_nan) << 31);
            } else {
                out[i] = key;
            }
        }
    };
    closing ? convert(std::true_type{}) : convert(std::false_type{});
}
static_assert(line_keys<float>::nan_key == std::numeric_limits<std::int32_t>::min(),
              "to_keys builds NaN's key from the sign bit alone");
// Float first-stage results: NaN's key to the top, so that the second stage's max keeps it.
inline void lift_nan(std::int32_t* keys, std::int64_t n) {
    using traits = line_keys<float>;
    for (std::int64_t i = 0; i < n; ++i) keys[i] = keys[i] == traits::nan_key ? traits::top : keys[i];
}
template <class T, std::int64_t V>
inline void from_keys(const typename line_keys<T>::key* __restrict in, T* __restrict out, bool closing,
                      std::int64_t n = V) {
    if constexpr (V > 0) n = V;
    if constexpr (std::is_same_v<T, typename line_keys<T>::key>)
        if (!closing) {
            std::memcpy(out, in, static_cast<std::size_t>(n) * sizeof(T));
            return;
        }
    if (closing)
        for (std::int64_t i = 0; i < n; ++i) out[i] = line_keys<T>::from_key(in[i], true);
    else
        for (std::int64_t i = 0; i < n; ++i) out[i] = line_keys<T>::from_key(in[i], false);
}

// A wide block's whole row of results goes out past the cache (store_row): written once and not
// read back soon, its whole lines need not be read from memory first. 4096x4096 uint8, opening by
// line(101) at 45, 60 and 120 degrees, the two alternated 40 times in one process (AMD EPYC build
// VM), lower quartiles: two threads 3-7% faster (60 degrees 5.47 -> 5.29 ms), one 7% (8.73 -> 8.09).
constexpr std::int64_t wide_row_bytes = 256;

// The result rows of a task's adjacent strips meet inside a cache line: a strip's row, at its
// row's shift, starts and ends off the lines, and stored as they come, both parts of such a line
// are plain stores, each reading the line from memory first. Instead a strip holds its rows' last
// line of results here, and the next strip of the task (the lines to its right, whose rows start
// where the strip's end) stores every line its row touches whole, past the cache: the first one
// joins the held line's tail with its own row's head, each later one two neighbouring lines of
// its row. Tails no strip completes (rows the next one does not reach, or reaches with only some
// of its lanes, and the task's last strip) are stored as they are.
// Each line is joined in registers (two-table permutes) where the copy has them for the type:
// joined through memory, a line just written in two parts waits for both stores, and uint8's
// variable-length copies were calls to memmove. 4096x4096 openings by line(101), one / two
// threads (docs/benchmarks.md, stop 62; with strip_lanes_per_task), parts stored as they came
// (uint8) or joined through memory (uint16, float) -> joined in registers: uint8 45-120 degrees
// 6.2-13.8 -> 4.9-5.5 ms / 2.6-3.4 -> 2.5-2.75; uint16 60 and 120 degrees 11.9-12.5 -> 9.3-10.0
// / 5.6-6.3 -> 4.5-5.2; float 25.5-27.5 -> 22.5-24.3 / 14.1-14.7 -> 12.1-12.5. Joined through
// memory, uint16 and float are as fast as with stop 61's copies of the parts; uint8 is not, and
// without the permutes stores its parts.

// The narrowest element whose two lines this copy joins in registers (seam_lines), 0 for none:
// a two-table permute of bytes needs VBMI, of 16-bit words BW.
#if defined(__AVX512VBMI__) && !defined(GRANULA_SIMD_SCALAR)
constexpr std::size_t smallest_register_join = 1;
#elif defined(__AVX512BW__) && !defined(GRANULA_SIMD_SCALAR)
constexpr std::size_t smallest_register_join = 2;
#elif defined(__AVX512F__) && !defined(GRANULA_SIMD_SCALAR)
constexpr std::size_t smallest_register_join = 4;
#else
constexpr std::size_t smallest_register_join = 0;
#endif

template <class T>
class seam_lines {
public:
    static constexpr std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
    static constexpr bool joins_in_registers = smallest_register_join > 0 && sizeof(T) >= smallest_register_join;

    // At a task's start: tails left by a task that did not end (an exception) are dropped.
    void begin_task() {
        for (std::int64_t r = held_lo_; r < held_hi_; ++r) ends_[static_cast<std::size_t>(r)] = nullptr;
        held_lo_ = held_hi_ = 0;
    }
    // Before a strip over rows [r0, r1): the tails it cannot complete are stored.
    void begin_strip(std::int64_t rows, std::int64_t r0, std::int64_t r1) {
        if (static_cast<std::int64_t>(ends_.size()) < rows) {
            ends_.resize(static_cast<std::size_t>(rows), nullptr);
            held_.resize(static_cast<std::size_t>(rows));
        }
        for (std::int64_t r = held_lo_; r < held_hi_; ++r)
            if (r < r0 || r >= r1) store_tail(r);
        held_lo_ = std::max(held_lo_, r0);
        held_hi_ = std::min(held_hi_, r1);
        held_hi_ = std::max(held_hi_, held_lo_);
    }
    void end_task() {
        for (std::int64_t r = held_lo_; r < held_hi_; ++r) store_tail(r);
        held_lo_ = held_hi_ = 0;
    }
    // Row r's result, n elements (a multiple of a line) to dst.
    void store(std::int64_t r, T* dst, const T* src, std::int64_t n) {
        const auto address = reinterpret_cast<std::uintptr_t>(dst);
        const std::int64_t skew = static_cast<std::int64_t>(address % 64 / sizeof(T));  // dst's place in its line
        if (address % sizeof(T) != 0 || skew == 0 || n % line != 0) {
            store_tail(r);
            store_row(dst, src, n);
            return;
        }
        T* const first = dst - skew;  // the line the row starts in
        const T* const held = held_[static_cast<std::size_t>(r)].v;
        if (ends_[static_cast<std::size_t>(r)] == dst) {
            store_joined(first, held, src, skew);
        } else {
            store_tail(r);
            std::memcpy(dst, src, static_cast<std::size_t>(line - skew) * sizeof(T));
        }
        for (std::int64_t i = line; i < n; i += line) store_joined(first + i, src + i - line, src + i, skew);
        std::memcpy(held_[static_cast<std::size_t>(r)].v, src + n - line, sizeof(line_of));
        ends_[static_cast<std::size_t>(r)] = dst + n;
        if (held_lo_ == held_hi_) held_lo_ = r;
        held_lo_ = std::min(held_lo_, r);
        held_hi_ = std::max(held_hi_, r + 1);
    }
    // Row r's held tail, if any, as it is (before the row is written otherwise).
    void store_tail(std::int64_t r) {
        if (r >= static_cast<std::int64_t>(ends_.size())) return;
        T*& end = ends_[static_cast<std::size_t>(r)];
        if (!end) return;
        const std::int64_t skew = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(end) % 64 / sizeof(T));
        std::memcpy(end - skew, held_[static_cast<std::size_t>(r)].v + line - skew,
                    static_cast<std::size_t>(skew) * sizeof(T));
        end = nullptr;
    }

private:
    struct alignas(64) line_of {
        T v[line];
    };
    // The line at `to` (64-byte aligned): a's last `skew` elements, then b's first line - skew.
    static void store_joined(T* to, const T* a, const T* b, std::int64_t skew) {
#if defined(__AVX512F__) && !defined(GRANULA_SIMD_SCALAR)
        if constexpr (joins_in_registers) {
            using lane = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                            std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>>;
            static constexpr auto iota = [] {
                std::array<lane, line> index{};
                for (std::int64_t i = 0; i < line; ++i) index[static_cast<std::size_t>(i)] = static_cast<lane>(i);
                return index;
            }();
            // Index i picks a's element line - skew + i while that is in a, else b's i - skew.
            const __m512i lo = _mm512_loadu_si512(a), hi = _mm512_loadu_si512(b);
            const __m512i from = _mm512_loadu_si512(iota.data());
            __m512i joined;
            if constexpr (sizeof(T) == 1)
                joined = _mm512_permutex2var_epi8(lo, _mm512_add_epi8(from, _mm512_set1_epi8(char(line - skew))), hi);
            else if constexpr (sizeof(T) == 2)
                joined = _mm512_permutex2var_epi16(lo, _mm512_add_epi16(from, _mm512_set1_epi16(short(line - skew))), hi);
            else
                joined = _mm512_permutex2var_epi32(lo, _mm512_add_epi32(from, _mm512_set1_epi32(int(line - skew))), hi);
            store_through(to, joined);
            return;
        }
#endif
        line_of pair[2];
        std::memcpy(pair[0].v, a, sizeof(line_of));
        std::memcpy(pair[1].v, b, sizeof(line_of));
        store_line(to, pair[0].v + line - skew);
    }

    std::vector<T*> ends_;        // by oriented row: where the held row ended (null: nothing held)
    std::vector<line_of> held_;   // by oriented row: its last line of results
    std::int64_t held_lo_ = 0, held_hi_ = 0;  // rows that may hold a tail
};

template <class T, std::int64_t V>
inline void stream_out(const typename line_keys<T>::key* res, T* out, bool closing, seam_lines<T>* seam,
                       std::int64_t r) {
    const auto out_row = [&](const T* row) {
        if (seam)
            seam->store(r, out, row, V);
        else
            store_row(out, row, V);
    };
    if constexpr (std::is_same_v<T, typename line_keys<T>::key>)
        if (!closing) {
            out_row(res);
            return;
        }
    alignas(64) T row[V];
    from_keys<T, V>(res, row, closing);
    out_row(row);
}

// The outputs of lanes [lo, hi) of one band row (Lanes > 0: lo = 0, hi = Lanes, known at
// compile time so the loops vectorise).
// `seam`: where a strip's rows go (filter_strip), whole rows only.
template <class T, std::int64_t Lanes>
inline void scatter_lanes(const detail::line_band_job<T>& job, const typename line_keys<T>::key* res, std::int64_t r,
                          std::int64_t col, std::int64_t lo, std::int64_t hi,
                          typename detail::line_band_job<T>::sum_type& sum, seam_lines<T>* seam = nullptr) {
    using traits = line_keys<T>;
    if constexpr (Lanes > 0) lo = 0, hi = Lanes;
    const bool closing = job.closing;
    if (job.want_sum) {
        typename detail::line_band_job<T>::sum_type row_sum = 0;
        for (std::int64_t i = lo; i < hi; ++i) row_sum += traits::from_key(res[i], closing);
        sum += row_sum;
    }
    if (!job.filtered.empty()) {
        T* filtered = job.filtered.row(r) + col;
        if constexpr (Lanes * sizeof(T) >= wide_row_bytes)
            stream_out<T, Lanes>(res, filtered, closing, seam, r);
        else
            from_keys<T, Lanes>(res + lo, filtered + lo, closing, hi - lo);
    }
    if (job.best.empty()) return;
    using packed = detail::packed_best<T>;
    typename packed::word* best = job.best.row(r) + col;
    const std::uint32_t rank = job.angle_rank;
    // The order fixed outside the loops, so that they vectorise.
    const auto update = [&]<bool Reversed>(std::bool_constant<Reversed>) {
        if (job.first) {
            for (std::int64_t i = lo; i < hi; ++i)
                best[i] = packed::pack(traits::reduction_key(res[i], Reversed), rank);
            return;
        }
        for (std::int64_t i = lo; i < hi; ++i)
            best[i] = std::max(best[i], packed::pack(traits::reduction_key(res[i], Reversed), rank));
    };
    job.reduction_reversed ? update(std::true_type{}) : update(std::false_type{});
}

// Where a block of V adjacent lines from c0 lies: the rows [r0, r1) its lines span, and the lanes
// of each row that are inside the image and belong to the block's lines.
struct block_extent {
    const detail::scan_lines& lines;
    std::int64_t c0, V, c_last, r0, r1;
    block_extent(const detail::scan_lines& l, std::int64_t first, std::int64_t lanes)
        : lines(l), c0(first), V(lanes), c_last(std::min(first + lanes, l.end_line) - 1),
          r0(std::min(l.row_begin(first), l.row_begin(c_last))), r1(std::max(l.row_end(first), l.row_end(c_last))) {}
    // Lanes [lo, hi) of row r.
    void lanes_inside(std::int64_t r, std::int64_t& lo, std::int64_t& hi) const {
        const std::int64_t base = c0 + lines.shift[r];
        lo = std::clamp<std::int64_t>(-base, 0, V);
        hi = std::clamp<std::int64_t>(lines.columns - base, 0, V);
        if (c0 + hi - 1 > c_last) hi = std::max<std::int64_t>(lo, c_last - c0 + 1);
    }
};

// The second stage's value off the line: neutral for ignore (the lowest key), cval for constant.
template <class K>
K outside_value(const detail::line_extension<K>& extension) {
    return extension.mode == border_mode::constant ? extension.pad : std::numeric_limits<K>::lowest();
}

template <class T, std::int64_t V>
typename detail::line_band_job<T>::sum_type filter_block(const detail::line_band_job<T>& job, std::int64_t c0,
                                                         band_scratch<T>& s) {
    using traits = line_keys<T>;
    using K = typename traits::key;
    const detail::scan_lines& lines = *job.lines;
    const std::int64_t columns = lines.columns, L = job.extension.length;
    const std::int64_t before = job.extension.before, after = L - 1 - before;
    const bool closing = job.closing;
    const K pad = job.extension.pad, outside = outside_value(job.extension);
    const block_extent extent(lines, c0, V);
    const std::int64_t c_last = extent.c_last, r0 = extent.r0, r1 = extent.r1, n = r1 - r0;
    if (n <= 0) return 0;

    // Source row i (of n + L - 1) is row r0 + i - before of the band, `before` pad rows leading
    // it; second-stage row i is the eroded row i - after, outside values off the line and
    // `after` rows of them leading. Both live in buffers whose front slides along the band:
    // before a segment's rows are added, the rows still needed move to the front. The dilation
    // of a segment waits until its second-stage rows are all there.
    const std::int64_t S = segment_rows(L, V * static_cast<std::int64_t>(sizeof(K)));
    const std::int64_t source_rows = S + L, second_rows = 2 * S + 2 * L;
    K* source = s.source.data();
    K* second = s.second.data();
    K* result = s.result.data();
    // The windows run on one vector register of lanes (a chunk) at a time: GCC 12 moves wider
    // vectors (128 or 256 bytes) through the stack piece by piece. The buffers hold each
    // chunk's rows contiguously: row i's chunk c is at buffer + c * rows * H + (i - base) * H,
    // so that a window pass reads consecutive addresses.
    constexpr std::int64_t H = std::min<std::int64_t>(V, vector_bytes / sizeof(K));
    const std::int64_t source_chunks = source_rows * H, second_chunks = second_rows * H;
    std::int64_t source_base = 0, second_base = 0;
    const auto source_row = [&](std::int64_t i) { return source + (i - source_base) * H; };
    const auto second_row = [&](std::int64_t i) { return second + (i - second_base) * H; };
    const auto rows_from = [](K* first) { return [first](std::int64_t i) { return first + i * H; }; };
    // Moves rows [first, end) of a buffer to its front.
    const auto slide = [](K* buffer, std::int64_t chunks, std::int64_t& base, std::int64_t first, std::int64_t end) {
        if (first == base) return;
        for (std::int64_t c = 0; c < V / H; ++c)
            std::memmove(buffer + c * chunks, buffer + c * chunks + (first - base) * H,
                         static_cast<std::size_t>(end - first) * H * sizeof(K));
        base = first;
    };
    const auto fill_row = [](K* row, std::int64_t chunks, K value) {
        for (std::int64_t c = 0; c < V; c += H) std::fill_n(row + c / H * chunks, H, value);
    };
    const auto lane_range = [&](std::int64_t r, std::int64_t& lo, std::int64_t& hi) { extent.lanes_inside(r, lo, hi); };
    // Flat lines on the image: oriented rows [a, b) (image columns, b - a <= G) hold image rows
    // from y0 = c0 + the least shift on, stored transposed, tile_in[(r - a) KT + y - y0].
    constexpr std::int64_t G = group_columns<T>, N = block_n<T>, KT = tile_rows<T>(V);
    const auto first_image_row = [&](std::int64_t a, std::int64_t b) {
        return c0 + std::min(lines.shift[a], lines.shift[b - 1]);
    };
    // Tiles start at the columns of whole cache lines (the image rows' alignment permitting), so
    // that each of their rows is one line: [x, tile_after(x, phase, limit)).
    const auto phase_of = [](const T* row0) {
        return static_cast<std::int64_t>((-reinterpret_cast<std::uintptr_t>(row0) / sizeof(T)) % G);
    };
    const std::int64_t in_phase = phase_of(job.oriented.row(0));
    const std::int64_t out_phase = !job.filtered.empty() ? phase_of(job.filtered.row(0)) : 0;
    const auto tile_after = [](std::int64_t x, std::int64_t phase, std::int64_t limit) {
        return std::min(limit, x + G - ((x - phase) % G + G) % G);
    };
    // The loaded tiles: tile q holds oriented rows [tile_bound[q], tile_bound[q + 1]) from image
    // row tile_y[q] on, at tile_in + q G KT, its first row oriented row tile_x[q]; `tile` is the
    // one being read.
    std::int64_t tile_bound[tile_batch + 1] = {}, tile_y[tile_batch] = {}, tile_x[tile_batch] = {};
    std::int64_t tiles_loaded = 0, tile = 0;
    const auto load_tiles = [&](std::int64_t a) {
        tile = 0, tiles_loaded = 0, tile_bound[0] = a;
        std::int64_t y_lo[tile_batch], y_hi[tile_batch], gathers[tile_batch], most_gathers = 0;
        for (std::int64_t q = 0; q < tile_batch && tile_bound[q] < r1; ++q, ++tiles_loaded) {
            const std::int64_t b = tile_after(tile_bound[q], in_phase, r1);
            tile_bound[q + 1] = b;
            tile_y[q] = first_image_row(tile_bound[q], b);
            y_lo[q] = std::max<std::int64_t>(0, tile_y[q]);
            y_hi[q] = std::min(columns, c0 + std::max(lines.shift[tile_bound[q]], lines.shift[b - 1]) + V);
            // Whole tiles in groups of N rows, the last one moved back to end at y_hi. A tile cut
            // short (at either end of the block's rows, or of a row that does not start a cache
            // line, as numpy's do not) gathers G oriented rows all the same, from the image's last
            // G if it would pass them. Pixel by pixel instead, the short tiles at the image's
            // edges cost a 4096x4096 numpy array (rows 16 bytes into a line) 4-9% of its opening
            // at 30 and 150 degrees (one and two threads).
            const bool whole = lines.rows >= G && y_hi[q] - y_lo[q] >= N;
            tile_x[q] = whole ? std::min(tile_bound[q], lines.rows - G) : tile_bound[q];
            gathers[q] = whole ? (y_hi[q] - y_lo[q] + N - 1) / N : 0;
            most_gathers = std::max(most_gathers, gathers[q]);
        }
        const auto group_row = [&](std::int64_t q, std::int64_t i) { return std::min(y_lo[q] + i * N, y_hi[q] - N); };
        for (std::int64_t i = 0; i < most_gathers; ++i)
            for (std::int64_t q = 0; q < tiles_loaded; ++q) {
                if (i >= gathers[q]) continue;
                const std::int64_t a_q = tile_x[q], y = group_row(q, i);
                const T* rows[N];
                for (std::int64_t k = 0; k < N; ++k) rows[k] = job.oriented.row(y + k);
                if (i + 1 < gathers[q])  // this tile's next row group
                    for (std::int64_t k = 0; k < N; ++k) __builtin_prefetch(job.oriented.row(group_row(q, i + 1) + k) + a_q);
                gather_group<T>(rows, a_q, s.tile_in.data() + q * G * KT + (y - tile_y[q]), KT);
            }
        for (std::int64_t q = 0; q < tiles_loaded; ++q) {
            if (gathers[q] > 0) continue;
            T* to = s.tile_in.data() + q * G * KT;
            for (std::int64_t y = y_lo[q]; y < y_hi[q]; ++y)
                for (std::int64_t x = tile_bound[q]; x < tile_bound[q + 1]; ++x)
                    to[(x - tile_x[q]) * KT + (y - tile_y[q])] = job.oriented.row(y)[x];
        }
    };
    std::int64_t source_filled = 0;
    const auto gather_to = [&](std::int64_t end) {
        for (; source_filled < end; ++source_filled) {
            K* row = source_row(source_filled);
            const std::int64_t r = r0 + source_filled - before;
            if (r < r0 || r >= r1) {
                fill_row(row, source_chunks, pad);
                continue;
            }
            std::int64_t lo, hi;
            lane_range(r, lo, hi);
            if (r >= tile_bound[tile + 1] && ++tile >= tiles_loaded) load_tiles(r);
            const T* in = s.tile_in.data() + tile * G * KT + (r - tile_x[tile]) * KT + (c0 + lines.shift[r] - tile_y[tile]);
            if (lo == 0 && hi == V) {  // most rows: whole chunks, loop bounds known at compile time
                for (std::int64_t c = 0; c < V; c += H) to_keys<T, H>(in + c, row + c / H * source_chunks, closing);
                continue;
            }
            for (std::int64_t c = 0; c < V; c += H) {  // the pad in the lanes off the image
                K* chunk = row + c / H * source_chunks;
                if (c >= lo && c + H <= hi) {
                    to_keys<T, H>(in + c, chunk, closing);
                    continue;
                }
                std::fill_n(chunk, H, pad);
                const std::int64_t a = std::max(c, lo), b = std::min(c + H, hi);
                if (a < b) to_keys<T, 0>(in + a, chunk + (a - c), closing, b - a);
            }
        }
    };
    typename detail::line_band_job<T>::sum_type sum = 0;
    // Band row j. Inlined: a call per row cost the many-angle map (short lines) about 10%.
    const auto scatter_row = [&](const detail::line_band_job<T>& to, std::int64_t j,
                                 const K* res) __attribute__((always_inline)) {
        const std::int64_t r = r0 + j;
        std::int64_t lo, hi;
        lane_range(r, lo, hi);
        const std::int64_t col = c0 + lines.shift[r];
        if (lo == 0 && hi == V)
            scatter_lanes<T, V>(to, res, r, col, 0, V, sum);
        else
            scatter_lanes<T, 0>(to, res, r, col, lo, hi, sum);
    };
    // Flat lines on the image: the sums row by row as above, the pixels through a tile per G
    // oriented rows [a, b), transposed back into a piece of up to P of them (piece[(y - y0) P +
    // r - p0], y0 the piece's first image row) and written, in each image row y, to the columns
    // whose lines of this block pass through y: whole cache lines by non-temporal stores, the
    // ends of the run by plain ones after them (the neighbouring blocks own the rest of those
    // lines).
    detail::line_band_job<T> sums_only = job;
    sums_only.filtered = {};
    constexpr std::int64_t P = piece_columns<T>;
    const std::int64_t owned = c_last - c0 + 1;  // lanes of this block
    const bool rising = lines.shift[lines.rows - 1] >= lines.shift[0];
    const std::int32_t* shift = lines.shift.data();
    const auto scatter_piece = [&](std::int64_t j_begin, std::int64_t j_end, const auto& row_of) {
        const std::int64_t p0 = r0 + j_begin, p1 = r0 + j_end, y0 = first_image_row(p0, p1);
        for (std::int64_t a = p0, b; a < p1; a = b) {
            b = tile_after(a, out_phase, p1);
            const std::int64_t ty = first_image_row(a, b);
            for (std::int64_t r = a; r < b; ++r) {
                const K* res = row_of(r - r0);
                if (job.want_sum) scatter_row(sums_only, r - r0, res);
                from_keys<T, V>(res, s.tile_out.data() + (r - a) * KT + (c0 + shift[r] - ty), closing);
            }
            const std::int64_t y_lo = std::max<std::int64_t>(0, ty);
            const std::int64_t y_hi = std::min(columns, c0 + std::max(shift[a], shift[b - 1]) + V);
            T* to = s.piece.data() + (ty - y0) * P + (a - p0);
            // Whole groups of N tile rows by G lanes from ty (lanes past y_hi are unused but inside
            // the tile), the rows left over one by one. Image row groups in the outer loop, so that
            // each line of the piece (mostly in the L2 cache) is filled whole before the next: with
            // tile row groups outside, every line came from the L2 cache four times.
            const std::int64_t whole = (b - a) / N * N;
            for (std::int64_t y = ty; y < y_hi; y += G)
                for (std::int64_t k = 0; k < whole; k += N) {
                    const T* rows[N];
                    for (std::int64_t i = 0; i < N; ++i) rows[i] = s.tile_out.data() + (k + i) * KT;
                    gather_group<T>(rows, y - ty, to + (y - ty) * P + k, P);
                }
            for (std::int64_t k = whole; k < b - a; ++k)
                for (std::int64_t y = y_lo; y < y_hi; ++y) to[(y - ty) * P + k] = s.tile_out[k * KT + y - ty];
        }
        const std::int64_t y_lo = std::max<std::int64_t>(0, y0);
        const std::int64_t y_hi = std::min(columns, c0 + std::max(shift[p0], shift[p1 - 1]) + V);
        // The partition points move by a few columns from one row to the next: walked from the
        // last row's (a binary search per row cost more than the row's stores).
        const auto walk = [&](std::int64_t x, auto before_it) {
            while (x < p1 && before_it(shift[x])) ++x;
            while (x > p0 && !before_it(shift[x - 1])) --x;
            return x;
        };
        std::int64_t xa = p0, xb = p0;
        std::int64_t fragment_count = 0;
        for (std::int64_t y = y_lo; y < y_hi; ++y) {
            // Line c0 + i passes through (x, y) when y = c0 + shift[x] + i, 0 <= i < owned.
            const std::int64_t top = y - c0, bottom = y - c0 - owned;
            xa = rising ? walk(xa, [&](std::int32_t v) { return v <= bottom; })
                        : walk(xa, [&](std::int32_t v) { return v > top; });
            xb = rising ? walk(xb, [&](std::int32_t v) { return v <= top; })
                        : walk(xb, [&](std::int32_t v) { return v > bottom; });
            if (xb <= xa) continue;
            T* dst = job.filtered.row(y);
            const T* src = s.piece.data() + (y - y0) * P - p0;  // indexed by image column
            const std::int64_t line_a = ((xa - out_phase) % G + G) % G == 0 ? xa : tile_after(xa, out_phase, xb);
            std::int64_t x = line_a;
            for (; x + G <= xb; x += G) store_line(dst + x, src + x);
            // The partial lines are stored after the loop (below), each waiting for its line to
            // be read: their reads start here.
            if (line_a > xa) {
                s.fragments[fragment_count++] = {dst + xa, src + xa, line_a - xa};
                __builtin_prefetch(dst + xa, 1);
            }
            if (xb > x) {
                s.fragments[fragment_count++] = {dst + x, src + x, xb - x};
                __builtin_prefetch(dst + x, 1);
            }
        }
        // The partial lines after all the piece's whole ones. Each is mostly not in the cache
        // (the neighbouring block writes the rest of it), so its plain store waits for the line
        // to be read, and stores complete in order: stored in the row loop, each held up the
        // streaming stores behind it. Together, their reads overlap (4096x4096 uint8, line(101),
        // one and two threads, five rounds alternated: 30 degrees 1-5% faster, 150 degrees 0-5%).
        // Prefetched as the row loop finds them, they are in the cache by now: on the Intel build
        // VM (4096x4096 openings by line(101), one process, medians of 21, one / two threads, two
        // rounds) uint8 30 degrees 11.6-13.6 -> 10.6-10.9 / 5.5-5.6 -> 5.2 ms, 40 degrees
        // 14.1-14.5 -> 10.2-11.1 / 5.7-6.4 -> 5.3-5.6, 150 degrees 12.3-13.0 -> 11.2-11.5 /
        // 5.0-5.5 -> 4.8-5.1; uint16 and float32 5-22% faster (stop 58).
        // Holding each back until the task's next block completes its line, then streaming the
        // line out whole, was no faster: the merge reads the held line back from the L3 cache.
        for (std::int64_t i = 0; i < fragment_count; ++i) {
            const auto& f = s.fragments[i];
            std::memcpy(f.to, f.from, static_cast<std::size_t>(f.count) * sizeof(T));
        }
    };
    const auto scatter_rows = [&](std::int64_t j_begin, std::int64_t j_end, const auto& row_of) {
        if (job.filtered.empty()) {
            for (std::int64_t j = j_begin; j < j_end; ++j) scatter_row(job, j, row_of(j));
            return;
        }
        for (std::int64_t j = j_begin, next; j < j_end; j = next) {
            next = j;
            for (std::int64_t t = 0; t < P / G && next < j_end; ++t)
                next = tile_after(r0 + next, out_phase, r0 + j_end) - r0;
            scatter_piece(j, next, row_of);
        }
    };
    // Chunk c of src(i) (dst(i)) is at src(i) + c src_chunks (dst_chunks).
    const auto windows = [&]<class Op>(Op, const auto& src, std::int64_t src_chunks, const auto& dst,
                                       std::int64_t dst_chunks, std::int64_t rows) {
        for (std::int64_t c = 0; c < V / H; ++c)
            window_rows<Op, H, K>([&](std::int64_t i) { return src(i) + c * src_chunks; },
                                  [&](std::int64_t i) { return dst(i) + c * dst_chunks; }, rows, L, H, s.suffix.data(),
                                  s.prefix.data());
    };
    const auto result_row = [result](std::int64_t j) { return result + j * V; };  // lanes in order
    for (std::int64_t i = 0; i < after; ++i) fill_row(second_row(i), second_chunks, outside);
    std::int64_t second_filled = after, dilated = 0;
    // Up to S rows from band row d, ending where an output tile does (fewer than G rows sooner
    // than S): a piece cut mid-tile leaves partial lines in every image row it crosses, which the
    // next piece completes by plain stores that wait for the line to be read.
    const auto tile_aligned_rows = [&](std::int64_t d) {
        const std::int64_t shorter = ((r0 + d + S - out_phase) % G + G) % G;
        return std::min(S - (shorter < S ? shorter : 0), n - d);
    };
    // The lone first stage writes its segments, so they end at tiles too (with a second stage,
    // the dilation's pieces do): 4096x4096 uint8 erosions, one thread, bench_cpu_lines
    // alternated four times, 30 degrees 12.2-12.6 -> 8.9-10.4 ms at λ = 3 and 10.8-11.4 ->
    // 8.8-9.5 at 101, 150 degrees 12.4-13.1 -> 9.9-10.2 and 11.6-12.5 -> 10.3-10.8 (stop 68).
    for (std::int64_t e = 0, m; e < n; e += m) {
        m = job.first_stage_only ? tile_aligned_rows(e) : std::min(S, n - e);
        slide(source, source_chunks, source_base, e, source_filled);
        gather_to(e + m + L - 1);
        if (job.first_stage_only) {
            windows(min_op<K>{}, rows_from(source_row(e)), source_chunks, result_row, H, m);
            scatter_rows(e, e + m, [&](std::int64_t j) { return result_row(j - e); });
            continue;
        }
        if ((e + m == n ? n + L - 1 : after + e + m) - second_base > second_rows)
            slide(second, second_chunks, second_base, dilated, second_filled);
        windows(min_op<K>{}, rows_from(source_row(e)), source_chunks, rows_from(second_row(after + e)), second_chunks,
                m);
        if constexpr (std::is_floating_point_v<T>)  // before the outside values, which share NaN's key
            for (std::int64_t c = 0; c < V / H; ++c)
                lift_nan(second_row(after + e) + c * second_chunks, m * H);
        for (std::int64_t j = e; j < e + m; ++j) {
            std::int64_t lo, hi;
            lane_range(r0 + j, lo, hi);
            if (lo == 0 && hi == V) continue;
            // Only the chunks that [lo, hi) cuts: a row of a wide block at 60 degrees (4096x4096)
            // is cut in at most two of its 16 chunks (AVX2), and 22% of its rows are. A cut chunk
            // takes two fills around the lanes it keeps: a select lane by lane, which GCC kept
            // scalar for uint8 keys, made the uint8 openings at 30 and 150 degrees about 5% slower
            // and the 640x640 map over 180 angles 12% (docs/benchmarks.md, stop 74).
            K* row = second_row(after + j);
            for (std::int64_t c = 0; c < V; c += H) {
                if (c >= lo && c + H <= hi) continue;
                K* chunk = row + c / H * second_chunks;
                const std::int64_t keep_lo = std::clamp<std::int64_t>(lo - c, 0, H);
                const std::int64_t keep_hi = std::clamp<std::int64_t>(hi - c, keep_lo, H);
                std::fill_n(chunk, keep_lo, outside);
                std::fill_n(chunk + keep_hi, H - keep_hi, outside);
            }
        }
        second_filled = after + e + m;
        if (e + m == n)
            for (; second_filled < n + L - 1; ++second_filled) fill_row(second_row(second_filled), second_chunks, outside);
        while (dilated < n && dilated + tile_aligned_rows(dilated) + L - 1 <= second_filled) {
            const std::int64_t d = dilated, md = tile_aligned_rows(d);
            windows(max_op<K>{}, rows_from(second_row(d)), second_chunks, result_row, H, md);
            scatter_rows(d, d + md, [&](std::int64_t j) { return result + (j - d) * V; });
            dilated += md;
        }
    }
    return sum;
}

// Lines read from the oriented image, a strip of Bytes of keys (V adjacent lines) at a time: each
// row's samples go through the erosion and straight into the dilation (streamed_window,
// core/cpu_lane_window.hpp), so the strip's band is never stored, each row is read once, and the
// only other memory touched is the two van Herk buffers (L strip rows each). Whole result rows go
// out through `seam` where there is one.
template <class T, std::int64_t Bytes>
typename detail::line_band_job<T>::sum_type filter_strip(const detail::line_band_job<T>& job, std::int64_t c0,
                                                         typename line_keys<T>::key* held_first,
                                                         typename line_keys<T>::key* held_second,
                                                         seam_lines<T>* seam) {
    using traits = line_keys<T>;
    using K = typename traits::key;
    using row = strip_row<K, Bytes>;
    constexpr std::int64_t V = row::width;
    const detail::scan_lines& lines = *job.lines;
    const std::int64_t L = job.extension.length;
    const std::int64_t before = job.extension.before, after = L - 1 - before;
    const bool closing = job.closing;
    const K pad = job.extension.pad, outside = outside_value(job.extension);
    const block_extent extent(lines, c0, V);
    const std::int64_t r0 = extent.r0, r1 = extent.r1, n = r1 - r0;
    static_assert(V * sizeof(T) >= wide_row_bytes, "whole rows go out through stream_out, and the seam");
    if (seam) seam->begin_strip(job.oriented.height(), r0, std::max(r0, r1));
    if (n <= 0) return 0;
    const auto lane_range = [&](std::int64_t r, std::int64_t& lo, std::int64_t& hi) { extent.lanes_inside(r, lo, hi); };
    alignas(64) K keys[V];
    const auto filled = [&](K value) {
        std::fill_n(keys, V, value);
        return row::load(keys);
    };
    const row pad_row = filled(pad), outside_row = filled(outside);
    // Row r's samples, the pad in the lanes off the image.
    const auto source = [&](std::int64_t r) __attribute__((always_inline)) {
        if (r < r0 || r >= r1) return pad_row;
        std::int64_t lo, hi;
        lane_range(r, lo, hi);
        const T* in = job.oriented.row(r) + c0 + lines.shift[r];
        if (lo == 0 && hi == V) {
            if constexpr (std::is_same_v<T, K>)
                if (!closing) return row::load(in);
            to_keys<T, V>(in, keys, closing);
            return row::load(keys);
        }
        std::fill_n(keys, V, pad);
        if (lo < hi) to_keys<T, 0>(in + lo, keys + lo, closing, hi - lo);
        return row::load(keys);
    };
    typename detail::line_band_job<T>::sum_type sum = 0;
    std::int64_t scattered = 0;  // band rows out
    const auto scatter = [&](const row& result) __attribute__((always_inline)) {
        const std::int64_t r = r0 + scattered++;
        std::int64_t lo, hi;
        lane_range(r, lo, hi);
        result.store(keys);
        const std::int64_t col = c0 + lines.shift[r];
        if (lo == 0 && hi == V) {
            scatter_lanes<T, V>(job, keys, r, col, 0, V, sum, seam);
            return;
        }
        if (seam) seam->store_tail(r);
        scatter_lanes<T, 0>(job, keys, r, col, lo, hi, sum);
    };
    streamed_window<min_op<K>, K, Bytes> erosion(held_first, L);
    streamed_window<max_op<K>, K, Bytes> dilation(held_second, L);
    row eroded, opened;
    const auto into_dilation = [&](const row& r) __attribute__((always_inline)) {
        if (dilation.push(r, opened)) scatter(opened);
    };
    // Second-stage row i is the eroded row i - after: `after` rows of outside values lead.
    if (!job.first_stage_only)
        for (std::int64_t i = 0; i < after; ++i) into_dilation(outside_row);
    std::int64_t eroded_rows = 0;
    for (std::int64_t i = 0; i < n + L - 1; ++i) {
        const std::int64_t r = r0 + i - before;
        if (const std::int64_t ahead = r + strip_prefetch_rows; ahead >= r0 && ahead < r1)
            prefetch_lanes(job.oriented.row(ahead) + c0 + lines.shift[ahead], V);
        if (!erosion.push(source(r), eroded)) continue;
        if (job.first_stage_only) {
            scatter(eroded);
            continue;
        }
        // Float NaN's key to the top, so that the dilation keeps it (before the outside values,
        // which share its key); the lanes off their line take the outside value.
        std::int64_t lo, hi;
        lane_range(r0 + eroded_rows++, lo, hi);
        if (std::is_floating_point_v<T> || lo != 0 || hi != V) {
            eroded.store(keys);
            if constexpr (std::is_floating_point_v<T>) lift_nan(keys, V);
            std::fill_n(keys, lo, outside);  // fills, as for filter_block's cut chunks
            std::fill_n(keys + hi, V - hi, outside);
            eroded = row::load(keys);
        }
        into_dilation(eroded);
    }
    if (!job.first_stage_only)
        for (std::int64_t i = 0; i < before; ++i) into_dilation(outside_row);
    return sum;
}

// Rows a block of V lines starting at c0 spans (the union of its lines' rows).
inline std::int64_t block_rows(const detail::scan_lines& lines, std::int64_t c0, std::int64_t V) {
    const block_extent extent(lines, c0, V);
    return extent.r1 - extent.r0;
}

// Blocks of V adjacent lines (filter(c0, first, last) filters the block from line c0, the task's
// first and last block where said, and returns its sum), adjacent blocks to a task, left to
// right, at most `lanes` lanes a task but at least one task per thread: a 640x640 uint8 opening
// is three strips.
template <class T, class Filter>
double run_blocks_of(const detail::line_band_job<T>& job, std::int64_t V, std::int64_t lanes, const Filter& filter) {
    using sum_type = typename detail::line_band_job<T>::sum_type;
    const detail::scan_lines& lines = *job.lines;
    const std::int64_t blocks = (lines.line_count() + V - 1) / V;
    const std::int64_t threads = std::max(1, num_threads());
    const std::int64_t blocks_per_task =
        std::clamp<std::int64_t>((blocks + threads - 1) / threads, 1, std::max<std::int64_t>(1, lanes / V));
    const std::int64_t tasks = (blocks + blocks_per_task - 1) / blocks_per_task;
    std::vector<sum_type> sums(static_cast<std::size_t>(blocks), 0);
    detail::parallel_for(tasks, job.oriented.pixel_count(), [&](std::int64_t task) {
        const std::int64_t b_begin = task * blocks_per_task, b_end = std::min(blocks, b_begin + blocks_per_task);
        for (std::int64_t b = b_begin; b < b_end; ++b)
            sums[static_cast<std::size_t>(b)] = filter(lines.first_line + b * V, b == b_begin, b + 1 == b_end);
        stream_fence();  // result rows and flat blocks' tile rows went out by non-temporal stores
    });
    sum_type total = 0;
    for (const sum_type s : sums) total += s;  // in block order: the same on every thread count
    return static_cast<double>(total);
}

template <class T, std::int64_t V>
double run_blocks(const detail::line_band_job<T>& job) {
    return run_blocks_of(job, V, lanes_per_task, [&](std::int64_t c0, bool, bool) {
        thread_local band_scratch<T> scratch;
        scratch.reserve(job.extension.length, V);
        return filter_block<T, V>(job, c0, scratch);
    });
}

template <class T, std::int64_t Bytes>
double run_strips(const detail::line_band_job<T>& job) {
    using K = typename line_keys<T>::key;
    constexpr std::int64_t V = Bytes / static_cast<std::int64_t>(sizeof(K));
    const std::int64_t L = job.extension.length;
    return run_blocks_of(job, V, strip_lanes_per_task, [&](std::int64_t c0, bool first_of_task, bool last_of_task) {
        thread_local std::vector<K> held;  // the two stages' van Herk buffers
        thread_local seam_lines<T> seam;
        // uint8 rows are stored in parts unless joined in registers (seam_lines).
        constexpr bool seams_pay = sizeof(T) > 1 || seam_lines<T>::joins_in_registers;
        seam_lines<T>* const seam_of_task = seams_pay && !job.filtered.empty() ? &seam : nullptr;
        held.resize(static_cast<std::size_t>(2 * L * V));
        if (seam_of_task && first_of_task) seam.begin_task();
        const auto sum = filter_strip<T, Bytes>(job, c0, held.data(), held.data() + L * V, seam_of_task);
        if (seam_of_task && last_of_task) seam.end_task();
        return sum;
    });
}

// Blocks of Wide lanes, or narrow ones where those count more than wide_speedup times the
// narrow lane-rows.
template <class T, std::int64_t Wide>
double run_wide_or_narrow_blocks(const detail::line_band_job<T>& job) {
    constexpr std::int64_t narrow = narrow_lanes<typename line_keys<T>::key>;
    const detail::scan_lines& lines = *job.lines;
    double narrow_cost = 0, wide_cost = 0;  // lane-rows
    for (std::int64_t c = lines.first_line; c < lines.end_line; c += narrow)
        narrow_cost += static_cast<double>(narrow * block_rows(lines, c, narrow));
    for (std::int64_t c = lines.first_line; c < lines.end_line; c += Wide)
        wide_cost += static_cast<double>(Wide * block_rows(lines, c, Wide));
    return wide_cost < wide_speedup * narrow_cost ? run_blocks<T, Wide>(job) : run_blocks<T, narrow>(job);
}

}  // namespace

template <class T>
double filter_angle_bands(const detail::line_band_job<T>& job) {
    using K = typename line_keys<T>::key;
    return job.on_image ? run_wide_or_narrow_blocks<T, tiled_wide_lanes<K>>(job) : run_strips<T, line_strip_bytes>(job);
}

template <class T>
void transpose(host_view<const T> in, host_view<T> out) {
    // Tiles of G columns by R rows (R * sizeof(T) = 128 bytes) are gathered through registers
    // (gather_group, N rows at a time) into a buffer that stays in the L1 cache, then written out
    // R contiguous elements (two whole lines) per output row past the cache; each gather
    // prefetches its rows' next line, the next tile's. The tiles go a block of B x B elements (512
    // bytes a side) at a time, so that the block's input and output rows stay in the TLB. 4096 x
    // 4096, two threads, against blocks of B x B gathered into a buffer in the L2 cache (its 16-byte
    // pieces each a store missing the L1): uint8 1.77-1.85 -> 1.30-1.43 ms, uint16 3.2-3.4 ->
    // 2.3-2.5, float 5.5-5.8 -> 5.2 (docs/benchmarks.md, stop 76).
    constexpr std::int64_t N = block_n<T>, G = group_columns<T>, R = 128 / sizeof(T), B = 512 / sizeof(T);
    const std::int64_t w = in.width(), h = in.height();
    const std::int64_t w_tiled = w / G * G;  // columns from w_tiled on go pixel by pixel
    const std::int64_t bands = (h + B - 1) / B;
    detail::parallel_for(bands, in.pixel_count(), [&](std::int64_t band) {
        alignas(64) T tile[G * R];
        const std::int64_t band_y0 = band * B, band_y1 = std::min(h, band_y0 + B);
        for (std::int64_t block_x = 0; block_x < w_tiled; block_x += B)
            for (std::int64_t x = block_x; x < std::min(w_tiled, block_x + B); x += G)
                for (std::int64_t y0 = band_y0; y0 < band_y1; y0 += R) {
                    const std::int64_t y1 = std::min(band_y1, y0 + R);
                    const std::int64_t rows = (y1 - y0) / N * N;  // the rest pixel by pixel
                    for (std::int64_t i = 0; i < rows; i += N) {
                        const T* src[N];
                        for (std::int64_t k = 0; k < N; ++k) src[k] = in.row(y0 + i + k);
                        for (std::int64_t k = 0; k < N; ++k) __builtin_prefetch(src[k] + x + G);
                        gather_group<T>(src, x, tile + i, R);
                    }
                    for (std::int64_t j = 0; j < G; ++j) {
                        store_row(out.row(x + j) + y0, tile + j * R, rows);
                        for (std::int64_t y = y0 + rows; y < y1; ++y) out.row(x + j)[y] = in.row(y)[x + j];
                    }
                }
        for (std::int64_t x = w_tiled; x < w; ++x)
            for (std::int64_t y = band_y0; y < band_y1; ++y) out.row(x)[y] = in.row(y)[x];
        stream_fence();
    });
}

template double filter_angle_bands<std::uint8_t>(const detail::line_band_job<std::uint8_t>&);
template double filter_angle_bands<std::uint16_t>(const detail::line_band_job<std::uint16_t>&);
template double filter_angle_bands<float>(const detail::line_band_job<float>&);
template void transpose<std::uint8_t>(host_view<const std::uint8_t>, host_view<std::uint8_t>);
template void transpose<std::uint16_t>(host_view<const std::uint16_t>, host_view<std::uint16_t>);
template void transpose<float>(host_view<const float>, host_view<float>);
template void transpose<std::uint32_t>(host_view<const std::uint32_t>, host_view<std::uint32_t>);
template void transpose<std::int64_t>(host_view<const std::int64_t>, host_view<std::int64_t>);

}  // namespace granula::GRANULA_SIMD_NAMESPACE
