// Type-erased images, for code that learns the pixel type at run time (file I/O, the CLI,
// Python). Operations themselves are typed; visit_pixel_type() bridges the two.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "granula/core/image.hpp"

namespace granula {

template <class Space>
struct any_view {
    pixel_type type = pixel_type::uint8;
    void* data = nullptr;
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::int64_t stride = 0;  // in elements

    any_view() = default;
    template <pixel T>
    any_view(image_view<T, Space> v)  // NOLINT(google-explicit-constructor)
        : type(pixel_type_of<T>),
          data(const_cast<std::remove_const_t<T>*>(v.data())),
          width(v.width()),
          height(v.height()),
          stride(v.stride()) {}

    // The typed view; throws invalid_argument when T is not the stored type.
    template <pixel T>
    image_view<T, Space> as() const {
        if (pixel_type_of<T> != type)
            detail::throw_bad_view(std::string("image has pixel type ") + std::string(to_string(type)) +
                                   ", not " + std::string(to_string(pixel_type_of<T>)));
        return {static_cast<T*>(data), width, height, stride};
    }
};

using any_host_view = any_view<host_memory>;
using any_device_view = any_view<device_memory>;

// An owning host image of any pixel type (move-only).
class any_host_image {
public:
    any_host_image() = default;
    template <pixel T>
    any_host_image(host_image<T>&& img)  // NOLINT(google-explicit-constructor)
        : view_(img.view()), owner_(new host_image<T>(std::move(img)), &destroy<T>) {}

    pixel_type type() const { return view_.type; }
    std::int64_t width() const { return view_.width; }
    std::int64_t height() const { return view_.height; }
    bool empty() const { return view_.width == 0 || view_.height == 0; }
    const any_host_view& view() const { return view_; }
    template <pixel T>
    host_view<T> as() const {
        return view_.as<T>();
    }

private:
    template <class T>
    static void destroy(void* p) {
        delete static_cast<host_image<T>*>(p);
    }
    any_host_view view_;
    std::unique_ptr<void, void (*)(void*)> owner_{nullptr, nullptr};
};

// A new host image of the given type and size (pixels uninitialised).
any_host_image make_host_image(pixel_type type, std::int64_t width, std::int64_t height);

}  // namespace granula
