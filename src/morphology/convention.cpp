#include "granula/morphology/convention.hpp"

#include <array>
#include <utility>

#include "granula/core/error.hpp"

namespace granula {
namespace {
constexpr std::array<std::pair<convention, std::string_view>, 4> convention_table{{
    {convention::granula, "granula"},
    {convention::opencv, "opencv"},
    {convention::scipy, "scipy"},
    {convention::matlab, "matlab"},
}};
}  // namespace

std::string_view to_string(convention c) {
    for (const auto& [value, name] : convention_table)
        if (value == c) return name;
    return "?";
}

std::string convention_names() {
    std::string names;
    for (const auto& entry : convention_table) names += (names.empty() ? "" : ", ") + std::string(entry.second);
    return names;
}

convention parse_convention(std::string_view name) {
    for (const auto& [value, n] : convention_table)
        if (n == name) return value;
    throw invalid_argument("unknown convention '" + std::string(name) + "'; allowed: " + convention_names());
}

border default_border(convention c) {
    return c == convention::scipy ? border{border_mode::reflect, 0.0} : border{border_mode::ignore, 0.0};
}

}  // namespace granula
