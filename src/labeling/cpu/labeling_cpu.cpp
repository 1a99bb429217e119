// Run-based union-find labelling (the equal-value generalisation of the run-based two-pass
// algorithms; He, Chao & Suzuki 2008), threaded by horizontal strips with a seam merge.
//
// Pass 1 (per strip, in parallel): each row is cut into runs of one non-background value; a run
// takes the provisional label of the first run above it with the same value that touches it
// (overlap widened by one column for 8-connectivity) and unites with the others, or a new label.
// Strip k issues labels from its first pixel's index + 1 on, so its labels exceed every label of
// strip k - 1, and a union always makes the smaller root the parent. The smallest provisional
// label of a component is then the one its first run in raster order took, and numbering the
// roots in increasing order gives the labels in raster order of first pixels (scipy's numbers)
// with no sort. Seams are merged after the strips, one after another (one row pair each).
// Pass 2 (per strip, in parallel): runs are written out with their final label; statistics are
// accumulated per run, not per pixel.
// Fine-grained images have a run every few pixels, so the per-run work avoids branches whose
// outcome depends on run lengths: 8-bit rows are cut 64 pixels at a time from SIMD masks, and
// runs are written in fixed 16-pixel chunks. The run, label and statistics arrays are fresh
// memory on every call; huge pages keep their page faults (otherwise a large share) down.
// Provisional labels are int32 up to 2^31 - 1 pixels with int32 output (12-byte runs and a
// 4-byte forest entry); int64 beyond, and always for int64 output, so that path is the same code
// at every size.
#include "labeling/cpu/labeling_cpu.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/huge_pages.hpp"
#include "core/parallel.hpp"
#include "granula/core/config.hpp"

namespace granula::cpu {
namespace {

template <class L>
struct run {
    std::int32_t begin, end;  // columns [begin, end)
    L label;                  // provisional, then final
};

// Union-find over provisional labels; parent[l] <= l always.
template <class L>
class forest {
public:
    explicit forest(std::int64_t n) : parent_(new L[static_cast<std::size_t>(n)]) {
        detail::advise_huge_pages(parent_.get(), static_cast<std::size_t>(n) * sizeof(L));
    }
    L make(L l) { return parent_[l] = l; }
    L find(L l) {
        // Path halving keeps later finds short without a second walk.
        while (parent_[l] != l) {
            parent_[l] = parent_[parent_[l]];
            l = parent_[l];
        }
        return l;
    }
    // Unites the trees of a and b under the smaller root; returns it.
    L unite(L a, L b) {
        a = find(a), b = find(b);
        if (a < b) return parent_[b] = a;
        return parent_[a] = b;
    }
    L* data() { return parent_.get(); }

private:
    std::unique_ptr<L[]> parent_;
};

// First x in [x, width) with row[x] != v, or width. Eight bytes at a time for 8- and 16-bit
// pixels (SWAR: the first non-zero byte of word ^ broadcast(v)), so a run costs one branch
// per word rather than one per pixel.
template <class T>
std::int32_t find_different(const T* row, std::int32_t x, std::int32_t width, T v) {
    if constexpr (sizeof(T) <= 2 && std::endian::native == std::endian::little) {
        constexpr std::int32_t per_word = 8 / sizeof(T);
        const std::uint64_t pattern = sizeof(T) == 1 ? 0x0101010101010101ull * v : 0x0001000100010001ull * v;
        for (; x + per_word <= width; x += per_word) {
            std::uint64_t word;
            std::memcpy(&word, row + x, 8);
            if (const std::uint64_t diff = word ^ pattern; diff != 0)
                return x + static_cast<std::int32_t>(std::countr_zero(diff) / (8 * sizeof(T)));
        }
    }
    while (x < width && row[x] == v) ++x;
    return x;
}

// Cuts one row into runs of equal non-background value, appending to `runs`.
template <class T, class L>
void extract_runs(const T* row, std::int32_t width, T background, std::vector<run<L>>& runs) {
    std::int32_t x = find_different(row, 0, width, background);
    while (x < width) {
        const std::int32_t begin = x;
        x = find_different(row, x + 1, width, row[begin]);
        runs.push_back({begin, x, 0});
        x = find_different(row, x, width, background);
    }
}

// Appends the runs of one 64-pixel chunk at x0: `starts` has a bit per first pixel of a run,
// `ends` one per pixel just past a run (the end of a run begun in an earlier chunk included).
// Runs start and end in order, so the i-th end belongs to the i-th run still open. A loop per
// chunk rather than branches per run: fine-grained images have a dozen runs per chunk.
template <class L>
void append_runs(std::int32_t x0, std::uint64_t starts, std::uint64_t ends, std::vector<run<L>>& runs,
                 std::size_t& open) {
    for (; starts != 0; starts &= starts - 1) runs.push_back({x0 + std::countr_zero(starts), 0, 0});
    for (; ends != 0; ends &= ends - 1) runs[open++].end = x0 + std::countr_zero(ends);
}

#if defined(__SSE2__)
// Bit i: p[i] != v, for i in [0, 64).
inline std::uint64_t differ_mask(const std::uint8_t* p, __m128i v) {
    std::uint64_t m = 0;
    for (int i = 0; i < 4; ++i) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        m |= static_cast<std::uint64_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, v))) << (16 * i);
    }
    return ~m;
}

// Runs of 8-bit rows from per-chunk masks: foreground (p[i] != background) and change
// (p[i] != p[i - 1]); a run starts where both hold and ends at a change after foreground.
template <class L>
void extract_runs_u8(const std::uint8_t* row, std::int32_t width, std::uint8_t background, std::vector<run<L>>& runs) {
    const __m128i bg = _mm_set1_epi8(static_cast<char>(background));
    std::size_t open = runs.size();
    std::uint64_t carry = 0;  // foreground bit of the pixel before the chunk
    // The first and the last chunk go through a copy padded with background before and after.
    std::uint8_t pad[1 + 64];
    for (std::int32_t x0 = 0; x0 < width; x0 += 64) {
        const std::uint8_t* p = row + x0;
        if (x0 == 0 || x0 + 64 > width) {
            std::memset(pad, background, sizeof pad);
            pad[0] = x0 == 0 ? background : row[x0 - 1];
            std::memcpy(pad + 1, p, static_cast<std::size_t>(std::min(64, width - x0)));
            p = pad + 1;
        }
        const std::uint64_t fg = differ_mask(p, bg);
        std::uint64_t change = 0;
        for (int i = 0; i < 4; ++i) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i - 1));
            change |= static_cast<std::uint64_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b))) << (16 * i);
        }
        change = ~change;
        append_runs(x0, fg & change, ((fg << 1) | carry) & change, runs, open);
        carry = fg >> 63;
    }
    // A run reaching the last pixel of a row that is a multiple of 64 wide.
    if (carry) runs[open++].end = width;
}
#endif

// The rows of a pixel image: runs of one non-background value.
template <class T>
struct pixel_rows {
    host_view<const T> in;
    T background;

    template <class L>
    void extract(std::int64_t y, std::vector<run<L>>& runs) const {
#if defined(__SSE2__)
        if constexpr (sizeof(T) == 1) {
            extract_runs_u8(in.row(y), static_cast<std::int32_t>(in.width()), background, runs);
            return;
        }
#endif
        extract_runs(in.row(y), static_cast<std::int32_t>(in.width()), background, runs);
    }
    const T* row(std::int64_t y) const { return in.row(y); }
    static bool same(const T* row, std::int32_t x, const T* row_above, std::int32_t x_above) {
        return row[x] == row_above[x_above];
    }
    std::uint32_t value(std::int64_t y, std::int32_t x) const { return in.row(y)[x]; }
};

// First x in [x, width) whose bit, xor `flip`, is set; width if none. Bits past the width are
// zero (bit image layout), so a flipped search stops at the width at the latest.
inline std::int32_t next_bit(const bit_word* words, std::int64_t n_words, std::int32_t x, std::int32_t width,
                             bit_word flip) {
    std::int64_t w = x / bits_per_word;
    if (w >= n_words) return width;
    bit_word word = (words[w] ^ flip) & (~bit_word{0} << (x % bits_per_word));
    while (word == 0) {
        if (++w == n_words) return width;
        word = words[w] ^ flip;
    }
    return std::min<std::int32_t>(width, static_cast<std::int32_t>(w * bits_per_word + std::countr_zero(word)));
}

// The rows of a bit image: runs of ones, found a word at a time; every run has the value 1.
struct bit_rows {
    const_host_bit_view in;

    template <class L>
    void extract(std::int64_t y, std::vector<run<L>>& runs) const {
        const bit_word* words = in.row(y);
        const std::int64_t n = in.row_words();
        const std::int32_t width = static_cast<std::int32_t>(in.width());
        for (std::int32_t x = next_bit(words, n, 0, width, 0); x < width;) {
            const std::int32_t end = next_bit(words, n, x + 1, width, ~bit_word{0});
            runs.push_back({x, end, 0});
            x = next_bit(words, n, end, width, 0);
        }
    }
    const bit_word* row(std::int64_t y) const { return in.row(y); }
    static bool same(const bit_word*, std::int32_t, const bit_word*, std::int32_t) { return true; }
    std::uint32_t value(std::int64_t, std::int32_t) const { return 1; }
};

// Connects the runs of a row (`cur`, labels not yet set when `assign`) with the runs of the
// row above (`above`). `reach` is 1 for 8-connectivity (corner contact counts), 0 for 4.
// With `assign`, each current run takes a label (joined or new, from `next`); without it both
// rows are labelled already and only unions happen (the seam merge).
template <class Rows, bool assign, class Row, class L>
void connect(const Row* row, const Row* row_above, run<L>* cur, std::size_t n_cur, const run<L>* above,
             std::size_t n_above, int reach, forest<L>& f, L& next) {
    std::size_t j = 0;
    for (std::size_t i = 0; i < n_cur; ++i) {
        run<L>& r = cur[i];
        while (j < n_above && above[j].end + reach <= r.begin) ++j;
        L label = assign ? -1 : r.label;
        for (std::size_t k = j; k < n_above && above[k].begin < r.end + reach; ++k) {
            if (!Rows::same(row, r.begin, row_above, above[k].begin)) continue;
            if (label < 0)
                label = f.find(above[k].label);
            else
                label = f.unite(label, above[k].label);
        }
        if constexpr (assign) {
            if (label < 0) label = f.make(next++);
            r.label = label;
        }
    }
}

// Writes v to o[begin, end) 16 pixels at a time and spills up to 16 pixels past end (at
// least one chunk even when begin == end); the caller keeps end + 16 inside the row and writes the
// spilled pixels next. One mostly predictable branch per 16 pixels instead of a loop exit per run,
// which mispredicts on the short random-length runs and gaps of fine-grained images.
template <class L>
void fill_spilling(L* o, std::int32_t begin, std::int32_t end, L v) {
#if defined(__SSE2__)
    constexpr int lanes = 16 / sizeof(L);
    __m128i w;
    if constexpr (sizeof(L) == 4)
        w = _mm_set1_epi32(v);
    else
        w = _mm_set1_epi64x(v);
    do {
        for (int i = 0; i < 16; i += lanes) _mm_storeu_si128(reinterpret_cast<__m128i*>(o + begin + i), w);
        begin += 16;
    } while (begin < end);
#else
    std::fill(o + begin, o + end, v);
#endif
}

template <class L>
struct strip {
    std::int64_t y0 = 0, y1 = 0;
    std::vector<run<L>> runs;
    std::vector<std::size_t> row_start;  // runs of row y0 + i: [row_start[i], row_start[i + 1])
    L first_label = 0, next_label = 0;
    L first_final = 0;  // the final label of the strip's first root; its roots take the next ones
};

// Per-run accumulation of area, bounding box, centroid sums and value for one label range.
struct run_stats {
    std::vector<std::int64_t> area, min_row, min_col, max_row, max_col;
    std::vector<double> sum_row, sum_col;
    std::vector<std::uint32_t> value;
    explicit run_stats(std::size_t n) {
        filled(area, n, 0);
        filled(min_row, n, INT64_MAX);
        filled(min_col, n, INT64_MAX);
        filled(max_row, n, -1);
        filled(max_col, n, -1);
        filled(sum_row, n, 0);
        filled(sum_col, n, 0);
        filled(value, n, 0);
    }
    // n copies of v, on huge pages where they are large (a million components on fine grains).
    template <class V>
    static void filled(std::vector<V>& a, std::size_t n, std::type_identity_t<V> v) {
        a.reserve(n);
        detail::advise_huge_pages(a.data(), n * sizeof(V));
        a.assign(n, v);
    }
};

}  // namespace

// L: provisional labels; Out: the output's.
template <class L, class Rows, class Out>
std::int64_t label_rows(const Rows& in, host_view<Out> out, int connectivity, region_statistics* statistics) {
    const std::int64_t width = out.width(), height = out.height(), pixels = width * height;
    const int reach = connectivity == 2 ? 1 : 0;
    // One strip per thread; each strip covers whole rows.
    const std::int64_t n_strips =
        pixels >= detail::parallel_min_pixels ? std::min<std::int64_t>(num_threads(), height) : 1;
    std::vector<strip<L>> strips(static_cast<std::size_t>(n_strips));
    for (std::int64_t k = 0; k < n_strips; ++k) {
        strips[k].y0 = height * k / n_strips;
        strips[k].y1 = height * (k + 1) / n_strips;
    }
    // Provisional labels: strip k uses [y0 * width + 1, y1 * width + 1) at most (a row holds at
    // most `width` runs); 0 is never issued.
    forest<L> f(pixels + 1);

    detail::parallel_for(n_strips, pixels, [&](std::int64_t k) {
        strip<L>& s = strips[k];
        s.first_label = s.next_label = static_cast<L>(s.y0 * width + 1);
        s.row_start.reserve(static_cast<std::size_t>(s.y1 - s.y0 + 1));
        s.row_start.push_back(0);
        // Room for a binary chessboard (width / 2 runs a row) up front: untouched capacity costs
        // no memory, while growing by doubling copies the runs and faults fresh pages each time.
        s.runs.reserve(static_cast<std::size_t>((s.y1 - s.y0) * ((width + 1) / 2)));
        detail::advise_huge_pages(s.runs.data(), s.runs.capacity() * sizeof(run<L>));
        for (std::int64_t y = s.y0; y < s.y1; ++y) {
            const std::size_t first = s.runs.size();
            in.extract(y, s.runs);
            s.row_start.push_back(s.runs.size());
            if (y == s.y0) {
                for (std::size_t i = first; i < s.runs.size(); ++i) s.runs[i].label = f.make(s.next_label++);
            } else {
                const std::size_t prev = s.row_start[s.row_start.size() - 3];
                connect<Rows, true>(in.row(y), in.row(y - 1), s.runs.data() + first, s.runs.size() - first,
                                 s.runs.data() + prev, first - prev, reach, f, s.next_label);
            }
        }
    });

    // Seams: the first row of strip k against the last row of strip k - 1.
    for (std::int64_t k = 1; k < n_strips; ++k) {
        strip<L>& s = strips[k];
        strip<L>& a = strips[k - 1];
        if (a.runs.empty() && s.runs.empty()) continue;
        const std::size_t a_first = a.row_start[a.row_start.size() - 2];
        L unused = 0;
        connect<Rows, false>(in.row(s.y0), in.row(s.y0 - 1), s.runs.data(), s.row_start[1], a.runs.data() + a_first,
                          a.runs.size() - a_first, reach, f, unused);
    }

    // Final numbers in increasing provisional order: a root takes the next label, any other
    // label its parent's (smaller, so already final).
    L* parent = f.data();
    L count = 0;
    for (strip<L>& s : strips) {
        s.first_final = count + 1;
        for (L l = s.first_label; l < s.next_label; ++l)
            parent[l] = parent[l] == l ? ++count : parent[parent[l]];
    }
    if constexpr (sizeof(Out) < sizeof(L))
        if (count > std::numeric_limits<Out>::max())
            throw unsupported("label: this image has " + std::to_string(count) +
                              " components, more than int32 labels hold (2^31 - 1); use int64 labels");

    // Statistics: a strip adds the components rooted in it (final labels from its first_final
    // on, disjoint between strips) straight into the totals, and the others, which all cross its
    // first row (their first pixel lies above it), into slots of its own, merged afterwards.
    // Memory: N components once, not once per thread.
    std::optional<run_stats> total;
    std::vector<std::vector<Out>> foreign(static_cast<std::size_t>(n_strips));
    std::vector<std::optional<run_stats>> foreign_stats(static_cast<std::size_t>(n_strips));
    if (statistics) total.emplace(static_cast<std::size_t>(count));
    detail::parallel_for(n_strips, pixels, [&](std::int64_t k) {
        const strip<L>& s = strips[k];
        std::vector<Out>& others = foreign[k];
        if (statistics) {
            for (std::size_t i = 0; i < s.row_start[1]; ++i)
                if (const L l = parent[s.runs[i].label]; l < s.first_final) others.push_back(static_cast<Out>(l));
            std::sort(others.begin(), others.end());
            others.erase(std::unique(others.begin(), others.end()), others.end());
            foreign_stats[k].emplace(others.size());
        }
        for (std::int64_t y = s.y0; y < s.y1; ++y) {
            Out* o = out.row(y);
            std::int32_t x = 0;
            const std::size_t i0 = s.row_start[y - s.y0], i1 = s.row_start[y - s.y0 + 1];
            for (std::size_t i = i0; i < i1; ++i) {
                const run<L>& r = s.runs[i];
                const Out l = static_cast<Out>(parent[r.label]);
                if (r.end + 16 <= width) {
                    fill_spilling<Out>(o, x, r.begin, 0);
                    fill_spilling(o, r.begin, r.end, l);
                } else {
                    for (; x < r.begin; ++x) o[x] = 0;
                    for (std::int32_t i = r.begin; i < r.end; ++i) o[i] = l;
                }
                x = r.end;
                if (statistics) {
                    const bool own = l >= s.first_final;
                    run_stats& st = own ? *total : *foreign_stats[k];
                    const std::size_t c = own ? static_cast<std::size_t>(l - 1)
                                              : static_cast<std::size_t>(
                                                    std::lower_bound(others.begin(), others.end(), l) - others.begin());
                    const std::int64_t len = r.end - r.begin;
                    if (st.area[c] == 0) st.value[c] = in.value(y, r.begin);
                    st.area[c] += len;
                    st.min_row[c] = std::min(st.min_row[c], y);
                    st.max_row[c] = y + 1;
                    st.min_col[c] = std::min<std::int64_t>(st.min_col[c], r.begin);
                    st.max_col[c] = std::max<std::int64_t>(st.max_col[c], r.end);
                    st.sum_row[c] += static_cast<double>(y) * static_cast<double>(len);
                    st.sum_col[c] += static_cast<double>(r.begin + r.end - 1) * 0.5 * static_cast<double>(len);
                }
            }
            for (; x < width; ++x) o[x] = 0;
        }
    });

    if (statistics) {
        region_statistics& st = *statistics;
        const std::size_t n = static_cast<std::size_t>(count);
        run_stats& t = *total;
        // The root's strip, above the others, has set the value.
        for (std::size_t k = 1; k < foreign.size(); ++k) {
            const run_stats& p = *foreign_stats[k];
            for (std::size_t i = 0; i < foreign[k].size(); ++i) {
                const std::size_t c = static_cast<std::size_t>(foreign[k][i] - 1);
                t.area[c] += p.area[i];
                t.min_row[c] = std::min(t.min_row[c], p.min_row[i]);
                t.max_row[c] = std::max(t.max_row[c], p.max_row[i]);
                t.min_col[c] = std::min(t.min_col[c], p.min_col[i]);
                t.max_col[c] = std::max(t.max_col[c], p.max_col[i]);
                t.sum_row[c] += p.sum_row[i];
                t.sum_col[c] += p.sum_col[i];
            }
        }
        st = region_statistics{};
        st.area = std::move(t.area);
        st.min_row = std::move(t.min_row);
        st.min_col = std::move(t.min_col);
        st.max_row = std::move(t.max_row);
        st.max_col = std::move(t.max_col);
        st.value = std::move(t.value);
        st.centroid_row.resize(n);
        st.centroid_col.resize(n);
        for (std::size_t c = 0; c < n; ++c) {
            st.centroid_row[c] = t.sum_row[c] / static_cast<double>(st.area[c]);
            st.centroid_col[c] = t.sum_col[c] / static_cast<double>(st.area[c]);
        }
    }
    return count;
}

namespace {

// int32 provisional labels (the fast path) while the provisional range (up to the pixel count)
// fits them and the output is int32.
template <class Rows, class Out>
std::int64_t label_any_size(const Rows& in, host_view<Out> out, int connectivity, region_statistics* statistics) {
    if constexpr (std::is_same_v<Out, std::int32_t>)
        if (out.pixel_count() <= std::numeric_limits<std::int32_t>::max())
            return label_rows<std::int32_t>(in, out, connectivity, statistics);
    return label_rows<std::int64_t>(in, out, connectivity, statistics);
}

}  // namespace

template <class T, class L>
std::int64_t label(host_view<const T> in, host_view<L> out, int connectivity, T background,
                   region_statistics* statistics) {
    return label_any_size(pixel_rows<T>{in, background}, out, connectivity, statistics);
}

template <class L>
std::int64_t label(const_host_bit_view in, host_view<L> out, int connectivity, region_statistics* statistics) {
    return label_any_size(bit_rows{in}, out, connectivity, statistics);
}

#define GRANULA_INSTANTIATE(labels)                                                                               \
    template std::int64_t label(host_view<const std::uint8_t>, host_view<labels>, int, std::uint8_t,              \
                                region_statistics*);                                                              \
    template std::int64_t label(host_view<const std::uint16_t>, host_view<labels>, int, std::uint16_t,            \
                                region_statistics*);                                                              \
    template std::int64_t label(host_view<const std::uint32_t>, host_view<labels>, int, std::uint32_t,            \
                                region_statistics*);                                                              \
    template std::int64_t label(const_host_bit_view, host_view<labels>, int, region_statistics*);
GRANULA_INSTANTIATE(std::int32_t)
GRANULA_INSTANTIATE(std::int64_t)
#undef GRANULA_INSTANTIATE

}  // namespace granula::cpu
