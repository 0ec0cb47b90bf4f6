#include "core/dtype.h"

#include <stdexcept>

namespace xjax {

namespace {
struct DTypeInfo { const char* name; size_t size; };
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", 1},    {"int8", 1},    {"int16", 2},   {"int32", 4},    {"int64", 8},
    {"uint8", 1},   {"uint16", 2},  {"uint32", 4},  {"uint64", 8},   {"float16", 2},
    {"bfloat16", 2}, {"float32", 4}, {"float64", 8},  {"complex64", 8}, {"complex128", 16},
    {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
};
}  // namespace

size_t itemsize(DType dt) { return kInfo[int(dt)].size; }
const char* dtype_name(DType dt) { return kInfo[int(dt)].name; }

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kInfo[i].name) return DType(i);
  throw std::invalid_argument("unsupported dtype '" + name + "'");
}

}  // namespace xjax
