// Umbrella header: the whole public C++ API except file I/O (granula/io/io.hpp, target granula::io).
#pragma once

#include "granula/binary/binary.hpp"
#include "granula/core/any_image.hpp"
#include "granula/core/border.hpp"
#include "granula/core/config.hpp"
#include "granula/core/device.hpp"
#include "granula/core/error.hpp"
#include "granula/core/image.hpp"
#include "granula/core/pixel_type.hpp"
#include "granula/core/stream.hpp"
#include "granula/gaussian/gaussian.hpp"
#include "granula/labeling/labeling.hpp"
#include "granula/lines/lines.hpp"
#include "granula/morphology/morphology.hpp"
#include "granula/morphology/structuring_element.hpp"
#include "granula/operations.hpp"
#include "granula/version.hpp"
