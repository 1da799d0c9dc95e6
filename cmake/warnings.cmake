# Flags shared by every stride target: warnings, CPU tuning, sanitizers.
function(stride_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic)
  # -Wpsabi flags every by-value 64-byte vector (src/backends/cpu/vec_math.h)
  # on a target without AVX-512. Those are inline helpers compiled with the
  # same flags everywhere, never an interface between separately built code.
  target_compile_options(${target} PRIVATE -Wno-psabi)
  if(STRIDE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(STRIDE_NATIVE)
  add_compile_options(-march=native)
endif()
if(STRIDE_SANITIZE)
  add_compile_options(-fsanitize=${STRIDE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${STRIDE_SANITIZE})
endif()
