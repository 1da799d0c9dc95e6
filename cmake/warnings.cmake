# Flags shared by every stride target: warnings, CPU tuning, sanitizers.
# The C++ compiler's; CUDA sources (nvcc) get theirs in the CUDA backend.
function(stride_set_warnings target)
  set(cxx $<COMPILE_LANGUAGE:CXX>)
  target_compile_options(${target} PRIVATE
    $<${cxx}:-Wall> $<${cxx}:-Wextra> $<${cxx}:-Wshadow> $<${cxx}:-Wnon-virtual-dtor>
    $<${cxx}:-Wpedantic>)
  # -Wpsabi flags every by-value 64-byte vector (src/backends/cpu/vec_math.h)
  # on a target without AVX-512. Those are helpers inside one CPU level's
  # namespace (Note [CPU capabilities]), never an interface between code
  # built with other flags.
  target_compile_options(${target} PRIVATE $<${cxx}:-Wno-psabi>)
  if(STRIDE_WERROR)
    target_compile_options(${target} PRIVATE $<${cxx}:-Werror>)
    # nvcc's own warnings, and the host compiler's on CUDA sources.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
  endif()
endfunction()

if(STRIDE_NATIVE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-march=native>)
endif()
if(STRIDE_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${STRIDE_SANITIZE}>
    $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
    $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${STRIDE_SANITIZE})
endif()
