// CUDA kernels of binary morphology on 64-bit words (bit 0 = leftmost pixel).
//
//  - horizontal segments: one thread per output word. The window of L bits of
//  each of its 64
//    pixels is ANDed (ORed) in registers: two neighbouring words of the
//    border-extended row form 128 bits, doubling (A_2k(x) = A_k(x) & A_k(x +
//    k)) gives the op of any k <= 64 consecutive bits, and windows longer than
//    64 combine L / 64 such blocks;
//  - vertical segments: van Herk/Gil-Werman on whole words, one thread per word
//  column and
//    block of L rows (suffix ANDs stored in the output, then prefix ANDs of the
//    next block); warps cover 32 consecutive words of a row, so every load and
//    store is coalesced;
//  - rectangles (a vertical then a horizontal segment) with ignore/constant
//  borders, in one kernel. Vertical windows <= 96 rows and horizontal arms <= 63
//    bits (band_rectangle_kernel): a warp walks down a band of rows over 32
//    word columns (30 written, 2 of halo), vHGW on each column with the block's
//    suffixes in a shared-memory ring, then the horizontal window of 8 rows at
//    once on (left lane, own, right lane) in registers (63- and 64-bit
//    windows: vHGW with the word as block, from the words' trailing and
//    leading ones; others by doubling), each input word read
//    once per band (plus vwindow - 1 rows at the band's top), each output word
//    written once. Larger ones (rectangle_kernel): a tile of 32 words x 64 rows
//    loads its input rows and halo into shared memory, ANDs them vertically by
//    doubling there, and runs the horizontal step on the shared rows;
//  - other (dx, dy) steps: the op of the L shifted rows (ignore and constant
//  borders only);
//  - pack: a warp reads 64 consecutive pixels and __ballot_sync builds the
//  word.
#include <algorithm>
#include <cstdint>

#include "binary/cuda/binary_cuda.hpp"
#include "core/border_index.hpp"
#include "core/cuda/check.cuh"

namespace granula::cuda {
namespace {

using granula::detail::bit_pass;
using granula::detail::check_cuda;
using granula::detail::check_launch;
using granula::detail::multiprocessors;
using granula::detail::to_cuda;

constexpr bit_word all_ones = ~bit_word{0};
// Grids put rows in y; taller images loop over rows (grid y is limited to
// 65535).
constexpr unsigned max_grid_y = 65535;

struct bits_in {
    const bit_word* data;
    std::int64_t width, height, stride;
};
struct bits_out {
    bit_word* data;
    std::int64_t width, height, stride;
};

bits_in raw(const_device_bit_view v) { return {v.data(), v.width(), v.height(), v.stride()}; }
bits_out raw(device_bit_view v) { return {v.data(), v.width(), v.height(), v.stride()}; }

__host__ __device__ inline std::int64_t row_words(std::int64_t width) { return (width + 63) / 64; }

__device__ inline bit_word last_mask(std::int64_t width) {
    const int r = static_cast<int>(width & 63);
    return r ? (bit_word{1} << r) - 1 : all_ones;
}

// Stores word i of a row: the last word keeps its bits past the width.
__device__ inline void store_word(bit_word* row, std::int64_t i, std::int64_t width, bit_word v) {
    if (i == row_words(width) - 1) {
        const bit_word m = last_mask(width);
        v = (v & m) | (row[i] & ~m);
    }
    row[i] = v;
}

template <bool Or>
__device__ inline bit_word op(bit_word a, bit_word b) {
    return Or ? (a | b) : (a & b);
}

__device__ inline bool get_bit(const bit_word* row, std::int64_t x) { return (row[x >> 6] >> (x & 63)) & 1u; }

// 64 bits of the border-extended row from position p on.
__device__ inline bit_word fetch(const bit_word* row, std::int64_t n, std::int64_t p, border_mode mode, bool pad) {
    if (p >= 0 && p + 64 <= n) {
        const std::int64_t q = p >> 6;
        const int r = static_cast<int>(p & 63);
        const bit_word lo = __ldg(row + q);
        return r ? (lo >> r) | (__ldg(row + q + 1) << (64 - r)) : lo;
    }
    bit_word v = 0;
    for (int b = 0; b < 64; ++b) {
        const std::int64_t j = granula::detail::border_index(p + b, n, mode);
        const bool bit = j < 0 ? pad : get_bit(row, j);
        v |= bit_word{bit} << b;
    }
    return v;
}

// The op of the `len` (1..64) consecutive bits starting at each of the 64
// positions of `lo`, where `hi` holds the 64 bits after `lo`.
template <bool Or>
__device__ inline bit_word window_bits(bit_word lo, bit_word hi, int len) {
    int k = 1;
    while (2 * k <= len) {
        lo = op<Or>(lo, (lo >> k) | (hi << (64 - k)));
        hi = op<Or>(hi,
                    hi >> k);  // the top k bits of hi lose their window: never needed below
        k *= 2;
    }
    const int s = len - k;
    return s ? op<Or>(lo, (lo >> s) | (hi << (64 - s))) : lo;
}

template <bool Or>
__global__ void horizontal_kernel(bits_in in, bits_out out, std::int64_t before, std::int64_t window, border_mode mode,
                                  bool pad) {
    const std::int64_t words = row_words(in.width);
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= words) return;
    const std::int64_t q = window >> 6;
    const int r = static_cast<int>(window & 63);
    for (std::int64_t y = blockIdx.y; y < in.height; y += gridDim.y) {
        const bit_word* row = in.data + y * in.stride;
        std::int64_t p = 64 * i - before;
        bit_word cur = fetch(row, in.width, p, mode, pad);
        bit_word acc = Or ? bit_word{0} : all_ones;
        for (std::int64_t j = 0; j < q; ++j) {
            p += 64;
            const bit_word next = fetch(row, in.width, p, mode, pad);
            acc = op<Or>(acc, window_bits<Or>(cur, next, 64));
            cur = next;
        }
        if (r) acc = op<Or>(acc, window_bits<Or>(cur, fetch(row, in.width, p + 64, mode, pad), r));
        store_word(out.data + y * out.stride, i, out.width, acc);
    }
}

// Word column i, output rows [y0, y1) = one block of `window` rows of the
// extended column.
template <bool Or>
__global__ void vertical_kernel(bits_in in, bits_out out, std::int64_t before, std::int64_t window, border_mode mode,
                                bool pad) {
    const std::int64_t words = row_words(in.width);
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t blocks = (in.height + window - 1) / window;
    if (i >= words) return;
    const bit_word pad_word = pad ? all_ones : bit_word{0};
    auto source = [&](std::int64_t j) -> bit_word {
        const std::int64_t r = granula::detail::border_index(j - before, in.height, mode);
        return r < 0 ? pad_word : __ldg(in.data + r * in.stride + i);
    };
    for (std::int64_t b = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; b < blocks;
         b += static_cast<std::int64_t>(gridDim.y) * blockDim.y) {
        const std::int64_t y0 = b * window, y1 = y0 + window < in.height ? y0 + window : in.height;
        // Suffixes of the block [y0, y0 + window), kept in the output rows.
        bit_word acc = Or ? bit_word{0} : all_ones;
        for (std::int64_t j = y0 + window - 1; j >= y0; --j) {
            acc = op<Or>(acc, source(j));
            if (j < y1) store_word(out.data + j * out.stride, i, out.width, acc);
        }
        // Prefixes of the next block: out(y) = suffix(y) op prefix(y0 + window .. y
        // + window - 1).
        acc = Or ? bit_word{0} : all_ones;
        for (std::int64_t y = y0; y < y1; ++y) {
            bit_word* o = out.data + y * out.stride;
            if (y > y0) store_word(o, i, out.width, op<Or>(o[i], acc));
            acc = op<Or>(acc, source(y + window));
        }
    }
}

// Fused rectangle: shared tile of `rows` = tile_rows + vwindow - 1 rows by
// `cols` words, words [x0 - halo_left, x0 - halo_left + cols) of the rows [y0 -
// before_v, ...) of the input, every bit outside the image (rows, words, bits
// past the width) set to `pad`.
constexpr int fused_threads = 512;  // 256 with 24 gathered words a thread took 109 registers: 25% occupancy
constexpr int fused_tile_words = 32;
constexpr int fused_max_words = 6144;  // 48 KB of shared memory: no opt-in needed
constexpr int fused_per_thread = fused_max_words / fused_threads;

template <bool Or>
__global__ void __launch_bounds__(fused_threads, 3)
    rectangle_kernel(bits_in in, bits_out out, int tile_rows, std::int64_t before_v, int vwindow, int halo_left,
                     int cols, std::int64_t before_h, std::int64_t hwindow, bool pad) {
    extern __shared__ bit_word tile[];
    const int t = threadIdx.x;
    const std::int64_t words = row_words(in.width);
    const std::int64_t x0 = static_cast<std::int64_t>(blockIdx.x) * fused_tile_words;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * tile_rows;
    const int rows = tile_rows + vwindow - 1;
    const bit_word pad_word = pad ? all_ones : bit_word{0};
    const bit_word tail = last_mask(in.width);
    for (int idx = t; idx < rows * cols; idx += fused_threads) {
        const int r = idx / cols, c = idx % cols;
        const std::int64_t y = y0 + r - before_v, w = x0 - halo_left + c;
        bit_word v = pad_word;
        if (y >= 0 && y < in.height && w >= 0 && w < words) {
            v = __ldg(in.data + y * in.stride + w);
            if (w == words - 1) v = (v & tail) | (pad_word & ~tail);
        }
        tile[idx] = v;
    }
    __syncthreads();
    // Vertical doubling in place: A_2k(r) = A_k(r) op A_k(r + k), values gathered
    // before writing.
    bit_word tmp[fused_per_thread];
    auto step = [&](int valid_rows, int shift) {
        const int n = valid_rows * cols, offset = shift * cols;
#pragma unroll
        for (int j = 0; j < fused_per_thread; ++j) {
            const int idx = t + j * fused_threads;
            if (idx < n) tmp[j] = op<Or>(tile[idx], tile[idx + offset]);
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < fused_per_thread; ++j) {
            const int idx = t + j * fused_threads;
            if (idx < n) tile[idx] = tmp[j];
        }
        __syncthreads();
    };
    int k = 1;
    while (2 * k <= vwindow) {
        step(rows - k, k);
        k *= 2;
    }
    if (vwindow > k) step(tile_rows, vwindow - k);
    // Horizontal step on the shared rows: rows [0, tile_rows) now hold the
    // vertical result.
    const std::int64_t q = hwindow >> 6;
    const int rem = static_cast<int>(hwindow & 63);
    const int tx = t % fused_tile_words;
    if (x0 + tx >= words) return;
    for (int r = t / fused_tile_words; r < tile_rows && y0 + r < in.height; r += fused_threads / fused_tile_words) {
        const bit_word* row = tile + r * cols;
        // Bit position in the shared row of the window start of the word's first
        // pixel.
        std::int64_t p = 64 * (tx + halo_left) - before_h;
        auto fetch_local = [&](std::int64_t pos) {
            const std::int64_t w = pos >> 6;
            const int b = static_cast<int>(pos & 63);
            return b ? (row[w] >> b) | (row[w + 1] << (64 - b)) : row[w];
        };
        bit_word cur = fetch_local(p);
        bit_word acc = Or ? bit_word{0} : all_ones;
        for (std::int64_t j = 0; j < q; ++j) {
            p += 64;
            const bit_word next = fetch_local(p);
            acc = op<Or>(acc, window_bits<Or>(cur, next, 64));
            cur = next;
        }
        if (rem) acc = op<Or>(acc, window_bits<Or>(cur, fetch_local(p + 64), rem));
        store_word(out.data + (y0 + r) * out.stride, x0 + tx, out.width, acc);
    }
}

// Streaming rectangle (vertical window <= band_max_vwindow, horizontal arms
// <= 63 bits): one warp per band of rows and 30 word columns. Lane l owns word
// column c0 - 1 + l and walks down the band: van Herk/Gil-Werman over blocks of
// `vwindow` rows, the block's suffix ANDs kept in a ring in shared memory (one
// slot per row of the block and lane), the next block's prefix in a register,
// so each input word is read once per band, with a batch of loads in flight
// ahead of use. The vertical result of each row goes to the two neighbouring
// lanes by shuffles and lanes 1..30 run the horizontal window on (left, own,
// right) in registers and store their word (63- and 64-bit windows with arms
// <= 32: word_window on the neighbours' prefix and suffix ops instead, 6
// doubling steps fewer). Lanes 0 and 31 are the halo.
constexpr int band_lanes = 32;
constexpr int band_out_words = band_lanes - 2;
constexpr int band_max_vwindow = 96;  // ring: 96 x 32 x 8 B = 24 KB a warp
constexpr int band_prefetch = 8;      // rows per batch: loads in flight per lane (16 measured 10% slower)

// 64 bits of the 128-bit (hi:lo) from bit k on, 0 < k < 64: two funnel
// shifts of 32-bit halves.
__device__ inline bit_word shr128(bit_word lo, bit_word hi, int k) {
    const unsigned l0 = static_cast<unsigned>(lo), l1 = static_cast<unsigned>(lo >> 32);
    const unsigned h0 = static_cast<unsigned>(hi), h1 = static_cast<unsigned>(hi >> 32);
    unsigned x, y;
    if (k < 32) {
        x = __funnelshift_r(l0, l1, k);
        y = __funnelshift_r(l1, h0, k);
    } else {
        x = __funnelshift_r(l1, h0, k - 32);
        y = __funnelshift_r(h0, h1, k - 32);
    }
    return bit_word{x} | (bit_word{y} << 32);
}

// window_bits on P independent rows at once (the doubling steps of one row
// depend on each other; those of different rows overlap).
template <bool Or, int P>
__device__ inline void window_batch(bit_word (&lo)[P], bit_word (&hi)[P], int len) {
    int k = 1;
    while (2 * k <= len) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            lo[p] = op<Or>(lo[p], shr128(lo[p], hi[p], k));
            hi[p] = op<Or>(hi[p], hi[p] >> k);
        }
        k *= 2;
    }
    const int r = len - k;
    if (r) {
#pragma unroll
        for (int p = 0; p < P; ++p) lo[p] = op<Or>(lo[p], shr128(lo[p], hi[p], r));
    }
}

// window_batch for len = 2^D + r, 0 <= r < 2^D, D fixed: the doubling shifts
// are constants.
template <bool Or, int P, int D>
__device__ inline void window_batch_fixed(bit_word (&lo)[P], bit_word (&hi)[P], int r) {
#pragma unroll
    for (int step = 0; step < D; ++step) {
        const int k = 1 << step;
#pragma unroll
        for (int p = 0; p < P; ++p) {
            lo[p] = op<Or>(lo[p], shr128(lo[p], hi[p], k));
            hi[p] = op<Or>(hi[p], hi[p] >> k);
        }
    }
    if (r) {
#pragma unroll
        for (int p = 0; p < P; ++p) lo[p] = op<Or>(lo[p], shr128(lo[p], hi[p], r));
    }
}

// D of band_rectangle_kernel for horizontal windows of 63 or 64 bits with
// both arms <= 32: see word_window.
constexpr int band_word_steps = 7;

// The op of the window [64 c + i - before_h, 64 c + i + after_h] for the 64
// bits i of word c (lane c: v its word), 63 or 64 bits long, before_h and
// after_h <= 32: van Herk/Gil-Werman with the word as block. Such a window
// spans at most two words: where it does, it is the suffix op of the first
// word from its start & the prefix op of the second up to its end (the suffix
// of the left lane's word, the prefix of the right lane's; AND prefixes are a
// word's trailing ones, x & ~(x + 1), suffixes the same on the reversed word);
// a 63-bit window starting at bit 0 (bit m0 of the result) is the prefix of its
// word alone, one starting at bit 1 (m1) the suffix alone. OR: the AND of the
// complement, complemented.
template <bool Or>
__device__ inline bit_word word_window(bit_word v, int before_h, int after_h, bit_word m0, bit_word m1) {
    const bit_word x = Or ? ~v : v;
    const bit_word pre = x & ~(x + 1);
    const bit_word rx = __brevll(x);
    const bit_word suf = __brevll(rx & ~(rx + 1));
    const unsigned p0 = static_cast<unsigned>(pre), p1 = static_cast<unsigned>(pre >> 32);
    const unsigned s0 = static_cast<unsigned>(suf), s1 = static_cast<unsigned>(suf >> 32);
    // Only the left word's high half and the right word's low half are reached.
    const unsigned s_left = __shfl_up_sync(0xffffffffu, s1, 1);
    const unsigned p_right = __shfl_down_sync(0xffffffffu, p0, 1);
    const int a = 32 - before_h;  // suffixes at the starts: (left suffix, suffix) from bit 64 - before_h
    const bit_word start = bit_word{__funnelshift_rc(s_left, s0, a)} | (bit_word{__funnelshift_rc(s0, s1, a)} << 32);
    const bit_word end = bit_word{__funnelshift_rc(p0, p1, after_h)} |
                         (bit_word{__funnelshift_rc(p1, p_right, after_h)} << 32);  // prefixes at the ends
    const bit_word w = (start & end) | (end & m0) | (start & m1);
    return Or ? ~w : w;
}

// A load issued where it is written (volatile asm keeps the batch's loads ahead
// of the previous batch's work).
__device__ inline bit_word load_nc(const bit_word* p) {
    bit_word v;
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}

// D >= 0: horizontal windows of 2^D..2^(D+1)-1 <= 64 bits; D < 0: any
// window with both arms <= 63 (two chains).
template <bool Or, int D, int P>
__global__ void __launch_bounds__(band_lanes)
    band_rectangle_kernel(bits_in in, bits_out out, std::int64_t band_rows, std::int64_t before_v, int vwindow,
                          int before_h, int after_h, bool pad) {
    extern __shared__ bit_word ring[];  // [vwindow][band_lanes]
    const int lane = threadIdx.x;
    const std::int64_t words = row_words(in.width);
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * band_out_words - 1 + lane;
    const std::int64_t y0 = static_cast<std::int64_t>(blockIdx.y) * band_rows;
    const std::int64_t y1 = y0 + band_rows < in.height ? y0 + band_rows : in.height;
    const bit_word id = Or ? bit_word{0} : all_ones;
    const bit_word pad_word = pad ? all_ones : bit_word{0};
    const bit_word tail = last_mask(in.width);
    const bool column_in = c >= 0 && c < words;
    const bool is_last = c == words - 1;
    // Extended rows j = 0 .. total - 1 are input rows y0 - before_v + j; output
    // row y0 + j - vwindow is complete when row j arrives (its window ends at
    // j - 1); rows [j_lo, j_hi) are in the image and needed.
    const std::int64_t total = (y1 - y0) + vwindow;
    const std::int64_t j_lo = column_in ? std::max<std::int64_t>(0, before_v - y0) : total;
    const std::int64_t j_hi = std::min<std::int64_t>(total - 1, in.height - y0 + before_v);
    const bit_word* src = in.data + (y0 - before_v) * in.stride + c;
    // The last word's bits past the width read as the pad.
    const bit_word keep = is_last ? tail : all_ones, fill = pad_word & ~keep;
    auto load = [&](std::int64_t j) -> bit_word {
        if (j < j_lo || j >= j_hi) return pad_word;
        return (load_nc(src + j * in.stride) & keep) | fill;
    };
    const bool writer = lane >= 1 && lane <= band_out_words && column_in;
    const bool keep_tail = is_last && (in.width & 63);
    const int hwindow = before_h + after_h + 1;
    // word_window's windows that lie inside one word (63 bits: those starting at its bit 0 or 1).
    const bit_word m0 = hwindow == 63 ? bit_word{1} << before_h : 0, m1 = m0 << 1;
    bit_word* dst = out.data + (y0 - vwindow) * out.stride + c;  // row j's output
    bit_word pre = id;
    int o = 0;  // slot of row j in its block
    bit_word cur[P], nxt[P];
#pragma unroll
    for (int p = 0; p < P; ++p) cur[p] = load(p);
    for (std::int64_t jb = 0; jb < total; jb += P) {
        if (jb + P >= j_lo && jb + 2 * P <= j_hi) {  // the whole next batch is in the image
            const bit_word* q = src + (jb + P) * in.stride;
#pragma unroll
            for (int p = 0; p < P; ++p) nxt[p] = (load_nc(q + p * in.stride) & keep) | fill;
        } else {
#pragma unroll
            for (int p = 0; p < P; ++p) nxt[p] = load(jb + P + p);
        }
        // Vertical: van Herk/Gil-Werman, suffix of the block in the ring and
        // prefix of the next in `pre`.
        bit_word v[P];
#pragma unroll
        for (int p = 0; p < P; ++p) {
            v[p] = id;
            if (jb + p < total) {  // uniform across the warp
                bit_word& slot = ring[o * band_lanes + lane];
                v[p] = op<Or>(slot, pre);
                pre = op<Or>(pre, cur[p]);
                slot = cur[p];
                if (++o == vwindow) {
                    o = 0;
                    pre = id;
                    bit_word acc = id;  // suffixes of the block; each lane its own slots
                    for (int s = vwindow - 1; s >= 0; --s) {
                        acc = op<Or>(acc, ring[s * band_lanes + lane]);
                        ring[s * band_lanes + lane] = acc;
                    }
                }
            }
        }
        if (jb + P > vwindow) {  // some row of the batch has an output
            // Horizontal on (left lane, own, right lane), all rows of the batch at once.
            bit_word lo[P];
            if constexpr (D == band_word_steps) {  // the window from neighbouring words' prefixes and suffixes
#pragma unroll
                for (int p = 0; p < P; ++p) lo[p] = word_window<Or>(v[p], before_h, after_h, m0, m1);
            } else {
                bit_word hi[P], lo2[P], hi2[P];
#pragma unroll
                for (int p = 0; p < P; ++p) {
                    const bit_word l = __shfl_up_sync(0xffffffffu, v[p], 1);
                    const bit_word r = __shfl_down_sync(0xffffffffu, v[p], 1);
                    // The window [k - before_h, k + after_h] starts at bit 64 - before_h of (l, v, r).
                    if (before_h) {
                        lo[p] = shr128(l, v[p], 64 - before_h);
                        hi[p] = shr128(v[p], r, 64 - before_h);
                    } else {
                        lo[p] = v[p];
                        hi[p] = r;
                    }
                    lo2[p] = v[p];
                    hi2[p] = r;
                }
                if constexpr (D >= 0) {
                    window_batch_fixed<Or, P, D>(lo, hi, hwindow - (1 << D));
                } else if (hwindow <= 64) {
                    window_batch<Or, P>(lo, hi, hwindow);
                } else {  // [k - before_h, k] and [k, k + after_h]
                    window_batch<Or, P>(lo, hi, before_h + 1);
                    window_batch<Or, P>(lo2, hi2, after_h + 1);
#pragma unroll
                    for (int p = 0; p < P; ++p) lo[p] = op<Or>(lo[p], lo2[p]);
                }
            }
            if (writer) {
                const bool whole = jb >= vwindow && jb + P <= total;  // every row of the batch is an output
                bit_word* to = dst + jb * out.stride;
#pragma unroll
                for (int p = 0; p < P; ++p, to += out.stride) {
                    if (whole || (jb + p >= vwindow && jb + p < total)) {
                        bit_word w = lo[p];
                        if (keep_tail) w = (w & tail) | (*to & ~tail);
                        *to = w;
                    }
                }
            }
        }
#pragma unroll
        for (int p = 0; p < P; ++p) cur[p] = nxt[p];
    }
}

template <bool Or>
__global__ void general_kernel(bits_in in, bits_out out, std::int64_t length, std::int64_t start, int dx, int dy,
                               bool pad) {
    const std::int64_t words = row_words(in.width);
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= words) return;
    for (std::int64_t y = blockIdx.y; y < in.height; y += gridDim.y) {
        bit_word acc = Or ? bit_word{0} : all_ones;
        for (std::int64_t k = 0; k < length; ++k) {
            const std::int64_t r = y + (start + k) * dy;
            const bit_word v = (r < 0 || r >= in.height) ? (pad ? all_ones : bit_word{0})
                                                         : fetch(in.data + r * in.stride, in.width,
                                                                 64 * i + (start + k) * dx, border_mode::constant, pad);
            acc = op<Or>(acc, v);
        }
        store_word(out.data + y * out.stride, i, out.width, acc);
    }
}

__global__ void complement_kernel(bits_in in, bits_out out) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= row_words(in.width)) return;
    for (std::int64_t y = blockIdx.y; y < in.height; y += gridDim.y)
        store_word(out.data + y * out.stride, i, out.width, ~in.data[y * in.stride + i]);
}

__global__ void and_kernel(bits_in a, bits_out out) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= row_words(a.width)) return;
    for (std::int64_t y = blockIdx.y; y < a.height; y += gridDim.y) {
        bit_word* o = out.data + y * out.stride;
        store_word(o, i, out.width, o[i] & a.data[y * a.stride + i]);
    }
}

// One warp per word: lane l reads pixels 64 i + l and 64 i + 32 + l.
template <class T>
__global__ void pack_kernel(const T* in, std::int64_t in_stride, bits_out out, T threshold) {
    const std::int64_t words = row_words(out.width);
    const std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const unsigned lane = threadIdx.x & 31;
    if (i >= words) return;  // whole warps leave together: blockDim.x is a multiple of 32
    for (std::int64_t y = blockIdx.y; y < out.height; y += gridDim.y) {
        const T* row = in + y * in_stride;
        const std::int64_t x0 = 64 * i + lane, x1 = x0 + 32;
        const unsigned lo = __ballot_sync(0xffffffffu, x0 < out.width && row[x0] > threshold);
        const unsigned hi = __ballot_sync(0xffffffffu, x1 < out.width && row[x1] > threshold);
        if (lane == 0) store_word(out.data + y * out.stride, i, out.width, bit_word{lo} | (bit_word{hi} << 32));
    }
}

template <class T>
__global__ void unpack_kernel(bits_in in, T* out, std::int64_t out_stride) {
    const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (x >= in.width) return;
    for (std::int64_t y = blockIdx.y; y < in.height; y += gridDim.y)
        out[y * out_stride + x] = static_cast<T>((in.data[y * in.stride + (x >> 6)] >> (x & 63)) & 1u);
}

// 0/1 of the 32 bits of unsigned pixels in a word, per byte or half-word lane.
template <class T>
__device__ __forceinline__ std::uint32_t zero_one_word(std::uint32_t w) {
    static_assert(sizeof(T) <= 2, "zero_one takes uint8 and uint16 pixels");
    if constexpr (sizeof(T) == 1)
        return __vcmpne4(w, 0u) & 0x01010101u;
    else
        return __vcmpne2(w, 0u) & 0x00010001u;
}

// Thread c of a row takes the 16 aligned bytes from pixel c E - a (E pixels in 16 bytes, a the
// row's first pixel's place in its 16 bytes) by one vector load and store, or pixel by pixel
// where those bytes reach past the row: one byte per thread ran at about 380 GB/s on an H200.
template <class T>
__global__ void zero_one_kernel(T* image, std::int64_t stride, std::int64_t width, std::int64_t height) {
    constexpr std::int64_t E = 16 / sizeof(T);
    const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (std::int64_t y = blockIdx.y; y < height; y += gridDim.y) {
        T* const row = image + y * stride;
        const auto a = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(row) / sizeof(T) % E);
        const std::int64_t x0 = c * E - a;
        if (x0 >= width) continue;
        if (x0 >= 0 && x0 + E <= width) {
            uint4* const p = reinterpret_cast<uint4*>(row + x0);
            uint4 v = *p;
            v.x = zero_one_word<T>(v.x), v.y = zero_one_word<T>(v.y);
            v.z = zero_one_word<T>(v.z), v.w = zero_one_word<T>(v.w);
            *p = v;
        } else {
            const std::int64_t end = x0 + E < width ? x0 + E : width;
            for (std::int64_t x = x0 > 0 ? x0 : 0; x < end; ++x)
                row[x] = static_cast<T>(row[x] != T{0});
        }
    }
}

dim3 row_grid(std::int64_t items, unsigned block, std::int64_t rows) {
    return dim3(static_cast<unsigned>((items + block - 1) / block),
                static_cast<unsigned>(std::min<std::int64_t>(rows, max_grid_y)));
}

}  // namespace

void zero_words(bit_word* words, std::size_t count) {
    check_cuda(cudaMemset(words, 0, count * sizeof(bit_word)), "cudaMemset (new bit image)");
}

void bit_segment_pass(const_device_bit_view in, device_bit_view out, const bit_pass& p, stream s) {
    const cudaStream_t st = to_cuda(s.native_handle());
    const std::int64_t words = in.row_words();
    const std::int64_t window = p.before + p.after + 1;
    switch (p.dir) {
        case bit_pass::direction::horizontal: {
            constexpr unsigned block = 128;
            const dim3 grid = row_grid(words, block, in.height());
            if (p.dilate)
                horizontal_kernel<true><<<grid, block, 0, st>>>(raw(in), raw(out), p.before, window, p.mode, p.pad);
            else
                horizontal_kernel<false><<<grid, block, 0, st>>>(raw(in), raw(out), p.before, window, p.mode, p.pad);
            check_launch("binary horizontal pass");
            return;
        }
        case bit_pass::direction::vertical: {
            // 32 word columns x 4 row blocks per thread block; warps run along rows.
            const dim3 block(32, 4);
            const std::int64_t blocks = (in.height() + window - 1) / window;
            const dim3 grid(static_cast<unsigned>((words + 31) / 32),
                            static_cast<unsigned>(std::min<std::int64_t>((blocks + 3) / 4, max_grid_y)));
            if (p.dilate)
                vertical_kernel<true><<<grid, block, 0, st>>>(raw(in), raw(out), p.before, window, p.mode, p.pad);
            else
                vertical_kernel<false><<<grid, block, 0, st>>>(raw(in), raw(out), p.before, window, p.mode, p.pad);
            check_launch("binary vertical pass");
            return;
        }
        case bit_pass::direction::general: {
            constexpr unsigned block = 128;
            const dim3 grid = row_grid(words, block, in.height());
            if (p.dilate)
                general_kernel<true><<<grid, block, 0, st>>>(raw(in), raw(out), p.length, p.start, p.dx, p.dy, p.pad);
            else
                general_kernel<false><<<grid, block, 0, st>>>(raw(in), raw(out), p.length, p.start, p.dx, p.dy, p.pad);
            check_launch("binary general segment pass");
            return;
        }
    }
}

namespace {

// Rows per warp of the streaming rectangle kernel: the fewest that put all
// warps in one wave (a second, partial wave costs a whole band's time), but
// bands of at least the vertical window (each band reads vwindow - 1 rows more).
std::int64_t band_rows_for(std::int64_t height, std::int64_t groups, std::int64_t vwindow, int per_sm) {
    const std::int64_t wave = static_cast<std::int64_t>(per_sm) * multiprocessors();
    const std::int64_t bands = std::max<std::int64_t>(1, wave / groups);
    std::int64_t rows = (height + bands - 1) / bands;
    rows = (rows + band_prefetch - 1) / band_prefetch * band_prefetch;
    rows = std::max<std::int64_t>(rows, std::max<std::int64_t>(vwindow, 32));
    return std::min<std::int64_t>(rows, height);
}

using band_kernel_t = void (*)(bits_in, bits_out, std::int64_t, std::int64_t, int, int, int, bool);

band_kernel_t band_kernel_for(bool dilate, int steps) {
    constexpr int P = band_prefetch;
    switch (steps) {
        case 0: return dilate ? band_rectangle_kernel<true, 0, P> : band_rectangle_kernel<false, 0, P>;
        case 1: return dilate ? band_rectangle_kernel<true, 1, P> : band_rectangle_kernel<false, 1, P>;
        case 2: return dilate ? band_rectangle_kernel<true, 2, P> : band_rectangle_kernel<false, 2, P>;
        case 3: return dilate ? band_rectangle_kernel<true, 3, P> : band_rectangle_kernel<false, 3, P>;
        case 4: return dilate ? band_rectangle_kernel<true, 4, P> : band_rectangle_kernel<false, 4, P>;
        case 5: return dilate ? band_rectangle_kernel<true, 5, P> : band_rectangle_kernel<false, 5, P>;
        case 6: return dilate ? band_rectangle_kernel<true, 6, P> : band_rectangle_kernel<false, 6, P>;
        case band_word_steps:
            return dilate ? band_rectangle_kernel<true, band_word_steps, P>
                          : band_rectangle_kernel<false, band_word_steps, P>;
        default: return dilate ? band_rectangle_kernel<true, -1, P> : band_rectangle_kernel<false, -1, P>;
    }
}

}  // namespace

bool rectangle_pass(const_device_bit_view in, device_bit_view out, const bit_pass& v, const bit_pass& h, stream s) {
    using bp = bit_pass::direction;
    if (v.dir != bp::vertical || h.dir != bp::horizontal || v.dilate != h.dilate || v.pad != h.pad ||
        v.mode != h.mode || (v.mode != border_mode::ignore && v.mode != border_mode::constant))
        return false;
    const std::int64_t vwindow = v.before + v.after + 1, hwindow = h.before + h.after + 1;
    const cudaStream_t st = to_cuda(s.native_handle());
    if (vwindow <= band_max_vwindow && h.before <= 63 && h.after <= 63) {
        const std::int64_t groups = (in.row_words() + band_out_words - 1) / band_out_words;
        const std::size_t shared = static_cast<std::size_t>(vwindow) * band_lanes * sizeof(bit_word);
        int steps = -1;  // floor(log2(hwindow)) for windows <= 64 bits
        if (hwindow <= 64)
            for (steps = 0; (std::int64_t{2} << steps) <= hwindow;) ++steps;
        if ((hwindow == 63 || hwindow == 64) && h.before <= 32 && h.after <= 32)
            steps = band_word_steps;
        const auto kernel = band_kernel_for(v.dilate, steps);
        int per_sm = 0;
        check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, band_lanes, shared),
                   "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        const std::int64_t band = band_rows_for(in.height(), groups, vwindow, std::max(per_sm, 1));
        const std::int64_t bands = (in.height() + band - 1) / band;
        if (bands <= max_grid_y) {
            const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(bands));
            kernel<<<grid, band_lanes, shared, st>>>(raw(in), raw(out), band, v.before, static_cast<int>(vwindow),
                                                     static_cast<int>(h.before), static_cast<int>(h.after), v.pad);
            check_launch("binary band rectangle pass");
            return true;
        }
    }
    // Shared rows: the window start of a word's first pixel lies halo_left words
    // back; the fetches of its window reach hwindow / 64 + 2 words on.
    const std::int64_t halo_left = (h.before + 63) / 64, halo_right = hwindow / 64 + 2;
    const std::int64_t cols = fused_tile_words + halo_left + halo_right;
    std::int64_t tile_rows = 64;
    while (tile_rows > 8 && (tile_rows + vwindow - 1) * cols > fused_max_words) tile_rows /= 2;
    if ((tile_rows + vwindow - 1) * cols > fused_max_words || tile_rows < vwindow / 4) return false;
    const std::int64_t rows_tiles = (in.height() + tile_rows - 1) / tile_rows;
    if (rows_tiles > max_grid_y) return false;
    const dim3 grid(static_cast<unsigned>((in.row_words() + fused_tile_words - 1) / fused_tile_words),
                    static_cast<unsigned>(rows_tiles));
    const std::size_t shared = static_cast<std::size_t>((tile_rows + vwindow - 1) * cols) * sizeof(bit_word);
    auto launch = [&](auto kernel) {
        kernel<<<grid, fused_threads, shared, st>>>(raw(in), raw(out), static_cast<int>(tile_rows), v.before,
                                                    static_cast<int>(vwindow), static_cast<int>(halo_left),
                                                    static_cast<int>(cols), h.before, hwindow, v.pad);
    };
    if (v.dilate)
        launch(rectangle_kernel<true>);
    else
        launch(rectangle_kernel<false>);
    check_launch("binary rectangle pass");
    return true;
}

void bit_complement(const_device_bit_view in, device_bit_view out, stream s) {
    constexpr unsigned block = 128;
    complement_kernel<<<row_grid(in.row_words(), block, in.height()), block, 0, to_cuda(s.native_handle())>>>(raw(in),
                                                                                                              raw(out));
    check_launch("binary complement");
}

void bit_and(const_device_bit_view a, device_bit_view out, stream s) {
    constexpr unsigned block = 128;
    and_kernel<<<row_grid(a.row_words(), block, a.height()), block, 0, to_cuda(s.native_handle())>>>(raw(a), raw(out));
    check_launch("binary and");
}

template <class T>
void pack_bits(device_view<const T> in, device_bit_view out, T threshold, stream s) {
    constexpr unsigned block = 256;  // 8 words
    pack_kernel<T><<<row_grid(out.row_words() * 32, block, in.height()), block, 0, to_cuda(s.native_handle())>>>(
        in.data(), in.stride(), raw(out), threshold);
    check_launch("pack");
}

template <class T>
void unpack_bits(const_device_bit_view in, device_view<T> out, stream s) {
    constexpr unsigned block = 256;
    unpack_kernel<T><<<row_grid(in.width(), block, in.height()), block, 0, to_cuda(s.native_handle())>>>(
        raw(in), out.data(), out.stride());
    check_launch("unpack");
}

template <class T>
void zero_one(device_view<T> image, stream s) {
    constexpr unsigned block = 256;
    constexpr std::int64_t E = 16 / sizeof(T);
    const std::int64_t chunks = (image.width() + E - 1) / E + 1;  // a row's 16-byte pieces, at most
    zero_one_kernel<T><<<row_grid(chunks, block, image.height()), block, 0, to_cuda(s.native_handle())>>>(
        image.data(), image.stride(), image.width(), image.height());
    check_launch("zero_one");
}

#define GRANULA_INSTANTIATE(type, name)                                                    \
    template void pack_bits<type>(device_view<const type>, device_bit_view, type, stream); \
    template void unpack_bits<type>(const_device_bit_view, device_view<type>, stream);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE
template void zero_one<std::uint8_t>(device_view<std::uint8_t>, stream);
template void zero_one<std::uint16_t>(device_view<std::uint16_t>, stream);

}  // namespace granula::cuda
