// Rotation of a scanned page from angular spectra of linear filters (lines.hpp, "deskew").
// Built on the public line_filter / line_filter_angles only, so every backend serves it.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "core/enum_names.hpp"
#include "granula/core/error.hpp"
#include "granula/lines/lines.hpp"
#include "lines/scan_lines.hpp"

namespace granula {
namespace {

constexpr std::array<std::pair<deskew_method, std::string_view>, 2> method_names{{
    {deskew_method::text_lines, "text"},
    {deskew_method::closing_spectrum, "closing"},
}};

// Measured on data/page.png rotated by 52 angles in [-9.7, 9.8] and on synthetic staves
// (docs/semantics.md, "Linear openings and analyses"):
constexpr double length_fraction = 0.6;         // default λ = 0.6 x the page width (text_extent)
constexpr std::int64_t background_divisor = 8;  // the background closing is λ / 8 long
constexpr std::int64_t join_divisor = 16;       // the characters are joined along λ / 16
// Pages at least twice as wide (text_extent) are first reduced by the integer factor
// k = width / reduced_width, k^2 times fewer pixels to filter (measured on data/page.png enlarged 6
// times: 2304 px wide, reduced by 2, 0.3 s on 2 cores against 1.1 s for 2040 px unreduced; the
// text method's error stays within 0.03 degrees).
constexpr std::int64_t reduced_width = 1024;
// Angles beyond the range are scored too, so that a peak near an end of the range still has
// both flanks; the result is clamped to the range.
constexpr double margin_degrees = 3.0;

// The page's extent along the middle of the angles: its width for -10..10 degrees.
std::int64_t text_extent(std::span<const double> angles, std::int64_t w, std::int64_t h) {
    return detail::scan_line_extent(0.5 * (angles.front() + angles.back()), w, h);
}

// λ: the given length, or a fraction of the text extent; at most what every angle's scan lines
// hold.
std::int64_t line_length(std::int64_t requested, std::span<const double> angles, std::int64_t w, std::int64_t h) {
    std::int64_t fit = w + h;
    for (const double a : angles) fit = std::min(fit, detail::scan_line_extent(a, w, h));
    if (requested > fit)
        throw invalid_argument("line length " + std::to_string(requested) + " does not fit the " + std::to_string(w) +
                               "x" + std::to_string(h) + " page: the scan lines of the angles tried hold " +
                               std::to_string(fit) + " pixels");
    if (requested > 0) return requested;
    return std::max<std::int64_t>(
        1, std::min<std::int64_t>(
               fit, static_cast<std::int64_t>(length_fraction * static_cast<double>(text_extent(angles, w, h)))));
}

// The page reduced by the factor k: each pixel the minimum (the darkest) of its k x k block, so
// that print and thin dark lines survive.
template <class T>
host_image<T> reduce_by_minimum(host_view<const T> page, std::int64_t k) {
    const std::int64_t w = (page.width() + k - 1) / k, h = (page.height() + k - 1) / k;
    host_image<T> out(w, h);
    for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
            T v = page(y * k, x * k);
            for (std::int64_t yy = y * k; yy < std::min(page.height(), (y + 1) * k); ++yy)
                for (std::int64_t xx = x * k; xx < std::min(page.width(), (x + 1) * k); ++xx)
                    v = std::min(v, page(yy, xx));
            out.view()(y, x) = v;
        }
    return out;
}

// The centre of the peak (valley when `lowest`) around the best sample: the centroid of the
// contiguous samples around it that lie beyond half-way between the best value and the
// opposite extreme of the range, weighted by how far beyond. It is sub-step accurate for the
// flat-topped peaks long lines give (a line of length λ stays inside a band of thickness t over
// about ±asin(t / λ)). Falls back to the best sample when the peak is cut by an end of the range,
// and gives 0 when the spectrum is flat.
double peak_centre(std::span<const double> angles, std::span<const double> score, bool lowest) {
    const auto sign = lowest ? -1.0 : 1.0;
    std::size_t best = 0;
    for (std::size_t i = 1; i < score.size(); ++i)
        if (sign * score[i] > sign * score[best]) best = i;
    double far = score[best];
    for (const double v : score) far = lowest ? std::max(far, v) : std::min(far, v);
    const double level = 0.5 * (score[best] + far);
    if (score[best] == far) return 0.0;  // a flat spectrum: no evidence of any rotation
    std::size_t l = best, r = best;
    while (l > 0 && sign * score[l - 1] > sign * level) --l;
    while (r + 1 < score.size() && sign * score[r + 1] > sign * level) ++r;
    if (l == 0 || r + 1 == score.size()) return angles[best];
    double weights = 0, moment = 0;
    for (std::size_t i = l; i <= r; ++i) {
        const double weight = sign * (score[i] - level);
        weights += weight;
        moment += weight * angles[i];
    }
    return moment / weights;
}

template <class T>
void require_numbers(host_view<const T> page) {
    if constexpr (std::is_floating_point_v<T>)
        for (std::int64_t y = 0; y < page.height(); ++y)
            for (std::int64_t x = 0; x < page.width(); ++x)
                if (std::isnan(page(y, x)))
                    throw invalid_argument("the page has a NaN pixel at row " + std::to_string(y) + ", column " +
                                           std::to_string(x) + "; rotation detection needs numbers");
}

// The print's darkness: the page's closing by a line across the text lines (at `across`
// degrees) longer than the characters, minus the page. The closing follows the page's light background (uneven
// lighting, dark borders), so what is left is the print alone, bright on black. Never negative (closings are
// extensive), so it keeps the pixel type.
template <class T>
host_image<T> darkness(host_view<const T> page, double across, std::int64_t length) {
    host_image<T> background(page.width(), page.height());
    line_params p;
    p.length = std::min(length, detail::scan_line_extent(across, page.width(), page.height()));
    p.kind = line_filter_kind::closing;
    line_filter<T>(page, background.view(), across, p);
    for (std::int64_t y = 0; y < page.height(); ++y)
        for (std::int64_t x = 0; x < page.width(); ++x)
            background.view()(y, x) = static_cast<T>(background.view()(y, x) - page(y, x));
    return background;
}

template <class T>
std::vector<double> text_line_scores(host_view<const T> page, std::span<const double> angles, std::int64_t length) {
    // Across the middle of the range: vertical for the usual -10..10 degrees.
    const double across = 0.5 * (angles.front() + angles.back()) + 90.0;
    const host_image<T> dark = darkness<T>(page, across, std::max<std::int64_t>(3, length / background_divisor));
    host_image<T> joined(page.width(), page.height());
    std::vector<double> scores(angles.size());
    line_params join;
    join.length = std::max<std::int64_t>(1, length / join_divisor);
    join.kind = line_filter_kind::closing;
    line_params open;
    open.length = length;
    for (std::size_t i = 0; i < angles.size(); ++i) {
        line_filter<T>(dark.view(), joined.view(), angles[i], join);
        host_line_outputs<T> out;
        out.spectrum = std::span<double>(&scores[i], 1);
        line_filter_angles<T>(joined.view(), std::span<const double>(&angles[i], 1), open, out);
    }
    return scores;
}

}  // namespace

std::string_view to_string(deskew_method method) { return detail::name_of(method_names, method); }

deskew_method parse_deskew_method(std::string_view name) {
    return detail::value_named(method_names, name, "deskew method");
}

template <pixel T>
deskew_result detect_rotation(host_view<const T> page, const deskew_params& params) {
    if (page.empty()) throw invalid_argument("the page image is empty; rotation detection needs at least 1x1 pixels");
    if (params.length < 0)
        throw invalid_argument("line length " + std::to_string(params.length) +
                               " is invalid; it must be >= 1, or 0 to choose it from the image");
    deskew_result result;
    angle_range(params.first, params.last, params.step);  // validates the range
    result.angles = angle_range(params.first - margin_degrees, params.last + margin_degrees, params.step);
    std::int64_t length = line_length(params.length, result.angles, page.width(), page.height());
    require_numbers<T>(page);
    const std::int64_t k =
        std::max<std::int64_t>(1, text_extent(result.angles, page.width(), page.height()) / reduced_width);
    host_image<T> reduced;
    if (k > 1) {  // angles do not change with the scale; λ and the page shrink together
        reduced = reduce_by_minimum<T>(page, k);
        page = reduced.view();
        length = std::max<std::int64_t>(1, (length + k / 2) / k);
    }
    if (params.method == deskew_method::closing_spectrum) {
        result.spectrum.resize(result.angles.size());
        line_params p;
        p.length = length;
        p.kind = line_filter_kind::closing;
        host_line_outputs<T> out;
        out.spectrum = result.spectrum;
        line_filter_angles<T>(page, result.angles, p, out);
    } else {
        result.spectrum = text_line_scores<T>(page, result.angles, length);
    }
    result.angle =
        std::clamp(peak_centre(result.angles, result.spectrum, params.method == deskew_method::closing_spectrum),
                   params.first, params.last);
    return result;
}

#define GRANULA_INSTANTIATE(T, name) \
    template deskew_result detect_rotation<T>(host_view<const T>, const deskew_params&);
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_INSTANTIATE)
#undef GRANULA_INSTANTIATE

}  // namespace granula
