#include "core/dtype.h"

#include <stdexcept>

namespace xjax {

namespace {
struct DTypeInfo { const char* name; size_t size; };
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", 1},    {"int8", 1},    {"int16", 2},   {"int32", 4},    {"int64", 8},
    {"uint8", 1},   {"uint16", 2},  {"uint32", 4},  {"uint64", 8},   {"float16", 2},
    {"bfloat16", 2}, {"float32", 4}, {"float64", 8},
};
}  // namespace

size_t itemsize(DType dt) { return kInfo[int(dt)].size; }
const char* dtype_name(DType dt) { return kInfo[int(dt)].name; }

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == kInfo[i].name) return DType(i);
  throw std::invalid_argument("unsupported dtype '" + name + "'");
}

float16::float16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) { bits = uint16_t(sign | 0x7e00u); return; }       // NaN
  if (absx >= 0x477ff000u) { bits = uint16_t(sign | 0x7c00u); return; }      // overflow -> inf
  if (absx < 0x38800000u) {                                                  // subnormal or zero
    float a;
    std::memcpy(&a, &absx, 4);
    // 2^-24 is the smallest half subnormal: scale, round to nearest even via float addition.
    float scaled = a * 16777216.0f;
    uint32_t m = uint32_t(scaled);
    float rem = scaled - float(m);
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    bits = uint16_t(sign | m);
    return;
  }
  uint32_t mant_odd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  bits = uint16_t(sign | (absx >> 13));
}

float16::operator float() const {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = float(mant) * (1.0f / 16777216.0f);
      std::memcpy(&out, &f, 4);
      out |= sign;
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace xjax
