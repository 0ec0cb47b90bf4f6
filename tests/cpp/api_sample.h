// Writes sample .xjx files with the core's writer, for the public API's test (a separate file:
// the public header and the core's headers each define xjax::Array and xjax::DType).
#pragma once
#include <string>

namespace api_sample {

// f(x: float32[2,3]; w) = (x * w + 1, sum(x * w)) with w = [1..6] a weight; and
// g(x: int32[4]) = x * 2 and g(x: int32[2, 2]) = x + 1 (two signatures of one name).
std::string module_bytes();

}  // namespace api_sample
