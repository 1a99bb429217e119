// PNG through libpng: grey 1/2/4/8/16-bit read as is, colour (RGB, palette) and alpha only
// when conversion to grey is asked for; 1-bit grey also straight to and from bit images.
//
// libpng reports errors by longjmp. A longjmp that skips a C++ frame holding objects with
// destructors is undefined behaviour, so every libpng call that can fail runs inside a small
// `*_step` function whose own frame holds only plain C data: it sets the jump point, and a jump
// comes back as `false` with libpng's message in the session. The C++ objects (file, image,
// row pointers) live in the callers, which the longjmp never crosses. Warnings are dropped:
// a library must not print.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <vector>

#include "io/io_internal.hpp"

namespace granula::io::detail {
namespace {

constexpr std::size_t png_signature_bytes = 8;
// zlib's deflate cannot do better than about 1032:1 (a 258-byte match in 2 bits); a PNG that
// declares more pixel bytes than that times its size is corrupt or truncated.
constexpr std::uint64_t deflate_max_ratio = 1032;

struct png_session {
    png_structp png = nullptr;
    png_infop info = nullptr;
    char message[256] = "";
};

[[noreturn]] void on_png_error(png_structp png, png_const_charp message) {
    auto* session = static_cast<png_session*>(png_get_error_ptr(png));
    std::snprintf(session->message, sizeof session->message, "%s", message);
    png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

struct png_read_session : png_session {
    png_read_session() {
        png = png_create_read_struct(PNG_LIBPNG_VER_STRING, this, on_png_error, on_png_warning);
        if (png) info = png_create_info_struct(png);
    }
    ~png_read_session() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
    png_read_session(const png_read_session&) = delete;
    png_read_session& operator=(const png_read_session&) = delete;
};

struct png_write_session : png_session {
    png_write_session() {
        png = png_create_write_struct(PNG_LIBPNG_VER_STRING, this, on_png_error, on_png_warning);
        if (png) info = png_create_info_struct(png);
    }
    ~png_write_session() { png_destroy_write_struct(&png, info ? &info : nullptr); }
    png_write_session(const png_write_session&) = delete;
    png_write_session& operator=(const png_write_session&) = delete;
};

struct png_header {
    png_uint_32 width = 0;
    png_uint_32 height = 0;
    int bit_depth = 0;
    int colour_type = 0;
};

// The pixel layout after the transforms below: bytes per sample (1 or 2) and samples per pixel.
struct png_layout {
    int sample_bytes = 1;
    int channels = 1;
};

bool read_header_step(png_session& s, std::FILE* file, png_header& header) {
    if (setjmp(png_jmpbuf(s.png))) return false;
    png_init_io(s.png, file);
    png_set_sig_bytes(s.png, static_cast<int>(png_signature_bytes));
    // The PNG limit (2^31 - 1) rather than libpng's default of a million pixels a side: the
    // size is checked against the file's length instead.
    png_set_user_limits(s.png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_read_info(s.png, s.info);
    header.width = png_get_image_width(s.png, s.info);
    header.height = png_get_image_height(s.png, s.info);
    header.bit_depth = png_get_bit_depth(s.png, s.info);
    header.colour_type = png_get_color_type(s.png, s.info);
    return true;
}

// Grey stays grey: 1-bit unpacked to bytes 0/1, 2- and 4-bit scaled to 8 bits, 16-bit in the
// machine's byte order. Palettes expand to RGB (and their transparency to alpha).
bool set_transforms_step(png_session& s, const png_header& header, png_layout& layout) {
    if (setjmp(png_jmpbuf(s.png))) return false;
    if (header.colour_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s.png);
    if (header.colour_type == PNG_COLOR_TYPE_GRAY && header.bit_depth == 1) png_set_packing(s.png);
    if (header.colour_type == PNG_COLOR_TYPE_GRAY && (header.bit_depth == 2 || header.bit_depth == 4))
        png_set_expand_gray_1_2_4_to_8(s.png);
    if (header.bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(s.png);
    png_set_interlace_handling(s.png);
    png_read_update_info(s.png, s.info);
    layout.sample_bytes = png_get_bit_depth(s.png, s.info) == 16 ? 2 : 1;
    layout.channels = png_get_channels(s.png, s.info);
    if (png_get_rowbytes(s.png, s.info) !=
        static_cast<std::size_t>(header.width) * layout.channels * layout.sample_bytes) {
        std::snprintf(s.message, sizeof s.message, "unexpected row layout after decoding");
        return false;
    }
    return true;
}

bool read_pixels_step(png_session& s, png_bytepp rows) {
    if (setjmp(png_jmpbuf(s.png))) return false;
    png_read_image(s.png, rows);
    png_read_end(s.png, nullptr);  // checks the chunks after the pixels: a truncated file fails
    return true;
}

// 1-bit grey rows stay packed (MSB first); interlaced files are combined by libpng.
bool set_bit_transforms_step(png_session& s) {
    if (setjmp(png_jmpbuf(s.png))) return false;
    png_set_interlace_handling(s.png);
    png_read_update_info(s.png, s.info);
    return true;
}

struct png_write_request {
    png_uint_32 width;
    png_uint_32 height;
    int bit_depth;
    int colour_type;  // PNG_COLOR_TYPE_GRAY or PNG_COLOR_TYPE_RGB
    png_bytepp rows;
};

bool write_step(png_session& s, std::FILE* file, const png_write_request& r) {
    if (setjmp(png_jmpbuf(s.png))) return false;
    png_init_io(s.png, file);
    png_set_IHDR(s.png, s.info, r.width, r.height, r.bit_depth, r.colour_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(s.png, s.info);
    if (r.bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(s.png);
    png_write_image(s.png, r.rows);  // libpng transforms a copy of each row, never the caller's
    png_write_end(s.png, nullptr);
    return true;
}

std::string reason(const png_session& s, const char* fallback) {
    return s.message[0] ? std::string(fallback) + ": " + s.message : std::string(fallback);
}

const char* colour_layout_name(int colour_type) {
    switch (colour_type) {
    case PNG_COLOR_TYPE_GRAY_ALPHA: return "grey+alpha PNG";
    case PNG_COLOR_TYPE_PALETTE: return "palette (colour) PNG";
    case PNG_COLOR_TYPE_RGB: return "colour (RGB) PNG";
    case PNG_COLOR_TYPE_RGB_ALPHA: return "colour (RGBA) PNG";
    default: return "colour PNG";
    }
}

// Grey from decoded rows of `channels` samples: the first sample of grey+alpha, luma of RGB(A).
template <class T>
void convert_to_grey(const std::vector<std::uint8_t>& decoded, int channels, host_view<T> out) {
    const auto* samples = reinterpret_cast<const T*>(decoded.data());
    for (std::int64_t y = 0; y < out.height(); ++y) {
        const T* in = samples + y * out.width() * channels;
        T* row = out.row(y);
        for (std::int64_t x = 0; x < out.width(); ++x, in += channels)
            row[x] = channels >= 3 ? luma(in[0], in[1], in[2]) : in[0];
    }
}

// Checks the signature and reads the header of `file` into `session`, ready for transforms.
png_header start_reading(const std::string& path, input_file& file, png_read_session& session) {
    png_byte signature[png_signature_bytes] = {};
    const bool has_signature = std::fread(signature, 1, png_signature_bytes, file.handle()) == png_signature_bytes &&
                               png_sig_cmp(signature, 0, png_signature_bytes) == 0;
    if (!has_signature) fail(path, "not a PNG file (bad signature)");
    if (!session.png || !session.info) fail(path, "cannot start the PNG decoder (out of memory)");
    png_header header;
    if (!read_header_step(session, file.handle(), header)) fail(path, reason(session, "corrupt PNG header"));
    return header;
}

// The bytes of `height` decoded rows of `row_bytes`, refused when the file is too small to hold
// them compressed (corrupt or truncated) before anything that size is allocated.
std::uint64_t checked_decoded_bytes(const std::string& path, const input_file& file, const png_header& header,
                                    std::uint64_t row_bytes) {
    const std::uint64_t decoded_bytes = checked_pixel_bytes(path, row_bytes, header.height, 1);
    if (decoded_bytes > file.size() * deflate_max_ratio)
        fail(path, "declares " + size_text(header.width, header.height) + " pixels, more than its " +
                       std::to_string(file.size()) + " bytes can hold (corrupt or truncated)");
    return decoded_bytes;
}

}  // namespace

any_host_image read_png(const std::string& path, const read_options& options) {
    input_file file(path);
    png_read_session session;
    const png_header header = start_reading(path, file, session);

    const bool grey = header.colour_type == PNG_COLOR_TYPE_GRAY;
    if (!grey && !options.to_grey) fail(path, needs_grey_conversion(colour_layout_name(header.colour_type)));

    png_layout layout;
    if (!set_transforms_step(session, header, layout)) fail(path, reason(session, "corrupt PNG"));

    const std::uint64_t row_bytes = static_cast<std::uint64_t>(header.width) * layout.channels * layout.sample_bytes;
    const std::uint64_t decoded_bytes = checked_decoded_bytes(path, file, header, row_bytes);

    const pixel_type type = layout.sample_bytes == 2 ? pixel_type::uint16 : pixel_type::uint8;
    any_host_image image = make_host_image(type, header.width, header.height);
    // Grey decodes straight into the image; anything else into a buffer converted afterwards.
    std::vector<std::uint8_t> decoded(grey ? 0 : decoded_bytes);
    auto* base = grey ? static_cast<std::uint8_t*>(image.view().data) : decoded.data();
    std::vector<png_bytep> rows(header.height);
    for (std::uint64_t y = 0; y < header.height; ++y) rows[y] = base + y * row_bytes;

    if (!read_pixels_step(session, rows.data())) fail(path, reason(session, "corrupt or truncated PNG data"));

    if (!grey && type == pixel_type::uint16)
        convert_to_grey(decoded, layout.channels, image.as<std::uint16_t>());
    else if (!grey)
        convert_to_grey(decoded, layout.channels, image.as<std::uint8_t>());
    return image;
}

void write_png(const std::string& path, const any_host_view& image) {
    require_non_empty(path, image, "PNG");
    if (image.width > PNG_UINT_31_MAX || image.height > PNG_UINT_31_MAX)
        fail(path, "a PNG side is at most 2^31 - 1 pixels; this image is " + size_text(image.width, image.height));

    const std::size_t sample_bytes = size_of(image.type);
    std::vector<png_bytep> rows(static_cast<std::size_t>(image.height));
    for (std::int64_t y = 0; y < image.height; ++y)
        rows[y] = static_cast<png_bytep>(image.data) + y * image.stride * sample_bytes;

    output_file file(path);
    png_write_session session;
    if (!session.png || !session.info) fail(path, "cannot start the PNG encoder (out of memory)");
    const png_write_request request{static_cast<png_uint_32>(image.width), static_cast<png_uint_32>(image.height),
                                    sample_bytes == 2 ? 16 : 8, PNG_COLOR_TYPE_GRAY, rows.data()};
    if (!write_step(session, file.handle(), request)) fail(path, reason(session, "cannot write PNG"));
    file.commit();
}

host_bit_image read_png_bits(const std::string& path) {
    input_file file(path);
    png_read_session session;
    const png_header header = start_reading(path, file, session);
    if (header.colour_type != PNG_COLOR_TYPE_GRAY || header.bit_depth != 1)
        fail(path, "is a " + std::to_string(header.bit_depth) + "-bit " +
                       (header.colour_type == PNG_COLOR_TYPE_GRAY ? std::string("grey PNG")
                                                                  : colour_layout_name(header.colour_type)) +
                       "; read_bits reads 1-bit grey PNG (read it with read_image and pack it)");
    if (!set_bit_transforms_step(session)) fail(path, reason(session, "corrupt PNG"));
    const std::uint64_t row_bytes = (static_cast<std::uint64_t>(header.width) + 7) / 8;
    if (png_get_rowbytes(session.png, session.info) != row_bytes) fail(path, "unexpected 1-bit row layout after decoding");
    std::vector<std::uint8_t> decoded(checked_decoded_bytes(path, file, header, row_bytes));
    std::vector<png_bytep> rows(header.height);
    for (std::uint64_t y = 0; y < header.height; ++y) rows[y] = decoded.data() + y * row_bytes;
    if (!read_pixels_step(session, rows.data())) fail(path, reason(session, "corrupt or truncated PNG data"));
    host_bit_image bits(header.width, header.height);
    bits_from_msb_first(decoded.data(), row_bytes, false, bits.view());
    return bits;
}

void write_png_bits(const std::string& path, const_host_bit_view bits) {
    if (bits.width() > PNG_UINT_31_MAX || bits.height() > PNG_UINT_31_MAX)
        fail(path, "a PNG side is at most 2^31 - 1 pixels; this image is " + size_text(bits.width(), bits.height()));
    const std::uint64_t row_bytes = (static_cast<std::uint64_t>(bits.width()) + 7) / 8;
    std::vector<std::uint8_t> packed(row_bytes * static_cast<std::uint64_t>(bits.height()));
    std::vector<png_bytep> rows(static_cast<std::size_t>(bits.height()));
    for (std::int64_t y = 0; y < bits.height(); ++y) {
        rows[y] = packed.data() + y * row_bytes;
        msb_first_row(bits, y, rows[y]);
    }
    output_file file(path);
    png_write_session session;
    if (!session.png || !session.info) fail(path, "cannot start the PNG encoder (out of memory)");
    const png_write_request request{static_cast<png_uint_32>(bits.width()), static_cast<png_uint_32>(bits.height()), 1,
                                    PNG_COLOR_TYPE_GRAY, rows.data()};
    if (!write_step(session, file.handle(), request)) fail(path, reason(session, "cannot write PNG"));
    file.commit();
}

void write_rgb_png(const std::string& path, host_view<const std::uint8_t> rgb) {
    if (rgb.empty() || rgb.width() % 3 != 0)
        fail(path, "an RGB image needs rows of 3 x width samples and at least one pixel; got " +
                       size_text(rgb.width(), rgb.height()) + " samples");
    const std::int64_t width = rgb.width() / 3;
    if (width > PNG_UINT_31_MAX || rgb.height() > PNG_UINT_31_MAX)
        fail(path, "a PNG side is at most 2^31 - 1 pixels; this image is " + size_text(width, rgb.height()));
    std::vector<png_bytep> rows(static_cast<std::size_t>(rgb.height()));
    for (std::int64_t y = 0; y < rgb.height(); ++y) rows[y] = const_cast<png_bytep>(rgb.row(y));  // libpng copies
    output_file file(path);
    png_write_session session;
    if (!session.png || !session.info) fail(path, "cannot start the PNG encoder (out of memory)");
    const png_write_request request{static_cast<png_uint_32>(width), static_cast<png_uint_32>(rgb.height()), 8,
                                    PNG_COLOR_TYPE_RGB, rows.data()};
    if (!write_step(session, file.handle(), request)) fail(path, reason(session, "cannot write PNG"));
    file.commit();
}

}  // namespace granula::io::detail
