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
# the backends layer's, the baseline's first: the linker keeps the first copy
# of an inline function that several levels share, and the baseline's runs
# everywhere. Tells src/core/cpu_capability.cpp which levels were compiled.
function(stride_add_cpu_capabilities sources_var)
  set(sources ${${sources_var}})
  set(cpu_sources ${sources})
  list(FILTER cpu_sources INCLUDE REGEX "/src/backends/cpu/[^/]+\\.cpp$")
  list(REMOVE_ITEM sources ${cpu_sources})
  set(objects "")
  set(mask 0)
  foreach(level IN LISTS STRIDE_CPU_CAPABILITIES)
    add_library(stride_cpu_${level} OBJECT ${cpu_sources})
    stride_use_dependencies(stride_cpu_${level})
    stride_cpu_capability_flags(stride_cpu_${level} ${level})
    list(APPEND objects $<TARGET_OBJECTS:stride_cpu_${level}>)
    list(FIND STRIDE_CPU_CAPABILITIES_ALL ${level} index)
    math(EXPR mask "${mask} | (1 << ${index})")
  endforeach()
  set_property(SOURCE ${PROJECT_SOURCE_DIR}/src/core/cpu_capability.cpp APPEND PROPERTY
    COMPILE_DEFINITIONS STRIDE_CPU_CAPABILITIES_COMPILED=${mask})
  set(${sources_var} ${sources} PARENT_SCOPE)
  set(STRIDE_LAYER_EXTRA_OBJECTS_backends ${STRIDE_LAYER_EXTRA_OBJECTS_backends} ${objects}
      PARENT_SCOPE)
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
