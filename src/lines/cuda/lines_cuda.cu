// CUDA linear openings and closings along scan lines, one angle or many in one launch
// (Karas et al. 2015, §4-5), with the reductions over angles done on the fly.
//
// Every thread filters one scan line of one angle, or one zone of it, with the 1-D algorithms
// the CPU runs (lines/scan_line_filter.hpp: open_fifo / open_stack, nan_window,
// constant_border_fix), so the results agree bit for bit.
//   - Lines are read on the "oriented" image (lines/scan_lines.hpp): the input for steep angles,
//     a transposed copy made once per call for flat ones, so the threads of a warp (adjacent
//     lines c, c+1, ...) read neighbouring pixels of one row. The shift tables of all angles
//     are built on the device, from each angle's fixed-point slope.
//   - All angles run in one launch: blocks of `threads` adjacent lines, each block in one zone
//     of one angle (block_begin per angle, found by binary search).
//   - Zones (the paper's §5.1): when the lines are too few to fill the GPU, each line is cut
//     into zones of zone_rows oriented rows; a zone filters the true extended line over its
//     rows widened by λ - 1 on each side (every window that holds a sample of the zone), so
//     its outputs are exact. The padding of that sub-line is the lowest key: windows that
//     reach into it never win the dilation.
//   - automatic (border ignore or constant) runs the two-pass path instead: van Herk/Gil-Werman
//     along the scan lines, branch-free, stage 1 into a scratch image per angle, stage 2 from it
//     (see vhgw_zone); several times faster than the queues, which diverge within a warp. One
//     angle's filtered image alone (uint8, uint16) takes scan_line_passes.cuh instead, the
//     morphology's vertical engine along the scan lines: 1.5-1.6x faster on 8000^2 images.
//   - Queues (open_fifo, 16-bit positions while λ < 16384) or stacks (open_stack) live in
//     shared memory, one slab per thread with an odd word stride; when a block's slabs do not
//     fit, in global memory with a grid bounded by a scratch budget. Samples are loaded four
//     reads ahead (line_reader).
//   - Extremum and orientation: one atomicMax per output on a word key << r | (max - rank),
//     rank = position in the plan (sorted by angle value), so the largest key wins (keys as
//     line_keys::reduction_key orders them: reversed for the other extremum) and ties go to the
//     smallest angle; one word buffer for steep angles, one in oriented (transposed) layout for
//     flat ones, merged at the end through a shared-memory tile.
//   - Spectrum: per-block sums in double in a fixed order, then per angle in block order:
//     deterministic, exact for integer types (sums < 2^53).
//   - Filtered images: written in place for steep angles; flat angles write an oriented
//     scratch image that is transposed into the output afterwards (coalesced both ways).
#include "lines/cuda/lines_cuda.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/border_index.hpp"
#include "core/cuda/check.cuh"
#include "core/cuda/stream_buffer.cuh"
#include "morphology/cuda/words.cuh"
#include "lines/cuda/scan_line_passes.cuh"
#include "lines/scan_line_filter.hpp"
#include "lines/scan_lines.hpp"

namespace granula::cuda {
namespace {

namespace gd = granula::detail;
namespace cd = granula::cuda::detail;
using gd::check_cuda;
using gd::check_launch;
using gd::device_attribute;
using gd::multiprocessors;
using gd::stream_buffer;
using gd::to_cuda;

constexpr const char* scratch_what = "cudaMallocAsync (linear filter scratch)";
using i64 = std::int64_t;
using i32 = std::int32_t;

// Launch shapes and storage, measured on one H200 (bench/gpu/lines_bench.cpp: the 640x640
// uint8 orientation map over 180 angles at λ = 41, and single openings of 8000x8000 uint8 at
// λ = 41 / 101; whole public calls, median of 15; docs/benchmarks.md). What each step changed:
//   1. int32 queue positions, zones below 4 waves:  640² 180 angles fifo 3.97 ms (stack 7.22);
//      8000² 90° 2.50 ms (λ = 41), 6.02 ms (λ = 101).
//   2. loads four samples ahead (line_reader), zones below 2 waves: 3.39 ms; 2.47 / 5.75 ms -
//      the single opening did not move, so the wait is not on global memory.
//   3. uint16 fifo positions (line_queue<K, P>) and the max-shared carveout: 2.68 ms;
//      2.16 / 3.58 ms. The queues bound occupancy: λ = 41 uint8 fifo needs 392 B of shared
//      memory per thread (8 blocks of 64 per SM, 25% theoretical occupancy), λ = 101 776 B.
// Nsight Compute on step 3's 640² map: 19.8% achieved occupancy, 0.44 instructions issued per
// scheduler and cycle, the top stall a fixed-latency dependency, 21 of 32 threads active: the
// queues' data-dependent loops diverge within a warp, which pays the longest per sample.
// Stack is 2-3x slower than fifo in every case (its bursts of writes diverge more).
// The two-pass path (vhgw_kernel, automatic under border ignore/constant):
//   4. one line per thread: map 1.68 ms, 8000² 90° 1.02 ms (λ = 41), 1.87 ms (λ = 101).
//   5. four uint8 lines per thread (__vminu4), scratch indexed by line: 1.61 / 0.68 ms. Nsight
//      Compute on the map: stages 0.50 and 0.63 ms, 56% theoretical occupancy (56 registers),
//      33-38% achieved, 1.23 waves of blocks, 0.6 instructions issued per scheduler and cycle.
//   6. threads whose zone lies on the image skip every bound (32-bit rows), zones of 64 rows:
//      1.23 ms; 8000² 90° 0.38 ms, 45° 0.83 ms (λ = 41), 0.72 / 1.21 ms (λ = 101).
//   7. (2026-11-27; 0°/45°/90° go through the morphology since.) Nsight Compute on 8000² 60°,
//      λ = 41: stage 1 0.22 ms, stage 2 0.21 ms, 35-42% achieved occupancy; of the cycles
//      between a warp's instructions (17.5 in stage 1, 12.9 in stage 2), 13.1 and 7.3 waited
//      on a scoreboard dependency: one sample load in flight per thread. Samples loaded in
//      batches of 4 rows (batched_samples), and flat angles' transposes in 4-byte words
//      (0.131 -> 0.047 ms each): 8000² 30° 0.70 -> 0.46 ms, 60° 0.44 -> 0.36 ms (λ = 41),
//      1.14 -> 0.72 / 0.89 -> 0.61 ms (λ = 101); map 0.84 -> 0.82 ms. Tried with words.cuh's
//      split_word (u16x2 halves) instead of __vminu4: unbatched no gain (60° 0.45 ms), in
//      batches of 4 3-11% slower than __vminu4 (64 registers in both stages), in batches of 8
//      (72 / 64 registers) the map 1.08 ms. Zones rounded up to whole blocks of λ rows (fewer
//      samples per output): 5-10% slower (one H100; 60° λ = 41 0.38 -> 0.41 ms).
struct lines_tuning {
    // Lines per block when the block's queues fit in shared memory (else 32).
    static constexpr int block_threads = 64;
    // Zones: only when the lines of all angles give fewer than `waves` full loads of the GPU;
    // a zone has at least zone_min_rows rows and zone_overlap_factor * (λ - 1), so the overlap
    // read twice stays a fraction of the zone.
    static constexpr int waves = 2;
    static constexpr i64 zone_min_rows = 128;
    static constexpr i64 zone_overlap_factor = 4;
    // Global-memory queues (λ too long for shared memory): at most this many bytes of them.
    static constexpr i64 global_queue_budget = i64{256} << 20;
    // The two-pass path reads a zone's λ - 1 rows of overlap per stage, a cheap loop without
    // queues: smaller zones pay for the many waves they give (see the tuning notes above).
    static constexpr i64 two_pass_zone_min_rows = 64;
    static constexpr i64 two_pass_zone_overlap_factor = 1;
    // The two-pass path's samples are loaded this many rows at a time (batched_samples).
    static constexpr int two_pass_batch = 4;
    // The two-pass path's first-stage images (one per angle) may take this much device memory.
    static constexpr i64 two_pass_scratch_budget = i64{2} << 30;
};


// ---- extremum words -------------------------------------------------------------------------------
// key in the high bits (as unsigned, order kept), (max - rank) in the low bits: atomicMax keeps
// the largest key, then the smallest rank. 0 is below every real word.
template <class T>
struct best_word;
template <>
struct best_word<std::uint8_t> {
    using type = unsigned int;
    static constexpr int rank_bits = 24;  // 16M angles; the front allows 1M
    __device__ static unsigned key_bits(std::uint8_t k) { return k; }
    __device__ static std::uint8_t key_of(unsigned bits) { return static_cast<std::uint8_t>(bits); }
};
template <>
struct best_word<std::uint16_t> {
    using type = unsigned long long;
    static constexpr int rank_bits = 32;
    __device__ static unsigned key_bits(std::uint16_t k) { return k; }
    __device__ static std::uint16_t key_of(unsigned bits) { return static_cast<std::uint16_t>(bits); }
};
template <>
struct best_word<float> {
    using type = unsigned long long;
    static constexpr int rank_bits = 32;
    __device__ static unsigned key_bits(std::int32_t k) { return static_cast<unsigned>(k) ^ 0x80000000u; }
    __device__ static std::int32_t key_of(unsigned bits) { return static_cast<std::int32_t>(bits ^ 0x80000000u); }
};

// `reversed`: line_plan::reduction_reversed (line_keys::reduction_key).
template <class T>
__device__ __forceinline__ typename best_word<T>::type pack_best(typename gd::line_keys<T>::key key, i32 rank,
                                                                 bool reversed) {
    using B = best_word<T>;
    key = gd::line_keys<T>::reduction_key(key, reversed);
    using W = typename B::type;
    constexpr W rank_mask = (W{1} << B::rank_bits) - 1;
    return (static_cast<W>(B::key_bits(key)) << B::rank_bits) | (rank_mask - static_cast<W>(rank));
}

// ---- tables -----------------------------------------------------------------------------------------
template <class T>
struct angle_job {
    i64 shift_offset;           // into the shift table of all angles
    i64 slope_fixed;            // scan_lines::slope_fixed: the table is built on the device
    i64 rows, columns;          // of the oriented image
    i64 first_line, line_count;
    i64 zone_rows, line_blocks;  // rows per zone; blocks across the lines of one zone
    i64 block_begin;            // first block of this angle in the launch
    T* filtered;                // oriented layout, or null
    i64 filtered_stride;
    i32 transposed;
    i32 rank;  // position in the plan: angles sorted by value
    i64 scratch_offset, scratch_stride;  // the two-pass path's first-stage results (lines per row)
};

template <class T>
struct launch_args {
    using K = typename gd::line_keys<T>::key;
    using W = typename best_word<T>::type;
    const angle_job<T>* jobs;
    i32 angle_count;
    i64 block_count;
    const i32* shifts;
    const T* input;  // steep angles read it as is
    i64 input_stride;
    const T* transposed;  // flat angles read the transposed copy
    i64 transposed_stride;
    W* best_steep;  // height x width, or null
    W* best_flat;   // width x height, or null
    i64 width, height;
    double* block_sums;  // one per block, or null
    unsigned char* global_queues;  // per-thread queues when they are not in shared memory
    i64 thread_queue_bytes;
    i32 entries;       // queue entries per thread
    i32 position_stride;  // entries between two threads' position slabs in shared memory
    i32 value_stride;     // bytes between two threads' value slabs in shared memory
    i32 length;
    i32 before;  // line_plan::before
    bool closing;
    bool first_stage_only;  // erosion or dilation
    bool reduction_reversed;  // line_plan's
    border_mode mode;
    K pad;
    // The two-pass path (vhgw_kernel): the first stage's results, one oriented image per angle,
    // and what the second stage reads off the line (the lowest key; cval's under constant).
    K* stage_scratch;
    K outside;
};

// ---- one zone of one line ---------------------------------------------------------------------------
// The standard opening of the extended line at line samples [first, end): the whole line when
// the zone is the whole line, else the sub-line of extended samples that the windows holding a
// zone sample cover (see the top of this file).
template <line_algorithm A, class K, class Get, class Put, class P>
__device__ void open_zone(const Get& get, i32 n, const gd::line_extension<K>& e, i32 first, i32 end, const Put& put,
                          K* values, P* positions, bool first_stage_only) {
    if (first_stage_only) {  // windows of the line's samples [first, end) only: no zones needed
        gd::sliding_min([&](i32 j) { return gd::extended_sample(get, j, n, e); }, first, end, e.length, put, values,
                        positions);
        return;
    }
    const auto run = [&](const auto& g, i32 count, const gd::line_extension<K>& ext, const auto& p) {
        if constexpr (A == line_algorithm::stack)
            gd::open_stack(g, count, ext, p, values, positions);
        else
            gd::open_fifo(g, count, ext, p, values, positions);
    };
    if (first == 0 && end == n) {
        run(get, n, e, put);
        return;
    }
    const i32 L = e.length, m = n + L - 1;
    const i32 p0 = max(0, e.before + first - (L - 1)), p1 = min(m, e.before + end + L - 1);
    const gd::line_extension<K> sub{L, 0, border_mode::ignore, std::numeric_limits<K>::lowest()};
    const auto sub_get = [&](i32 i) { return gd::extended_sample(get, p0 + i, n, e); };
    const auto sub_put = [&](i32 i, K key) {
        const i32 q = p0 + i - e.before;
        if (q >= first && q < end) put(q, key);
    };
    run(sub_get, p1 - p0, sub, sub_put);
}

// Line samples for the 1-D algorithms, which read them in order (apart from border
// reflections): each sample's load is issued `ahead` reads before it is used, into one of four
// registers (picked by a switch on i % 4, so they stay registers), and each shift 2 * ahead
// reads before, so the warp does not wait on memory at every sample. Reads out of order load
// directly.
template <class T>
struct line_reader {
    static constexpr i32 ahead = 4;
    const T* origin;   // the line's pixel of row r0 is origin[shift[0]]
    i64 stride;
    const i32* shift;  // from row r0
    i32 n;
    i32 next;  // the sample slot (next % 4) holds
    T v0, v1, v2, v3;
    i32 s0, s1, s2, s3;  // slot k: the shift of its sample + ahead

    __device__ T direct(i32 i) const { return origin[i * stride + shift[i]]; }

    template <int k>
    __device__ void fill(i32 first, T& v, i32& s) const {
        const i32 j = first + ((k - first) & 3);
        if (j < n) v = direct(j);
        if (j + ahead < n) s = shift[j + ahead];
    }
    __device__ void start(i32 first) {
        next = first;
        fill<0>(first, v0, s0);
        fill<1>(first, v1, s1);
        fill<2>(first, v2, s2);
        fill<3>(first, v3, s3);
    }
    __device__ T rotate(i32 i, T& v, i32& s) const {
        const T out = v;
        if (i + ahead < n) v = origin[(i + ahead) * stride + s];
        if (i + 2 * ahead < n) s = shift[i + 2 * ahead];
        return out;
    }
    __device__ T read(i32 i) {
        if (i != next) return direct(i);
        ++next;
        switch (i & 3) {
        case 0: return rotate(i, v0, s0);
        case 1: return rotate(i, v1, s1);
        case 2: return rotate(i, v2, s2);
        default: return rotate(i, v3, s3);
        }
    }
};

template <class T, line_algorithm A, class P>
__device__ double filter_line(const launch_args<T>& a, const angle_job<T>& job, i64 local_block,
                              typename gd::line_keys<T>::key* values, P* positions) {
    using traits = gd::line_keys<T>;
    using K = typename traits::key;
    const i64 line = (local_block % job.line_blocks) * blockDim.x + threadIdx.x;
    if (line >= job.line_count) return 0;
    const i64 zone = local_block / job.line_blocks;
    const i64 c = job.first_line + line;
    const i32* shift = a.shifts + job.shift_offset;
    const i64 r0 = gd::scan_line_row_begin(shift, job.rows, job.columns, c);
    const i64 r1 = gd::scan_line_row_end(shift, job.rows, job.columns, c);
    const i64 za = max(r0, zone * job.zone_rows), zb = min(r1, (zone + 1) * job.zone_rows);
    if (za >= zb) return 0;
    const auto n = static_cast<i32>(r1 - r0);
    const auto first = static_cast<i32>(za - r0), end = static_cast<i32>(zb - r0);
    const T* src = job.transposed ? a.transposed : a.input;
    const i64 stride = job.transposed ? a.transposed_stride : a.input_stride;
    const bool closing = a.closing;
    const auto e = gd::make_line_extension<K>(a.length, a.before, a.mode, a.pad);
    line_reader<T> reader{src + r0 * stride + c, stride, shift + r0, n};
    reader.start(max(0, first - (a.length - 1)));  // the first sample open_zone reads in order
    const auto get = [&reader, closing](i32 i) { return traits::to_key(reader.read(i), closing); };
    const auto is_nan = [&reader](i32 i) {
        const T v = reader.direct(i);
        return v != v;
    };
    gd::nan_window<K, decltype(is_nan)> nan(is_nan, n, e, e.before + first);
    typename best_word<T>::type* best = job.transposed ? a.best_flat : a.best_steep;
    const i64 best_stride = job.transposed ? a.height : a.width;
    double sum = 0;
    const auto put = [&](i32 i, K key) {
        if (!a.first_stage_only) {  // the second stage's border and NaN rules
            key = gd::constant_border_fix(key, i, n, e);
            if constexpr (std::is_floating_point_v<T>)
                if (nan.query(e.before + i)) key = traits::top;
        }
        const i64 r = r0 + i, col = c + shift[r];
        const T value = traits::from_key(key, closing);
        sum += static_cast<double>(value);
        if (job.filtered) job.filtered[r * job.filtered_stride + col] = value;
        if (best) atomicMax(best + r * best_stride + col, pack_best<T>(key, job.rank, a.reduction_reversed));
    };
    open_zone<A>(get, n, e, first, end, put, values, positions, a.first_stage_only);
    return sum;
}

// ---- the two-pass path: van Herk/Gil-Werman along the scan lines ----------------------------------
// Branch-free, unlike the queues: stage 1 (min over the first stage's window, keys) writes
// every line sample's result to stage_scratch; stage 2 (max over the reflected window) reads it
// and writes the outputs. A block's threads are adjacent lines of one zone of rows, and they
// walk the zone's rows together, so every load and store of a warp is one row segment; samples
// off a line are the extension (the pad in stage 1, `outside` in stage 2), which is exactly the
// border rule (ignore or constant). Each thread keeps the suffix minima of its current block of
// λ rows in a shared-memory slab (one word per entry, threads interleaved). uint8 threads take
// four adjacent lines in one 32-bit word: their bytes of a row are consecutive, fetched as two
// aligned words and a funnel shift; the min/max run on words.cuh's packed<uint8_t> word
// (__vminu4 unless GRANULA_CUDA_U8_SPLIT; measured faster here than split_word's u16x2 halves,
// see the tuning notes), so the slabs and the scratch hold `mem` and the min/max run on `word`.
template <class T>
struct lane_pack {  // one line per thread: the key itself
    using K = typename gd::line_keys<T>::key;
    using mem = K;  // what the suffix slabs and the stage scratch hold
    using word = K;  // what the min/max run on
    static constexpr int lanes = 1;
    __device__ static mem broadcast(K k) { return k; }
    __device__ static word unpack(mem m) { return m; }
    __device__ static mem pack(word w) { return w; }
    __device__ static word min(word u, word v) { return v < u ? v : u; }
    __device__ static word max(word u, word v) { return u < v ? v : u; }
    __device__ static K lane(mem m, int) { return m; }
    // Lanes [lo, hi) of m, the others `fill`.
    __device__ static mem select(mem m, mem fill, int lo, int hi) { return lo < hi ? m : fill; }
    __device__ static mem load(const T* row, i64 x, bool closing) { return gd::line_keys<T>::to_key(row[x], closing); }
};
template <>
struct lane_pack<std::uint8_t> {
    using V = cd::packed<std::uint8_t>;
    using K = std::uint8_t;
    using mem = unsigned;
    using word = V::word;
    static constexpr int lanes = 4;
    __device__ static mem broadcast(K k) { return V::splat_mem(k); }
    __device__ static word unpack(mem m) { return V::unpack(m); }
    __device__ static mem pack(word w) { return V::pack(w); }
    __device__ static word min(word u, word v) { return V::vmin(u, v); }
    __device__ static word max(word u, word v) { return V::vmax(u, v); }
    __device__ static K lane(mem m, int j) { return V::get(m, j); }
    __device__ static mem select(mem m, mem fill, int lo, int hi) {
        const mem keep = lo >= hi ? 0u : (0xffffffffu >> (8 * (4 - hi))) & (0xffffffffu << (8 * lo));
        return (m & keep) | (fill & ~keep);
    }
    // The 4 bytes from x on (any alignment; a 4-byte-aligned word that holds one of them cannot
    // cross into another page). Closing keys are the bytes' complements.
    __device__ static mem load(const std::uint8_t* row, i64 x, bool closing) {
        const auto address = reinterpret_cast<std::uintptr_t>(row + x);
        const auto* aligned = reinterpret_cast<const unsigned*>(address & ~std::uintptr_t{3});
        const unsigned shift = 8 * static_cast<unsigned>(address & 3);
        const mem m = shift ? __funnelshift_r(aligned[0], aligned[1], shift) : aligned[0];
        return closing ? ~m : m;
    }
};

// use(i, sample(i)) for i in [0, n) in order, the samples of each batch of
// lines_tuning::two_pass_batch loaded before any is used, so that their loads are in flight
// together rather than each waited for in turn.
template <class Sample, class Use>
__device__ __forceinline__ void batched_samples(i32 n, const Sample& sample, const Use& use) {
    constexpr int batch = lines_tuning::two_pass_batch;
    i32 i = 0;
    for (; i + batch <= n; i += batch) {
        decltype(sample(0)) w[batch];
#pragma unroll
        for (int u = 0; u < batch; ++u) w[u] = sample(i + u);
#pragma unroll
        for (int u = 0; u < batch; ++u) use(i + u, w[u]);
    }
    for (; i < n; ++i) use(i, sample(i));
}

// One zone of one thread's lanes. Inside: every lane of every row the zone reads is on the
// image (most threads), so the samples need no bounds.
template <class T, int Stage, bool Inside>
__device__ double vhgw_rows(const launch_args<T>& a, const angle_job<T>& job, i32 z0, i32 z1, i64 c, i64 line,
                            int lanes_here, unsigned* slab) {
    using traits = gd::line_keys<T>;
    using K = typename traits::key;
    using pack = lane_pack<T>;
    using word = typename pack::word;
    constexpr int lanes = pack::lanes;
    const i32* shift = a.shifts + job.shift_offset;
    const i32 L = a.length;
    const i32 before = a.before, after = L - 1 - before;
    const i32 lead = Stage == 1 ? before : after;  // rows of window before the output row
    const T* src = job.transposed ? a.transposed : a.input;
    const i64 src_stride = job.transposed ? a.transposed_stride : a.input_stride;
    // The first stage's results: row r, line `line` at scratch[r * stride + line] (lanes
    // adjacent, aligned to a word).
    K* scratch = a.stage_scratch + job.scratch_offset + line;
    const i64 scratch_stride = job.scratch_stride;
    const i32 rows = static_cast<i32>(job.rows), columns = static_cast<i32>(job.columns);
    const i32 c32 = static_cast<i32>(c);
    // The lanes of row r on the image, [lo, hi) (empty off the oriented rows).
    const auto lanes_on_image = [&](i32 r, int& lo, int& hi) {
        if (Inside) {
            lo = 0, hi = lanes_here;
            return;
        }
        lo = hi = 0;
        if (r < 0 || r >= rows) return;
        const i32 x = c32 + shift[r];
        lo = ::max(0, ::min(lanes_here, -x));
        hi = ::max(lo, ::min(lanes_here, columns - x));
    };
    using mem = typename pack::mem;
    const mem pad = pack::broadcast(a.pad), outside = pack::broadcast(a.outside);
    const auto sample = [&](i32 r) -> word {
        int lo, hi;
        lanes_on_image(r, lo, hi);
        if (!Inside && lo >= hi) return pack::unpack(Stage == 1 ? pad : outside);
        mem m;
        if constexpr (Stage == 1) {
            const T* row = src + r * src_stride;
            const i32 x = c32 + shift[r];
            if (Inside || lanes == 1 || (lo == 0 && hi == lanes)) {
                m = pack::load(row, x, a.closing);
            } else {  // partly off the image: byte by byte
                m = 0;
                for (int j = lo; j < hi; ++j)
                    m |= static_cast<mem>(traits::to_key(row[x + j], a.closing)) << (8 * j);
            }
            if (!Inside) m = pack::select(m, pad, lo, hi);
        } else {
            m = *reinterpret_cast<const mem*>(scratch + r * scratch_stride);
            if constexpr (std::is_floating_point_v<T>)
                if (m == traits::nan_key) m = traits::top;  // NaN wins the second stage too
            if (!Inside) m = pack::select(m, outside, lo, hi);
        }
        return pack::unpack(m);
    };
    const auto better = [](word u, word v) { return Stage == 1 ? pack::min(u, v) : pack::max(u, v); };
    const word identity = pack::unpack(pack::broadcast(Stage == 1 ? traits::top : std::numeric_limits<K>::lowest()));
    double sum = 0;
    typename best_word<T>::type* best = job.transposed ? a.best_flat : a.best_steep;
    const i64 best_stride = job.transposed ? a.height : a.width;
    const bool last_stage = Stage == 2 || a.first_stage_only;
    const bool want_sum = a.block_sums != nullptr;
    const auto emit = [&](i32 r, word w) {
        const mem m = pack::pack(w);
        if (!last_stage) {
            *reinterpret_cast<mem*>(scratch + r * scratch_stride) = m;
            return;
        }
        int lo, hi;
        lanes_on_image(r, lo, hi);
        const i64 x = c32 + shift[r];
        for (int j = lo; j < hi; ++j) {
            const K key = pack::lane(m, j);
            const T value = traits::from_key(key, a.closing);
            if (want_sum) sum += static_cast<double>(value);
            if (job.filtered) job.filtered[r * job.filtered_stride + x + j] = value;
            if (best) atomicMax(best + r * best_stride + x + j, pack_best<T>(key, job.rank, a.reduction_reversed));
        }
    };
    // Output row r takes rows [r - lead, r - lead + L - 1]; blocks of L window starts.
    const unsigned stride = blockDim.x;
    for (i32 k0 = z0; k0 < z1; k0 += L) {
        const i32 s0 = k0 - lead;
        word acc = identity;
        batched_samples(L, [&](i32 i) { return sample(s0 + L - 1 - i); }, [&](i32 i, word w) {
            acc = better(acc, w);
            slab[(L - 1 - i) * stride] = static_cast<unsigned>(pack::pack(acc));
        });
        emit(k0, acc);
        word run = identity;
        batched_samples(::min(L, z1 - k0) - 1, [&](i32 i) { return sample(s0 + L + i); }, [&](i32 i, word w) {
            run = better(run, w);
            emit(k0 + 1 + i, better(pack::unpack(static_cast<mem>(slab[(1 + i) * stride])), run));
        });
    }
    return sum;
}

template <class T, int Stage>
__device__ double vhgw_zone(const launch_args<T>& a, const angle_job<T>& job, i64 local_block, unsigned* slab) {
    constexpr int lanes = lane_pack<T>::lanes;
    const i64 line = ((local_block % job.line_blocks) * blockDim.x + threadIdx.x) * lanes;  // the thread's first
    const i64 zone = local_block / job.line_blocks;
    const i64 z0 = zone * job.zone_rows, z1 = min(job.rows, z0 + job.zone_rows);
    if (line >= job.line_count) return 0;
    const i64 c = job.first_line + line;
    const int lanes_here = static_cast<int>(min(static_cast<i64>(lanes), job.line_count - line));
    const i32* shift = a.shifts + job.shift_offset;
    // Skip lines that miss the zone (the shift is monotone, so testing its ends is enough).
    const i64 x_first = c + shift[z0], x_last = c + shift[z1 - 1];
    if (max(x_first, x_last) + lanes - 1 < 0 || min(x_first, x_last) >= job.columns) return 0;
    // The rows the zone reads, [z0 - λ, z1 + λ): all on the image, with all lanes, or not.
    const i64 r_first = z0 - a.length, r_last = z1 + a.length - 1;
    const bool inside = r_first >= 0 && r_last < job.rows && lanes_here == lanes && [&] {
        const i64 xa = c + shift[r_first], xb = c + shift[r_last];
        return min(xa, xb) >= 0 && max(xa, xb) + lanes <= job.columns;
    }();
    const auto z0i = static_cast<i32>(z0), z1i = static_cast<i32>(z1);
    return inside ? vhgw_rows<T, Stage, true>(a, job, z0i, z1i, c, line, lanes_here, slab)
                  : vhgw_rows<T, Stage, false>(a, job, z0i, z1i, c, line, lanes_here, slab);
}

constexpr int max_block_threads = lines_tuning::block_threads;

// The sum over the block in a fixed order (thread 0 gets it).
__device__ double block_sum(double v) {
    __shared__ double warp_sums[max_block_threads / 32];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    double total = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_sums[w];
    __syncthreads();
    return total;
}

// The grid-stride loop of both filter kernels: each block of the launch belongs to one angle
// (found by binary search on block_begin); zone(job, block within the angle) filters its lines
// and returns their sum, which goes to block_sums in a fixed order.
template <class T, class Zone>
__device__ void run_blocks(const launch_args<T>& a, const Zone& zone) {
    for (i64 block = blockIdx.x; block < a.block_count; block += gridDim.x) {
        int lo = 0, hi = a.angle_count - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (a.jobs[mid].block_begin <= block) lo = mid;
            else hi = mid - 1;
        }
        const angle_job<T> job = a.jobs[lo];
        const double sum = zone(job, block - job.block_begin);
        if (a.block_sums) {
            const double total = block_sum(sum);
            if (threadIdx.x == 0) a.block_sums[block] = total;
        }
    }
}

// P: the queue positions' type (std::uint16_t for fifo queues while λ allows, see line_queue).
template <class T, line_algorithm A, class P>
__global__ void __launch_bounds__(max_block_threads) filter_lines_kernel(const launch_args<T> a) {
    using K = typename gd::line_keys<T>::key;
    extern __shared__ __align__(16) unsigned char shared_queues[];
    K* values;
    P* positions;
    if (a.global_queues) {
        unsigned char* mine =
            a.global_queues + (static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x) * a.thread_queue_bytes;
        positions = reinterpret_cast<P*>(mine);
        values = reinterpret_cast<K*>(mine + sizeof(P) * static_cast<i64>(a.entries));
    } else {
        positions = reinterpret_cast<P*>(shared_queues) + threadIdx.x * a.position_stride;
        values = reinterpret_cast<K*>(shared_queues + sizeof(P) * blockDim.x * a.position_stride +
                                      threadIdx.x * a.value_stride);
    }
    run_blocks(a, [&](const angle_job<T>& job, i64 local_block) {
        return filter_line<T, A, P>(a, job, local_block, values, positions);
    });
}

template <class T, int Stage>
__global__ void __launch_bounds__(max_block_threads) vhgw_kernel(const launch_args<T> a) {
    extern __shared__ __align__(16) unsigned char shared_slabs[];
    unsigned* slab = reinterpret_cast<unsigned*>(shared_slabs) + threadIdx.x;
    run_blocks(a, [&](const angle_job<T>& job, i64 local_block) {
        return vhgw_zone<T, Stage>(a, job, local_block, slab);
    });
}

// shifts[jobs[k].shift_offset + r] = the shift of row r of angle k (one block per angle).
template <class T>
__global__ void shift_tables_kernel(const angle_job<T>* jobs, i32* shifts) {
    const angle_job<T> job = jobs[blockIdx.x];
    for (i64 r = threadIdx.x; r < job.rows; r += blockDim.x)
        shifts[job.shift_offset + r] = gd::scan_line_shift(r, job.slope_fixed);
}

// spectrum[index of angle k] = its blocks' sums, in block order.
template <class T>
__global__ void spectrum_kernel(const angle_job<T>* jobs, const i32* index_of_rank, i32 angle_count, i64 block_count,
                                const double* block_sums, double* spectrum) {
    const i32 k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= angle_count) return;
    const i64 end = k + 1 < angle_count ? jobs[k + 1].block_begin : block_count;
    double total = 0;
    for (i64 b = jobs[k].block_begin; b < end; ++b) total += block_sums[b];
    spectrum[index_of_rank[k]] = total;
}

constexpr int tile = 32, tile_rows = 8, transpose_threads = tile * tile_rows;

// dst[x][y] = src[y][x] for a src of width x height (dst: width rows of height elements), in
// 4-byte words of V::P elements (words.cuh): block (bx, by), its 256 threads as 32 x 8 (tx, ty),
// takes 8P source rows of 32 words; each thread reads a P x P block as P row words, transposes it
// in registers and stages it in shared memory, from which the block writes 32P destination rows
// of 8 words.
// Whole words both ways: byte-wide accesses kept the uint8 transpose far from the copy rate.
template <class V>
__device__ __forceinline__ void transpose_word_block(const typename V::elem* src, i64 src_stride,
                                                     typename V::elem* dst, i64 dst_stride, i64 width, i64 height,
                                                     i64 bx, i64 by) {
    using mem = typename V::mem;
    constexpr int P = V::P;
    // Word (i, tx, ty) holds destination row tx * P + i, word ty; each i's plane is padded by 8
    // words, so that stores (tx varies) hit 32 distinct banks, and loads (4 rows x 8 words) too
    // for uint8 (P = 4; at most 2-way conflicts for P = 1, 2).
    constexpr int plane = tile * (tile_rows + 1) + 8;
    __shared__ mem staged[P * plane];
    const int thread = static_cast<int>(threadIdx.x), tx = thread % tile, ty = thread / tile;
    const i64 word_x = by * tile + tx;
    const i64 y_first = (bx * tile_rows + ty) * P;
    mem rows[P], columns[P];
    for (int k = 0; k < P; ++k)
        rows[k] = y_first + k < height && word_x * P < width
                      ? cd::load_mem<V>(src + (y_first + k) * src_stride, word_x, width)
                      : mem{};
    if constexpr (P == 1)
        columns[0] = rows[0];
    else
        cd::transpose_words<P>(rows, columns);
    __syncthreads();  // a previous call's readers are done
    for (int i = 0; i < P; ++i) staged[i * plane + tx * (tile_rows + 1) + ty] = columns[i];
    __syncthreads();
    for (int k = 0; k < P; ++k) {
        const int index = thread + k * transpose_threads;
        const int row = index / tile_rows, word = index % tile_rows;  // in the block's destination
        const i64 x = by * tile * P + row;
        const i64 word_y = bx * tile_rows + word;
        if (x < width && word_y * P < height)
            cd::store_mem<V>(dst + x * dst_stride, word_y, height,
                             staged[(row % P) * plane + (row / P) * (tile_rows + 1) + word]);
    }
}

template <class V>
__global__ void __launch_bounds__(transpose_threads)
    transpose_kernel(const typename V::elem* src, i64 src_stride, typename V::elem* dst, i64 dst_stride, i64 width,
                     i64 height) {
    transpose_word_block<V>(src, src_stride, dst, dst_stride, width, height, blockIdx.x, blockIdx.y);
}

// The same over square tiles of 32P x 32P elements (128 bytes a side), 16 bytes a load and a
// store: a thread reads P source rows of 16 bytes (four words each), transposes the four P x P
// blocks in registers and stages them in shared memory (a destination row's 32 words per row,
// their 4-word groups XOR-swizzled by the writer's 16-byte chunk, so that both the word writes
// and the 16-byte reads are free of bank conflicts); the block then writes 32P destination rows
// of 128 bytes. Tiles cut by the image's right or bottom edge go by transpose_word_block, in the
// same launch (as launches of their own, the two strips cost 3 us each at 8000^2). Rows and
// bases 16-byte aligned. 8000^2 uint8 on one H200: 46.5-47.2 us by transpose_kernel alone (4
// bytes a load: too few in flight for the copy rate), 31.1-31.9 us for the whole tiles here.
template <class V>
__global__ void __launch_bounds__(transpose_threads)
    transpose_tiles_kernel(const typename V::elem* src, i64 src_stride, typename V::elem* dst, i64 dst_stride,
                           i64 width, i64 height) {
    constexpr int P = V::P, side = 32 * P;
    const i64 y0 = static_cast<i64>(blockIdx.x) * side, x0 = static_cast<i64>(blockIdx.y) * side;
    if (y0 + side > height || x0 + side > width) {
        for (int i = 0; i < side / (tile_rows * P); ++i)
            transpose_word_block<V>(src, src_stride, dst, dst_stride, width, height,
                                    static_cast<i64>(blockIdx.x) * (side / (tile_rows * P)) + i, blockIdx.y);
        return;
    }
    __shared__ uint4 staged[side * 8];
    const auto swizzle = [](int row) { return (row / (4 * P)) & 7; };  // in 4-word groups
    const int chunk = threadIdx.x % 8, group = threadIdx.x / 8;
    uint4 rows[P];
    for (int k = 0; k < P; ++k)
        rows[k] = __ldg(reinterpret_cast<const uint4*>(src + (y0 + P * group + k) * src_stride + x0) + chunk);
    auto* words = reinterpret_cast<std::uint32_t*>(staged);
    for (int q = 0; q < 4; ++q) {
        std::uint32_t in[P], out[P];
        for (int k = 0; k < P; ++k) in[k] = q == 0 ? rows[k].x : q == 1 ? rows[k].y : q == 2 ? rows[k].z : rows[k].w;
        if constexpr (P == 1)
            out[0] = in[0];
        else
            cd::transpose_words<P>(in, out);
        for (int i = 0; i < P; ++i) {  // destination row 4P chunk + P q + i, word `group`
            const int row = 4 * P * chunk + P * q + i;
            words[row * 32 + (group ^ (4 * swizzle(row)))] = out[i];
        }
    }
    __syncthreads();
    for (int j = 0; j < P; ++j) {
        const int row = threadIdx.x / 8 + 32 * j, c = threadIdx.x % 8;
        reinterpret_cast<uint4*>(dst + (x0 + row) * dst_stride + y0)[c] = staged[row * 8 + (c ^ swizzle(row))];
    }
}

// Tiles of 16-byte rows where both images are aligned to 16 bytes, else whole words where both
// images' rows are aligned to 4 bytes, else one element per word.
template <class E>
void transpose(const E* src, i64 src_stride, E* dst, i64 dst_stride, i64 width, i64 height, cudaStream_t s) {
    const auto aligned = [](const void* p, i64 stride, std::size_t bytes) {
        return reinterpret_cast<std::uintptr_t>(p) % bytes == 0 && stride * sizeof(E) % bytes == 0;
    };
    // Blocks along the source's rows in x (no limit), along its columns in y.
    const auto grid = [&](i64 rows_per_block, i64 columns_per_block) {
        return dim3(static_cast<unsigned>((height + rows_per_block - 1) / rows_per_block),
                    static_cast<unsigned>((width + columns_per_block - 1) / columns_per_block));
    };
    if (aligned(src, src_stride, 16) && aligned(dst, dst_stride, 16)) {
        using V = cd::packed<E>;
        transpose_tiles_kernel<V>
            <<<grid(32 * V::P, 32 * V::P), transpose_threads, 0, s>>>(src, src_stride, dst, dst_stride, width, height);
    } else if (aligned(src, src_stride, 4) && aligned(dst, dst_stride, 4)) {
        using V = cd::packed<E>;
        transpose_kernel<V><<<grid(tile_rows * V::P, tile * V::P), transpose_threads, 0, s>>>(src, src_stride, dst,
                                                                                           dst_stride, width, height);
    } else {
        using V = cd::scalar<E>;
        transpose_kernel<V><<<grid(tile_rows, tile), transpose_threads, 0, s>>>(src, src_stride, dst, dst_stride, width,
                                                                             height);
    }
    check_launch("transpose_kernel (linear filters)");
}

// extremum and orientation from the steep words (height x width) and the flat words (width x
// height, read through a tile).
template <class T>
__global__ void merge_best_kernel(const typename best_word<T>::type* steep, const typename best_word<T>::type* flat,
                                  i64 width, i64 height, const i32* index_of_rank, bool closing, bool reversed,
                                  T* extremum, i64 extremum_stride, i32* orientation, i64 orientation_stride) {
    using B = best_word<T>;
    using W = typename B::type;
    __shared__ W block[tile][tile + 1];
    const i64 x0 = static_cast<i64>(blockIdx.x) * tile, y0 = static_cast<i64>(blockIdx.y) * tile;
    if (flat) {
        for (int j = threadIdx.y; j < tile; j += tile_rows) {
            const i64 x = x0 + j, y = y0 + threadIdx.x;  // flat word of pixel (x, y) is at row x
            if (x < width && y < height) block[j][threadIdx.x] = flat[x * height + y];
        }
    }
    __syncthreads();
    constexpr W rank_mask = (W{1} << B::rank_bits) - 1;
    for (int j = threadIdx.y; j < tile; j += tile_rows) {
        const i64 y = y0 + j, x = x0 + threadIdx.x;
        if (x >= width || y >= height) continue;
        W w = steep ? steep[y * width + x] : 0;
        if (flat && block[threadIdx.x][j] > w) w = block[threadIdx.x][j];
        const auto key =
            gd::line_keys<T>::from_reduction_key(B::key_of(static_cast<unsigned>(w >> B::rank_bits)), reversed);
        if (extremum) extremum[y * extremum_stride + x] = gd::line_keys<T>::from_key(key, closing);
        if (orientation)
            orientation[y * orientation_stride + x] = index_of_rank[static_cast<i64>(rank_mask - (w & rank_mask))];
    }
}

std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// Appends a copy of `items` to the blob (aligned to 16) and returns its offset.
template <class U>
std::size_t append(std::vector<unsigned char>& blob, const U* items, std::size_t count) {
    const std::size_t offset = align_up(blob.size(), 16);
    blob.resize(offset + count * sizeof(U));
    if (count) std::memcpy(blob.data() + offset, items, count * sizeof(U));
    return offset;
}

// Lines per row of the two-pass scratch: whole words of four uint8 lanes.
inline i64 two_pass_scratch_stride(i64 line_count) { return (line_count + 3) / 4 * 4; }

template <class T, line_algorithm A, class P>
void filter(device_view<const T> in, const gd::line_plan& plan, const device_line_outputs<T>& out, cudaStream_t s) {
    using traits = gd::line_keys<T>;
    using K = typename traits::key;
    using W = typename best_word<T>::type;
    const i64 width = in.width(), height = in.height();
    const auto angle_count = static_cast<i32>(plan.angles.size());
    const bool want_best = !out.extremum.empty() || !out.orientation.empty();
    const bool want_filtered = !out.filtered.empty();
    const bool want_spectrum = !out.spectrum.empty();
    const i32 L = plan.length;

    // Queue (or, for the two-pass path, suffix slab) storage and block shape.
    constexpr bool two_pass = A == line_algorithm::automatic;
    const i32 entries = A == line_algorithm::stack ? gd::line_stack_capacity(L)
                        : two_pass                 ? L
                                                   : 2 * gd::line_queue_capacity(L);
    // Slabs one word longer than needed: odd word strides spread equal indices over the banks.
    const auto position_stride = static_cast<i32>(entries + 4 / sizeof(P));
    const auto value_stride = static_cast<i32>(align_up(static_cast<std::size_t>(entries) * sizeof(K), 4) + 4);
    const i64 per_thread_shared =
        two_pass ? 4 * static_cast<i64>(entries) : static_cast<i64>(sizeof(P)) * position_stride + value_stride;
    const i64 shared_limit = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) - 1024;  // static shared
    int threads = lines_tuning::block_threads;
    if (threads * per_thread_shared > shared_limit) threads = 32;
    const bool queues_in_shared = threads * per_thread_shared <= shared_limit;
    const std::size_t shared_bytes = queues_in_shared ? static_cast<std::size_t>(threads * per_thread_shared) : 0;
    const auto kernel = two_pass ? vhgw_kernel<T, 2> : filter_lines_kernel<T, A, P>;
    if (two_pass) {  // stage 1 has stage 2's shape
        check_cuda(cudaFuncSetAttribute(vhgw_kernel<T, 1>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared),
                   "cudaFuncSetAttribute (linear filter carveout)");
        check_cuda(cudaFuncSetAttribute(vhgw_kernel<T, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shared_limit)),
                   "cudaFuncSetAttribute (linear filter shared memory)");
    }
    // All of the unified L1/shared memory that the queues can use (the driver may else pick a
    // carveout that fits fewer blocks).
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared),
               "cudaFuncSetAttribute (linear filter carveout)");
    // The same limit on every call, so that calls from several host threads cannot lower it
    // under one another's launch.
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_limit)),
               "cudaFuncSetAttribute (linear filter shared memory)");
    int blocks_per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads, shared_bytes),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    const i64 thread_queue_bytes =
        static_cast<i64>(align_up(static_cast<std::size_t>(entries) * (sizeof(P) + sizeof(K)), 16));
    i64 resident = static_cast<i64>(multiprocessors()) * std::max(1, blocks_per_sm) * threads;
    if (!queues_in_shared)
        resident = std::min(resident, std::max<i64>(threads, lines_tuning::global_queue_budget / thread_queue_bytes));

    // Zones: only when the threads (lines, or groups of lanes) of all angles are too few to fill
    // the GPU.
    const i64 lines_per_thread = two_pass ? lane_pack<T>::lanes : 1;
    i64 total_threads = 0;
    bool any_flat = false, any_steep = false;
    for (const auto& angle : plan.angles) {
        total_threads += (angle.lines.line_count() + lines_per_thread - 1) / lines_per_thread;
        (angle.lines.transposed ? any_flat : any_steep) = true;
    }
    const i64 target = lines_tuning::waves * resident;
    i64 zone_rows = std::max(width, height);
    if (total_threads < target) {
        const i64 thread_rows = static_cast<i64>(angle_count) * width * height / lines_per_thread;
        const i64 overlap_factor =
            two_pass ? lines_tuning::two_pass_zone_overlap_factor : lines_tuning::zone_overlap_factor;
        zone_rows = std::max({two_pass ? lines_tuning::two_pass_zone_min_rows : lines_tuning::zone_min_rows,
                              overlap_factor * (L - 1), (thread_rows + target - 1) / target});
    }

    // Flat angles read a transposed copy of the image and write their filtered images oriented,
    // then transposed into place: width rows of height samples, rows padded to 4 bytes, so that
    // the transposes move whole words.
    const i64 oriented_stride = static_cast<i64>(align_up(static_cast<std::size_t>(height) * sizeof(T), 4) / sizeof(T));
    const i64 oriented_size = width * oriented_stride;
    i64 flat_filtered_count = 0;
    if (want_filtered)
        for (const auto& angle : plan.angles) flat_filtered_count += angle.lines.transposed ? 1 : 0;
    stream_buffer flat_filtered(static_cast<std::size_t>(flat_filtered_count * oriented_size) * sizeof(T),
                                s, scratch_what);

    // Tables.
    std::vector<angle_job<T>> jobs(static_cast<std::size_t>(angle_count));
    std::vector<i32> index_of_rank(static_cast<std::size_t>(angle_count));
    i64 shift_count = 0;
    i64 block_count = 0, flat_slot = 0, scratch_elements = 0;
    for (i32 k = 0; k < angle_count; ++k) {
        const gd::scan_lines& lines = plan.angles[k].lines;
        angle_job<T>& job = jobs[k];
        job.shift_offset = shift_count;
        job.slope_fixed = lines.slope_fixed;
        shift_count += lines.rows;
        job.rows = lines.rows;
        job.columns = lines.columns;
        job.first_line = lines.first_line;
        job.line_count = lines.line_count();
        job.zone_rows = std::min(zone_rows, lines.rows);
        job.line_blocks = (job.line_count + threads * lines_per_thread - 1) / (threads * lines_per_thread);
        job.block_begin = block_count;
        block_count += (lines.rows + job.zone_rows - 1) / job.zone_rows * job.line_blocks;
        job.filtered = nullptr;
        job.filtered_stride = 0;
        if (want_filtered) {
            if (lines.transposed) {
                job.filtered = flat_filtered.as<T>() + flat_slot++ * oriented_size;
                job.filtered_stride = oriented_stride;
            } else {
                const device_view<T>& f = out.filtered[plan.angles[k].index];
                job.filtered = f.data();
                job.filtered_stride = f.stride();
            }
        }
        job.transposed = lines.transposed ? 1 : 0;
        job.rank = k;
        job.scratch_stride = two_pass_scratch_stride(job.line_count);
        job.scratch_offset = scratch_elements;
        scratch_elements += two_pass ? lines.rows * job.scratch_stride : 0;
        index_of_rank[k] = static_cast<i32>(plan.angles[k].index);
    }
    std::vector<unsigned char> blob;
    const std::size_t jobs_at = append(blob, jobs.data(), jobs.size());
    const std::size_t ranks_at = append(blob, index_of_rank.data(), index_of_rank.size());
    stream_buffer tables(blob.size(), s, scratch_what);
    // From pageable memory: staged before the call returns, so the blob may go.
    check_cuda(cudaMemcpyAsync(tables.as<unsigned char>(), blob.data(), blob.size(), cudaMemcpyHostToDevice, s),
               "cudaMemcpyAsync (linear filter tables)");
    const auto* jobs_dev = reinterpret_cast<const angle_job<T>*>(tables.as<unsigned char>() + jobs_at);
    const auto* ranks_dev = reinterpret_cast<const i32*>(tables.as<unsigned char>() + ranks_at);
    // The shift tables, built here rather than copied: 180 angles of 640 rows were 0.46 MB of
    // pageable copy and most of the orientation map's host time.
    stream_buffer shift_tables(static_cast<std::size_t>(shift_count) * sizeof(i32), s, scratch_what);
    shift_tables_kernel<T><<<static_cast<unsigned>(angle_count), 256, 0, s>>>(jobs_dev, shift_tables.as<i32>());
    check_launch("shift_tables_kernel");

    stream_buffer transposed(any_flat ? static_cast<std::size_t>(oriented_size) * sizeof(T) : 0, s, scratch_what);
    if (any_flat) transpose<T>(in.data(), in.stride(), transposed.as<T>(), oriented_stride, width, height, s);
    stream_buffer best_steep(want_best && any_steep ? static_cast<std::size_t>(width * height) * sizeof(W) : 0,
                             s, scratch_what);
    stream_buffer best_flat(want_best && any_flat ? static_cast<std::size_t>(width * height) * sizeof(W) : 0,
                            s, scratch_what);
    for (const stream_buffer* b : {&best_steep, &best_flat})
        if (b->as<void>())
            check_cuda(cudaMemsetAsync(b->as<void>(), 0, static_cast<std::size_t>(width * height) * sizeof(W), s),
                       "cudaMemsetAsync (linear filter extremum)");
    stream_buffer block_sums(want_spectrum ? static_cast<std::size_t>(block_count) * sizeof(double) : 0,
                             s, scratch_what);

    const i64 grid = queues_in_shared ? std::min<i64>(block_count, std::numeric_limits<int>::max())
                                      : std::min<i64>(block_count, std::max<i64>(1, resident / threads));
    stream_buffer global_queues(queues_in_shared ? 0 : static_cast<std::size_t>(grid * threads * thread_queue_bytes),
                                s, scratch_what);

    const std::size_t stage_bytes =
        two_pass && !plan.first_stage_only ? static_cast<std::size_t>(scratch_elements) * sizeof(K) : 0;
    stream_buffer stage_scratch(stage_bytes, s, scratch_what);
    launch_args<T> a{};
    a.jobs = jobs_dev;
    a.angle_count = angle_count;
    a.block_count = block_count;
    a.shifts = shift_tables.as<const i32>();
    a.input = in.data();
    a.input_stride = in.stride();
    a.transposed = transposed.as<const T>();
    a.transposed_stride = oriented_stride;
    a.best_steep = best_steep.as<W>();
    a.best_flat = best_flat.as<W>();
    a.width = width;
    a.height = height;
    a.block_sums = block_sums.as<double>();
    a.global_queues = global_queues.as<unsigned char>();
    a.thread_queue_bytes = thread_queue_bytes;
    a.entries = entries;
    a.position_stride = position_stride;
    a.value_stride = value_stride;
    a.length = L;
    a.before = plan.before;
    a.closing = plan.closing;
    a.reduction_reversed = plan.reduction_reversed;
    a.first_stage_only = plan.first_stage_only;
    a.mode = plan.mode.mode;
    a.pad = plan.mode.mode == border_mode::constant ? traits::to_key(static_cast<T>(plan.mode.cval), plan.closing)
                                                    : traits::top;
    a.stage_scratch = stage_scratch.as<K>();
    a.outside = plan.mode.mode == border_mode::constant ? a.pad : std::numeric_limits<K>::lowest();
    if (two_pass) {
        if (plan.first_stage_only) {
            vhgw_kernel<T, 1><<<static_cast<unsigned>(grid), threads, shared_bytes, s>>>(a);
        } else {
            launch_args<T> first = a;
            first.block_sums = nullptr;
            vhgw_kernel<T, 1><<<static_cast<unsigned>(grid), threads, shared_bytes, s>>>(first);
            check_launch("vhgw_kernel (stage 1)");
            vhgw_kernel<T, 2><<<static_cast<unsigned>(grid), threads, shared_bytes, s>>>(a);
        }
        check_launch("vhgw_kernel");
    } else {
        kernel<<<static_cast<unsigned>(grid), threads, shared_bytes, s>>>(a);
        check_launch("filter_lines_kernel");
    }

    if (flat_filtered_count) {
        i64 slot = 0;
        for (const auto& angle : plan.angles) {
            if (!angle.lines.transposed) continue;
            const device_view<T>& f = out.filtered[angle.index];
            transpose<T>(flat_filtered.as<T>() + slot++ * oriented_size, oriented_stride, f.data(), f.stride(), height,
                         width, s);
        }
    }
    if (want_best) {
        const dim3 tiles(static_cast<unsigned>((width + tile - 1) / tile), static_cast<unsigned>((height + tile - 1) / tile));
        merge_best_kernel<T><<<tiles, dim3(tile, tile_rows), 0, s>>>(
            best_steep.as<W>(), best_flat.as<W>(), width, height, ranks_dev, plan.closing, plan.reduction_reversed,
            out.extremum.data(), out.extremum.stride(), out.orientation.data(), out.orientation.stride());
        check_launch("merge_best_kernel");
    }
    if (want_spectrum) {
        stream_buffer spectrum(static_cast<std::size_t>(angle_count) * sizeof(double), s, scratch_what);
        spectrum_kernel<T><<<(angle_count + 127) / 128, 128, 0, s>>>(jobs_dev, ranks_dev, angle_count, block_count,
                                                                    block_sums.as<double>(), spectrum.as<double>());
        check_launch("spectrum_kernel");
        check_cuda(cudaMemcpyAsync(out.spectrum.data(), spectrum.as<double>(), out.spectrum.size() * sizeof(double),
                                   cudaMemcpyDeviceToHost, s),
                   "cudaMemcpyAsync (spectrum)");
        check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (spectrum)");
    }
}

// The two-pass path takes automatic when the border is ignore or constant (nearest and
// reflect arrive as ignore, which gives their image: with_equivalent_border in
// lines/lines.cpp), a block's suffix slabs fit in shared memory, and its scratch (a
// first-stage image per angle) stays within lines_tuning::two_pass_scratch_budget; else the
// fifo queues run.
template <class T>
bool two_pass_applies(device_view<const T> in, const gd::line_plan& plan) {
    const border_mode m = plan.mode.mode;
    if (m != border_mode::ignore && m != border_mode::constant) return false;
    const i64 shared_limit = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) - 1024;
    if (32 * 4 * static_cast<i64>(plan.length) > shared_limit) return false;
    i64 scratch = 0;
    for (const auto& angle : plan.angles)
        scratch += angle.lines.rows * two_pass_scratch_stride(angle.lines.line_count()) *
                   static_cast<i64>(sizeof(typename gd::line_keys<T>::key));
    static_cast<void>(in);
    return plan.first_stage_only || scratch <= lines_tuning::two_pass_scratch_budget;
}

// One angle's filtered image alone, uint8 or uint16, border ignore or constant: the scan-line
// passes (scan_line_passes.cuh), the morphology's vertical engine along the scan lines, which
// keeps many rows' loads in flight per thread where vhgw_kernel walks each block of λ rows twice.
template <class T>
bool single_angle_passes_apply(const gd::line_plan& plan, const device_line_outputs<T>& out) {
    const border_mode m = plan.mode.mode;
    return (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>) && plan.angles.size() == 1 &&
           plan.length >= 2 && gd::pads_with_one_value(m) && out.extremum.empty() &&
           out.orientation.empty() && out.spectrum.empty() && out.filtered.size() == 1;
}

template <class T>
void single_angle_passes(device_view<const T> in, const gd::line_plan& plan, const device_line_outputs<T>& out,
                         cudaStream_t s) {
    if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>) {
        const gd::scan_lines& lines = plan.angles.front().lines;
        const device_view<T> filtered = out.filtered.front();
        const auto run = [&](device_view<const T> from, bool out_transposed) {
            cd::scan_line_passes<T>(from, filtered, out_transposed, lines, plan.length, plan.before, plan.closing,
                                    plan.first_stage_only, plan.mode, s);
        };
        if (!lines.transposed) {
            run(in, false);
            return;
        }
        // Flat lines: from a transposed copy (rows padded to 16 bytes for the tiled transpose);
        // the last pass writes the image transposed back.
        const i64 width = in.width(), height = in.height();
        const i64 oriented_stride =
            static_cast<i64>(align_up(static_cast<std::size_t>(height) * sizeof(T), 16) / sizeof(T));
        stream_buffer oriented_in(static_cast<std::size_t>(width * oriented_stride) * sizeof(T), s, scratch_what);
        transpose<T>(in.data(), in.stride(), oriented_in.as<T>(), oriented_stride, width, height, s);
        run(device_view<const T>(oriented_in.as<T>(), height, width, oriented_stride), true);
    }
}

}  // namespace

template <class T>
void line_filter_angles(device_view<const T> in, const granula::detail::line_plan& plan,
                        const device_line_outputs<T>& out, stream s) {
    const cudaStream_t cs = to_cuda(s.native_handle());
    if (plan.algorithm == line_algorithm::automatic && single_angle_passes_apply<T>(plan, out)) {
        single_angle_passes<T>(in, plan, out, cs);
        return;
    }
    // automatic without the two-pass path: fifo, 2-3x faster than the stack here (640x640, 180
    // angles, λ = 41: 2.7 against 9.1 ms), whose write bursts diverge.
    if (plan.algorithm == line_algorithm::automatic && two_pass_applies<T>(in, plan))
        filter<T, line_algorithm::automatic, i32>(in, plan, out, cs);
    else if (plan.algorithm == line_algorithm::stack)
        filter<T, line_algorithm::stack, i32>(in, plan, out, cs);
    else if (plan.length < gd::line_queue_max_short_length)
        filter<T, line_algorithm::fifo, std::uint16_t>(in, plan, out, cs);
    else
        filter<T, line_algorithm::fifo, i32>(in, plan, out, cs);
}

template void line_filter_angles<std::uint8_t>(device_view<const std::uint8_t>, const granula::detail::line_plan&,
                                               const device_line_outputs<std::uint8_t>&, stream);
template void line_filter_angles<std::uint16_t>(device_view<const std::uint16_t>, const granula::detail::line_plan&,
                                                const device_line_outputs<std::uint16_t>&, stream);
template void line_filter_angles<float>(device_view<const float>, const granula::detail::line_plan&,
                                        const device_line_outputs<float>&, stream);

}  // namespace granula::cuda
