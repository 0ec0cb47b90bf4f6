// Which ops see float8 operands or results themselves: those that move 1-byte elements (as int8
// does) and convert_element_type. The compiler's widen_float8 pass runs every other op on float8
// values in float32, so kernels written for the computed dtypes never see a float8 value.
#pragma once

#include "core/ops/ops.h"
#include "core/ops/scalar_float8.h"

namespace xjax {

bool accepts_float8(OpId op);
// The ops that widen_float8 cannot run in float32 because their float8 result is not their float32
// result rounded (nextafter steps in the operand's own format): NotImplementedError naming the op.
void check_float8_widens(OpId op, DType dt);

// The format of a float8 dtype, and its conversions from double and to float (scalar_float8.h).
inline const scalar::Float8Format& float8_format(DType dt) {
  return dt == DType::Float8E4M3FN ? scalar::kE4M3FN : scalar::kE5M2;
}
inline uint8_t float8_from_double(double x, DType dt) { return scalar::float8_bits(x, float8_format(dt)); }
inline float float8_to_float(uint8_t code, DType dt) { return scalar::float8_value(code, float8_format(dt)); }

}  // namespace xjax
