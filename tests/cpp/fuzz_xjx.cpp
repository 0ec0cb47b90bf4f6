// libFuzzer target for the .xjx loader (an untrusted-input boundary): any input must load or throw
// FormatError, without a crash, hang, leak or sanitizer report. The checksum is not verified, so
// the fuzzer reaches the parser and the graph rebuilding behind it. Built when the compiler has
// -fsanitize=fuzzer (clang); for coverage of the core, configure the whole build instrumented:
//   CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DXJAX_BUILD_TESTS=ON \
//       -DXJAX_SANITIZE=address,undefined,fuzzer-no-link
//   cmake --build build/fuzz --target fuzz_xjx
//   build/fuzz/tests/cpp/fuzz_xjx corpus/ -max_len=65536
// A corpus: any .xjx files (xjax.export's serialize(); tests/cpp/test_export_cpp --write-seed DIR).
#include <cstddef>
#include <cstdint>

#include "core/export/format.h"
#include "core/export/loaded.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  xjax::ReadOptions options;
  options.verify_checksum = false;
  options.max_array_bytes = int64_t(1) << 26;
  try {
    xjax::ModuleDef m = xjax::read_module_bytes(data, size, options);
    xjax::compile_module(m);
  } catch (const xjax::FormatError&) {
  }
  return 0;
}
