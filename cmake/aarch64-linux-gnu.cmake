# Cross-compiling for 64-bit Arm Linux with Debian's cross toolchain (g++-aarch64-linux-gnu),
# tests run under user-mode QEMU (qemu-user): .ci/aarch64 uses this file.
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DXJAX_BUILD_TESTS=ON
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(XJAX_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${XJAX_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${XJAX_CROSS_TRIPLE}-g++)

# Debian's multiarch sysroot of the cross toolchain.
set(CMAKE_FIND_ROOT_PATH /usr/${XJAX_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest (and try_run) start the test programs through QEMU, with the target's loader and libraries.
find_program(XJAX_QEMU_AARCH64 qemu-aarch64)
if(XJAX_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${XJAX_QEMU_AARCH64} -L /usr/${XJAX_CROSS_TRIPLE})
endif()
