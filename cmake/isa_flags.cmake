# Per-file ISA flags from one suffix table (STYLE R10, spec runtime.md R7): a file named
# <job>_<isa>.cc gets its tier's flags; every other file is baseline x86-64, so the binary runs on
# any x86-64 and dispatch (runtime/platform/cpu_features.h) picks the tier from CPUID at run time.
#
#   suffix          flags
#   _avx2           -mavx2 -mfma -mf16c
#   _avxvnni        the avx2 flags + -mavxvnni
#   _avx512         the avx2 flags + -mavx512f -mavx512bw -mavx512vl -mavx512dq
#   _avx512vnni     the avx512 flags + -mavx512vnni
set(NUPHAR_ISA_FLAGS_avx2 "-mavx2;-mfma;-mf16c")
set(NUPHAR_ISA_FLAGS_avxvnni "${NUPHAR_ISA_FLAGS_avx2};-mavxvnni")
# GCC 12 warns "__Y may be used uninitialized" inside its own avx512fintrin.h (_mm512_undefined_*
# in set1/setzero): a false positive of the header, silenced for these files only.
set(NUPHAR_ISA_FLAGS_avx512 "${NUPHAR_ISA_FLAGS_avx2};-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-Wno-maybe-uninitialized")
set(NUPHAR_ISA_FLAGS_avx512vnni "${NUPHAR_ISA_FLAGS_avx512};-mavx512vnni")

function(nuphar_apply_isa_flags)
  foreach(src ${ARGN})
    if(src MATCHES "_(avx2|avxvnni|avx512|avx512vnni)\\.cc$")
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS ${NUPHAR_ISA_FLAGS_${CMAKE_MATCH_1}})
    endif()
  endforeach()
endfunction()
