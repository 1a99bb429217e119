// Rotation detection (detect_rotation, lines.hpp) on a real page rotated by known angles and on
// synthetic staves, and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "granula/granula.hpp"
#include "granula/io/io.hpp"

namespace granula {
namespace {

host_image<std::uint8_t> rotated(host_view<const std::uint8_t> page, double angle, double fill) {
    host_image<std::uint8_t> out(page.width(), page.height());
    rotate<std::uint8_t>(page, out.view(), angle, fill);
    return out;
}

// data/page.png, a photographed page whose text lines bend (about -1.0 degrees over the left
// half, +0.5 over the right by a projection-profile search), with a skew of about -0.2 degrees
// as a whole (the same search's six best angles span -0.24 .. -0.14). Rotated by known angles with white fill, the
// text-line method recovers each within 0.1 degrees of the angle plus its result on the unrotated page.
TEST(Deskew, TextPageRotatedByKnownAngles) {
    const auto file = io::read_image(std::string(GRANULA_DATA_DIR) + "/page.png");
    const host_view<const std::uint8_t> page = file.as<const std::uint8_t>();
    const deskew_params params;  // text_lines, -10..10 step 0.1, λ from the width
    const double own = detect_rotation<std::uint8_t>(page, params).angle;
    EXPECT_NEAR(own, -0.2, 0.1);  // measured: -0.28
    for (const double angle : {-9.3, -4.2, -0.7, 2.5, 7.9}) {
        const auto page_rotated = rotated(page, angle, 255);
        const deskew_result r = detect_rotation<std::uint8_t>(page_rotated.view(), params);
        EXPECT_NEAR(r.angle - own, angle, 0.1) << "page rotated by " << angle << " degrees";
        EXPECT_EQ(r.angles.size(), r.spectrum.size());
    }
}

// Turned a quarter (numpy.rot90), the page's lines run at 90 - 0.28 degrees: a range around 90
// finds them, the background closing and λ following the range (along the height).
TEST(Deskew, VerticalText) {
    const auto file = io::read_image(std::string(GRANULA_DATA_DIR) + "/page.png");
    const host_view<const std::uint8_t> page = file.as<const std::uint8_t>();
    host_image<std::uint8_t> turned(page.height(), page.width());
    for (std::int64_t y = 0; y < turned.height(); ++y)
        for (std::int64_t x = 0; x < turned.width(); ++x) turned.view()(y, x) = page(x, page.width() - 1 - y);
    deskew_params params;
    params.first = 80, params.last = 100;
    EXPECT_NEAR(detect_rotation<std::uint8_t>(turned.view(), params).angle, 90 - 0.28, 0.1);  // measured 89.77
}

// Staves: five 1-pixel dark lines each, note heads and stems, on a light page. Both methods find
// the rotation within 0.05 degrees (measured: 0.024 at most); the closing spectrum is lowest where the staff lines lie.
host_image<std::uint8_t> music_sheet(std::int64_t w = 480, std::int64_t h = 300) {
    host_image<std::uint8_t> sheet(w, h);
    fill<std::uint8_t>(sheet.view(), 235);
    for (int staff = 0; staff < 3; ++staff)
        for (int line = 0; line < 5; ++line)
            for (std::int64_t x = 30; x < w - 30; ++x) sheet.view()(50 + staff * 85 + line * 9, x) = 30;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> column(40, static_cast<int>(w) - 50), which(0, 2), step(-2, 10);
    for (int note = 0; note < 40; ++note) {
        const int cx = column(rng), cy = 50 + which(rng) * 85 + step(rng) * 4;
        for (int dy = -4; dy <= 4; ++dy)
            for (int dx = -5; dx <= 5; ++dx)
                if (dx * dx * 16 + dy * dy * 25 <= 400) sheet.view()(cy + dy, cx + dx) = 20;
        for (int dy = -28; dy <= 0; ++dy) sheet.view()(cy + dy, cx + 5) = 20;
    }
    return sheet;
}

TEST(Deskew, MusicSheetBothMethods) {
    const auto sheet = music_sheet();
    for (const deskew_method method : {deskew_method::closing_spectrum, deskew_method::text_lines}) {
        deskew_params params;
        params.method = method;
        for (const double angle : {-9.3, -0.7, 0.0, 7.9}) {
            const auto page = rotated(sheet.view(), angle, 235);
            const deskew_result r = detect_rotation<std::uint8_t>(page.view(), params);
            EXPECT_NEAR(r.angle, angle, 0.05) << to_string(method) << " at " << angle << " degrees";
            if (method == deskew_method::closing_spectrum) {
                const auto lowest = std::min_element(r.spectrum.begin(), r.spectrum.end()) - r.spectrum.begin();
                EXPECT_NEAR(r.angles[lowest], angle, 0.1);
            }
        }
    }
}

// A page at least 2048 pixels wide is reduced (by the minimum of each 2x2 block here) before
// the search: the staves keep their accuracy, with λ chosen or given in the page's pixels.
TEST(Deskew, WidePagesAreReduced) {
    const auto sheet = music_sheet(2100, 300);
    const auto page = rotated(sheet.view(), -2.6, 235);
    deskew_params params;
    params.first = -4, params.last = 4;
    params.method = deskew_method::closing_spectrum;
    EXPECT_NEAR(detect_rotation<std::uint8_t>(page.view(), params).angle, -2.6, 0.05);
    params.length = 2000;
    EXPECT_NEAR(detect_rotation<std::uint8_t>(page.view(), params).angle, -2.6, 0.05);
    params.length = 2101;
    EXPECT_THROW(detect_rotation<std::uint8_t>(page.view(), params), invalid_argument);
}

TEST(Deskew, RangeLengthAndTypes) {
    const auto sheet = music_sheet();
    const auto page = rotated(sheet.view(), 3.3, 235);
    deskew_params params;
    params.first = -2, params.last = 2, params.step = 0.5;
    const deskew_result r = detect_rotation<std::uint8_t>(page.view(), params);
    EXPECT_EQ(r.angle, 2.0);                   // clamped to the range
    EXPECT_DOUBLE_EQ(r.angles.front(), -5.0);  // 3 degrees beyond either end
    EXPECT_NEAR(r.angles.back(), 5.0, 1e-9);
    params = {};
    params.length = 250;  // the paper's λ
    params.method = deskew_method::closing_spectrum;
    host_image<float> as_float(page.width(), page.height());
    host_image<std::uint16_t> as_16(page.width(), page.height());
    for (std::int64_t y = 0; y < page.height(); ++y)
        for (std::int64_t x = 0; x < page.width(); ++x) {
            as_float.view()(y, x) = page.view()(y, x) / 255.0f;
            as_16.view()(y, x) = static_cast<std::uint16_t>(page.view()(y, x) * 257);
        }
    EXPECT_NEAR(detect_rotation<float>(as_float.view(), params).angle, 3.3, 0.02);
    EXPECT_NEAR(detect_rotation<std::uint16_t>(as_16.view(), params).angle, 3.3, 0.02);
    host_image<std::uint8_t> blank(50, 40);
    fill<std::uint8_t>(blank.view(), 200);
    EXPECT_EQ(detect_rotation<std::uint8_t>(blank.view(), {}).angle, 0.0);  // no evidence, no rotation
}

TEST(Deskew, BadArgumentsAreClearErrors) {
    host_image<std::uint8_t> page(100, 60);
    fill<std::uint8_t>(page.view(), 200);
    const auto expect_error = [&](deskew_params params, const std::string& words) {
        try {
            detect_rotation<std::uint8_t>(page.view(), params);
            ADD_FAILURE() << "no exception; expected one mentioning '" << words << "'";
        } catch (const invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    deskew_params p;
    p.step = 0;
    expect_error(p, "step");
    p = {};
    p.first = 5, p.last = -5;
    expect_error(p, "empty");
    p = {};
    p.length = -1;
    expect_error(p, ">= 1");
    p = {};
    p.length = 101;
    expect_error(p, "does not fit");
    host_image<float> with_nan(20, 20);
    fill<float>(with_nan.view(), 1.0f);
    with_nan.view()(3, 4) = std::numeric_limits<float>::quiet_NaN();
    EXPECT_THROW(detect_rotation<float>(with_nan.view(), {}), invalid_argument);
    host_image<std::uint8_t> empty(0, 0);
    EXPECT_THROW(detect_rotation<std::uint8_t>(empty.view(), {}), invalid_argument);
    EXPECT_EQ(parse_deskew_method("text"), deskew_method::text_lines);
    EXPECT_EQ(to_string(deskew_method::closing_spectrum), "closing");
    EXPECT_THROW(parse_deskew_method("hough"), invalid_argument);
}

}  // namespace
}  // namespace granula
