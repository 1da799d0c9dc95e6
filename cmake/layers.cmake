# libstride's layers as libraries, so that the build enforces their order at
# link time as tools/check_layers.sh does at the include level: a call from
# a layer into one above it (a function declared low and defined high, which
# no include check sees) fails to link.
#
# stride_add_layers(SOURCES_VAR name1 regex1 name2 regex2 ...), lowest layer
# first: each layer's sources are those of SOURCES_VAR whose path under the
# project matches its regex; each is compiled once, as the OBJECT library
# stride_layer_<name>, and STRIDE_LAYER_OBJECTS lists all their objects
# (libstride's) plus those of STRIDE_LAYER_EXTRA_OBJECTS_<name>, and last
# those of every STRIDE_LAYER_LAST_OBJECTS_<name> (the CPU backend's levels
# above the baseline: cmake/cpu_capabilities.cmake says why). A source no
# layer claims is a configure error.
#
# With STRIDE_CHECK_LAYERS, each layer is also linked, from the same
# objects, into a shared library stride_layer_check_<name> with
# -Wl,--no-undefined against the external libraries and the check libraries
# of the layers below it alone, in layer order: a symbol one layer takes from a
# layer above it is then an undefined reference, and the build fails naming
# both. The check libraries are built, never installed or loaded; sanitizer
# builds skip them (their runtimes' symbols resolve at load).
option(STRIDE_CHECK_LAYERS "Link each layer alone to check that no layer calls one above it"
       ${STRIDE_BUILD_TESTS})

function(stride_add_layers sources_var)
  set(remaining ${${sources_var}})
  set(objects "")
  set(last_objects "")
  set(below "")
  set(args ${ARGN})
  while(args)
    list(POP_FRONT args name regex)
    set(layer_sources "")
    foreach(source IN LISTS remaining)
      file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${source})
      if(relative MATCHES "^(${regex})")
        list(APPEND layer_sources ${source})
      endif()
    endforeach()
    list(REMOVE_ITEM remaining ${layer_sources})
    add_library(stride_layer_${name} OBJECT ${layer_sources})
    stride_use_dependencies(stride_layer_${name})
    set(layer_objects $<TARGET_OBJECTS:stride_layer_${name}>
                      ${STRIDE_LAYER_EXTRA_OBJECTS_${name}})
    list(APPEND objects ${layer_objects})
    list(APPEND last_objects ${STRIDE_LAYER_LAST_OBJECTS_${name}})
    list(APPEND layer_objects ${STRIDE_LAYER_LAST_OBJECTS_${name}})
    if(STRIDE_CHECK_LAYERS AND NOT STRIDE_SANITIZE)
      add_library(stride_layer_check_${name} SHARED ${layer_objects})
      stride_use_dependencies(stride_layer_check_${name})
      target_link_libraries(stride_layer_check_${name} PRIVATE ${below})
      target_link_options(stride_layer_check_${name} PRIVATE -Wl,--no-undefined)
      list(APPEND below stride_layer_check_${name})
    endif()
  endwhile()
  if(remaining)
    list(JOIN remaining "\n  " unclaimed)
    message(FATAL_ERROR "No layer of stride_add_layers claims:\n  ${unclaimed}")
  endif()
  set(STRIDE_LAYER_OBJECTS ${objects} ${last_objects} PARENT_SCOPE)
endfunction()
