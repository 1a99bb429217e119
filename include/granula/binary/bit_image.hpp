// Bit-packed binary images (GUIDE §1 "Bit-packed images").
//
// Layout: row-major, 64-bit words, bit 0 of a word is its leftmost pixel, row
// stride in words. Owning images keep the bits past the width in each row's
// last word (the padding bits) at zero. A view may also be a word-aligned part
// of a larger bit image, so the bits past its width may belong to other pixels:
// operations never read them and never change them.
//
// Views are typed host or device at compile time like image_view; owning images
// are move-only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"

namespace granula {

using bit_word = std::uint64_t;
inline constexpr std::int64_t bits_per_word = 64;

// Words needed for `width` pixels.
constexpr std::int64_t words_for_width(std::int64_t width) { return (width + bits_per_word - 1) / bits_per_word; }

namespace detail {
// Throws invalid_argument unless width, height >= 0, stride >=
// words_for_width(width) and the data pointer is non-null for a non-empty view.
void check_bit_view_shape(std::int64_t width, std::int64_t height, std::int64_t stride_words, const void* data);
}  // namespace detail

// W is bit_word or const bit_word.
template <class W, class Space>
class bit_view {
    static_assert(std::is_same_v<std::remove_const_t<W>, bit_word>, "bit views hold 64-bit words");

public:
    using word_type = W;
    using space = Space;

    bit_view() = default;
    bit_view(W* data, std::int64_t width, std::int64_t height, std::int64_t stride_words)
        : data_(data), width_(width), height_(height), stride_(stride_words) {
        detail::check_bit_view_shape(width, height, stride_words, data);
    }
    bit_view(W* data, std::int64_t width, std::int64_t height)
        : bit_view(data, width, height, words_for_width(width)) {}

    template <class U>
    requires(std::is_same_v<const U, W> && !std::is_same_v<U, W>)
        bit_view(const bit_view<U, Space>& other)  // NOLINT(google-explicit-constructor)
        : data_(other.data()), width_(other.width()), height_(other.height()), stride_(other.stride()) {}

    W* data() const { return data_; }
    std::int64_t width() const { return width_; }  // pixels
    std::int64_t height() const { return height_; }
    std::int64_t stride() const { return stride_; }  // words
    std::int64_t row_words() const { return words_for_width(width_); }
    bool empty() const { return width_ == 0 || height_ == 0; }
    W* row(std::int64_t y) const { return data_ + y * stride_; }

    // Pixel (y, x) as 0 or 1 (host views only).
    bool operator()(std::int64_t y, std::int64_t x) const requires std::is_same_v<Space, host_memory> {
        return (row(y)[x / bits_per_word] >> (x % bits_per_word)) & 1u;
    }
    void set(std::int64_t y, std::int64_t x, bool value) const
        requires(std::is_same_v<Space, host_memory> && !std::is_const_v<W>) {
        const bit_word bit = bit_word{1} << (x % bits_per_word);
        W& word = row(y)[x / bits_per_word];
        word = value ? (word | bit) : (word & ~bit);
    }

    // The rectangle [x, x + width) x [y, y + height); x must be a multiple of 64
    // (a view starts on a word). Throws invalid_argument otherwise or when the
    // rectangle leaves the view.
    bit_view subview(std::int64_t x, std::int64_t y, std::int64_t width, std::int64_t height) const {
        if (x < 0 || y < 0 || width < 0 || height < 0 || x + width > width_ || y + height > height_ ||
            x % bits_per_word != 0)
            detail::throw_bad_view("bit subview (x=" + std::to_string(x) + ", y=" + std::to_string(y) +
                                   ", width=" + std::to_string(width) + ", height=" + std::to_string(height) +
                                   ") must lie inside the " + std::to_string(width_) + "x" + std::to_string(height_) +
                                   " view and start on a word (x a multiple of 64)");
        return bit_view(data_ + y * stride_ + x / bits_per_word, width, height, stride_);
    }

    const void* first_byte() const { return data_; }
    const void* last_byte() const {
        return empty() ? static_cast<const void*>(data_)
                       : static_cast<const void*>(data_ + (height_ - 1) * stride_ + row_words());
    }

private:
    W* data_ = nullptr;
    std::int64_t width_ = 0;
    std::int64_t height_ = 0;
    std::int64_t stride_ = 0;
};

template <class Space>
using const_bit_view = bit_view<const bit_word, Space>;
using host_bit_view = bit_view<bit_word, host_memory>;
using const_host_bit_view = bit_view<const bit_word, host_memory>;
using device_bit_view = bit_view<bit_word, device_memory>;
using const_device_bit_view = bit_view<const bit_word, device_memory>;

template <class W, class U, class Space>
bool overlaps(const bit_view<W, Space>& a, const bit_view<U, Space>& b) {
    return detail::views_overlap(a, b);
}
template <class W, class U, class Space>
bool overlaps(const bit_view<W, Space>& a, const image_view<U, Space>& b) {
    return detail::views_overlap(a, b);
}

namespace detail {
// Zero-filled storage for a bit image (device memory is cleared with a CUDA
// memset).
bit_word* allocate_bits(host_memory, std::size_t words);
bit_word* allocate_bits(device_memory, std::size_t words);
// Device rows are padded to 128 bytes (16 words) like device images; host rows
// are packed.
std::int64_t bit_row_stride(host_memory, std::int64_t width);
std::int64_t bit_row_stride(device_memory, std::int64_t width);
}  // namespace detail

// An owning bit image, all pixels 0 on construction. Move-only.
template <class Space>
class bit_image {
public:
    bit_image() = default;
    bit_image(std::int64_t width, std::int64_t height) {
        const std::int64_t stride = detail::bit_row_stride(Space{}, width);
        detail::check_bit_view_shape(width, height, stride, reinterpret_cast<const void*>(1));
        const std::size_t words =
            detail::checked_image_bytes(stride, height, stride, sizeof(bit_word)) / sizeof(bit_word);
        data_.reset(words ? detail::allocate_bits(Space{}, words) : nullptr);
        width_ = width;
        height_ = height;
        stride_ = stride;
    }
    bit_image(bit_image&&) noexcept = default;
    bit_image& operator=(bit_image&&) noexcept = default;
    bit_image(const bit_image&) = delete;
    bit_image& operator=(const bit_image&) = delete;

    bit_word* data() const { return data_.get(); }
    std::int64_t width() const { return width_; }
    std::int64_t height() const { return height_; }
    std::int64_t stride() const { return stride_; }
    bool empty() const { return width_ == 0 || height_ == 0; }

    bit_view<bit_word, Space> view() { return {data_.get(), width_, height_, stride_}; }
    bit_view<const bit_word, Space> view() const { return {data_.get(), width_, height_, stride_}; }
    operator bit_view<bit_word, Space>() { return view(); }              // NOLINT
    operator bit_view<const bit_word, Space>() const { return view(); }  // NOLINT

private:
    std::unique_ptr<bit_word, detail::memory_deleter<Space>> data_;
    std::int64_t width_ = 0;
    std::int64_t height_ = 0;
    std::int64_t stride_ = 0;
};

using host_bit_image = bit_image<host_memory>;
using device_bit_image = bit_image<device_memory>;

// Copies equal-sized bit views row by row in whole words, so the destination's
// bits past its width take the source's (zero when the source is an owning
// image). Throws invalid_argument when the sizes differ. Device copies are
// asynchronous on `s`.
void copy(const_host_bit_view src, host_bit_view dst);
void copy(const_host_bit_view src, device_bit_view dst, stream s = {});
void copy(const_device_bit_view src, host_bit_view dst, stream s = {});
void copy(const_device_bit_view src, device_bit_view dst, stream s = {});

// New device bit image holding a copy of `src` (asynchronous on `s`).
device_bit_image upload(const_host_bit_view src, stream s = {});
// New host bit image holding a copy of `src`; synchronises `s`.
host_bit_image download(const_device_bit_view src, stream s = {});

}  // namespace granula
