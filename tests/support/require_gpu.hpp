// GPU tests build everywhere and skip, saying why, where no CUDA device is visible.
#pragma once

#include <gtest/gtest.h>

#include "granula/core/device.hpp"

#define GRANULA_REQUIRE_GPU()                                                                        \
    do {                                                                                             \
        if (!::granula::cuda_available())                                                            \
            GTEST_SKIP() << "no CUDA device: "                                                       \
                         << (::granula::cuda_built() ? "this build has the CUDA backend, but no GPU is visible" \
                                                     : "this granula build has no CUDA backend");    \
    } while (0)
