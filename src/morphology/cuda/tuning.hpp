// Launch shapes of the CUDA morphology kernels, one policy per GPU generation.
//
// Only sm_90 (H100/H200) has been measured so far; every other device uses the same numbers.
// The gains noted below were measured with bench/gpu (bench_gpu_morphology) on one H200, 16384²
// uint8 and 8192² float32; see docs/benchmarks.md for the full table and command.
#pragma once

namespace granula::cuda::detail {

struct tuning_policy {
    // Chunk length C of the two-level van Herk/Gil-Werman scheme is chosen per window as the
    // largest power of two <= L - 1, capped here. Windows L <= 2 * max_chunk need no coarse pass
    // (m = (L - 1) / C = 1); longer ones add one read of the image for the chunk minima.
    // 32 keeps the per-thread suffix array (C words) in registers without spilling.
    static constexpr int max_chunk = 32;

    // Vertical pass: positions along the column handled by one thread (K = rows / C chunks).
    // 64 rows amortise the b-stream warm-up (r < C rows) to under half a row per output.
    static constexpr int vertical_rows_per_thread = 64;
    // Threads per block of the vertical kernels (one thread per packed 4-byte column word).
    static constexpr int vertical_block_threads = 128;

    // Horizontal pass: a block holds 32 row groups (32 * P rows, P pixels per 4-byte word) and
    // horizontal_warps * 32 output columns in shared memory; each thread handles 32 positions.
    static constexpr int horizontal_warps = 4;
    static constexpr int horizontal_positions_per_thread = 32;
    static constexpr int horizontal_tile = horizontal_warps * horizontal_positions_per_thread;
    // Column words whose global loads a thread issues together when staging a tile.
    static constexpr int horizontal_load_batch = 4;

    // Element-wise kernels (differences of the compound operations).
    static constexpr int elementwise_block_threads = 256;
};

}  // namespace granula::cuda::detail
