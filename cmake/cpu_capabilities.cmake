# The CPU backend compiled once per instruction-set level (Note [CPU
# capabilities] in src/backends/cpu/capability.h).
#
# STRIDE_CPU_CAPABILITIES lists the levels, lowest first: on x86-64
# default (the baseline, SSE2), avx2 (x86-64-v3) and avx512 (x86-64-v4); on
# other processors default alone (on arm64 that is NEON, which every arm64
# CPU has). STRIDE_CPU_CAPABILITIES_HOST lists those this machine runs, for
# the tests that run each level (tests/CMakeLists.txt).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(STRIDE_CPU_CAPABILITIES_ALL default avx2 avx512)
  set(STRIDE_CPU_CAPABILITY_FLAGS_default -march=x86-64)
  set(STRIDE_CPU_CAPABILITY_FLAGS_avx2 -march=x86-64-v3)
  set(STRIDE_CPU_CAPABILITY_FLAGS_avx512 -march=x86-64-v4)
else()
  set(STRIDE_CPU_CAPABILITIES_ALL default)
endif()
set(STRIDE_CPU_CAPABILITIES "${STRIDE_CPU_CAPABILITIES_ALL}" CACHE STRING
    "CPU levels to compile the CPU backend for (a subset of: ${STRIDE_CPU_CAPABILITIES_ALL}), lowest first")
list(GET STRIDE_CPU_CAPABILITIES 0 stride_lowest)
if(NOT stride_lowest STREQUAL "default")
  message(FATAL_ERROR "STRIDE_CPU_CAPABILITIES must start with default (the level every CPU runs)")
endif()

# Compiles `target`'s sources for `level`: its -march, and the namespace and
# level number that src/backends/cpu/capability.h reads.
function(stride_cpu_capability_flags target level)
  list(FIND STRIDE_CPU_CAPABILITIES_ALL ${level} index)
  if(index LESS 0)
    message(FATAL_ERROR "Unknown CPU level '${level}' (known: ${STRIDE_CPU_CAPABILITIES_ALL})")
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${STRIDE_CPU_CAPABILITY_FLAGS_${level}}>)
  target_compile_definitions(${target} PRIVATE
    STRIDE_CPU_CAPABILITY_NS=capability_${level} STRIDE_CPU_CAPABILITY_LEVEL=${index})
endfunction()

# Takes src/backends/cpu/*.cpp out of `sources_var` and compiles them once
# per level, as the OBJECT libraries stride_cpu_<level>, whose objects join
# the backends layer's. Tells src/core/cpu_capability.cpp which levels were
# compiled.
#
# Link order: the baseline's objects where the layer's go, the higher
# levels' after every layer (STRIDE_LAYER_LAST_OBJECTS_backends), lowest
# first. Of an inline function or template instance that several objects
# emit, the linker keeps the first copy; in this order that is the copy of
# the lowest level that emits it, and every caller, which emits it too (or
# inlines it), runs at that level or above. With the higher levels anywhere
# earlier, a copy compiled for AVX-512 that the baseline's objects happened to
# inline could be kept, and a baseline caller in a later layer would run it.
function(stride_add_cpu_capabilities sources_var)
  set(sources ${${sources_var}})
  set(cpu_sources ${sources})
  list(FILTER cpu_sources INCLUDE REGEX "/src/backends/cpu/[^/]+\\.cpp$")
  list(REMOVE_ITEM sources ${cpu_sources})
  # Kernels that gain nothing from wider vectors compile at the baseline
  # alone, and their stubs run that kernel at every level: Boost.Math's
  # scalar special functions (whose headers also compute constants when the
  # library loads, code that must run on every CPU) and LAPACK's calls. Each
  # registers on stubs only; no other file calls into them. (KISS FFT's
  # templates do gain: FMA contraction changes their float32 rounding.)
  set(baseline_only_sources ${cpu_sources})
  list(FILTER baseline_only_sources INCLUDE REGEX "/src/backends/cpu/(special|lapack)\\.cpp$")
  set(leveled_sources ${cpu_sources})
  list(REMOVE_ITEM leveled_sources ${baseline_only_sources})
  set(baseline_objects "")
  set(higher_objects "")
  set(mask 0)
  foreach(level IN LISTS STRIDE_CPU_CAPABILITIES)
    if(level STREQUAL "default")
      add_library(stride_cpu_${level} OBJECT ${cpu_sources})
    else()
      add_library(stride_cpu_${level} OBJECT ${leveled_sources})
    endif()
    stride_use_dependencies(stride_cpu_${level})
    stride_cpu_capability_flags(stride_cpu_${level} ${level})
    if(level STREQUAL "default")
      list(APPEND baseline_objects $<TARGET_OBJECTS:stride_cpu_${level}>)
    else()
      list(APPEND higher_objects $<TARGET_OBJECTS:stride_cpu_${level}>)
    endif()
    list(FIND STRIDE_CPU_CAPABILITIES_ALL ${level} index)
    math(EXPR mask "${mask} | (1 << ${index})")
  endforeach()
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/core/cpu_capability.cpp APPEND PROPERTY
    COMPILE_DEFINITIONS STRIDE_CPU_CAPABILITIES_COMPILED=${mask})
  set(${sources_var} ${sources} PARENT_SCOPE)
  set(STRIDE_LAYER_EXTRA_OBJECTS_backends ${STRIDE_LAYER_EXTRA_OBJECTS_backends}
      ${baseline_objects} PARENT_SCOPE)
  set(STRIDE_LAYER_LAST_OBJECTS_backends ${higher_objects} PARENT_SCOPE)
endfunction()

# The levels this machine runs (all but default need cpuid's word; a cross
# build runs default alone, under its emulator).
set(STRIDE_CPU_CAPABILITIES_HOST default)
if(NOT CMAKE_CROSSCOMPILING AND "avx2" IN_LIST STRIDE_CPU_CAPABILITIES)
  foreach(level avx2 avx512)
    if(level STREQUAL "avx2")
      set(isa x86-64-v3)
    else()
      set(isa x86-64-v4)
    endif()
    file(WRITE ${CMAKE_BINARY_DIR}/cpu_level_${level}.cpp
      "int main() { __builtin_cpu_init(); return __builtin_cpu_supports(\"${isa}\") ? 0 : 1; }\n")
    try_run(run_result compile_result ${CMAKE_BINARY_DIR}/cpu_level_${level}
      ${CMAKE_BINARY_DIR}/cpu_level_${level}.cpp)
    if(compile_result AND run_result EQUAL 0 AND level IN_LIST STRIDE_CPU_CAPABILITIES)
      list(APPEND STRIDE_CPU_CAPABILITIES_HOST ${level})
    endif()
  endforeach()
endif()
message(STATUS "stride: CPU levels compiled: ${STRIDE_CPU_CAPABILITIES}; run here: ${STRIDE_CPU_CAPABILITIES_HOST}")
