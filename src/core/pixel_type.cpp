#include "granula/core/pixel_type.hpp"

#include "granula/core/error.hpp"

namespace granula {

std::string_view to_string(pixel_type type) {
    return visit_pixel_type(type, []<class T>(type_tag<T>) { return pixel_traits<T>::name; });
}

std::size_t size_of(pixel_type type) {
    return visit_pixel_type(type, []<class T>(type_tag<T>) { return sizeof(T); });
}

std::string pixel_type_names() {
    std::string names;
#define GRANULA_APPEND_NAME(type, pname) names += (names.empty() ? "" : ", ") + std::string(#pname);
    GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_APPEND_NAME)
#undef GRANULA_APPEND_NAME
    return names;
}

pixel_type parse_pixel_type(std::string_view name) {
#define GRANULA_MATCH_NAME(type, pname) \
    if (name == #pname) return pixel_type::pname;
    GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_MATCH_NAME)
#undef GRANULA_MATCH_NAME
    throw invalid_argument("unsupported pixel type '" + std::string(name) + "'; supported: " + pixel_type_names());
}

}  // namespace granula
