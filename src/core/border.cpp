#include "granula/core/border.hpp"

#include <array>
#include <utility>

#include "granula/core/error.hpp"

namespace granula {
namespace {
constexpr std::array<std::pair<border_mode, std::string_view>, 6> border_names{{
    {border_mode::ignore, "ignore"},
    {border_mode::constant, "constant"},
    {border_mode::nearest, "nearest"},
    {border_mode::reflect, "reflect"},
    {border_mode::mirror, "mirror"},
    {border_mode::wrap, "wrap"},
}};
}  // namespace

std::string_view to_string(border_mode mode) {
    for (const auto& [m, name] : border_names)
        if (m == mode) return name;
    return "?";
}

std::string border_mode_names() {
    std::string names;
    for (const auto& entry : border_names) names += (names.empty() ? "" : ", ") + std::string(entry.second);
    return names;
}

border_mode parse_border_mode(std::string_view name) {
    for (const auto& [m, n] : border_names)
        if (n == name) return m;
    throw invalid_argument("unknown border mode '" + std::string(name) + "'; allowed: " + border_mode_names());
}

}  // namespace granula
