// The pixel types granula supports: one list, shared by the C++ templates, the CLI and Python.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace granula {

// X-macro with every supported pixel type: X(C++ type, enumerator / public name).
// Add a type here and every dispatch in the library, CLI and Python follows.
#define GRANULA_FOR_EACH_PIXEL_TYPE(X) \
    X(std::uint8_t, uint8)             \
    X(std::uint16_t, uint16)           \
    X(float, float32)

enum class pixel_type : std::uint8_t {
#define GRANULA_ENUMERATOR(type, name) name,
    GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_ENUMERATOR)
#undef GRANULA_ENUMERATOR
};

template <class T>
struct pixel_traits;  // defined only for supported pixel types

#define GRANULA_PIXEL_TRAITS(type, pname)                              \
    template <>                                                        \
    struct pixel_traits<type> {                                        \
        static constexpr pixel_type id = pixel_type::pname;            \
        static constexpr std::string_view name = #pname;               \
    };
GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_PIXEL_TRAITS)
#undef GRANULA_PIXEL_TRAITS

template <class T>
concept pixel = requires { pixel_traits<std::remove_const_t<T>>::id; };

// Element types an image may hold besides pixels: int32 and int64 labels and uint32 label input.
// They are not pixel types (no operation over pixels is built for them); images, copies and
// transfers accept them so labelling can use the core's containers.
template <class T>
concept label_element = std::is_same_v<std::remove_const_t<T>, std::int32_t> ||
                        std::is_same_v<std::remove_const_t<T>, std::int64_t> ||
                        std::is_same_v<std::remove_const_t<T>, std::uint32_t>;

template <class T>
concept element = pixel<T> || label_element<T>;

template <pixel T>
inline constexpr pixel_type pixel_type_of = pixel_traits<std::remove_const_t<T>>::id;

// "uint8", "uint16", "float32".
std::string_view to_string(pixel_type type);
std::size_t size_of(pixel_type type);
// Parses a public name; throws invalid_argument listing the allowed names.
pixel_type parse_pixel_type(std::string_view name);
// "uint8, uint16, float32": for error messages.
std::string pixel_type_names();

template <class T>
struct type_tag {
    using type = T;
};

// Calls f(type_tag<T>{}) with the C++ type of `type`.
template <class F>
decltype(auto) visit_pixel_type(pixel_type type, F&& f) {
    switch (type) {
#define GRANULA_VISIT_CASE(ctype, pname) \
    case pixel_type::pname: return f(type_tag<ctype>{});
        GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_VISIT_CASE)
#undef GRANULA_VISIT_CASE
    }
    return f(type_tag<std::uint8_t>{});  // unreachable: every enumerator is handled above
}

}  // namespace granula
