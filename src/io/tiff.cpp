// TIFF through libtiff, which is optional: a build without it compiles this file down to two
// functions that fail with "built without TIFF support".
//
// Reading takes the first image of the file, stored in strips or tiles, with any compression
// libtiff decodes (LZW, Deflate, PackBits, CCITT G3/G4, JPEG, ...), either byte order, either
// planar configuration. Grey images of 1-bit (read as uint8 0/1), 8-bit, 16-bit unsigned and
// 32-bit float samples are read as they are; MinIsWhite images are inverted so that 0 is black
// in every format granula reads (the usual convention for CCITT scans, where 1 is ink).
// Colour, palette and extra (alpha) samples are read only with to_grey: RGB of 8/16-bit or
// float samples becomes BT.601 luma of the same type, other colour spaces (palette, YCbCr,
// CMYK, ...) go through libtiff's RGBA conversion to 8-bit luma.
//
// Before allocating, the size the header declares is checked against the bytes its strips or
// tiles hold and the most the compression can expand them, so a corrupt header cannot demand
// terabytes. libtiff's error and warning handlers are replaced for each file so that nothing
// is printed; the first error message becomes the reason of the io_error.
//
// Writing: one grey strip-organised image, Deflate-compressed (with horizontal differencing for
// integers) when libtiff has zlib, BigTIFF when the pixels exceed what a classic TIFF's 32-bit
// offsets address.
#include "io/io_internal.hpp"

#if defined(GRANULA_HAVE_TIFF)
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <limits>
#include <mutex>
#include <new>
#include <vector>
#endif

namespace granula::io {

bool tiff_supported() {
#if defined(GRANULA_HAVE_TIFF)
    return true;
#else
    return false;
#endif
}

namespace detail {

#if !defined(GRANULA_HAVE_TIFF)

any_host_image read_tiff(const std::string& path, const read_options&) {
    fail(path, "cannot read TIFF: this granula was built without TIFF support (libtiff)");
}

void write_tiff(const std::string& path, const any_host_view&) {
    fail(path, "cannot write TIFF: this granula was built without TIFF support (libtiff)");
}

host_bit_image read_tiff_bits(const std::string& path) {
    fail(path, "cannot read TIFF: this granula was built without TIFF support (libtiff)");
}

void write_tiff_bits(const std::string& path, const_host_bit_view) {
    fail(path, "cannot write TIFF: this granula was built without TIFF support (libtiff)");
}

#else

namespace {

struct tiff_diagnostics {
    char first_error[512] = "";
};

void record_error(tiff_diagnostics* diagnostics, const char* format, va_list args) {
    if (diagnostics && diagnostics->first_error[0] == '\0')
        std::vsnprintf(diagnostics->first_error, sizeof diagnostics->first_error, format, args);
}

// libtiff 4.5 (TIFFLIB_VERSION 20221213) added error handlers per open file.
#if TIFFLIB_VERSION >= 20221213
int on_tiff_error(TIFF*, void* user_data, const char*, const char* format, va_list args) {
    record_error(static_cast<tiff_diagnostics*>(user_data), format, args);
    return 1;  // handled: libtiff's default handler, which prints, is not called
}
int on_tiff_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }
#else
// Older libtiff has process-wide handlers only: they are silenced once and report to the
// diagnostics of the file this thread has open.
thread_local tiff_diagnostics* active_diagnostics = nullptr;
void on_tiff_error_global(thandle_t, const char*, const char* format, va_list args) {
    record_error(active_diagnostics, format, args);
}
void install_global_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        TIFFSetErrorHandler(nullptr);
        TIFFSetErrorHandlerExt(on_tiff_error_global);
        TIFFSetWarningHandler(nullptr);
        TIFFSetWarningHandlerExt(nullptr);
    });
}
#endif

// An open TIFF whose libtiff messages are captured rather than printed.
class tiff_file {
public:
    tiff_file(std::string path, const char* mode) : path_(std::move(path)) {
#if TIFFLIB_VERSION >= 20221213
        TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
        if (!options) throw std::bad_alloc();
        TIFFOpenOptionsSetErrorHandlerExtR(options, on_tiff_error, &diagnostics_);
        TIFFOpenOptionsSetWarningHandlerExtR(options, on_tiff_warning, nullptr);
        tif_ = TIFFOpenExt(path_.c_str(), mode, options);
        TIFFOpenOptionsFree(options);
#else
        install_global_handlers();
        active_diagnostics = &diagnostics_;
        tif_ = TIFFOpen(path_.c_str(), mode);
#endif
        if (!tif_) {
            const std::string why = reason(mode[0] == 'r' ? "not a readable TIFF file" : "cannot create the TIFF file");
#if TIFFLIB_VERSION < 20221213
            active_diagnostics = nullptr;
#endif
            detail::fail(path_, why);
        }
    }
    tiff_file(const tiff_file&) = delete;
    tiff_file& operator=(const tiff_file&) = delete;
    ~tiff_file() {
        close();
#if TIFFLIB_VERSION < 20221213
        active_diagnostics = nullptr;
#endif
    }

    TIFF* get() const { return tif_; }
    const std::string& path() const { return path_; }
    // "<what>: <libtiff's first error>", or just <what> when libtiff said nothing.
    std::string reason(const std::string& what) const {
        return diagnostics_.first_error[0] ? what + ": " + diagnostics_.first_error : what;
    }
    [[noreturn]] void fail(const std::string& what) const { detail::fail(path_, reason(what)); }
    bool had_error() const { return diagnostics_.first_error[0] != '\0'; }
    void close() {
        if (tif_) TIFFClose(std::exchange(tif_, nullptr));
    }

private:
    std::string path_;
    tiff_diagnostics diagnostics_;
    TIFF* tif_ = nullptr;
};

template <class T>
T field_or(TIFF* tif, ttag_t tag, T fallback) {
    T value{};
    return TIFFGetField(tif, tag, &value) ? value : fallback;
}

struct tiff_layout {
    std::uint32_t width = 0;
    std::uint32_t height = 0;
    std::uint16_t samples = 1;
    std::uint16_t bits = 1;
    std::uint16_t sample_format = SAMPLEFORMAT_UINT;
    std::uint16_t photometric = PHOTOMETRIC_MINISBLACK;
    std::uint16_t planar = PLANARCONFIG_CONTIG;
    std::uint16_t compression = COMPRESSION_NONE;
    bool tiled = false;

    std::uint16_t planes() const { return planar == PLANARCONFIG_SEPARATE ? samples : 1; }
    std::uint16_t samples_per_plane_pixel() const { return planar == PLANARCONFIG_SEPARATE ? 1 : samples; }
    // Bytes of one decoded row of one plane (bits packed, rows padded to whole bytes).
    std::uint64_t row_bytes() const {
        return (static_cast<std::uint64_t>(width) * bits * samples_per_plane_pixel() + 7) / 8;
    }
    bool grey() const { return photometric == PHOTOMETRIC_MINISBLACK || photometric == PHOTOMETRIC_MINISWHITE; }
};

tiff_layout read_layout(const tiff_file& file) {
    TIFF* tif = file.get();
    tiff_layout layout;
    layout.width = field_or<std::uint32_t>(tif, TIFFTAG_IMAGEWIDTH, 0);
    layout.height = field_or<std::uint32_t>(tif, TIFFTAG_IMAGELENGTH, 0);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &layout.samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &layout.bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &layout.sample_format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &layout.planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &layout.compression);
    layout.photometric = field_or<std::uint16_t>(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    layout.tiled = TIFFIsTiled(tif) != 0;
    if (layout.width == 0 || layout.height == 0)
        file.fail("declares an empty " + size_text(layout.width, layout.height) + " image");
    if (layout.samples == 0) file.fail("corrupt TIFF: SamplesPerPixel is 0");
    return layout;
}

// The pixel type of samples in this layout, or fail() naming what is supported. 1-bit samples
// map to uint8 (unpacked on reading).
pixel_type sample_type(const tiff_file& file, const tiff_layout& layout) {
    const bool unsigned_integer = layout.sample_format == SAMPLEFORMAT_UINT || layout.sample_format == SAMPLEFORMAT_VOID;
    if (unsigned_integer && (layout.bits == 1 || layout.bits == 8)) return pixel_type::uint8;
    if (unsigned_integer && layout.bits == 16) return pixel_type::uint16;
    if (layout.sample_format == SAMPLEFORMAT_IEEEFP && layout.bits == 32) return pixel_type::float32;
    const char* kind = layout.sample_format == SAMPLEFORMAT_INT      ? "signed integer"
                       : layout.sample_format == SAMPLEFORMAT_IEEEFP ? "floating-point"
                       : unsigned_integer                            ? "unsigned integer"
                                                                     : "complex";
    file.fail("TIFF with " + std::to_string(layout.bits) + "-bit " + kind +
              " samples is not supported; granula reads 1-, 8- and 16-bit unsigned and 32-bit float samples");
}

std::string layout_name(const tiff_layout& layout) {
    switch (layout.photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE: return "grey TIFF with " + std::to_string(layout.samples) + " samples per pixel (alpha)";
    case PHOTOMETRIC_RGB: return "colour (RGB) TIFF";
    case PHOTOMETRIC_PALETTE: return "palette (colour) TIFF";
    case PHOTOMETRIC_YCBCR: return "colour (YCbCr) TIFF";
    case PHOTOMETRIC_SEPARATED: return "colour (CMYK) TIFF";
    default: return "colour TIFF (photometric interpretation " + std::to_string(layout.photometric) + ")";
    }
}

// Fails when the first image directory (IFD) is cut short. libtiff reads a directory whose
// trailing "next directory" offset is missing without complaint, but that file is truncated.
void check_directory_complete(const tiff_file& file) {
    TIFF* tif = file.get();
    const bool big = TIFFIsBigTIFF(tif) != 0;
    input_file raw(file.path());
    const std::uint64_t offset = TIFFCurrentDirOffset(tif);
    std::uint8_t count_bytes[8] = {};
    const std::uint64_t count_size = big ? 8 : 2;
    if (offset > raw.size() || fseeko(raw.handle(), static_cast<off_t>(offset), SEEK_SET) != 0)
        file.fail("truncated: the image directory lies past the end of the file");
    raw.read_exact(count_bytes, count_size, "the image directory");
    std::uint64_t entries = 0;
    for (std::uint64_t i = 0; i < count_size; ++i) {
        const std::uint64_t byte = TIFFIsBigEndian(tif) ? count_bytes[i] : count_bytes[count_size - 1 - i];
        entries = (entries << 8) | byte;
    }
    const std::uint64_t entry_size = big ? 20 : 12, next_offset_size = big ? 8 : 4;
    if (entries > raw.size() / entry_size || entries * entry_size + next_offset_size > raw.remaining())
        file.fail("truncated: the image directory is cut short");
}

// Fails when the header declares more pixel bytes than the stored strips or tiles can decode
// to, or when they extend past the end of the file.
void check_declared_size(const tiff_file& file, const tiff_layout& layout, std::uint64_t file_size) {
    TIFF* tif = file.get();
    const std::uint32_t blocks = layout.tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    unsigned __int128 stored = 0;
    for (std::uint32_t i = 0; i < blocks; ++i) {
        const std::uint64_t bytes = TIFFGetStrileByteCount(tif, i);
        const std::uint64_t offset = TIFFGetStrileOffset(tif, i);
        if (bytes > 0 && (offset > file_size || bytes > file_size - offset))
            file.fail("truncated: " + std::string(layout.tiled ? "tile " : "strip ") + std::to_string(i) +
                      " lies past the end of the file");
        stored += bytes;
    }
    // The most one stored byte can decode to: PackBits repeats a byte up to 128 times per two
    // bytes, LZW emits at most 4096 bytes per 9-bit code, Deflate about 1032 bytes per byte,
    // and CCITT codes spend at least one bit on every row.
    unsigned __int128 expansion = 0;
    switch (layout.compression) {
    case COMPRESSION_NONE: expansion = 1; break;
    case COMPRESSION_PACKBITS: expansion = 64; break;
    case COMPRESSION_LZW: expansion = 4096; break;
    case COMPRESSION_DEFLATE:
    case COMPRESSION_ADOBE_DEFLATE: expansion = 1032; break;
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTRLEW:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4: expansion = 8 * static_cast<unsigned __int128>(layout.row_bytes()); break;
    default: return;  // no known bound: the allocation itself is the limit
    }
    const unsigned __int128 declared = static_cast<unsigned __int128>(layout.row_bytes()) * layout.height * layout.planes();
    constexpr unsigned slack = 4096;  // codec headers, rounding
    if (declared > stored * expansion + slack)
        file.fail("declares " + size_text(layout.width, layout.height) + " pixels but stores only " +
                  std::to_string(static_cast<std::uint64_t>(stored)) + " bytes of image data (corrupt or truncated)");
}

// Decodes sample plane `plane` (0 for interleaved samples) into `height` rows of
// layout.row_bytes() bytes at `destination`, strip by strip or tile by tile.
void decode_plane(const tiff_file& file, const tiff_layout& layout, std::uint16_t plane, std::uint8_t* destination) {
    TIFF* tif = file.get();
    const std::uint64_t row_bytes = layout.row_bytes();
    const std::uint64_t bits_per_pixel = static_cast<std::uint64_t>(layout.bits) * layout.samples_per_plane_pixel();
    if (!layout.tiled) {
        std::uint32_t rows_per_strip = field_or<std::uint32_t>(tif, TIFFTAG_ROWSPERSTRIP, layout.height);
        if (rows_per_strip == 0 || rows_per_strip > layout.height) rows_per_strip = layout.height;
        const std::uint32_t strips_per_plane = (layout.height - 1) / rows_per_strip + 1;
        // A strip's rows have the destination's layout, so strips decode in place.
        for (std::uint32_t s = 0; s < strips_per_plane; ++s) {
            const std::uint32_t first_row = s * rows_per_strip;
            const std::uint64_t bytes = std::min(rows_per_strip, layout.height - first_row) * row_bytes;
            const std::uint32_t strip = plane * strips_per_plane + s;
            const tmsize_t got =
                TIFFReadEncodedStrip(tif, strip, destination + first_row * row_bytes, static_cast<tmsize_t>(bytes));
            if (got < 0 || static_cast<std::uint64_t>(got) != bytes || file.had_error())
                file.fail("cannot decode strip " + std::to_string(strip));
        }
        return;
    }
    const std::uint32_t tile_width = field_or<std::uint32_t>(tif, TIFFTAG_TILEWIDTH, 0);
    const std::uint32_t tile_height = field_or<std::uint32_t>(tif, TIFFTAG_TILELENGTH, 0);
    if (tile_width == 0 || tile_height == 0 || tile_width * bits_per_pixel % 8 != 0)
        file.fail("corrupt TIFF: bad tile size " + size_text(tile_width, tile_height));
    const std::uint64_t tile_row_bytes = tile_width * bits_per_pixel / 8;
    std::vector<std::uint8_t> tile(tile_row_bytes * tile_height);
    for (std::uint32_t y0 = 0; y0 < layout.height; y0 += tile_height) {
        for (std::uint32_t x0 = 0; x0 < layout.width; x0 += tile_width) {
            const std::uint32_t index = TIFFComputeTile(tif, x0, y0, 0, plane);
            const tmsize_t got = TIFFReadEncodedTile(tif, index, tile.data(), static_cast<tmsize_t>(tile.size()));
            if (got < 0 || static_cast<std::uint64_t>(got) != tile.size() || file.had_error())
                file.fail("cannot decode tile " + std::to_string(index));
            const std::uint64_t x_byte = x0 * bits_per_pixel / 8;
            const std::uint64_t copy_bytes = std::min(tile_row_bytes, row_bytes - x_byte);
            const std::uint32_t rows = std::min(tile_height, layout.height - y0);
            for (std::uint32_t r = 0; r < rows; ++r)
                std::copy_n(tile.data() + r * tile_row_bytes, copy_bytes, destination + (y0 + r) * row_bytes + x_byte);
        }
    }
}

// MinIsWhite to MinIsBlack: v -> max - v.
template <class T>
void invert(host_view<T> image, T max) {
    for (std::int64_t y = 0; y < image.height(); ++y)
        for (T* p = image.row(y); p != image.row(y) + image.width(); ++p) *p = static_cast<T>(max - *p);
}

// A grey image with one sample per pixel, decoded straight into the result (1-bit through a
// packed buffer).
any_host_image read_grey(const tiff_file& file, const tiff_layout& layout, pixel_type type) {
    any_host_image image = make_host_image(type, layout.width, layout.height);
    auto* pixels = static_cast<std::uint8_t*>(image.view().data);
    if (layout.bits != 1) {
        decode_plane(file, layout, 0, pixels);
    } else {
        std::vector<std::uint8_t> packed(layout.row_bytes() * layout.height);
        decode_plane(file, layout, 0, packed.data());
        for (std::uint64_t y = 0; y < layout.height; ++y) {
            const std::uint8_t* in = packed.data() + y * layout.row_bytes();
            std::uint8_t* out = pixels + y * layout.width;
            for (std::uint64_t x = 0; x < layout.width; ++x) out[x] = (in[x >> 3] >> (7 - (x & 7))) & 1;
        }
    }
    return image;
}

// Combines the first one (grey+alpha) or three (RGB) samples of every pixel into grey.
template <class T>
host_image<T> read_samples_as_grey(const tiff_file& file, const tiff_layout& layout) {
    const std::uint64_t pixels = static_cast<std::uint64_t>(layout.width) * layout.height;
    const int used = layout.grey() ? 1 : 3;
    // Interleaved: one buffer of every sample; separate: one buffer per used plane.
    const std::uint64_t stride = layout.samples_per_plane_pixel();
    std::vector<std::vector<T>> planes(layout.planar == PLANARCONFIG_SEPARATE ? used : 1);
    for (std::uint16_t p = 0; p < planes.size(); ++p) {
        planes[p].resize(pixels * stride);
        decode_plane(file, layout, p, reinterpret_cast<std::uint8_t*>(planes[p].data()));
    }
    auto sample = [&](std::uint64_t i, int c) {
        return planes.size() == 1 ? planes[0][i * stride + c] : planes[c][i];
    };
    host_image<T> image(layout.width, layout.height);
    T* out = image.data();
    for (std::uint64_t i = 0; i < pixels; ++i)
        out[i] = used == 1 ? sample(i, 0) : luma(sample(i, 0), sample(i, 1), sample(i, 2));
    return image;
}

// Any colour space libtiff can turn into 8-bit RGBA (palette, YCbCr, CMYK, ...), as 8-bit luma.
host_image<std::uint8_t> read_rgba_as_grey(const tiff_file& file, const tiff_layout& layout) {
    char message[1024] = "";
    if (!TIFFRGBAImageOK(file.get(), message))
        file.fail(layout_name(layout) + " cannot be converted to grey: " + message);
    std::vector<std::uint32_t> rgba(static_cast<std::uint64_t>(layout.width) * layout.height);
    if (!TIFFReadRGBAImageOriented(file.get(), layout.width, layout.height, rgba.data(), ORIENTATION_TOPLEFT, 1) ||
        file.had_error())
        file.fail("cannot decode the colour image");
    host_image<std::uint8_t> image(layout.width, layout.height);
    for (std::uint64_t i = 0; i < rgba.size(); ++i)
        image.data()[i] = luma(static_cast<std::uint8_t>(TIFFGetR(rgba[i])), static_cast<std::uint8_t>(TIFFGetG(rgba[i])),
                               static_cast<std::uint8_t>(TIFFGetB(rgba[i])));
    return image;
}

}  // namespace

any_host_image read_tiff(const std::string& path, const read_options& options) {
    const std::uint64_t file_size = probe_readable_file(path);
    tiff_file file(path, "r");
    const tiff_layout layout = read_layout(file);
    const bool single_grey = layout.grey() && layout.samples == 1;
    if (!single_grey && !options.to_grey) fail(path, needs_grey_conversion(layout_name(layout)));
    check_directory_complete(file);
    check_declared_size(file, layout, file_size);

    const bool uint_samples = layout.sample_format == SAMPLEFORMAT_UINT || layout.sample_format == SAMPLEFORMAT_VOID;
    const bool native_rgb = layout.photometric == PHOTOMETRIC_RGB && layout.samples >= 3 &&
                            ((uint_samples && (layout.bits == 8 || layout.bits == 16)) ||
                             (layout.sample_format == SAMPLEFORMAT_IEEEFP && layout.bits == 32));
    if (!layout.grey() && !native_rgb) return read_rgba_as_grey(file, layout);
    const pixel_type type = sample_type(file, layout);
    if (layout.bits == 1 && layout.samples != 1) file.fail("1-bit TIFF with extra samples is not supported");
    if (layout.photometric == PHOTOMETRIC_MINISWHITE && type == pixel_type::float32)
        file.fail("float TIFF with MinIsWhite photometric interpretation is not supported");

    any_host_image image = single_grey ? read_grey(file, layout, type)
                                       : visit_pixel_type(type, [&]<class T>(type_tag<T>) -> any_host_image {
                                             return read_samples_as_grey<T>(file, layout);
                                         });
    if (layout.photometric == PHOTOMETRIC_MINISWHITE) {
        if (type == pixel_type::uint16)
            invert<std::uint16_t>(image.as<std::uint16_t>(), 65535);
        else
            invert<std::uint8_t>(image.as<std::uint8_t>(), layout.bits == 1 ? 1 : 255);
    }
    return image;
}

host_bit_image read_tiff_bits(const std::string& path) {
    const std::uint64_t file_size = probe_readable_file(path);
    tiff_file file(path, "r");
    const tiff_layout layout = read_layout(file);
    if (!(layout.grey() && layout.samples == 1 && layout.bits == 1))
        file.fail("is a " + (layout.grey() && layout.samples == 1 ? std::to_string(layout.bits) + "-bit grey TIFF"
                                                                  : layout_name(layout)) +
                  "; read_bits reads 1-bit grey TIFF (read it with read_image and pack it)");
    check_directory_complete(file);
    check_declared_size(file, layout, file_size);
    std::vector<std::uint8_t> packed(layout.row_bytes() * layout.height);
    decode_plane(file, layout, 0, packed.data());
    host_bit_image bits(layout.width, layout.height);
    bits_from_msb_first(packed.data(), layout.row_bytes(), layout.photometric == PHOTOMETRIC_MINISWHITE, bits.view());
    return bits;
}

namespace {

// Tags of a grey image with one sample of `bits_per_sample` bits, strips of about 256 KiB.
bool set_grey_tags(TIFF* tif, std::int64_t width, std::int64_t height, int bits_per_sample, bool integer,
                   std::uint64_t row_bytes, bool deflate) {
    const std::uint32_t rows_per_strip =
        static_cast<std::uint32_t>(std::clamp<std::uint64_t>((256u << 10) / row_bytes, 1, height));
    return TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(width)) &&
           TIFFSetField(tif, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(height)) &&
           TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1) && TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits_per_sample) &&
           TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, integer ? SAMPLEFORMAT_UINT : SAMPLEFORMAT_IEEEFP) &&
           TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK) &&
           TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
           TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip) &&
           TIFFSetField(tif, TIFFTAG_COMPRESSION, deflate ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE);
}

// Writes `height` rows of `row_bytes`, row y filled by fill(y, buffer), and closes the file.
template <class Fill>
void write_scanlines(tiff_file& file, std::int64_t height, std::uint64_t row_bytes, Fill fill) {
    std::vector<std::uint8_t> row(row_bytes);
    for (std::int64_t y = 0; y < height; ++y) {
        fill(y, row.data());
        if (TIFFWriteScanline(file.get(), row.data(), static_cast<std::uint32_t>(y), 0) < 0)
            file.fail("cannot write row " + std::to_string(y));
    }
    if (!TIFFFlush(file.get())) file.fail("cannot write the TIFF file");
    file.close();
    if (file.had_error()) file.fail("cannot write the TIFF file");
}

}  // namespace

void write_tiff_bits(const std::string& path, const_host_bit_view bits) {
    if (bits.width() > UINT32_MAX || bits.height() > UINT32_MAX)
        fail(path, "a TIFF side is at most 2^32 - 1 pixels; this image is " + size_text(bits.width(), bits.height()));
    const std::uint64_t row_bytes = (static_cast<std::uint64_t>(bits.width()) + 7) / 8;
    tiff_file file(path, row_bytes * static_cast<std::uint64_t>(bits.height()) > (std::uint64_t{4000} << 20) ? "w8" : "w");
    partial_output_remover remover(path);
    if (!set_grey_tags(file.get(), bits.width(), bits.height(), 1, true, row_bytes,
                       TIFFIsCODECConfigured(COMPRESSION_ADOBE_DEFLATE) != 0))
        file.fail("cannot write the TIFF header");
    write_scanlines(file, bits.height(), row_bytes, [&](std::int64_t y, std::uint8_t* row) { msb_first_row(bits, y, row); });
    remover.commit();
}

void write_tiff(const std::string& path, const any_host_view& image) {
    require_non_empty(path, image, "TIFF");
    const std::uint64_t sample_bytes = size_of(image.type);
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(image.width) * sample_bytes;
    // Classic TIFF addresses 4 GiB; leave room for the directory and strip tables.
    const bool big_tiff = row_bytes * static_cast<std::uint64_t>(image.height) > (std::uint64_t{4000} << 20);
    if (image.width > UINT32_MAX || image.height > UINT32_MAX)
        fail(path, "a TIFF side is at most 2^32 - 1 pixels; this image is " + size_text(image.width, image.height));

    tiff_file file(path, big_tiff ? "w8" : "w");
    partial_output_remover remover(path);
    TIFF* tif = file.get();
    const bool integer = image.type != pixel_type::float32;
    const bool deflate = TIFFIsCODECConfigured(COMPRESSION_ADOBE_DEFLATE) != 0;
    const bool tags_set =
        set_grey_tags(tif, image.width, image.height, static_cast<int>(8 * sample_bytes), integer, row_bytes, deflate) &&
        (!deflate || !integer || TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL));
    if (!tags_set) file.fail("cannot write the TIFF header");

    // libtiff's predictor rewrites the row it is given, so each row goes through a copy.
    const auto* pixels = static_cast<const std::uint8_t*>(image.data);
    write_scanlines(file, image.height, row_bytes, [&](std::int64_t y, std::uint8_t* row) {
        std::copy_n(pixels + y * image.stride * sample_bytes, row_bytes, row);
    });
    remover.commit();
}

#endif  // GRANULA_HAVE_TIFF

}  // namespace detail
}  // namespace granula::io
