// How operations treat pixels outside the image (GUIDE §1 "Borders"); names as scipy.ndimage.
#pragma once

#include <string>
#include <string_view>

namespace granula {

enum class border_mode {
    ignore,    // outside pixels take no part (padding with the operation's neutral value)
    constant,  // outside pixels equal cval
    nearest,   // a a a | a b c d | d d d
    reflect,   // c b a | a b c d | d c b   (scipy 'reflect', OpenCV BORDER_REFLECT)
    mirror,    // d c b | a b c d | c b a   (scipy 'mirror', OpenCV BORDER_REFLECT_101)
    wrap,      // b c d | a b c d | a b c
};

struct border {
    border_mode mode = border_mode::ignore;
    double cval = 0.0;  // used by border_mode::constant only
};

std::string_view to_string(border_mode mode);
// Parses "ignore", "constant", "nearest", "reflect", "mirror", "wrap"; throws invalid_argument.
border_mode parse_border_mode(std::string_view name);
std::string border_mode_names();

}  // namespace granula
