// Lines at angles other than the axes, and small elements of any shape, as a program of
// shifted minima (maxima), run by the CPU over rows held in cache (morphology_cpu.cpp,
// stream_kernels.cpp); an opening or closing by such elements is one program, its dilation's
// stages reading its erosion's last, and so is a top-hat or a gradient, whose last stage takes
// a difference.
//
// A line of slope p/q is a base (the runs of its first q + (L mod q) pixels) swept along a
// periodic line of n points, step s (structuring_element::line). Each stage of the program is
// an image: stage k (p) = min (max) over its reads (j, d) of stage j (p + d), stage 0 the
// source and the last stage the result. The base's pixels share sub-patterns: a pair of pixels
// (or of earlier pairs) at one displacement that recurs across the base becomes a stage read
// at each place (a run of two pixels, two runs a period apart, ...); the periodic line is then
// built by growing it, Y(2m) (p) = min(Y(m) (p), Y(m) (p + m s)) (or 3 or 4 reads), in a few
// stages (growth_chain). Every read is a load and a min per vector, and every stage's rows are
// needed only a few rows after they are made, so the rows live in small rings in the cache and
// the image is read and written once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "granula/morphology/structuring_element.hpp"
#include "morphology/run_growth.hpp"

namespace granula::detail {

struct shift_read {
    int stage = 0;
    std::int64_t dx = 0, dy = 0;
    friend auto operator<=>(const shift_read&, const shift_read&) = default;
};

struct shift_stage {
    std::vector<shift_read> reads;
    bool maximum = false;
    // Pixels of this stage off the image are replaced by the next operation's outside value:
    // the end of an opening's erosion, where its dilation starts (border ignore or constant).
    bool clip_to_image = false;
    // Instead of a min (max): its first read less its second, at zero where an unsigned type
    // would go below it (a top-hat's or a gradient's end; two reads).
    bool difference = false;
};

struct shift_program {
    std::vector<shift_stage> stages;  // stage k + 1; the last is the result
};

// An opening (closing) as one program: `second` reads the end of `first`, clipped to the image.
inline shift_program fused(shift_program first, const shift_program& second) {
    const int base = static_cast<int>(first.stages.size());
    first.stages.back().clip_to_image = true;
    for (shift_stage stage : second.stages) {
        for (auto& r : stage.reads) r.stage += base;
        first.stages.push_back(std::move(stage));
    }
    return first;
}

// Two programs over the same source as one: `second`'s stages after `first`'s (which keep
// their numbers), its reads of the source going to stage `source` (0: the source itself).
inline shift_program side_by_side(shift_program first, const shift_program& second, int source = 0) {
    const int base = static_cast<int>(first.stages.size());
    for (shift_stage stage : second.stages) {
        for (auto& r : stage.reads) r.stage = r.stage == 0 ? source : r.stage + base;
        first.stages.push_back(std::move(stage));
    }
    return first;
}

// `program` with a last stage: stage `minuend` less stage `subtrahend`, both at the pixel itself.
inline shift_program with_difference(shift_program program, int minuend, int subtrahend) {
    shift_stage stage{{{minuend, 0, 0}, {subtrahend, 0, 0}}};
    stage.difference = true;
    program.stages.push_back(std::move(stage));
    return program;
}

// A recurring pair must occur at least this often to get a stage of its own (a stage costs two
// loads and a store per vector, and saves one load per occurrence; line:255:30 took 5.4 ms for
// thresholds 2 to 6 alike, 6.3 at 8, 8.6 without shared pairs).
constexpr std::size_t shared_pair_min = 4;
// The sizes the periodic line grows through, 1 = m_0 < m_1 < ... < m_k = n: a stage from m to
// m' (m' at most 4 m) reads Y(m) at ceil(m' / m) places and stores a row, and the chain with the
// fewest loads and stores is taken. n = 9 (line:255:30 at slope 15/26): 1, 3, 9 (6 loads, 2
// stores) instead of doubling's 1, 2, 4, 8, 9 (8 loads, 4 stores); 45 degrees (n = 255): factors
// of 4, doubling's equal on the Zen 5 build machine.
inline std::vector<std::int64_t> growth_chain(std::int64_t n) {
    struct choice {
        std::int64_t cost, next;
    };
    std::map<std::int64_t, choice> best;  // from m: the cheapest cost to n and the next size
    const auto solve = [&](const auto& self, std::int64_t m) -> std::int64_t {
        if (m == n) return 0;
        if (const auto it = best.find(m); it != best.end()) return it->second.cost;
        choice c{std::numeric_limits<std::int64_t>::max(), n};
        for (std::int64_t f = 2; f <= 4; ++f) {
            const std::int64_t next = std::min(f * m, n);
            const std::int64_t cost = (next + m - 1) / m + 1 + self(self, next);
            if (cost < c.cost) c = {cost, next};
            if (next == n) break;
        }
        best[m] = c;
        return c.cost;
    };
    solve(solve, 1);
    std::vector<std::int64_t> chain{1};
    while (chain.back() != n) chain.push_back(best[chain.back()].next);
    return chain;
}

// Shared pairs, greedily: while the (stage, stage, displacement) that matches the most disjoint
// pairs of `reads` (sorted) matches at least shared_pair_min, it becomes a stage of `program`,
// read once for each of its pairs. Only pairs at most `row_gap` rows apart are candidates.
inline void share_pairs(shift_program& program, std::vector<shift_read>& reads, bool maximum,
                        std::int64_t row_gap = std::numeric_limits<std::int64_t>::max()) {
    for (;;) {
        using key = std::tuple<int, int, std::int64_t, std::int64_t>;
        std::vector<key> keys;  // every candidate pair's (stage, stage, displacement), sorted
        for (std::size_t i = 0; i < reads.size(); ++i)
            for (std::size_t j = i + 1; j < reads.size(); ++j)
                if (std::abs(reads[j].dy - reads[i].dy) <= row_gap)
                    keys.emplace_back(reads[i].stage, reads[j].stage, reads[j].dx - reads[i].dx,
                                      reads[j].dy - reads[i].dy);
        std::sort(keys.begin(), keys.end());
        std::size_t best_count = 0;
        std::vector<std::pair<std::size_t, std::size_t>> best_pairs;
        for (std::size_t k = 0, next = 0; k < keys.size(); k = next) {
            while (next < keys.size() && keys[next] == keys[k]) ++next;
            // No more disjoint pairs than pairs: skipping these keeps the choice (planning
            // line:255:30 took 0.34 ms a call, now 0.1-0.2).
            if (next - k <= best_count) continue;
            const auto [a, b, ddx, ddy] = keys[k];
            std::vector<bool> used(reads.size(), false);
            std::vector<std::pair<std::size_t, std::size_t>> pairs;
            for (std::size_t i = 0; i < reads.size(); ++i) {
                if (used[i] || reads[i].stage != a) continue;
                const shift_read partner{b, reads[i].dx + ddx, reads[i].dy + ddy};
                const auto it = std::lower_bound(reads.begin(), reads.end(), partner);
                if (it == reads.end() || !(*it == partner)) continue;
                const auto j = static_cast<std::size_t>(it - reads.begin());
                if (used[j] || j == i) continue;
                used[i] = used[j] = true;
                pairs.emplace_back(i, j);
            }
            if (pairs.size() > best_count) best_count = pairs.size(), best_pairs = std::move(pairs);
        }
        if (best_count < shared_pair_min) return;
        const shift_read& first = reads[best_pairs[0].first];
        const shift_read& second = reads[best_pairs[0].second];
        program.stages.push_back(
            {{{first.stage, 0, 0}, {second.stage, second.dx - first.dx, second.dy - first.dy}}, maximum});
        const int pair = static_cast<int>(program.stages.size());
        std::vector<bool> drop(reads.size(), false);
        std::vector<shift_read> next;
        for (const auto& [i, j] : best_pairs) {
            drop[i] = drop[j] = true;
            next.push_back({pair, reads[i].dx, reads[i].dy});
        }
        for (std::size_t i = 0; i < reads.size(); ++i)
            if (!drop[i]) next.push_back(reads[i]);
        std::sort(next.begin(), next.end());
        reads = std::move(next);
    }
}

// A stage costs about this many reads: a store per vector, and rows of its own in the rings
// (4096x4096 uint8 erosions, one thread, Zen 3: a read 0.19 ms, a stage's store 0.24; weights
// of 1, 2 and 4 tried on disks of radius 1 to 31 differed by less than the VM's noise).
constexpr std::int64_t stage_reads = 2;

inline std::int64_t program_cost(const shift_program& program) {
    std::int64_t cost = 0;
    for (const auto& stage : program.stages) cost += static_cast<std::int64_t>(stage.reads.size()) + stage_reads;
    return cost;
}

// A digital line's pixels (stage-0 reads, one per column or one per row) as pieces: the piece
// of m pixels from the i-th along the line is a stage, the minimum (maximum) of k <= 6 pieces
// of m' >= m / k pixels at evenly spaced starts inside it, down to single pixels (the source);
// pieces of one shape (the same steps from pixel to pixel) are one stage wherever they lie. The
// piece lengths are chosen by dynamic programming over (length, shape) for the least
// program_cost, each shape's own pieces counted again wherever it is used. Line:101:30's base of
// 25 pixels: 6 single pixels, 11 from two of them, 25 from three (11 reads, 3 stages) against the
// shared pairs' 13 reads in 3 stages; 4096x4096 uint8 openings, one thread (Sapphire Rapids VM,
// the two alternated): line:101:30 8.2 -> 7.4 ms, 150 8.3 -> 6.9, 60 10.3 -> 7.7, 120 8.5 -> 7.4.
// Returns the read of the whole line (the stage made last, at offset (0, 0)); none where the
// pixels are not one per column or row, or more than line_pieces_max of them (planning grows
// with their cube: 0.05 ms a line for 25 pixels, 0.15 for 49; allowing up to 160 made 4 more of
// 176 whole-degree angles cheaper at length 255 and 1001 each, and none at 41-101).
constexpr std::size_t line_pieces_max = 64;
// The pieces of m' pixels that make one of m: m' < ceil(m / k) + piece_overlap_max (more
// overlap planned no line of length 41-1001 at whole degrees cheaper, and took line:101:44's
// planning from 0.15 to 0.87 ms).
constexpr std::int64_t piece_reads_max = 6, piece_overlap_max = 4;

inline std::optional<shift_read> plan_line_pieces(shift_program& program, std::vector<shift_read> pixels,
                                                  bool maximum) {
    const auto n = static_cast<std::int64_t>(pixels.size());
    if (n < 2 || pixels.size() > line_pieces_max) return std::nullopt;
    // In order along the line: by column where every column holds one pixel, else by row.
    const auto ordered_by = [&](auto key) {
        std::sort(pixels.begin(), pixels.end(), [&](const shift_read& a, const shift_read& b) { return key(a) < key(b); });
        return std::adjacent_find(pixels.begin(), pixels.end(), [&](const shift_read& a, const shift_read& b) {
                   return key(a) == key(b);
               }) == pixels.end();
    };
    if (!ordered_by([](const shift_read& r) { return r.dx; }) && !ordered_by([](const shift_read& r) { return r.dy; }))
        return std::nullopt;
    const auto at = [n](std::int64_t m, std::int64_t i) { return static_cast<std::size_t>(m * n + i); };
    // shape[at(m, i)]: the shape of the piece of m pixels from pixel i, numbered per length.
    std::vector<int> shape(static_cast<std::size_t>((n + 1) * n), 0);
    for (std::int64_t m = 2; m <= n; ++m) {
        std::map<std::tuple<int, std::int64_t, std::int64_t>, int> numbers;
        for (std::int64_t i = 0; i + m <= n; ++i) {
            const shift_read &a = pixels[static_cast<std::size_t>(i + m - 2)], &b = pixels[static_cast<std::size_t>(i + m - 1)];
            shape[at(m, i)] = numbers
                                  .try_emplace({shape[at(m - 1, i)], b.dx - a.dx, b.dy - a.dy},
                                               static_cast<int>(numbers.size()))
                                  .first->second;
        }
    }
    // The j-th of the k starts of the pieces of `sub` pixels that cover the piece (i, m).
    const auto start = [](std::int64_t i, std::int64_t m, std::int64_t k, std::int64_t sub, std::int64_t j) {
        return i + (2 * j * (m - sub) + k - 1) / (2 * (k - 1));
    };
    // By (length, shape): the least cost, and the reads and the pieces' length that give it.
    constexpr std::int64_t unknown = -1;
    std::vector<std::int64_t> cost(shape.size(), unknown), reads_of(shape.size(), 0), sub_of(shape.size(), 0);
    const auto solve = [&](const auto& self, std::int64_t m, std::int64_t i) -> std::int64_t {
        if (m == 1) return 0;
        const std::size_t key = at(m, shape[at(m, i)]);
        if (cost[key] != unknown) return cost[key];
        std::int64_t best = std::numeric_limits<std::int64_t>::max();
        for (std::int64_t k = 2; k <= std::min(piece_reads_max, m); ++k)
            for (std::int64_t sub = (m + k - 1) / k; sub < std::min(m, (m + k - 1) / k + piece_overlap_max); ++sub) {
                std::int64_t c = k + stage_reads;
                int counted[piece_reads_max];
                std::int64_t distinct = 0;
                for (std::int64_t j = 0; j < k && c < best; ++j) {
                    const std::int64_t s = start(i, m, k, sub, j);
                    if (std::find(counted, counted + distinct, shape[at(sub, s)]) != counted + distinct) continue;
                    counted[distinct++] = shape[at(sub, s)];
                    c += self(self, sub, s);
                }
                if (c < best) best = c, reads_of[key] = k, sub_of[key] = sub;
            }
        return cost[key] = best;
    };
    solve(solve, n, 0);
    // The stages, one per (length, shape), each anchored at the piece's first pixel (its value at
    // p is the minimum over the piece's pixels q of source(p + q - first)); the whole line's at
    // (at_x, at_y) = its first pixel, so that it reads source(p + q).
    std::vector<int> stage_of(shape.size(), 0);
    const auto build = [&](const auto& self, std::int64_t m, std::int64_t i, std::int64_t at_x, std::int64_t at_y) -> int {
        const std::size_t key = at(m, shape[at(m, i)]);
        if (stage_of[key] != 0) return stage_of[key];
        std::vector<shift_read> reads;
        const shift_read& piece_first = pixels[static_cast<std::size_t>(i)];
        for (std::int64_t j = 0; j < reads_of[key]; ++j) {
            const std::int64_t s = start(i, m, reads_of[key], sub_of[key], j);
            const shift_read& p = pixels[static_cast<std::size_t>(s)];
            const int from = sub_of[key] == 1 ? p.stage : self(self, sub_of[key], s, 0, 0);
            reads.push_back({from, p.dx - piece_first.dx + at_x, p.dy - piece_first.dy + at_y});
        }
        std::sort(reads.begin(), reads.end());
        reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
        program.stages.push_back({std::move(reads), maximum});
        return stage_of[key] = static_cast<int>(program.stages.size());
    };
    return shift_read{build(build, n, 0, pixels[0].dx, pixels[0].dy), 0, 0};
}

// The program of a line made of one sheared periodic segment, alone (45 and 135 degrees) or
// after each term's run (other angles), of a line shorter than two of its periods (its runs
// alone), or of one horizontal segment; none for other elements.
inline std::optional<shift_program> plan_line_program(const structuring_element& se, bool maximum) {
    const auto& terms = se.decomposition();
    if (terms.empty()) return std::nullopt;
    // A line shorter than two periods is its runs alone, without a periodic segment
    // (structuring_element::line): the base is every pixel, and the line is one stage of the
    // base's reads (their shared pairs first). Through the general path instead, line:31:30
    // took twice the time of line:63:30.
    const bool runs_alone = se.shape() == structuring_element::kind::line && terms.size() > 1 &&
                            std::all_of(terms.begin(), terms.end(), [](const decomposition_term& t) {
                                if (t.segments.empty()) return true;
                                const line_segment& s = t.segments[0];
                                return t.segments.size() == 1 && (s.horizontal() || s.vertical());
                            });
    if (!runs_alone && terms[0].segments.empty()) return std::nullopt;
    // Its step: none (one point) for runs alone.
    const line_segment periodic = runs_alone ? line_segment{1, 0, 0, 0} : terms[0].segments.back();
    // A horizontal line alone: all its reads lie in one row (morphology_cpu.cpp says when it runs so).
    const bool horizontal_alone = terms.size() == 1 && terms[0].segments.size() == 1 && periodic.dy == 0;
    if (!runs_alone && !horizontal_alone && (periodic.dx == 0 || periodic.dy == 0)) return std::nullopt;
    const std::int64_t sign = maximum ? -1 : 1;  // dilation reads the offsets negated
    std::vector<shift_read> base;
    for (const auto& t : terms) {
        if (!runs_alone && (t.segments.empty() || t.segments.size() > 2 || !(t.segments.back() == periodic)))
            return std::nullopt;
        // The term's run, when it has one: its segments less the periodic one.
        const std::size_t runs = runs_alone ? t.segments.size() : t.segments.size() - 1;
        if (runs == 0) {
            base.push_back({0, sign * t.offset_x, sign * t.offset_y});
            continue;
        }
        const line_segment& run = t.segments.front();
        if (!run.horizontal() && !run.vertical()) return std::nullopt;
        for (std::int64_t i = 0; i < run.length; ++i)
            base.push_back({0, sign * (t.offset_x + (i - run.origin) * run.dx),
                            sign * (t.offset_y + (i - run.origin) * run.dy)});
    }
    std::sort(base.begin(), base.end());
    base.erase(std::unique(base.begin(), base.end()), base.end());

    shift_program program;
    const auto add_stage = [&](std::vector<shift_read> reads) {
        program.stages.push_back({std::move(reads), maximum});
        return static_cast<int>(program.stages.size());
    };
    // The base by its pieces or by shared pairs, whichever costs less.
    {
        shift_program paired = program, pieces = program;
        std::vector<shift_read> paired_base = base;
        share_pairs(paired, paired_base, maximum);
        const std::int64_t paired_cost =
            program_cost(paired) + (paired_base.size() > 1 ? static_cast<std::int64_t>(paired_base.size()) + stage_reads : 0);
        const auto whole = plan_line_pieces(pieces, base, maximum);
        if (whole && program_cost(pieces) < paired_cost) {
            program = std::move(pieces);
            base = {*whole};
        } else {
            program = std::move(paired);
            base = std::move(paired_base);
        }
    }

    // The periodic line: points (j - origin) s, j < n, grown from the base.
    const std::int64_t n = periodic.length, sx = sign * periodic.dx, sy = sign * periodic.dy;
    const std::int64_t ex = -periodic.origin * sx, ey = -periodic.origin * sy;  // its first point
    if (n == 1) {
        if (base.size() == 1 && base[0].stage != 0 && base[0].dx + ex == 0 && base[0].dy + ey == 0) return program;
        for (auto& r : base) r.dx += ex, r.dy += ey;
        add_stage(base);
        return program;
    }
    // Y(m) as a stage read at an offset: the base itself when it is one read.
    shift_read y = base.size() == 1 ? base[0] : shift_read{add_stage(base), 0, 0};
    const std::vector<std::int64_t> chain = growth_chain(n);
    for (std::size_t i = 1; i < chain.size(); ++i) {
        const std::int64_t m = chain[i - 1], next = chain[i];
        const bool last = next == n;
        const std::int64_t ox = last ? ex : 0, oy = last ? ey : 0;
        std::vector<shift_read> reads;
        for (std::int64_t k = 0; k < next - m; k += m) reads.push_back({y.stage, y.dx + ox + k * sx, y.dy + oy + k * sy});
        reads.push_back({y.stage, y.dx + ox + (next - m) * sx, y.dy + oy + (next - m) * sy});
        y = {add_stage(reads), 0, 0};
    }
    return program;
}

// Rows a shared pair of a runs program spans at most: planning over every pair of reads took
// 5 ms for disk:50 and ellipse:101x51 against 1.0 and 1.7 within 4 rows, for costs within 3%.
constexpr std::int64_t pair_row_gap = 4;

// Any element by the runs of its rows: the minima (maxima) of runs of length g along the rows
// grow in a chain of stages 1 = g_0 < g_1 < ... (g_{i+1} at most 3 g_i, from g_i read at
// ceil(g_{i+1} / g_i) places), and the last stage reads each run of length l from the longest
// g <= l, at ceil(l / g) places that cover it (overlapping: min is idempotent). The chain is
// the one of least cost (program_cost) by dynamic programming over the lengths, as the CPU
// mask path's growth plan: a disk of radius 10 grows 1, 3, 9, 17, 19 and reads 26 times.
// With `pairs`, and when every row is one run (disks, diamonds, octagons, ellipses), the last
// stage's reads share pairs (share_pairs) among rows up to pair_row_gap apart: rows of equal
// runs pair down the element (disk:31:4 115 -> 78, disk:31 126 -> 114, octagon:27:18 120 -> 85).
// Planning them takes 0.1-1.7 ms (ellipse:101x51), which small images do not win back.
inline shift_program plan_runs_program(const footprint_mask& mask, bool maximum, bool pairs = false) {
    // Each run as (its row, its first column, its length), relative to the origin; dilation
    // reads the footprint reflected.
    struct run {
        std::int64_t dy, dx, length;
    };
    std::vector<shift_read> pixels;
    for (std::int64_t y = 0; y < mask.height; ++y)
        for (std::int64_t x = 0; x < mask.width; ++x)
            if (mask.at(y, x)) {
                const std::int64_t dx = x - mask.origin_x, dy = y - mask.origin_y;
                pixels.push_back({0, maximum ? -dx : dx, maximum ? -dy : dy});
            }
    std::sort(pixels.begin(), pixels.end(), [](const shift_read& a, const shift_read& b) {
        return a.dy != b.dy ? a.dy < b.dy : a.dx < b.dx;
    });
    std::vector<run> runs;
    for (const auto& p : pixels) {
        if (!runs.empty() && runs.back().dy == p.dy && runs.back().dx + runs.back().length == p.dx)
            ++runs.back().length;
        else
            runs.push_back({p.dy, p.dx, 1});
    }
    std::int64_t longest = 1;
    for (const auto& r : runs) longest = std::max(longest, r.length);
    std::vector<std::int64_t> count(static_cast<std::size_t>(longest + 1), 0);
    for (const auto& r : runs) ++count[static_cast<std::size_t>(r.length)];
    // A stage from g to t costs stage_reads and its ceil(t / g) reads.
    const std::vector<std::int64_t> chain = cheapest_growth(
        count, 3, [](std::int64_t g, std::int64_t t) { return stage_reads + (t + g - 1) / g; });

    shift_program program;
    // Reads of stage `stage` (grown length g) covering a run of `length` from (dx, dy).
    const auto cover = [](std::vector<shift_read>& to, int stage, std::int64_t g, std::int64_t dx, std::int64_t dy,
                          std::int64_t length) {
        for (std::int64_t at = 0;; at += g) {
            const std::int64_t along = std::min(at, length - g);
            to.push_back({stage, dx + along, dy});
            if (along == length - g) break;
        }
    };
    std::vector<int> stage_of(chain.size(), 0);  // chain[i]'s stage; the source for length 1
    for (std::size_t i = 1; i < chain.size(); ++i) {
        std::vector<shift_read> grow;
        cover(grow, stage_of[i - 1], chain[i - 1], 0, 0, chain[i]);
        program.stages.push_back({std::move(grow), maximum});
        stage_of[i] = static_cast<int>(program.stages.size());
    }
    std::vector<shift_read> result;
    for (const auto& r : runs) {
        const auto i = static_cast<std::size_t>(
            std::upper_bound(chain.begin(), chain.end(), r.length) - chain.begin() - 1);
        cover(result, stage_of[i], chain[i], r.dx, r.dy, r.length);
    }
    const bool one_run_a_row = std::adjacent_find(runs.begin(), runs.end(), [](const run& a, const run& b) {
                                   return a.dy == b.dy;
                               }) == runs.end();
    if (pairs && one_run_a_row) {
        std::sort(result.begin(), result.end());
        share_pairs(program, result, maximum, pair_row_gap);
    }
    program.stages.push_back({std::move(result), maximum});
    return program;
}

}  // namespace granula::detail
