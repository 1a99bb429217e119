#include "granula/core/any_image.hpp"

namespace granula {

any_host_image make_host_image(pixel_type type, std::int64_t width, std::int64_t height) {
    return visit_pixel_type(type, [&]<class T>(type_tag<T>) { return any_host_image(host_image<T>(width, height)); });
}

}  // namespace granula
