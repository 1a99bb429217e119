// Names of an enumeration's values, from a table of {value, name} pairs: what the to_string and
// parse_... functions of the operations share.
#pragma once

#include <string>
#include <string_view>

#include "granula/core/error.hpp"

namespace granula::detail {

// The name of `value`, "?" for a value the table lacks.
template <class Table, class E>
std::string_view name_of(const Table& names, E value) {
    for (const auto& [v, name] : names)
        if (v == value) return name;
    return "?";
}

// The value named `name`; invalid_argument "unknown WHAT 'NAME'; allowed: a, b, ..." otherwise.
template <class Table>
auto value_named(const Table& names, std::string_view name, std::string_view what) {
    for (const auto& [v, n] : names)
        if (n == name) return v;
    std::string allowed;
    for (const auto& entry : names) allowed += (allowed.empty() ? "" : ", ") + std::string(entry.second);
    throw invalid_argument("unknown " + std::string(what) + " '" + std::string(name) + "'; allowed: " + allowed);
}

}  // namespace granula::detail
