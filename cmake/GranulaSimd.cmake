# granula_add_simd_kernels(<target> <source> [EXTRA_ISAS <isa>...])
#
# Compiles one kernel source several times, once per instruction set, each copy in its own
# namespace granula::simd_<isa> (GRANULA_SIMD_NAMESPACE), and adds the objects to <target>.
# The kernels are plain loops over fixed-width lane blocks that the compiler vectorises; the
# `scalar` copy is built with vectorisation off, so set_simd_enabled(false) runs truly scalar
# code. src/core/simd_dispatch.hpp picks the best copy for the running CPU.
# EXTRA_ISAS: further copies for one source only (avx512: its dispatch is the source's own,
# src/binary/binary.cpp).
set(GRANULA_SIMD_TARGETS scalar baseline)
set(_granula_flags_scalar -fno-tree-vectorize -fno-tree-slp-vectorize)
set(_granula_flags_baseline "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  list(APPEND GRANULA_SIMD_TARGETS avx2)
  set(_granula_flags_avx2 -mavx2 -mfma -mbmi2)
  set(_granula_flags_avx512 -mavx2 -mfma -mbmi2 -mavx512f -mavx512vl -mavx512bw -mavx512cd -mavx512vbmi -mavx512vbmi2
                            -mprefer-vector-width=512)
endif()

function(granula_add_simd_kernels target source)
  cmake_parse_arguments(_arg "" "" "EXTRA_ISAS" ${ARGN})
  set(_isas ${GRANULA_SIMD_TARGETS})
  foreach(isa IN LISTS _arg_EXTRA_ISAS)
    if(DEFINED _granula_flags_${isa})
      list(APPEND _isas ${isa})
    endif()
  endforeach()
  get_filename_component(_name ${source} NAME_WE)
  foreach(isa IN LISTS _isas)
    set(_lib ${target}_${_name}_${isa})
    add_library(${_lib} OBJECT ${source})
    target_compile_features(${_lib} PRIVATE cxx_std_20)
    target_include_directories(${_lib} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/include
                                               ${CMAKE_SOURCE_DIR}/src)
    target_compile_definitions(${_lib} PRIVATE GRANULA_SIMD_NAMESPACE=simd_${isa})
    # -Wno-psabi: the kernels pass GCC vectors between internal functions; the note about their
    # ABI across translation units does not apply.
    target_compile_options(${_lib} PRIVATE -O3 -Wno-psabi ${_granula_flags_${isa}})
    if(isa STREQUAL "scalar")
      target_compile_definitions(${_lib} PRIVATE GRANULA_SIMD_SCALAR=1)
    endif()
    if(GRANULA_HAVE_THREADS)
      target_compile_definitions(${_lib} PRIVATE GRANULA_HAVE_THREADS=1)  # core/parallel.hpp
    endif()
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${_lib}>)
  endforeach()
  foreach(isa IN LISTS _isas)
    target_compile_definitions(${target} PRIVATE GRANULA_SIMD_HAVE_${isa}=1)
  endforeach()
endfunction()
