// Launch shapes of the CUDA morphology kernels.
//
// One policy for now, measured on sm_90 (one H200, bench/gpu/bench_gpu_morphology, erosion,
// 16384² uint8 and 8192² float32, inputs rotated over 4 buffers, median of 15 runs; the copy
// floor is a 268 MB cudaMemcpyAsync at 0.129 ms). The gains noted are what each choice changed
// in those runs; other GPUs use the same numbers until measured.
#pragma once

#include <cstddef>

namespace granula::cuda::detail {

struct tuning_policy {
    // Chunk length C of the two-level van Herk/Gil-Werman scheme: the largest power of two
    // <= L - 1, capped here. Windows L <= 2 * max_chunk need no coarse pass (m = (L-1)/C = 1);
    // longer ones add one read of the image for the chunk minima (measured +0.09 to +0.17 ms on
    // 268 MB). 32 keeps the per-thread suffix array (C words) in registers without spilling.
    static constexpr int max_chunk = 32;
    // A line at an angle whose runs, read at every repeat of its period, span at most this many
    // rows is read as runs alone, in one runs pass (fold_short_periodic_line in morphology_cuda.cu).
    static constexpr int max_folded_rows = 48;
    // The scan-line passes (lines/cuda/scan_line_passes.cuh) take chunks up to 64, so that
    // windows up to 128 need no coarse pass: 96-110 registers and no spills against 48-64, but
    // the chunk minima's extra read of the image and kernel go. One H200, 8000^2 uint8 openings
    // at λ = 101 (two rounds, 2026-12-02): 45 deg 0.305 -> 0.209 ms, 60 deg 0.269 -> 0.205, 30
    // deg 0.336 -> 0.275; λ = 41 (chunks of 32 either way) unchanged. Windows past 128 take
    // the coarse level either way, and chunks of 32 (chunk_length in vhgw.cuh).
    static constexpr int scan_line_max_chunk = 64;
    // The vertical pass's words of several pixels (packed uint8 and uint16) likewise take
    // chunks up to 64; its one-pixel words spill at 32 already (vertical_pass.cuh). One H200,
    // 2026-12-02, two rounds: 16384^2 uint8 erosion by vline:101 0.245 -> 0.208 ms, vline:127
    // 0.265 -> 0.248, rect:101x101 0.554 -> 0.514; the 8000^2 opening by line(101, 90) 0.158 ->
    // 0.142; L <= 65 unchanged. Past 128, chunks of 32 as above.
    static constexpr int vertical_packed_max_chunk = 64;

    // Vertical pass (and the scan-line passes of lines/cuda/scan_line_passes.cuh): positions
    // along the column handled by one thread (K = rows / C chunks). 64 rows amortise the
    // b-stream warm-up (r < C rows) to under half a row per output, but give half the blocks:
    // one H100, 64 -> 32 rows took 16384^2 uint8 vline:63 from 0.306 to 0.270 ms, 8000^2 uint8
    // openings by vline:41 / vline:101 from 0.194 / 0.267 to 0.139 / 0.226 ms (bench_gpu_shapes,
    // alternated twice in one call, 2026-11-28); the 64-row blocks made 2.2 waves of 7 blocks per
    // SM at 8000^2.
    static constexpr int vertical_rows_per_thread = 32;
    // The sheared pass's one-pixel kernel and chunk minima (element_passes.cu): not re-measured
    // since the vertical pass's change above.
    static constexpr int sheared_rows_per_thread = 64;
    // Threads per block of the vertical kernels (one thread per packed 4-byte column word).
    // The grid puts column blocks in x (fastest), so the blocks running together cover whole
    // rows: float32 L=63 went from 0.42 to 0.19 ms (DRAM 71-84% busy) against runs in x.
    static constexpr int vertical_block_threads = 128;
    // Row-pointer tables (pad row / scratch row, no per-load branch or bounds test) against
    // row-offset tables with a branch per load: uint8 L=3/63/1001 0.35/0.50/0.61 ->
    // 0.21/0.25/0.36 ms; float32 0.18/0.20/0.29 -> 0.19/0.22/0.36 ms (slower: a per-type choice
    // is left to measure).
    // Vertical passes over small images (above all the coarse W pass, ~545 x 16384) use one
    // chunk per thread when the default shape gives fewer blocks than this per multiprocessor:
    // with 64 rows per thread that pass took 60 us (12% occupancy) for 9 MB.
    static constexpr int vertical_min_blocks_per_sm = 8;

    // Sheared pass over packed words (uint8, uint16; sheared_staged_kernel in element_passes.cu):
    // positions per block run, staged 32 at a time through shared memory (at least one stage).
    // The sheared pass alone on one H200, 16384^2 uint8 (__vminu4 words), 64 / 128 positions:
    // 45 deg L = 63 0.52 / 0.58 ms, step (2, 1) L = 33 0.44 / 0.50, step (26, 15) L = 9 0.50 /
    // 0.59; 8192^2 uint16 45 deg L = 63 0.24 / 0.29 ms. An earlier version (one chunk per stage,
    // 128-word blocks) took 0.70 / 0.75 / 0.84 ms at 45 deg with 64 / 128 / 256.
    static constexpr int sheared_staged_rows = 64;

    // Horizontal pass, tiled kernel (rows too wide for the whole-row kernel below): a block
    // holds 32 row groups (32 * P rows, P pixels per 4-byte word) and horizontal_warps * 32
    // window starts in shared memory; each thread handles 32 positions.
    static constexpr int horizontal_warps = 4;
    static constexpr int horizontal_positions_per_thread = 32;
    static constexpr int horizontal_tile = horizontal_warps * horizontal_positions_per_thread;
    // Global loads a thread issues together when staging a tile (batch = this / P column words
    // of P rows). With 4 in flight and XOR-swizzled, division-indexed tasks the pass took
    // 0.95 ms (uint8) / 0.68 ms (float32) at L=63; 16 in flight, a padded pitch-33 layout and
    // division-free task lanes: 0.52 / 0.45 ms.
    static constexpr int horizontal_loads_in_flight = 16;

    // Whole-row horizontal kernel (horizontal_pass.cuh): words per thread run, and the range of
    // threads per block, from which run_rows takes the fewest that keep the most threads
    // resident (64 registers each). 16-word runs are one 16-byte vector per row and run for
    // uint8. Measured with at most 1024 / 512 / 256 threads, 16384^2 uint8 L = 3..1001:
    // 0.35-0.37 / 0.31-0.32 / 0.31-0.33 ms (one, two, three blocks per SM: 72 KB of shared
    // memory each); 8192^2 float32: 0.23-0.25 / 0.23-0.25 / 0.20-0.22 ms.
    static constexpr int horizontal_row_run = 16;
    static constexpr int horizontal_row_min_threads = 256;
    static constexpr int horizontal_row_threads = 1024;

    // Fused opening/closing by a vertical line (fused_opening.cuh, float32): word columns per
    // block, threads per block, output rows per block (fewer where the staged rows would pass
    // the shared-memory budget), that budget in bytes, and the chunk cap (16: with 32 the
    // engine took 116-128 registers, two blocks per SM; fused_opening.cuh has the timings).
    static constexpr int fused_strip_words = 16;
    static constexpr int fused_vertical_threads = 256;
    static constexpr int fused_rows = 256;
    static constexpr int fused_max_shared = 100 * 1024;
    static constexpr int fused_max_chunk = 16;

    // Uint8 and uint16 openings/closings by a vertical line streamed down strips
    // (fused_opening.cuh): the longest line it takes, by pixel size, and the fewest blocks of k
    // rows a segment spans (the halo is 2 blocks). The limits are where it stopped beating the
    // passes on one H100 at 8000^2 (uint8: faster at 61, slower at 81; uint16: faster at 101,
    // slower at 128): its shared memory grows with the line and takes warps away.
    static constexpr long long streamed_max_length(std::size_t pixel_bytes) { return pixel_bytes == 1 ? 64 : 104; }
    static constexpr long long streamed_min_blocks = 4;

    // Windows along rows by doubling (row_doubling.cuh: a pass, or an opening or closing):
    // threads per block, a warp per row segment.
    static constexpr int doubling_threads = 256;

    // Element-wise kernels (differences of the compound operations).
    static constexpr int elementwise_block_threads = 256;
};

// uint8 word representation (words.cuh): __vminu4 is emulated on sm_90, min.u16x2 is native.
// Vertical pass, L=63: __vminu4 words 0.50 ms, split u16x2 words 0.91 ms (96 registers, 30%
// occupancy, instruction-fetch stalls) -> __vminu4 words in registers, whose running minima
// accumulate split (accumulator<> in words.cuh; one H200, 16384^2 vline:63 0.219 -> 0.192 ms,
// docs/benchmarks.md, 2026-12-01). Horizontal pass, L=63: 0.52 ms with __vminu4, 0.47 ms split
// -> split (split_word<uint8_t> in words.cuh).

}  // namespace granula::cuda::detail
