// Image file I/O (target granula::io). The format is chosen by the file extension (any case):
//   .png        grey 1/2/4/8/16-bit; colour (RGB, palette) and alpha only with to_grey
//   .tif/.tiff  first image; grey 1/8/16-bit unsigned and float32 samples, strips or tiles, any
//               compression libtiff decodes (LZW, Deflate, PackBits, CCITT G3/G4, ...); colour,
//               palette and alpha only with to_grey. Needs a build with libtiff (tiff_supported()).
//   .pgm/.pnm   binary PGM (P5): maxval < 256 reads as uint8, else uint16 big-endian; samples keep
//               their values (maxval 4095 reads as 0..4095). Binary PPM (P6) only with to_grey.
//   .ppm        read only: binary PPM with to_grey (or a PGM)
//   .pfm        float32 grey ('Pf'; 'PF' colour with to_grey), either byte order
//   .npy        2-D C-order arrays of uint8 '|u1', uint16 '<u2'/'>u2', float32 '<f4'/'>f4', and
//               bool '|b1' (read as uint8 0/1)
// Pixel values are never rescaled. 1-bit images read as uint8 0 (black) and 1 (white); TIFF
// MinIsWhite images are inverted to that convention. Writing keeps the pixel type: PNG and PGM
// hold uint8/uint16, PFM float32, TIFF (Deflate-compressed) and NPY all three.
//
// Every failure -- missing, unreadable, corrupt, truncated or unsupported file, a colour file
// without to_grey, a format that cannot hold the pixel type -- throws io_error whose message
// starts with the file name and says why. A header that declares more pixels than the file can
// hold fails before any large allocation. A failed write leaves no partial file behind.
#pragma once

#include <string>

#include "granula/binary/bit_image.hpp"
#include "granula/core/any_image.hpp"

namespace granula::io {

struct read_options {
    bool to_grey = false;  // convert colour to grey (ITU-R BT.601 luma); otherwise colour is an error
};

any_host_image read_image(const std::string& path, const read_options& options = {});
// Writes the view; the format follows the extension. Throws io_error when the format cannot
// hold the pixel type (e.g. float32 to PNG).
void write_image(const std::string& path, const any_host_view& image);

// Throws the io_error write_image() would throw for an image of this pixel type because of the
// path's extension (unknown, read-only, or a format that cannot hold the type), without touching
// the file system: lets a caller refuse before a long computation.
void check_write_format(const std::string& path, pixel_type type);

// Writes an int32 or int64 label image (granula::label's output) as NPY ('<i4', '<i8'); any
// other extension is an io_error (the image formats hold no 32- or 64-bit signed integers).
void write_labels(const std::string& path, host_view<const std::int32_t> labels);
void write_labels(const std::string& path, host_view<const std::int64_t> labels);

// Writes a colour (8-bit RGB) PNG, e.g. a hue-coded orientation map. Each row of `rgb` holds
// the red, green and blue samples of every pixel in turn (its width is 3 x the image's). Any
// extension but .png is an io_error.
void write_rgb_png(const std::string& path, host_view<const std::uint8_t> rgb);

// Bit-packed images (granula/binary/bit_image.hpp) straight from and to 1-bit files, without an
// 8-bit image in between: 1-bit grey PNG, and 1-bit grey TIFF (any compression libtiff decodes,
// CCITT G3/G4 included; MinIsWhite is inverted, so 1 is white as with read_image). Any other
// file is an io_error naming what it is: read it with read_image() and binary::pack() it.
// write_bits writes a 1-bit grey PNG or a Deflate-compressed 1-bit MinIsBlack TIFF.
host_bit_image read_bits(const std::string& path);
void write_bits(const std::string& path, const_host_bit_view bits);

// True when this build reads and writes TIFF.
bool tiff_supported();

}  // namespace granula::io
