# Cross-compiles stride for 64-bit Arm Linux with Debian's cross toolchain
# (g++-aarch64-linux-gnu) against the arm64 builds of Debian's libraries
# (multiarch, /usr/lib/aarch64-linux-gnu, and those that
# tools/install_deps_arm64.sh unpacks into build-arm64-deps/); ctest runs the
# tests under qemu-aarch64 user emulation. `make test-arm64` uses it.
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# Another directory of unpacked packages: -DSTRIDE_AARCH64_DEPS=/path or
# the environment variable of that name (it is read again in CMake's
# try_compile projects, which see the environment, not the cache).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(DEFINED STRIDE_AARCH64_DEPS)
  set(ENV{STRIDE_AARCH64_DEPS} "${STRIDE_AARCH64_DEPS}")
elseif(DEFINED ENV{STRIDE_AARCH64_DEPS})
  set(STRIDE_AARCH64_DEPS "$ENV{STRIDE_AARCH64_DEPS}")
else()
  get_filename_component(STRIDE_AARCH64_DEPS "${CMAKE_CURRENT_LIST_DIR}/../../build-arm64-deps" ABSOLUTE)
endif()

# Libraries, headers and CMake packages: the unpacked packages first, then
# the system's multiarch directories (CMAKE_LIBRARY_ARCHITECTURE makes
# find_library look in /usr/lib/aarch64-linux-gnu, never in the amd64
# /usr/lib/x86_64-linux-gnu). Programs (qemu, pkg-config) are the host's.
set(CMAKE_FIND_ROOT_PATH "${STRIDE_AARCH64_DEPS}" /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (OpenBLAS, PCRE2, utf8proc): the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR}
    "${STRIDE_AARCH64_DEPS}/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# ctest, and gtest_discover_tests at build time, run the test programs
# through qemu. -L /: the arm64 dynamic loader and libc of Debian's
# multiarch (libc6:arm64), the same glibc build as the libc.so.6 the
# programs load from /usr/lib/aarch64-linux-gnu. Not the cross toolchain's
# (-L /usr/aarch64-linux-gnu, libc6-arm64-cross): its loader is another
# build of glibc, whose private structures the multiarch libc.so.6 reads
# differently, and the first pthread_create looped forever walking the
# loader's list of cached thread stacks.
find_program(STRIDE_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${STRIDE_QEMU_AARCH64};-L;/")
