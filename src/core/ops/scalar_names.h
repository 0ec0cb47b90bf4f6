// The scalar op definitions (scalar_ops.h) as generated code names them: the header text to put
// first in a generated source, each dtype's C++ types there, and the expression that computes an
// elementwise op. Host only (code generators).
//
// Generated code holds each value in its dtype's compute type (float for float16/bfloat16) and
// stores it in the storage type. An op's expression takes its operands as compute values and
// gives a compute value, already rounded to the result's format when that is a 16-bit one (the
// rule: 16-bit formats round after each op). E.g. for add on float16:
//   xjax::scalar::round_to<xjax::float16>(xjax::scalar::add<float>(a, b))
#pragma once
#include <string>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

// The text of scalar_portable.h, scalar_math.h, scalar_ops.h, scalar_xla_math.h and scalar_convert.h in that
// order: self-contained C++17 that host compilers, nvcc and NVRTC accept (no includes under
// CUDA). Define XJAX_SCALAR_SOFT_FTZ before it where the target does not flush float32/float64
// subnormals in hardware (see scalar_ops.h); compile without contraction (nvcc --fmad=false) for
// XLA's float32 log/log1p/erf_inv bits.
const std::string& scalar_source();

// The text of scalar_special.h (lgamma, digamma, igamma, zeta, Bessel i0e/i1e, betainc, ...),
// which goes after scalar_source() in the sources whose expressions call one of them
// (scalar_uses_special). Kept apart because it is long: every other source compiles without it.
const std::string& scalar_special_source();
bool scalar_uses_special(OpId op);

// The C++ type that stores a dtype's elements in generated code ("xjax::float16",
// "xjax::scalar::i32", "bool", "float", ...), and the type its values compute in ("float" for
// float16/bfloat16, else the storage type).
std::string scalar_storage_type(DType dt);
std::string scalar_compute_type(DType dt);

// Reads a stored element (an expression of the storage type: a slot such as "p[i]") as a compute
// value, and converts a compute value for storing (16-bit formats round to nearest even here;
// for other dtypes both return their argument).
std::string scalar_load(DType dt, const std::string& slot);
std::string scalar_store(DType dt, const std::string& value);

// The expression computing elementwise `op` on operands of dtypes `in` (select_n: {which, case,
// case, ...}) with result dtype `out` and attributes `attrs` (integer_pow's y and round's
// rounding_method become literal arguments, convert/bitcast read new_dtype from `out`); `args`
// are the operands' compute-value expressions, in order. "" when there is none: non-elementwise
// ops, and combinations the op's shape rule rejects (or args.size() != in.size()). The special
// functions' expressions need scalar_special_source() in the source.
std::string scalar_expression(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs,
                              const std::vector<std::string>& args);

}  // namespace xjax
