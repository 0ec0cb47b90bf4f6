// The exceptions of the xjax C++ API (include/xjax/xjax.h). Both are std::invalid_argument: the
// input was wrong. Failures that are not the caller's input (a file that cannot be opened, a BLAS
// library that cannot be loaded, a computation that fails) are std::runtime_error.
#pragma once
#include <stdexcept>

namespace xjax {
inline namespace v1 {

// A file (or buffer) that is not a readable .xjx file: wrong magic bytes, a format or opset version
// this library does not read (the message names both versions), truncated, corrupt (checksum), or a
// graph the library rejects. The message says what is wrong and at which byte.
class FormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  ~FormatError() override;
};

// Arguments that do not match: a call's arguments against the function's signatures, an Array's
// shape and dtype against the size of the caller's memory, an unknown function name.
class ArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  ~ArgumentError() override;
};

}  // namespace v1
}  // namespace xjax
