# Per-file ISA flags: only files whose name ends in _avx2.cc get -mavx2 -mfma (STYLE R10), so the
# rest of the binary runs on any x86-64 and dispatch picks the kernel from CPUID at run time.
function(nuphar_apply_isa_flags)
  foreach(src ${ARGN})
    if(src MATCHES "_avx2\\.cc$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    endif()
  endforeach()
endfunction()
