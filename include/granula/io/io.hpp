// Image file I/O (target granula::io). Formats are chosen by file extension:
//   .png   1/8/16-bit grey; colour (RGB, palette, with alpha) only with read_options::to_grey
//   .tif/.tiff 1/8/16-bit and float32 grey, any libtiff compression (when built with libtiff)
//   .pgm/.pnm 8/16-bit binary PGM, .pfm float32 grey, .npy 2-D uint8/uint16/float32 arrays
// 1-bit images read as uint8 with values 0 and 1. Errors throw io_error naming the file and
// the reason (unreadable, corrupt, truncated, unsupported layout).
#pragma once

#include <string>

#include "granula/core/any_image.hpp"

namespace granula::io {

struct read_options {
    bool to_grey = false;  // convert colour to grey (ITU-R BT.601 luma); otherwise colour is an error
};

any_host_image read_image(const std::string& path, const read_options& options = {});
// Writes the view; the format follows the extension. Throws io_error when the format cannot
// hold the pixel type (e.g. float32 to PNG).
void write_image(const std::string& path, const any_host_view& image);

// True when this build reads and writes TIFF.
bool tiff_supported();

}  // namespace granula::io
