// CPU kernels of binary morphology on 64-bit words (bit 0 = leftmost pixel).
//
//  - horizontal segments: the row, extended by its border, goes into a buffer;
//  a window of L
//    bits is ANDed (ORed) by doubling, A_2k(x) = A_k(x) & A_k(x + k), then two
//    overlapping powers of two: log2(L) + 1 whole-word shift-and-combine sweeps
//    per row;
//  - vertical segments: van Herk/Gil-Werman on whole words (a block of L rows,
//  prefix and
//    suffix ANDs, 3 word operations per output word whatever L), a band of 16
//    word columns at a time so each step is a contiguous vector operation;
//  - other (dx, dy) steps: the AND of the L shifted rows (ignore and constant
//  borders only).
// This file is compiled once per instruction set; the loops over words are what
// vectorises.
#include <algorithm>
#include <array>
#include <bit>
#include <type_traits>
#include <cstring>
#include <memory>
#include <vector>

#include "binary/cpu/binary_kernels.hpp"
#include "core/border_index.hpp"
#include "core/parallel.hpp"

namespace granula::GRANULA_SIMD_NAMESPACE {
namespace {

using detail::bit_pass;
constexpr bit_word all_ones = ~bit_word{0};

inline bit_word pad_word(bool pad) { return pad ? all_ones : bit_word{0}; }

// The bits of the last word of a row that are pixels.
inline bit_word last_word_mask(std::int64_t width) {
    const int r = static_cast<int>(width % bits_per_word);
    return r ? (bit_word{1} << r) - 1 : all_ones;
}

inline bool get_bit(const bit_word* row, std::int64_t x) { return (row[x >> 6] >> (x & 63)) & 1u; }

inline void set_bit(bit_word* buf, std::int64_t x) { buf[x >> 6] |= bit_word{1} << (x & 63); }

// Writes `words` (row_words of them) into a row, keeping the bits past `width`.
inline void store_row(const bit_word* words, bit_word* dst, std::int64_t width) {
    const std::int64_t n = words_for_width(width);
    std::copy_n(words, n - 1, dst);
    const bit_word m = last_word_mask(width);
    dst[n - 1] = (words[n - 1] & m) | (dst[n - 1] & ~m);
}

// Sets bits [start, start + count) of a zeroed buffer.
void set_bits(bit_word* buf, std::int64_t start, std::int64_t count) {
    std::int64_t x = start;
    const std::int64_t end = start + count;
    while (x < end && (x & 63)) set_bit(buf, x++);
    for (; x + 64 <= end; x += 64) buf[x >> 6] = all_ones;
    while (x < end) set_bit(buf, x++);
}

// b[i] = a[i] op (bits of a starting at bit 64 i + s), i in [0, words). a holds
// at least words + s / 64 + 1 words.
template <bool Or>
void shift_combine(const bit_word* __restrict a, bit_word* __restrict b, std::int64_t words, std::int64_t s) {
    const std::int64_t q = s >> 6;
    const int r = static_cast<int>(s & 63);
    if (r == 0) {
        for (std::int64_t i = 0; i < words; ++i) b[i] = Or ? (a[i] | a[i + q]) : (a[i] & a[i + q]);
    } else {
        for (std::int64_t i = 0; i < words; ++i) {
            const bit_word v = (a[i + q] >> r) | (a[i + q + 1] << (64 - r));
            b[i] = Or ? (a[i] | v) : (a[i] & v);
        }
    }
}

template <bool Or>
void horizontal(const_host_bit_view in, host_bit_view out, const bit_pass& pass) {
    const std::int64_t n = in.width(), before = pass.before, after = pass.after;
    const std::int64_t window = before + after + 1, m = n + before + after;
    const std::int64_t words = words_for_width(m), row_words = in.row_words();
    const bool constant_pad = pass.mode == border_mode::ignore || pass.mode == border_mode::constant;
    const bit_word tail_mask = last_word_mask(n);
    constexpr std::int64_t strip = 16;  // rows per work item
    detail::parallel_for((in.height() + strip - 1) / strip, in.height() * m, [&](std::int64_t s) {
        const std::int64_t y0 = s * strip, y1 = std::min(in.height(), y0 + strip), count = y1 - y0;
        // The strip's extended rows one after the other, `words` apart, so each doubling sweep is
        // one long vectorised loop; a window never needs bits past its own row's extension. Two
        // buffers, with room for the shifted reads past the end.
        const std::size_t size = static_cast<std::size_t>((count + 1) * words + 2);
        std::vector<bit_word> buf_a(size), buf_b(size);
        for (std::int64_t y = y0; y < y1; ++y) {
            const bit_word* src = in.row(y);
            bit_word* a = buf_a.data() + (y - y0) * words;
            // The row's pixels at bit `before` on (the buffer is zero: fresh, and each row is
            // written once).
            const std::int64_t q = before >> 6;
            const int r = static_cast<int>(before & 63);
            for (std::int64_t i = 0; i < row_words; ++i) {
                const bit_word v = i == row_words - 1 ? (src[i] & tail_mask) : src[i];
                a[q + i] |= v << r;
                if (r) a[q + i + 1] |= v >> (64 - r);
            }
            // The border.
            if (constant_pad) {
                if (pass.pad) {
                    set_bits(a, 0, before);
                    set_bits(a, before + n, after);
                }
            } else {
                for (std::int64_t j = 0; j < before; ++j)
                    if (get_bit(src, detail::border_index(j - before, n, pass.mode))) set_bit(a, j);
                for (std::int64_t j = 0; j < after; ++j)
                    if (get_bit(src, detail::border_index(n + j, n, pass.mode))) set_bit(a, before + n + j);
            }
        }
        // Doubling: a holds A_k, the op of k consecutive bits from each position.
        bit_word *a = buf_a.data(), *b = buf_b.data();
        const std::int64_t total = count * words;
        std::int64_t k = 1;
        while (2 * k <= window) {
            shift_combine<Or>(a, b, total, k);
            std::swap(a, b);
            k *= 2;
        }
        if (window > k) {
            shift_combine<Or>(a, b, total, window - k);
            std::swap(a, b);
        }
        for (std::int64_t y = y0; y < y1; ++y) store_row(a + (y - y0) * words, out.row(y), n);
    });
}

template <bool Or>
bit_word combine(bit_word a, bit_word b) {
    return Or ? (a | b) : (a & b);
}

template <bool Or>
void vertical(const_host_bit_view in, host_bit_view out, const bit_pass& pass) {
    const std::int64_t n = in.height(), before = pass.before, after = pass.after;
    const std::int64_t window = before + after + 1, total = n + before + after;
    const std::int64_t row_words = in.row_words();
    constexpr std::int64_t band = 16;  // word columns per work item: 128 bytes of each row
    const std::int64_t bands = (row_words + band - 1) / band;
    detail::parallel_for(bands, in.width() * (total + n), [&](std::int64_t bi) {
        const std::int64_t w0 = bi * band, bw = std::min(band, row_words - w0);
        // Left uninitialised: every word read below is written first (zeroing them cost a pass).
        const std::unique_ptr<bit_word[]> prefix(new bit_word[static_cast<std::size_t>(total * band)]),
            suffix(new bit_word[static_cast<std::size_t>(total * band)]);
        bit_word pad_row[band];
        std::fill_n(pad_row, band, pad_word(pass.pad));
        // Row j of the extended column: image row border_index(j - before), or the
        // padding.
        auto source = [&](std::int64_t j) -> const bit_word* {
            const std::int64_t r = detail::border_index(j - before, n, pass.mode);
            return r < 0 ? pad_row : in.row(r) + w0;
        };
        for (std::int64_t s = 0; s < total; s += window) {
            const std::int64_t e = std::min(s + window, total);
            const bit_word* q = source(s);
            bit_word* p = &prefix[s * band];
            for (std::int64_t i = 0; i < bw; ++i) p[i] = q[i];
            for (std::int64_t j = s + 1; j < e; ++j) {
                const bit_word* qj = source(j);
                const bit_word* prev = &prefix[(j - 1) * band];
                bit_word* cur = &prefix[j * band];
                for (std::int64_t i = 0; i < bw; ++i) cur[i] = combine<Or>(prev[i], qj[i]);
            }
            q = source(e - 1);
            bit_word* t = &suffix[(e - 1) * band];
            for (std::int64_t i = 0; i < bw; ++i) t[i] = q[i];
            for (std::int64_t j = e - 2; j >= s; --j) {
                const bit_word* qj = source(j);
                const bit_word* next = &suffix[(j + 1) * band];
                bit_word* cur = &suffix[j * band];
                for (std::int64_t i = 0; i < bw; ++i) cur[i] = combine<Or>(next[i], qj[i]);
            }
        }
        // The window [y, y + window) of the extended column is the suffix of y's
        // block and the prefix of the next block up to y + window - 1.
        const bool last_band = w0 + bw == row_words;
        const bit_word m = last_word_mask(in.width());
        for (std::int64_t y = 0; y < n; ++y) {
            const bit_word* sf = &suffix[y * band];
            const bit_word* pf = &prefix[(y + window - 1) * band];
            bit_word* dst = out.row(y) + w0;
            const std::int64_t full = last_band ? bw - 1 : bw;
            for (std::int64_t i = 0; i < full; ++i) dst[i] = combine<Or>(sf[i], pf[i]);
            if (last_band) {
                const bit_word v = combine<Or>(sf[bw - 1], pf[bw - 1]);
                dst[bw - 1] = (v & m) | (dst[bw - 1] & ~m);
            }
        }
    });
}

// 64 bits of a row from bit position p on (p may be negative or past the
// width), `pad` outside.
bit_word fetch_bits(const bit_word* row, std::int64_t n, std::int64_t p, bool pad) {
    if (p >= 0 && p + 64 <= n) {
        const std::int64_t q = p >> 6;
        const int r = static_cast<int>(p & 63);
        return r ? (row[q] >> r) | (row[q + 1] << (64 - r)) : row[q];
    }
    bit_word v = 0;
    for (int b = 0; b < 64; ++b) {
        const std::int64_t x = p + b;
        const bool bit = (x < 0 || x >= n) ? pad : get_bit(row, x);
        v |= bit_word{bit} << b;
    }
    return v;
}

template <bool Or>
void general(const_host_bit_view in, host_bit_view out, const bit_pass& pass) {
    const std::int64_t n = in.width(), h = in.height(), row_words = in.row_words();
    detail::parallel_for(h, h * n * pass.length, [&](std::int64_t y) {
        std::vector<bit_word> acc(static_cast<std::size_t>(row_words), pad_word(!Or));
        for (std::int64_t k = 0; k < pass.length; ++k) {
            const std::int64_t ox = (pass.start + k) * pass.dx, oy = (pass.start + k) * pass.dy;
            const std::int64_t r = y + oy;
            if (r < 0 || r >= h) {
                if (pass.pad == Or) std::fill(acc.begin(), acc.end(), pad_word(pass.pad));
                continue;
            }
            const bit_word* src = in.row(r);
            for (std::int64_t i = 0; i < row_words; ++i)
                acc[static_cast<std::size_t>(i)] =
                    combine<Or>(acc[static_cast<std::size_t>(i)], fetch_bits(src, n, 64 * i + ox, pass.pad));
        }
        store_row(acc.data(), out.row(y), n);
    });
}

}  // namespace

void bit_segment_pass(const_host_bit_view in, host_bit_view out, const bit_pass& pass) {
    switch (pass.dir) {
        case bit_pass::direction::horizontal:
            return pass.dilate ? horizontal<true>(in, out, pass) : horizontal<false>(in, out, pass);
        case bit_pass::direction::vertical:
            return pass.dilate ? vertical<true>(in, out, pass) : vertical<false>(in, out, pass);
        case bit_pass::direction::general:
            return pass.dilate ? general<true>(in, out, pass) : general<false>(in, out, pass);
    }
}

void bit_complement(const_host_bit_view in, host_bit_view out) {
    const std::int64_t row_words = in.row_words();
    std::vector<bit_word> buf(static_cast<std::size_t>(row_words));
    for (std::int64_t y = 0; y < in.height(); ++y) {
        const bit_word* src = in.row(y);
        for (std::int64_t i = 0; i < row_words; ++i) buf[static_cast<std::size_t>(i)] = ~src[i];
        store_row(buf.data(), out.row(y), in.width());
    }
}

void bit_and(const_host_bit_view a, host_bit_view out) {
    const std::int64_t row_words = a.row_words();
    const bit_word m = last_word_mask(a.width());
    for (std::int64_t y = 0; y < a.height(); ++y) {
        const bit_word* src = a.row(y);
        bit_word* dst = out.row(y);
        for (std::int64_t i = 0; i + 1 < row_words; ++i) dst[i] &= src[i];
        dst[row_words - 1] &= src[row_words - 1] | ~m;
    }
}

template <class T>
void pack_bits(host_view<const T> in, host_bit_view out, T threshold) {
    const std::int64_t n = in.width(), row_words = out.row_words();
    detail::parallel_for(in.height(), in.pixel_count(), [&](std::int64_t y) {
        const T* src = in.row(y);
        bit_word* dst = out.row(y);
        for (std::int64_t i = 0; i < row_words; ++i) {
            const std::int64_t x0 = 64 * i, count = std::min<std::int64_t>(64, n - x0);
            bit_word v = 0;
            for (std::int64_t b = 0; b < count; ++b) v |= bit_word{src[x0 + b] > threshold} << b;
            if (count == 64) {
                dst[i] = v;
            } else {
                const bit_word m = (bit_word{1} << count) - 1;
                dst[i] = v | (dst[i] & ~m);
            }
        }
    });
}

// The 8 bytes (0 or 1, first pixel in the lowest byte) of each byte of bits: uint8 output is
// written 8 pixels at a time (little-endian hosts, as x86-64 and AArch64 Linux are).
constexpr std::array<std::uint64_t, 256> byte_expansion = [] {
    std::array<std::uint64_t, 256> table{};
    for (unsigned v = 0; v < 256; ++v)
        for (unsigned b = 0; b < 8; ++b) table[v] |= std::uint64_t{(v >> b) & 1u} << (8 * b);
    return table;
}();

template <class T>
void unpack_bits(const_host_bit_view in, host_view<T> out) {
    const std::int64_t n = in.width();
    detail::parallel_for(in.height(), out.pixel_count(), [&](std::int64_t y) {
        const bit_word* src = in.row(y);
        T* dst = out.row(y);
        if constexpr (std::is_same_v<T, std::uint8_t> && std::endian::native == std::endian::little) {
            std::int64_t x = 0;
            for (; x + 8 <= n; x += 8) {
                const std::uint64_t bytes = byte_expansion[(src[x >> 6] >> (x & 63)) & 0xffu];
                std::memcpy(dst + x, &bytes, 8);
            }
            for (; x < n; ++x) dst[x] = static_cast<T>((src[x >> 6] >> (x & 63)) & 1u);
        } else {
            for (std::int64_t x = 0; x < n; ++x) dst[x] = static_cast<T>((src[x >> 6] >> (x & 63)) & 1u);
        }
    });
}

#define GRANULA_INSTANTIATE(type, name)                                        \
    template void pack_bits<type>(host_view<const type>, host_bit_view, type); \
    template void unpack_bits<type>(const_host_bit_view, host_view<type>);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula::GRANULA_SIMD_NAMESPACE
