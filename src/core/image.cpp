#include "granula/core/image.hpp"

#include "core/huge_pages.hpp"
#include "granula/core/error.hpp"

#include <cstdint>
#include <cstdio>
#include <limits>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace granula::detail {

void throw_bad_view(const std::string& what) { throw invalid_argument(what); }

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge - 1);
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    static_cast<void>(p), static_cast<void>(bytes);
#endif
}

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

namespace {

// Large host blocks are kept for reuse when freed. The operations allocate their temporaries
// per call, and a fresh block of many MiB is faulted in and zeroed by the kernel page by page
// on first touch: that was half the time of a 4096x4096 line erosion. A freed block serves a
// later request of at least 3/4 of its size; at most `cached_blocks` blocks and
// `cached_bytes_max` bytes wait. Large blocks are also put on 2 MiB pages where the kernel
// allows it (transparent huge pages in madvise mode): a pass down the columns or a transpose
// touches a new 4 KiB page per row, and the TLB misses cost more than the arithmetic
// (bench_cpu_lines, 4096x4096 uint8 line opening at 30 degrees, one thread: 34.5 -> 19.7 ms).
// Blocks from 1 MiB on, not 8: a 2048x2048 uint8 temporary (4 MiB) cost 1.5 ms of page faults
// a call, and an opening by square:5 in mode reflect, two 0.6 ms programs, took 3.6 ms.
constexpr std::size_t large_block = std::size_t{1} << 20;
constexpr std::size_t cached_blocks = 8;
constexpr std::size_t cached_bytes_max = std::size_t{512} << 20;

class block_cache {
public:
    void* allocate(std::size_t bytes) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            auto best = free_.end();
            for (auto it = free_.begin(); it != free_.end(); ++it)
                if (it->second >= bytes && it->second / 4 * 3 <= bytes && (best == free_.end() || it->second < best->second))
                    best = it;
            if (best != free_.end()) {
                const auto block = *best;
                free_.erase(best);
                free_bytes_ -= block.second;
                live_.emplace(block.first, block.second);
                return block.first;
            }
        }
        void* p = ::operator new(bytes, std::align_val_t{64});
        advise_huge_pages(p, bytes);
        const std::lock_guard<std::mutex> lock(mutex_);
        live_.emplace(p, bytes);
        return p;
    }

    // False when p is not a large block.
    bool release(void* p) noexcept {
        std::pair<void*, std::size_t> evicted{nullptr, 0};
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            const auto it = live_.find(p);
            if (it == live_.end()) return false;
            const std::size_t bytes = it->second;
            live_.erase(it);
            if (bytes > cached_bytes_max) {
                evicted = {p, bytes};
            } else {
                free_.emplace_back(p, bytes);  // newest last
                free_bytes_ += bytes;
                if (free_.size() > cached_blocks || free_bytes_ > cached_bytes_max) {
                    evicted = free_.front();
                    free_.erase(free_.begin());
                    free_bytes_ -= evicted.second;
                }
            }
        }
        if (evicted.first) ::operator delete(evicted.first, std::align_val_t{64});
        return true;
    }

private:
    std::mutex mutex_;
    std::unordered_map<void*, std::size_t> live_;
    std::vector<std::pair<void*, std::size_t>> free_;
    std::size_t free_bytes_ = 0;
};

// Never destroyed: images may be freed by other static destructors at exit.
block_cache& large_blocks() {
    static auto* cache = new block_cache;
    return *cache;
}

}  // namespace

void* allocate(host_memory, std::size_t bytes) {
    try {
        if (bytes >= large_block) return large_blocks().allocate(bytes);
        return ::operator new(bytes, std::align_val_t{64});
    } catch (const std::bad_alloc&) {
        char amount[64];
        std::snprintf(amount, sizeof amount, "%.3g GiB", static_cast<double>(bytes) / (1 << 30));
        throw out_of_memory(std::string("out of memory: an image of ") + amount + " could not be allocated");
    }
}

void deallocate(host_memory, void* p) noexcept {
    if (p && large_blocks().release(p)) return;
    ::operator delete(p, std::align_val_t{64});
}

std::int64_t row_stride(host_memory, std::int64_t width, std::size_t) { return width; }

std::int64_t row_stride(device_memory, std::int64_t width, std::size_t element_size) {
    const auto elements_per_line = static_cast<std::int64_t>(128 / element_size);
    return (width + elements_per_line - 1) / elements_per_line * elements_per_line;
}

}  // namespace granula::detail
