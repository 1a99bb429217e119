#include "granula/core/image.hpp"

#include <cstdint>
#include <limits>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <new>

namespace granula::detail {

void throw_bad_view(const std::string& what) { throw invalid_argument(what); }

void check_view_shape(std::int64_t width, std::int64_t height, std::int64_t stride, const void* data) {
    if (width < 0 || height < 0)
        throw_bad_view("image size must not be negative, got " + std::to_string(width) + "x" + std::to_string(height));
    if (stride < width)
        throw_bad_view("row stride " + std::to_string(stride) + " is smaller than the width " + std::to_string(width));
    if (data == nullptr && width > 0 && height > 0) throw_bad_view("non-empty image view with a null data pointer");
}

std::size_t checked_image_bytes(std::int64_t width, std::int64_t height, std::int64_t stride,
                                std::size_t element_size) {
    check_view_shape(width, height, stride, reinterpret_cast<const void*>(1));
    if (width == 0 || height == 0) return 0;
    const auto max = static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max());
    const auto bytes = static_cast<unsigned __int128>(height) * static_cast<unsigned __int128>(stride) * element_size;
    if (bytes > max)
        throw_bad_view("image of " + std::to_string(width) + "x" + std::to_string(height) + " pixels is too large");
    return static_cast<std::size_t>(bytes);
}

void* allocate(host_memory, std::size_t bytes) {
    void* p = ::operator new(bytes, std::align_val_t{64});
#if defined(__linux__)
    // Large images on 2 MiB pages where the kernel allows it (transparent huge pages in madvise
    // mode): a pass down the columns or a transpose touches a new 4 KiB page per row, and the
    // TLB misses cost more than the arithmetic (bench_cpu_lines, 4096x4096 uint8 line opening at
    // 30 degrees, one thread: 34.5 -> 19.7 ms).
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    if (bytes >= 4 * huge) {
        const auto begin = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
        const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
        if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only
    }
#endif
    return p;
}

void deallocate(host_memory, void* p) noexcept { ::operator delete(p, std::align_val_t{64}); }

std::int64_t row_stride(host_memory, std::int64_t width, std::size_t) { return width; }

std::int64_t row_stride(device_memory, std::int64_t width, std::size_t element_size) {
    const auto elements_per_line = static_cast<std::int64_t>(128 / element_size);
    return (width + elements_per_line - 1) / elements_per_line * elements_per_line;
}

}  // namespace granula::detail
