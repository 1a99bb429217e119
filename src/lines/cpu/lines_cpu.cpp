// The CPU backend of the linear filters. Two paths:
//  - per line (fifo, stack, and whatever the vectorised path does not take): each scan line is
//    gathered into a buffer, filtered by the shared 1-D algorithm (lines/scan_line_filter.hpp)
//    and scattered into the outputs. Lines of one angle hold disjoint pixels, so blocks of
//    lines run on separate threads with no locking.
//  - vectorised (automatic, border ignore or constant; nearest and reflect arrive as ignore,
//    which gives their image: with_equivalent_border in lines/lines.cpp):
//    lines/cpu/lines_kernels.cpp,
//    one SIMD lane per line, on the image (steep angles; flat ones through small transposed
//    tiles) or, for flat angles with reductions over angles, its transpose, the reductions kept
//    per orientation and merged at the end. Float NaN follows the same rule on both paths.
#include "lines/cpu/lines_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/border_index.hpp"
#include "core/parallel.hpp"
#include "core/simd_dispatch.hpp"
#include "lines/cpu/lines_kernels.hpp"
#include "lines/scan_line_filter.hpp"

namespace granula::cpu {
namespace {

using detail::line_keys;

// Lines per task: enough work to amortise a hand-off, few enough to balance two threads on a
// 640x640 image (about 1000 lines per angle).
constexpr std::int64_t lines_per_task = 64;

template <class T>
struct line_scratch {
    using K = typename line_keys<T>::key;
    std::vector<K> keys, filtered, queue_values;
    std::vector<std::int32_t> queue_positions;
    std::vector<std::uint8_t> is_nan;
    std::vector<std::int64_t> xs, ys;  // input coordinates of each line sample

    void reserve(std::int64_t samples, std::int32_t length) {
        const std::size_t queue = static_cast<std::size_t>(
            std::max(2 * detail::line_queue_capacity(length), detail::line_stack_capacity(length)));
        for (auto* v : {&keys, &filtered}) v->resize(static_cast<std::size_t>(samples));
        is_nan.resize(static_cast<std::size_t>(samples));
        xs.resize(static_cast<std::size_t>(samples));
        ys.resize(static_cast<std::size_t>(samples));
        queue_values.resize(queue);
        queue_positions.resize(queue);
    }
};

template <class T>
typename line_keys<T>::key border_pad(const detail::line_plan& plan) {
    return plan.mode.mode == border_mode::constant ? line_keys<T>::to_key(static_cast<T>(plan.mode.cval), plan.closing)
                                                   : line_keys<T>::top;
}

template <class T>
void filter_angles_per_line(host_view<const T> in, const detail::line_plan& plan, const host_line_outputs<T>& out) {
    using traits = line_keys<T>;
    using K = typename traits::key;
    constexpr bool is_float = std::is_floating_point_v<T>;
    const bool closing = plan.closing;
    const auto extension =
        detail::make_line_extension<K>(plan.length, plan.before, plan.mode.mode, border_pad<T>(plan));

    // The running extremum over angles, as line_keys::reduction_key orders them: NaN the largest
    // (it wins, as with numpy's max and min), the others reversed for the other extremum.
    const bool want_extremum = !out.extremum.empty() || !out.orientation.empty();
    const bool reversed = plan.reduction_reversed;
    host_image<K> best(want_extremum ? in.width() : 0, want_extremum ? in.height() : 0);
    const auto best_at = [&](std::int64_t x, std::int64_t y) -> K& { return best.view().row(y)[x]; };
    const std::int64_t longest = std::max(in.width(), in.height());

    for (std::size_t k = 0; k < plan.angles.size(); ++k) {
        const detail::line_angle_plan& angle = plan.angles[k];
        const detail::scan_lines& lines = angle.lines;
        const std::int64_t tasks = (lines.line_count() + lines_per_task - 1) / lines_per_task;
        std::vector<double> task_sums(static_cast<std::size_t>(tasks), 0.0);
        const host_view<T> filtered = out.filtered.empty() ? host_view<T>{} : out.filtered[angle.index];
        detail::parallel_for(tasks, in.pixel_count(), [&](std::int64_t task) {
            thread_local line_scratch<T> scratch;
            scratch.reserve(longest, plan.length);
            const std::int64_t c_begin = lines.first_line + task * lines_per_task;
            const std::int64_t c_end = std::min(lines.end_line, c_begin + lines_per_task);
            double sum = 0;
            for (std::int64_t c = c_begin; c < c_end; ++c) {
                const std::int64_t r0 = lines.row_begin(c), r1 = lines.row_end(c);
                const auto n = static_cast<std::int32_t>(r1 - r0);
                if (n <= 0) continue;
                // Input coordinates of sample i: oriented (row, column) = (r0 + i, c + shift).
                bool has_nan = false;
                for (std::int32_t i = 0; i < n; ++i) {
                    const std::int64_t r = r0 + i, col = c + lines.shift[r];
                    const std::int64_t x = lines.transposed ? r : col, y = lines.transposed ? col : r;
                    const T v = in.row(y)[x];
                    scratch.xs[i] = x;
                    scratch.ys[i] = y;
                    scratch.keys[i] = traits::to_key(v, closing);
                    if constexpr (is_float) {
                        scratch.is_nan[i] = v != v;
                        has_nan |= v != v;
                    }
                }
                const K* line_keys_in = scratch.keys.data();
                K* filtered_keys = scratch.filtered.data();
                const auto get = [line_keys_in](std::int32_t i) { return line_keys_in[i]; };
                const auto put = [&](std::int32_t i, K key) {
                    filtered_keys[i] = detail::constant_border_fix(key, i, n, extension);
                };
                if (plan.first_stage_only)
                    detail::erode_line(get, n, extension, [&](std::int32_t i, K key) { filtered_keys[i] = key; },
                                       scratch.queue_values.data(), scratch.queue_positions.data());
                else if (plan.algorithm == line_algorithm::stack)  // automatic: fifo
                    detail::open_stack(get, n, extension, put, scratch.queue_values.data(),
                                       scratch.queue_positions.data());
                else
                    detail::open_fifo(get, n, extension, put, scratch.queue_values.data(),
                                      scratch.queue_positions.data());
                if constexpr (is_float) {
                    if (has_nan && !plan.first_stage_only)
                        detail::nan_mask<K>([&](std::int32_t i) { return scratch.is_nan[i] != 0; }, n, extension,
                                            [&](std::int32_t i) { filtered_keys[i] = traits::top; });
                }
                for (std::int32_t i = 0; i < n; ++i) {
                    const K key = filtered_keys[i];  // float NaN: traits::top
                    const std::int64_t x = scratch.xs[i], y = scratch.ys[i];
                    const T value = traits::from_key(key, closing);
                    sum += static_cast<double>(value);
                    if (!filtered.empty()) filtered.row(y)[x] = value;
                    if (want_extremum) {
                        K& b = best_at(x, y);
                        const K ordered = traits::reduction_key(key, reversed);
                        if (k == 0 || b < ordered) {
                            b = ordered;
                            if (!out.orientation.empty())
                                out.orientation.row(y)[x] = static_cast<std::int32_t>(angle.index);
                        }
                    }
                }
            }
            task_sums[task] = sum;
        });
        if (!out.spectrum.empty()) {
            double total = 0;
            for (const double s : task_sums) total += s;  // in task order: the same on every thread count
            out.spectrum[angle.index] = total;
        }
    }
    if (!out.extremum.empty())
        for (std::int64_t y = 0; y < in.height(); ++y)
            for (std::int64_t x = 0; x < in.width(); ++x) {
                const K ordered = best_at(x, y);
                out.extremum.row(y)[x] = traits::from_key(traits::from_reduction_key(ordered, reversed), closing);
            }
}

// The running extremum of some of the angles and the rank of the angle attaining it
// (packed_best), per orientation (steep: image coordinates, flat: transposed).
template <class T>
struct running_extremum {
    using word = typename detail::reduction_word<T>::type;
    host_image<word> best_s, best_f;
    host_image<T> filtered_t;  // a flat angle's filtered image before its transpose
    bool first_s = true, first_f = true;
};

template <class T, class U>
host_image<U> image_if(bool wanted, std::int64_t width, std::int64_t height) {
    return wanted ? host_image<U>(width, height) : host_image<U>();
}

// `angles`: plan.angles or a run of them (filter_angles_in_groups); the ranks are positions in it.
template <class T>
void filter_angles_vectorised(host_view<const T> in, const detail::line_plan& plan,
                              std::span<const detail::line_angle_plan> angles, const host_line_outputs<T>& out) {
    using traits = line_keys<T>;
    using packed = detail::packed_best<T>;
    using word = typename packed::word;
    const std::int64_t w = in.width(), h = in.height();
    const auto angle_count = static_cast<std::int64_t>(angles.size());
    bool any_steep = false, any_flat = false;
    for (const auto& a : angles) (a.lines.transposed ? any_flat : any_steep) = true;
    const bool want_best = !out.extremum.empty() || !out.orientation.empty();
    // Flat lines read and write the image itself through small transposed tiles, unless there
    // are reductions over angles: those are kept on the transposed image, so the input is too.
    const bool flat_transposed = any_flat && want_best;
    host_image<T> in_t = image_if<T, T>(flat_transposed, h, w);
    if (flat_transposed) GRANULA_SIMD_DISPATCH_AVX512(transpose<T>, in, in_t.view());

    // Many angles on an image whose reductions fit in memory once per thread: each thread takes
    // whole angles into its own reduction (one parallel region for the call; a region per angle
    // spent most of its time waking threads). Otherwise the angles run one after the other,
    // each spread over the threads.
    const std::int64_t threads = std::max(1, num_threads());
    const bool across_angles = threads > 1 && angle_count >= 2 * threads &&
                               in.pixel_count() * threads * 10 <= (std::int64_t{1} << 29);
    const std::int64_t workers = across_angles ? threads : 1;
    std::vector<running_extremum<T>> reductions(static_cast<std::size_t>(workers));
    const auto run = [&](std::int64_t worker) {
        running_extremum<T>& r = reductions[worker];
        r.best_s = image_if<T, word>(want_best && any_steep, w, h);
        r.best_f = image_if<T, word>(want_best && any_flat, h, w);
        r.filtered_t = image_if<T, T>(!out.filtered.empty() && flat_transposed, h, w);
        for (std::int64_t k = worker; k < angle_count; k += workers) {
            const detail::line_angle_plan& angle = angles[k];
            const bool flat = angle.lines.transposed;
            detail::line_band_job<T> job;
            job.oriented = flat && want_best ? in_t.view() : in;
            job.on_image = flat && !want_best;
            job.lines = &angle.lines;
            job.extension = detail::make_line_extension<typename traits::key>(plan.length, plan.before,
                                                                              plan.mode.mode, border_pad<T>(plan));
            job.closing = plan.closing;
            job.first_stage_only = plan.first_stage_only;
            job.want_sum = !out.spectrum.empty();
            job.best = flat ? r.best_f.view() : r.best_s.view();
            job.angle_rank = static_cast<std::uint32_t>(k);
            job.reduction_reversed = plan.reduction_reversed;
            job.first = flat ? r.first_f : r.first_s;
            (flat ? r.first_f : r.first_s) = false;
            if (!out.filtered.empty()) job.filtered = flat && want_best ? r.filtered_t.view() : out.filtered[angle.index];
            const double sum = GRANULA_SIMD_DISPATCH_AVX512(filter_angle_bands<T>, job);
            if (flat && want_best && !out.filtered.empty())
                GRANULA_SIMD_DISPATCH_AVX512(transpose<T>, r.filtered_t.view(), out.filtered[angle.index]);
            if (!out.spectrum.empty()) out.spectrum[angle.index] = sum;
        }
    };
    if (across_angles)
        detail::parallel_for(workers, std::int64_t{1} << 62, run);  // nested regions inside run serially
    else
        run(0);
    if (!want_best) return;

    // Merge the orientations and workers: the larger word (the larger key, ties to the smaller
    // rank, the smaller angle).
    std::vector<host_image<word>> transposed;
    std::vector<host_view<const word>> sources;
    for (running_extremum<T>& r : reductions) {
        if (any_steep && !r.first_s) sources.push_back(r.best_s.view());
        if (any_flat && !r.first_f) {
            transposed.push_back(image_if<T, word>(true, w, h));
            GRANULA_SIMD_DISPATCH_AVX512(transpose<word>, r.best_f.view(), transposed.back().view());
            sources.push_back(transposed.back().view());
        }
    }
    detail::parallel_for(h, in.pixel_count(), [&](std::int64_t y) {
        for (std::int64_t x = 0; x < w; ++x) {
            word best = sources[0].row(y)[x];
            for (std::size_t i = 1; i < sources.size(); ++i) best = std::max(best, sources[i].row(y)[x]);
            if (!out.extremum.empty()) {
                const auto ordered = packed::key_of(best);
                out.extremum.row(y)[x] =
                    traits::from_key(traits::from_reduction_key(ordered, plan.reduction_reversed), plan.closing);
            }
            if (!out.orientation.empty())
                out.orientation.row(y)[x] = static_cast<std::int32_t>(angles[packed::rank_of(best)].index);
        }
    });
}

// The most angles the vectorised path takes at once: uint16 and float words hold 16-bit ranks.
constexpr std::size_t vectorised_angles_max = 65536;

// The vectorised path in groups of as many angles as a reduction word has ranks (uint8: 256), in
// angle order: each group's extremum and orientation replace the earlier groups' where its key
// is strictly better, larger or (reduction_reversed) smaller (ties keep the smaller angle).
template <class T>
void filter_angles_in_groups(host_view<const T> in, const detail::line_plan& plan, const host_line_outputs<T>& out) {
    using traits = line_keys<T>;
    constexpr auto group = static_cast<std::size_t>(detail::packed_best<T>::ranks);
    // The groups compare extrema by their keys in the reduction's order, as within a group.
    const auto ordered = [&](T v) {
        return traits::reduction_key(traits::to_key(v, plan.closing), plan.reduction_reversed);
    };
    const bool want_best = !out.extremum.empty() || !out.orientation.empty();
    const std::span<const detail::line_angle_plan> angles = plan.angles;
    if (angles.size() <= group || !want_best) {
        filter_angles_vectorised<T>(in, plan, angles, out);
        return;
    }
    const std::int64_t w = in.width(), h = in.height();
    // The running extremum is needed to compare groups even when only the orientation is asked for.
    host_image<T> own_extremum = image_if<T, T>(out.extremum.empty(), w, h);
    host_line_outputs<T> running = out;
    if (out.extremum.empty()) running.extremum = own_extremum.view();
    host_image<T> group_extremum(w, h);
    host_image<std::int32_t> group_orientation = image_if<T, std::int32_t>(!out.orientation.empty(), w, h);
    for (std::size_t first = 0; first < angles.size(); first += group) {
        const auto part = angles.subspan(first, std::min(group, angles.size() - first));
        if (first == 0) {
            filter_angles_vectorised<T>(in, plan, part, running);
            continue;
        }
        host_line_outputs<T> outputs = out;  // the filtered images and the spectrum, by angle index
        outputs.extremum = group_extremum.view();
        outputs.orientation = group_orientation.view();
        filter_angles_vectorised<T>(in, plan, part, outputs);
        detail::parallel_for(h, in.pixel_count(), [&](std::int64_t y) {
            for (std::int64_t x = 0; x < w; ++x) {
                T& value = running.extremum.row(y)[x];
                const T candidate = group_extremum.view().row(y)[x];
                if (!(ordered(value) < ordered(candidate))) continue;
                value = candidate;
                if (!out.orientation.empty()) out.orientation.row(y)[x] = group_orientation.view().row(y)[x];
            }
        });
    }
}

}  // namespace

template <class T>
void line_filter_angles(host_view<const T> in, const detail::line_plan& plan, const host_line_outputs<T>& out) {
    const bool vectorisable = plan.algorithm == line_algorithm::automatic &&
                              plan.angles.size() <= vectorised_angles_max &&
                              detail::pads_with_one_value(plan.mode.mode);
    if (vectorisable)
        filter_angles_in_groups<T>(in, plan, out);
    else
        filter_angles_per_line<T>(in, plan, out);
}

template void line_filter_angles<std::uint8_t>(host_view<const std::uint8_t>, const detail::line_plan&,
                                               const host_line_outputs<std::uint8_t>&);
template void line_filter_angles<std::uint16_t>(host_view<const std::uint16_t>, const detail::line_plan&,
                                                const host_line_outputs<std::uint16_t>&);
template void line_filter_angles<float>(host_view<const float>, const detail::line_plan&,
                                        const host_line_outputs<float>&);

}  // namespace granula::cpu
