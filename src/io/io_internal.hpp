// Plumbing shared by the format readers and writers of granula::io.
//
// Every failure becomes an io_error whose message starts with the file name, so a caller (or
// the CLI) can print it as it is. Files are C FILE handles wrapped so that they close on every
// path, and an output that fails half-way is removed rather than left truncated on disk.
// Readers validate header sizes against the bytes the file holds before they allocate, so a
// corrupt header cannot ask for terabytes.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "granula/core/any_image.hpp"
#include "granula/core/error.hpp"
#include "granula/io/io.hpp"

namespace granula::io::detail {

[[noreturn]] void fail(const std::string& path, const std::string& reason);

// "4096x3000"
std::string size_text(std::uint64_t width, std::uint64_t height);

// width * height * bytes_per_pixel, or fail() when it does not fit in 63 bits.
std::uint64_t checked_pixel_bytes(const std::string& path, std::uint64_t width, std::uint64_t height,
                                  std::uint64_t bytes_per_pixel);

// A file opened for binary reading; fails with the system's reason (missing, a directory,
// no permission) when it cannot be opened.
class input_file {
public:
    explicit input_file(std::string path);
    input_file(const input_file&) = delete;
    input_file& operator=(const input_file&) = delete;
    ~input_file();

    const std::string& path() const { return path_; }
    std::FILE* handle() const { return file_; }
    std::uint64_t size() const { return size_; }
    // Bytes between the read position and the end of the file.
    std::uint64_t remaining() const;
    // Reads exactly `bytes` bytes or fails with "truncated: <what> ...".
    void read_exact(void* destination, std::uint64_t bytes, const char* what);
    // The next byte, or EOF.
    int next_byte() { return std::fgetc(file_); }

private:
    std::string path_;
    std::FILE* file_ = nullptr;
    std::uint64_t size_ = 0;
};

// Fails unless `path` names a regular file this process can open for reading; returns its size.
std::uint64_t probe_readable_file(const std::string& path);

// Deletes a file another library is writing (libtiff opens it by name) unless commit() was
// called: a failed write leaves no truncated file behind.
class partial_output_remover {
public:
    explicit partial_output_remover(std::string path) : path_(std::move(path)) {}
    partial_output_remover(const partial_output_remover&) = delete;
    partial_output_remover& operator=(const partial_output_remover&) = delete;
    ~partial_output_remover();
    void commit() { committed_ = true; }

private:
    std::string path_;
    bool committed_ = false;
};

// A file created (or truncated) for binary writing. Unless commit() succeeds, the destructor
// deletes it, so a failed write leaves no truncated file behind.
class output_file {
public:
    explicit output_file(std::string path);
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;
    ~output_file();

    const std::string& path() const { return path_; }
    std::FILE* handle() const { return file_; }
    void write(const void* data, std::uint64_t bytes);
    // Flushes and closes, failing on any deferred write error (a full disk); keeps the file.
    void commit();

private:
    std::string path_;
    std::FILE* file_ = nullptr;
};

// Fails when the image is empty: PNG and TIFF cannot store a 0-pixel image.
void require_non_empty(const std::string& path, const any_host_view& image, const char* format);

// Byte order: converts `count` values between `order` and this machine's order, in place.
template <class T>
void swap_to_native(T* values, std::uint64_t count, std::endian order) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
    if constexpr (sizeof(T) > 1) {
        if (order == std::endian::native) return;
        using bits = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                        std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
        for (std::uint64_t i = 0; i < count; ++i) {
            bits b;
            std::memcpy(&b, values + i, sizeof b);
            if constexpr (sizeof(T) == 2)
                b = static_cast<bits>((b >> 8) | (b << 8));
            else if constexpr (sizeof(T) == 4)
                b = __builtin_bswap32(b);
            else
                b = __builtin_bswap64(b);
            std::memcpy(values + i, &b, sizeof b);
        }
    }
}

enum class row_order { top_down, bottom_up };

// Writes the pixels as raw samples in byte order `order`, one row at a time.
template <class T>
void write_samples(output_file& file, host_view<const T> image, std::endian order, row_order rows) {
    std::vector<T> row(static_cast<std::size_t>(image.width()));
    for (std::int64_t i = 0; i < image.height(); ++i) {
        const std::int64_t y = rows == row_order::top_down ? i : image.height() - 1 - i;
        std::copy_n(image.row(y), image.width(), row.data());
        swap_to_native(row.data(), row.size(), order);  // a swap is its own inverse
        file.write(row.data(), row.size() * sizeof(T));
    }
}

// ITU-R BT.601 luma Y = 0.299 R + 0.587 G + 0.114 B: rounded half up for integer pixels
// (exact, no floating point), unrounded for float pixels.
inline std::uint8_t luma(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    return static_cast<std::uint8_t>((299u * r + 587u * g + 114u * b + 500u) / 1000u);
}
inline std::uint16_t luma(std::uint16_t r, std::uint16_t g, std::uint16_t b) {
    return static_cast<std::uint16_t>((299u * r + 587u * g + 114u * b + 500u) / 1000u);
}
inline float luma(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }

// The message for a colour (or alpha) file read without read_options::to_grey.
std::string needs_grey_conversion(const std::string& layout);

// Per-format entry points, called by read_image()/write_image() after the extension is known;
// the writers are called only with pixel types their format holds (check_write_format()).
// Rows of MSB-first packed bytes, `row_bytes` apart (PNG's and TIFF's 1-bit layout: the first
// pixel in bit 7), into `out` (the first pixel in bit 0), inverted when asked; the bits past the
// width stay zero.
void bits_from_msb_first(const std::uint8_t* bytes, std::uint64_t row_bytes, bool invert, host_bit_view out);
// Row y of `bits` as (width + 7) / 8 MSB-first bytes, the bits past the width zero.
void msb_first_row(const_host_bit_view bits, std::int64_t y, std::uint8_t* row);

any_host_image read_png(const std::string& path, const read_options& options);
void write_png(const std::string& path, const any_host_view& image);
host_bit_image read_png_bits(const std::string& path);
void write_png_bits(const std::string& path, const_host_bit_view bits);
void write_rgb_png(const std::string& path, host_view<const std::uint8_t> rgb);
// Netpbm: binary PGM (P5), PPM (P6, with to_grey) and PFM ('Pf', 'PF' with to_grey), told
// apart by the magic number whatever the extension.
any_host_image read_netpbm(const std::string& path, const read_options& options);
void write_pgm(const std::string& path, const any_host_view& image);
void write_pfm(const std::string& path, const any_host_view& image);
any_host_image read_npy(const std::string& path);
void write_npy(const std::string& path, const any_host_view& image);
void write_npy_labels(const std::string& path, host_view<const std::int32_t> labels);
void write_npy_labels(const std::string& path, host_view<const std::int64_t> labels);
any_host_image read_tiff(const std::string& path, const read_options& options);
void write_tiff(const std::string& path, const any_host_view& image);
host_bit_image read_tiff_bits(const std::string& path);
void write_tiff_bits(const std::string& path, const_host_bit_view bits);

}  // namespace granula::io::detail
