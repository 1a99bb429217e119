// CPU kernels of binary morphology on 64-bit words (bit 0 = leftmost pixel).
//
//  - rectangles (a vertical then a horizontal segment): one sweep down the image, a few blocks
//    of rows at a time: the vertical pass writes them into the horizontal pass's row buffers
//    (cache-resident), which then go to the output, so no intermediate image exists and the
//    image is read once from memory and written once;
//  - vertical segments: van Herk/Gil-Werman on blocks of L rows, column by column (8 registers
//    of words across), the block's running suffix and the next block's running prefix in
//    registers: 3 word operations per output word whatever L, each input row loaded twice
//    (the second time from cache), each output word stored twice;
//  - horizontal segments: each row, extended by its border, in a buffer; the window of L bits
//    is ANDed (ORed) by doubling, A_2k(x) = A_k(x) & A_k(x + k), up to the largest power of
//    two K <= L, then A_L(x) = A_K(x) & A_K(x + L - K): one vectorised sweep per level over a
//    batch of 8 rows (shifts of 8k bits are byte-aligned loads). The AVX-512 copy keeps the
//    levels up to K = 64 in registers instead (blocks of 8 words, VBMI2 funnel shifts, each
//    level one block behind the one before) and gets A_32 and A_64 without doubling (van
//    Herk/Gil-Werman inside 32- and 64-bit lanes: leading ones by lzcnt, trailing ones by
//    x & ~(x + 1));
//  - other (dx, dy) steps: the AND of the L shifted rows (ignore and constant borders only).
// This file is compiled once per instruction set (and once more for AVX-512 with VBMI2 and CD,
// src/binary/binary.cpp picks it); the loops over words are what vectorises.
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

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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

// The unit of the vertical pass's column sweeps, one register (a generic 8-word vector in the
// AVX2 and SSE copies went through the stack: 0.08 -> 0.28 ms for a 63-row window at
// 4096x4096), and how many a sweep takes at once: 8 registers of running suffixes or prefixes,
// a whole 4096-pixel row with AVX-512.
#if defined(GRANULA_SIMD_SCALAR)
using column_lane = bit_word;
#elif defined(__AVX512F__)
typedef bit_word column_lane __attribute__((vector_size(64)));
#elif defined(__AVX2__)
typedef bit_word column_lane __attribute__((vector_size(32)));
#else
typedef bit_word column_lane __attribute__((vector_size(16)));
#endif
constexpr int column_lanes = 8;

// Bit i moved to bit 63 - i.
inline bit_word reverse_bits(bit_word v) {
    v = __builtin_bswap64(v);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    return ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
}

inline bool get_bit(const bit_word* row, std::int64_t x) { return (row[x >> 6] >> (x & 63)) & 1u; }


// Writes `words` (row_words of them) into a row, keeping the bits past `width`.
inline void store_row(const bit_word* words, bit_word* dst, std::int64_t width) {
    const std::int64_t n = words_for_width(width);
    std::copy_n(words, n - 1, dst);
    const bit_word m = last_word_mask(width);
    dst[n - 1] = (words[n - 1] & m) | (dst[n - 1] & ~m);
}

template <bool Or, class T>
T combine(T a, T b) {
    return Or ? (a | b) : (a & b);
}

// The 64 bits of a bit string from bit 64 (i + q) + r on. Byte: r is a multiple of 8, one
// unaligned load (the string is little-endian bytes); otherwise a funnel shift, r in [1, 63].
template <bool Byte>
inline bit_word bits_at(const bit_word* a, std::int64_t i, std::int64_t q, int r) {
    if constexpr (Byte) {
        bit_word v;
        std::memcpy(&v, reinterpret_cast<const unsigned char*>(a + i + q) + (r >> 3), sizeof v);
        return v;
    } else {
        return (a[i + q] >> r) | (a[i + q + 1] << (64 - r));
    }
}

template <bool Or, bool Byte1, bool Byte2>
void combine_at(const bit_word* a, bit_word* __restrict b, std::int64_t words, std::int64_t s1, std::int64_t s2) {
    const std::int64_t q1 = s1 >> 6, q2 = s2 >> 6;
    const int r1 = static_cast<int>(s1 & 63), r2 = static_cast<int>(s2 & 63);
    for (std::int64_t i = 0; i < words; ++i)
        b[i] = combine<Or>(bits_at<Byte1>(a, i, q1, r1), bits_at<Byte2>(a, i, q2, r2));
}

// b[i] = (bits of a from 64 i + s1) op (bits of a from 64 i + s2), i in [0, words): one sweep.
// Offsets that are multiples of 8 cost a load instead of two shifts and an OR.
template <bool Or>
void combine_shifted(const bit_word* a, bit_word* __restrict b, std::int64_t words, std::int64_t s1,
                     std::int64_t s2) {
    const bool byte1 = s1 % 8 == 0, byte2 = s2 % 8 == 0;
    if (byte1 && byte2) return combine_at<Or, true, true>(a, b, words, s1, s2);
    if (byte1) return combine_at<Or, true, false>(a, b, words, s1, s2);
    if (byte2) return combine_at<Or, false, true>(a, b, words, s1, s2);
    combine_at<Or, false, false>(a, b, words, s1, s2);
}

// The horizontal levels in registers, in the AVX-512 copy only: its funnel shift (VBMI2) joins
// two neighbouring words in one instruction. With AVX2 the two shuffles per level that reach the
// neighbouring word made register levels slower than the sweeps (0.41 against 0.30 ms for a
// 63x63 erosion at 4096x4096).
#if defined(__AVX512VBMI2__) && defined(__AVX512CD__) && !defined(GRANULA_SIMD_SCALAR)
#define GRANULA_BINARY_REGISTER_LEVELS 1

// 8 consecutive words of a row: one register.
constexpr int block = 8;
typedef bit_word words_v __attribute__((vector_size(block * sizeof(bit_word))));

// Words Q .. Q + 7 of the words of a followed by those of b.
template <int Q>
words_v words_from(words_v a, words_v b) {
    return __builtin_shufflevector(a, b, Q, Q + 1, Q + 2, Q + 3, Q + 4, Q + 5, Q + 6, Q + 7);
}

inline words_v load_v(const bit_word* p) {
    words_v v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <bool Or>
words_v combine_v(words_v a, words_v b) {
    return Or ? (a | b) : (a & b);
}

// The 64 bits from bit 64 Q + r on, for each word of a followed by b (r broadcast, in [0, 63]).
template <int Q>
words_v funnel(words_v a, words_v b, __m512i r) {
    return reinterpret_cast<words_v>(_mm512_shrdv_epi64(reinterpret_cast<__m512i>(words_from<Q>(a, b)),
                                                        reinterpret_cast<__m512i>(words_from<Q + 1>(a, b)), r));
}

// The windows of K = 2^D bits (D = 5 or 6) from every bit of block x, whose next block is y,
// without doubling: van Herk/Gil-Werman inside lanes of K bits. The window from bit p of lane c
// is the suffix of lane c from p (set where p >= K - its leading ones: the complement of all
// ones shifted right by that count) and the prefix of lane c + 1 below p (its trailing ones,
// z & ~(z + 1), moved up one bit). Dilation is the complement of the erosion of the complement.
template <int D, bool Or>
words_v lane_windows(words_v x, words_v y) {
    __m512i a = reinterpret_cast<__m512i>(x), b = reinterpret_cast<__m512i>(y);
    if constexpr (Or) a = ~a, b = ~b;
    const __m512i ones = _mm512_set1_epi64(-1);
    __m512i r;
    if constexpr (D == 5) {
        const __m512i not_suffix = _mm512_srlv_epi32(ones, _mm512_lzcnt_epi32(~a));
        const __m512i next = _mm512_alignr_epi32(b, a, 1);
        const __m512i prefix = _mm512_andnot_si512(_mm512_add_epi32(next, _mm512_set1_epi32(1)), next);
        r = ~not_suffix & (_mm512_slli_epi32(prefix, 1) | _mm512_set1_epi32(1));
    } else {
        const __m512i not_suffix = _mm512_srlv_epi64(ones, _mm512_lzcnt_epi64(~a));
        const __m512i next = _mm512_alignr_epi64(b, a, 1);
        const __m512i prefix = _mm512_andnot_si512(_mm512_add_epi64(next, _mm512_set1_epi64(1)), next);
        r = ~not_suffix & (_mm512_slli_epi64(prefix, 1) | _mm512_set1_epi64(1));
    }
    if constexpr (Or) r = ~r;
    return reinterpret_cast<words_v>(r);
}

// How the final step reaches A_K(t + u): a funnel shift within the block and the next one
// (s + u < 64), one block on (s + u > 64), or whole words one block on (s + u == 64: the
// symmetric windows of 2^k - 1 bits, 63 among them).
enum class second_term { near, far, whole };

// The windows over a stream of blocks, each read once: step(p) takes the block at p and returns
// the result for the block `lag` steps back. A_32 and A_64 come from lane_windows; other levels
// by doubling, level l + 1 (A_2k, k = 2^l) of a block computed as soon as level l of the next
// block exists (the levels run one block apart), so no level is stored. With Final, the result
// is A_K(t) op A_K(t + u) at t = 64 i + s (K = 2^D, s and u in [0, 63]); otherwise A_K.
template <bool Or, int D, bool Final, second_term Second = second_term::near>
class window_stream {
public:
    static constexpr int lag = (D == 5 || D == 6 ? 1 : D) + (Final ? 1 : 0);

    window_stream(int s, int u) : rs_(_mm512_set1_epi64(s)), ru_(_mm512_set1_epi64((s + u) & 63)) {}

    words_v step(const bit_word* p) {
        const words_v x = load_v(p);
        words_v k;
        if constexpr (D == 5 || D == 6) {
            k = lane_windows<D, Or>(prev_[0], x);
            prev_[0] = x;
        } else {
            words_v cur[D + 1];
            cur[0] = x;
#pragma GCC unroll 8
            for (int l = 0; l < D; ++l)
                cur[l + 1] = combine_v<Or>(prev_[l], funnel<0>(prev_[l], cur[l], _mm512_set1_epi64(1 << l)));
#pragma GCC unroll 8
            for (int l = 0; l < D; ++l) prev_[l] = cur[l];
            k = cur[D];
        }
        if constexpr (!Final) return k;
        words_v second;
        if constexpr (Second == second_term::whole)
            second = words_from<1>(a_prev_, k);
        else if constexpr (Second == second_term::far)
            second = funnel<1>(a_prev_, k, ru_);
        else
            second = funnel<0>(a_prev_, k, ru_);
        const words_v r = combine_v<Or>(funnel<0>(a_prev_, k, rs_), second);
        a_prev_ = k;
        return r;
    }

private:
    __m512i rs_, ru_;
    words_v prev_[D == 5 || D == 6 ? 1 : (D > 0 ? D : 1)] = {};
    words_v a_prev_ = {};
};

// The levels up to A_64 of `vectors` blocks from `a` on, to sink in order.
template <bool Or, class Sink>
void levels_in_registers(const bit_word* a, std::int64_t vectors, Sink&& sink) {
    window_stream<Or, 6, false> stream(0, 0);
    for (std::int64_t m = 0; m < vectors + stream.lag; ++m) {
        const words_v v = stream.step(a + block * m);
        if (m >= stream.lag) sink(v);
    }
}
#else
constexpr int block = 8;
#endif

// Horizontal windows on a group of rows. Each row, extended by its border, lies in its own slot
// of `pitch` words with its first pixel at bit 64 * lead: bits [64 * lead - before, 64 * lead +
// n + after) of the slot are the extended row. The window of L = before + after + 1 bits is
// combined by doubling, A_2k(t) = A_k(t) op A_k(t + k), up to the largest power of two K <= L,
// then out(x) = A_K(t) op A_K(t + L - K) at t = 64 * lead - before + x. Each level is a sweep
// over a batch of 8 rows (a sweep of one row at a time would read what it has just stored and
// fail store forwarding on every unaligned load); steps of 8 bits and more are byte-aligned
// loads. The AVX-512 copy computes the levels up to K = 64 in registers (window_stream), all
// the group's rows in one stream, and sweeps only beyond. Slots are whole blocks of 8 words so
// that consecutive slots are one stream of blocks.
template <bool Or>
class row_windows {
public:
    // Rows per sweep: a sweep of one row at a time would read what it has just stored.
    static constexpr std::int64_t batch = 8;

    row_windows(const bit_pass& pass, std::int64_t width, std::int64_t rows)
        : n_(width),
          before_(pass.before),
          window_(pass.before + pass.after + 1),
          lead_((pass.before + 63) / 64),
          row_words_(words_for_width(width)),
          vectors_((row_words_ + block - 1) / block),
          pitch_((lead_ + row_words_ + (pass.after + 63) / 64 + block) / block * block),
          // Slack for the reads past a row or the slots: the register levels read up to 8 blocks
          // past the row, sweeps window / 64 + 2 words.
          slack_(16 * block + window_ / 64 + 8),
          rows_(std::max(rows, batch)),
          slots_size_(rows_ * pitch_ + slack_),
          work_size_(batch * pitch_ + slack_),
#if defined(GRANULA_BINARY_REGISTER_LEVELS)
          sweeps_(window_ >= 128),
#else
          sweeps_(true),
#endif
          mode_(pass.mode),
          pad_(pass.pad),
          buffers_(new bit_word[static_cast<std::size_t>(slots_size_ + (sweeps_ ? 2 * work_size_ : 0))]) {
        // Once: the constant padding around each row, which no row overwrites, the slack, and
        // the sweeps' buffers.
        bit_word* b = buffers_.get();
        for (std::int64_t j = 0; j < rows_; ++j) {
            std::fill_n(b + j * pitch_, lead_, pad_word(pad_));
            std::fill_n(b + j * pitch_ + lead_ + row_words_, pitch_ - lead_ - row_words_, pad_word(pad_));
        }
        std::fill_n(b + rows_ * pitch_, slack_ + (sweeps_ ? 2 * work_size_ : 0), pad_word(pad_));
    }

    // Where row j goes (row_words words; the bits past the width are ignored), j < rows.
    bit_word* row(std::int64_t j) { return buffers_.get() + j * pitch_ + lead_; }

    // Writes the windows of the first `count` rows to out rows y, y + 1, ... (the bits past the
    // width kept).
    void run(std::int64_t count, host_bit_view out, std::int64_t y) {
        bit_word* ext = buffers_.get();
        for (std::int64_t j = 0; j < count; ++j) extend(ext + j * pitch_);
        // The stream reads on past the last row (its results there unused): no unset words.
        for (std::int64_t j = count; j < rows_; ++j) std::fill_n(row(j), row_words_, pad_word(pad_));
#if defined(GRANULA_BINARY_REGISTER_LEVELS)
        if (!sweeps_) return final_levels(count, out, y);
#endif
        for (std::int64_t j = 0; j < count; j += batch) sweep(ext + j * pitch_, std::min(batch, count - j), out, y + j);
    }

private:
#if defined(GRANULA_BINARY_REGISTER_LEVELS)
    // All the rows in one stream of blocks (the levels' lag paid once): block e of slot j goes
    // to block e of output row j, the row's last one through a masked store, the slot's padding
    // nowhere.
    void final_levels(std::int64_t count, host_bit_view out, std::int64_t y) {
        int d = 0;
        while (d < 6 && (std::int64_t{2} << d) <= window_) ++d;
        const std::int64_t second = 64 * lead_ - before_ + window_ - (std::int64_t{1} << d);
        if (second == 64) return final_rows<second_term::whole>(d, count, out, y);
        if (second > 64) return final_rows<second_term::far>(d, count, out, y);
        final_rows<second_term::near>(d, count, out, y);
    }

    template <second_term Second, int D = 0>
    void final_rows(int d, std::int64_t count, host_bit_view out, std::int64_t y) {
        if constexpr (D < 6) {
            if (d > D) return final_rows<Second, D + 1>(d, count, out, y);
        }
        window_stream<Or, D, true, Second> stream(static_cast<int>(64 * lead_ - before_),
                                                  static_cast<int>(window_ - (std::int64_t{1} << D)));
        const bit_word* slots = buffers_.get();
        for (int m = 0; m < stream.lag; ++m) stream.step(slots + block * m);
        // The row's last block: its words, and in its last word the bits past the width, which
        // keep their value.
        const std::int64_t tail = block * (vectors_ - 1);
        const __mmask8 tail_words = static_cast<__mmask8>((1u << (row_words_ - tail)) - 1);
        words_v keep = {};
        keep[row_words_ - 1 - tail] = ~last_word_mask(n_);
        const bool partial = n_ % bits_per_word != 0;
        // Locals: the stores through dst could otherwise change them, to the compiler.
        const std::int64_t direct = vectors_ - 1, slot_blocks = pitch_ / block, pitch = pitch_;
        for (std::int64_t j = 0; j < count; ++j) {
            const bit_word* src = slots + j * pitch + block * stream.lag;
            bit_word* dst = out.row(y + j);
            std::int64_t e = 0;
            for (; e < direct; ++e) {
                const words_v v = stream.step(src + block * e);
                std::memcpy(dst + block * e, &v, sizeof v);
            }
            words_v v = stream.step(src + block * e);
            if (partial)
                v = (v & ~keep) | (reinterpret_cast<words_v>(_mm512_maskz_loadu_epi64(tail_words, dst + tail)) & keep);
            _mm512_mask_storeu_epi64(dst + tail, tail_words, reinterpret_cast<__m512i>(v));
            for (++e; e < slot_blocks; ++e) stream.step(src + block * e);
        }
    }
#endif

    // The windows of `count` <= batch rows from ext on, by sweeps over the batch.
    void sweep(const bit_word* ext, std::int64_t count, host_bit_view out, std::int64_t y) {
        const std::int64_t s = 64 * lead_ - before_;
        bit_word* work[2] = {buffers_.get() + slots_size_, buffers_.get() + slots_size_ + work_size_};
        const bit_word* a = ext;
        std::int64_t k = 1;
#if defined(GRANULA_BINARY_REGISTER_LEVELS)
        {
            bit_word* levels = work[0];
            levels_in_registers<Or>(ext, (count * pitch_ + block - 1) / block + 1, [&](const words_v& v) {
                std::memcpy(levels, &v, sizeof v);
                levels += block;
            });
            a = work[0], k = 64;
        }
#endif
        for (; 2 * k <= window_; k *= 2) {
            bit_word* next = a == work[0] ? work[1] : work[0];
            combine_shifted<Or>(a, next, count * pitch_, 0, k);
            a = next;
        }
        const std::int64_t t = s + window_ - k, last = row_words_ - 1;
        const bit_word m = last_word_mask(n_);
        for (std::int64_t j = 0; j < count; ++j, a += pitch_) {
            bit_word* dst = out.row(y + j);
            combine_shifted<Or>(a, dst, last, s, t);
            const bit_word v = combine<Or>(read_bits(a, 64 * last + s), read_bits(a, 64 * last + t));
            dst[last] = (v & m) | (dst[last] & ~m);
        }
    }

    static bit_word read_bits(const bit_word* a, std::int64_t p) {
        const int r = static_cast<int>(p & 63);
        return r ? bits_at<false>(a, 0, p >> 6, r) : a[p >> 6];
    }

    void extend(bit_word* slot) const {
        const std::int64_t base = 64 * lead_;
        const bit_word m = last_word_mask(n_);
        bit_word& tail = slot[lead_ + row_words_ - 1];
        if (detail::pads_with_one_value(mode_)) {
            tail = (tail & m) | (pad_word(pad_) & ~m);
            return;
        }
        const std::int64_t after = window_ - 1 - before_;
        if (before_ <= 64 && after <= 64 && n_ > 65) {
            // A word each side, from the row's first and last 65 pixels: the bits of the word
            // before the row are pixels -64 .. -1, those from the row's end pixels n .. n + 63.
            auto pixels = [&](std::int64_t x) { return read_bits(slot, base + x); };  // x .. x + 63
            bit_word left = 0, right = 0;
            switch (mode_) {
                case border_mode::reflect:
                    left = reverse_bits(pixels(0)), right = reverse_bits(pixels(n_ - 64));
                    break;
                case border_mode::mirror:
                    left = reverse_bits(pixels(1)), right = reverse_bits(pixels(n_ - 65));
                    break;
                case border_mode::nearest:
                    left = 0 - (pixels(0) & 1), right = 0 - (pixels(n_ - 64) >> 63);
                    break;
                default:  // wrap
                    left = pixels(n_ - 64), right = pixels(0);
                    break;
            }
            if (lead_ > 0) slot[lead_ - 1] = left;
            const std::int64_t q = (base + n_) >> 6;
            const int r = static_cast<int>(n_ & 63);
            if (r == 0) {
                slot[q] = right;
            } else {
                slot[q] = (slot[q] & ((bit_word{1} << r) - 1)) | (right << r);
                slot[q + 1] = right >> (64 - r);
            }
            return;
        }
        // Bit by bit from the row itself (the padding bits it overwrites are not pixels).
        auto put = [slot](std::int64_t x, bool bit) {
            const bit_word b = bit_word{1} << (x & 63);
            slot[x >> 6] = bit ? (slot[x >> 6] | b) : (slot[x >> 6] & ~b);
        };
        for (std::int64_t j = 0; j < before_; ++j)
            put(base - before_ + j, get_bit(slot, base + detail::border_index(j - before_, n_, mode_)));
        for (std::int64_t j = 0; j < after; ++j)
            put(base + n_ + j, get_bit(slot, base + detail::border_index(n_ + j, n_, mode_)));
    }

    std::int64_t n_, before_, window_, lead_, row_words_, vectors_, pitch_, slack_, rows_, slots_size_, work_size_;
    bool sweeps_;  // the windows by sweeps over memory, not in registers
    border_mode mode_;
    bool pad_;
    std::unique_ptr<bit_word[]> buffers_;
};

// Rows per work item: a whole number of `unit` (van Herk/Gil-Werman blocks), about 128.
std::int64_t band_rows(std::int64_t unit) { return unit * std::max<std::int64_t>(1, 128 / unit); }

// Van Herk/Gil-Werman on one block of `window` rows, G lanes of words from word i on: src[j]
// is extended row s + j (j < count + window - 1); dst[k], k < count <= window, gets the op of
// src[k .. k + window - 1], the suffix of the block from k op the prefix of the next block up
// to k + window - 1. Column by column, so that the running suffix and prefix stay in
// registers: each source word is loaded once, each destination word stored twice.
template <bool Or, class Lane, int G>
void vertical_columns(const bit_word* const* src, bit_word* const* dst, std::int64_t window, std::int64_t count,
                      std::int64_t i) {
    constexpr std::int64_t w = sizeof(Lane) / sizeof(bit_word);
    auto load = [i](const bit_word* row, int g) {
        Lane v;
        std::memcpy(&v, row + i + g * w, sizeof v);
        return v;
    };
    auto store = [i](bit_word* row, int g, Lane v) { std::memcpy(row + i + g * w, &v, sizeof v); };
    // The row pointers are read before each row's stores, which the compiler cannot tell apart.
    Lane acc[G];
    for (int g = 0; g < G; ++g) acc[g] = load(src[window - 1], g);
    for (std::int64_t k = window - 1;; --k) {
        const bit_word* next = k > 0 ? src[k - 1] : nullptr;
        if (k < count) {
            bit_word* d = dst[k];
            for (int g = 0; g < G; ++g) store(d, g, acc[g]);
        }
        if (k == 0) break;
        for (int g = 0; g < G; ++g) acc[g] = combine<Or>(acc[g], load(next, g));
    }
    Lane prefix[G];
    for (int g = 0; g < G; ++g) prefix[g] = Lane{} | pad_word(!Or);
    for (std::int64_t k = 1; k < count; ++k) {
        const bit_word* q = src[window + k - 1];
        bit_word* d = dst[k];
        for (int g = 0; g < G; ++g) {
            prefix[g] = combine<Or>(prefix[g], load(q, g));
            store(d, g, combine<Or>(load(d, g), prefix[g]));
        }
    }
}

// The vertical pass on whole rows, a block at a time. Extended row j is image row
// border_index(j - before), or the padding.
template <bool Or>
class vertical_rows {
public:
    vertical_rows(const_host_bit_view in, const bit_pass& pass)
        : in_(in),
          pass_(pass),
          window_(pass.before + pass.after + 1),
          pad_(static_cast<std::size_t>(in.row_words()), pad_word(pass.pad)),
          src_(static_cast<std::size_t>(2 * window_ - 1)),
          dst_(static_cast<std::size_t>(window_)) {}

    std::int64_t window() const { return window_; }

    // Output rows [s, s + count), count <= window, to dst(0), dst(1), ... (whole words: the
    // bits past the width are written too).
    template <class Dst>
    void block(std::int64_t s, std::int64_t count, Dst&& dst) {
        for (std::int64_t j = 0; j < count + window_ - 1; ++j) {
            const std::int64_t r = detail::border_index(s + j - pass_.before, in_.height(), pass_.mode);
            src_[static_cast<std::size_t>(j)] = r < 0 ? pad_.data() : in_.row(r);
        }
        for (std::int64_t k = 0; k < count; ++k) dst_[static_cast<std::size_t>(k)] = dst(k);
        const bit_word* const* src = src_.data();
        bit_word* const* dst_rows = dst_.data();
        const std::int64_t row_words = in_.row_words(), w = sizeof(column_lane) / sizeof(bit_word);
        std::int64_t i = 0;
        for (; i + column_lanes * w <= row_words; i += column_lanes * w)
            vertical_columns<Or, column_lane, column_lanes>(src, dst_rows, window_, count, i);
        for (; i + w <= row_words; i += w) vertical_columns<Or, column_lane, 1>(src, dst_rows, window_, count, i);
        // The last words: one more lane ending at the row's end (recomputing words is harmless),
        // word by word in rows narrower than a lane.
        if (i < row_words && row_words >= w)
            vertical_columns<Or, column_lane, 1>(src, dst_rows, window_, count, row_words - w);
        else
            for (; i < row_words; ++i) vertical_columns<Or, bit_word, 1>(src, dst_rows, window_, count, i);
    }

private:
    const_host_bit_view in_;
    bit_pass pass_;
    std::int64_t window_;
    std::vector<bit_word> pad_;
    std::vector<const bit_word*> src_;
    std::vector<bit_word*> dst_;
};

template <bool Or>
void horizontal(const_host_bit_view in, host_bit_view out, const bit_pass& pass) {
    constexpr std::int64_t strip = 64;  // rows per work item, a multiple of the batch
    const std::int64_t h = in.height(), row_words = in.row_words();
    detail::parallel_for((h + strip - 1) / strip, h * in.width(), [&](std::int64_t s) {
        row_windows<Or> rows(pass, in.width(), row_windows<Or>::batch);
        for (std::int64_t y = s * strip; y < std::min(h, (s + 1) * strip); y += rows.batch) {
            const std::int64_t count = std::min(rows.batch, h - y);
            for (std::int64_t j = 0; j < count; ++j) std::copy_n(in.row(y + j), row_words, rows.row(j));
            rows.run(count, out, y);
        }
    });
}

template <bool Or>
void vertical(const_host_bit_view in, host_bit_view out, const bit_pass& pass) {
    const std::int64_t h = in.height(), band = band_rows(pass.before + pass.after + 1), last = in.row_words() - 1;
    const bit_word m = last_word_mask(in.width());
    detail::parallel_for((h + band - 1) / band, h * in.width(), [&](std::int64_t b) {
        vertical_rows<Or> rows(in, pass);
        std::vector<bit_word> kept(static_cast<std::size_t>(rows.window()));
        for (std::int64_t s = b * band; s < std::min(h, (b + 1) * band); s += rows.window()) {
            const std::int64_t count = std::min(rows.window(), h - s);
            for (std::int64_t k = 0; k < count; ++k) kept[static_cast<std::size_t>(k)] = out.row(s + k)[last];
            rows.block(s, count, [&](std::int64_t k) { return out.row(s + k); });
            for (std::int64_t k = 0; k < count; ++k) {
                bit_word& word = out.row(s + k)[last];
                word = (word & m) | (kept[static_cast<std::size_t>(k)] & ~m);
            }
        }
    });
}

// A rectangle in one sweep down the image: the vertical pass writes a group of blocks of rows
// into the horizontal pass's slots (cache-resident), which then go to the output, so no
// intermediate image is written or read.
template <bool Or>
void rectangle(const_host_bit_view in, host_bit_view out, const bit_pass& v, const bit_pass& hp) {
    // Rows a horizontal run: whole blocks, at least 32 (each run pays the register levels' lag);
    // work items of whole runs, about 128 rows.
    const std::int64_t h = in.height(), window = v.before + v.after + 1;
    const std::int64_t group = window * std::max<std::int64_t>(1, 32 / window), band = band_rows(group);
    detail::parallel_for((h + band - 1) / band, h * in.width(), [&](std::int64_t b) {
        const std::int64_t y1 = std::min(h, (b + 1) * band);
        row_windows<Or> rows(hp, in.width(), group);
        vertical_rows<Or> source(in, v);
        for (std::int64_t s = b * band; s < y1; s += group) {
            const std::int64_t n = std::min(group, y1 - s);
            for (std::int64_t k = 0; k < n; k += window)
                source.block(s + k, std::min(window, n - k), [&](std::int64_t j) { return rows.row(k + j); });
            rows.run(n, out, s);
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

void bit_rectangle_pass(const_host_bit_view in, host_bit_view out, const bit_pass& vertical_pass,
                        const bit_pass& horizontal_pass) {
    if (vertical_pass.dilate)
        rectangle<true>(in, out, vertical_pass, horizontal_pass);
    else
        rectangle<false>(in, out, vertical_pass, horizontal_pass);
}

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
