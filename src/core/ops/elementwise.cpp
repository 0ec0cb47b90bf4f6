// Shape and dtype rules of the elementwise ops (operands of equal shapes; broadcasting is explicit)
// and of iota.
#include "core/ops/op_attrs.h"

namespace xjax {

namespace {

enum class Allowed { Float, Int, IntOrBool, Numeric, Any };

Allowed allowed_dtypes(OpId op) {
  switch (op) {
    case OpId::shift_left_: case OpId::shift_right_logical_: case OpId::shift_right_arithmetic_:
    case OpId::population_count_: case OpId::clz_:
      return Allowed::Int;
    case OpId::bitwise_and_: case OpId::bitwise_or_: case OpId::bitwise_xor_: case OpId::bitwise_not_:
      return Allowed::IntOrBool;
    case OpId::neg_: case OpId::sign_: case OpId::abs_: case OpId::sub_: case OpId::div_: case OpId::rem_:
    case OpId::pow_: case OpId::square_: case OpId::integer_pow_:
      return Allowed::Numeric;
    case OpId::add_: case OpId::mul_: case OpId::max_: case OpId::min_: case OpId::eq_: case OpId::ne_:
    case OpId::lt_: case OpId::le_: case OpId::gt_: case OpId::ge_: case OpId::select_n_: case OpId::clamp_:
    case OpId::copy_: case OpId::convert_element_type_:
      return Allowed::Any;
    default:  // the transcendental, rounding and classification ops
      return Allowed::Float;
  }
}

bool accepts(Allowed a, DType dt) {
  // Complex operands: where JAX defines the op on them (which of those the core computes yet is
  // complex_ops.h's question).
  if (is_complex(dt)) return a == Allowed::Float || a == Allowed::Numeric || a == Allowed::Any;
  switch (a) {
    case Allowed::Float: return is_floating(dt);
    case Allowed::Int: return is_integer(dt);
    case Allowed::IntOrBool: return is_integer(dt) || dt == DType::Bool;
    case Allowed::Numeric: return dt != DType::Bool;
    case Allowed::Any: return true;
  }
  return false;
}

const char* describe(Allowed a) {
  switch (a) {
    case Allowed::Float: return "a floating-point dtype";
    case Allowed::Int: return "an integer dtype";
    case Allowed::IntOrBool: return "an integer or bool dtype";
    case Allowed::Numeric: return "a numeric (non-bool) dtype";
    case Allowed::Any: return "any dtype";
  }
  return "";
}

bool to_bool(OpId op) {
  return op == OpId::eq_ || op == OpId::ne_ || op == OpId::lt_ || op == OpId::le_ || op == OpId::gt_ ||
         op == OpId::ge_ || op == OpId::is_finite_;
}

void check_same_shapes(OpId op, const std::vector<TypeInfo>& in) {
  for (const TypeInfo& t : in)
    if (t.shape != in[0].shape) fail_value(op, "operands must have equal shapes, got " + types_str(in));
}

// Operands share one shape, except that 0-d operands broadcast (as lax's scalar operands do; the
// kernels expand them tile by tile instead of materialising them).
Shape common_shape(OpId op, const std::vector<TypeInfo>& in) {
  const Shape* shape = nullptr;
  for (const TypeInfo& t : in) {
    if (t.shape.empty()) continue;
    if (shape && t.shape != *shape) fail_value(op, "operands must have equal shapes or be 0-d, got " + types_str(in));
    shape = &t.shape;
  }
  return shape ? *shape : Shape{};
}

void check_same_dtypes(OpId op, const std::vector<TypeInfo>& in) {
  for (const TypeInfo& t : in)
    if (t.dtype != in[0].dtype) fail_type(op, "operands must have equal dtypes, got " + types_str(in));
}

void check_allowed(OpId op, const std::vector<TypeInfo>& in, DType dt) {
  Allowed a = allowed_dtypes(op);
  if (!accepts(a, dt))
    fail_type(op, std::string("does not accept ") + dtype_name(dt) + " operands (expects " + describe(a) +
                      "), got " + types_str(in));
}

std::vector<TypeInfo> infer_select_n(OpId op, const std::vector<TypeInfo>& in) {
  if (in.size() < 2) fail_value(op, "needs `which` and at least one case, got " + std::to_string(in.size()) + " operands");
  std::vector<TypeInfo> cases(in.begin() + 1, in.end());
  check_same_shapes(op, cases);
  check_same_dtypes(op, cases);
  const TypeInfo& which = in[0];
  if (which.dtype != DType::Bool && which.dtype != DType::Int32)
    fail_type(op, "`which` must be bool or int32, got " + types_str(in));
  if (which.dtype == DType::Bool && cases.size() > 2)
    fail_type(op, "a bool `which` selects between at most 2 cases, got " + std::to_string(cases.size()));
  if (!which.shape.empty() && which.shape != cases[0].shape)
    fail_value(op, "`which` must be 0-d or have the cases' shape, got " + types_str(in));
  return {cases[0]};
}

std::vector<TypeInfo> infer_clamp(OpId op, const std::vector<TypeInfo>& in) {
  const TypeInfo& x = in[1];
  for (int k : {0, 2})
    if (!in[k].shape.empty() && in[k].shape != x.shape)
      fail_value(op, "min and max must be 0-d or have the operand's shape, got " + types_str(in));
  check_same_dtypes(op, in);
  return {x};
}

// Same-width reinterpretation only (JAX also bitcasts between widths, changing the shape).
std::vector<TypeInfo> infer_bitcast(OpId op, const std::vector<TypeInfo>& in, const Attrs& attrs) {
  DType to = dtype_attr(op, attrs, "new_dtype");
  DType from = in[0].dtype;
  if ((from == DType::Bool) != (to == DType::Bool))
    fail_type(op, std::string("does not support bool unless both types are bool, got ") + dtype_name(from) + " -> " +
                      dtype_name(to));
  if (itemsize(from) != itemsize(to))
    fail_type(op, std::string("between types of different widths is not supported, got ") + dtype_name(from) +
                      " -> " + dtype_name(to));
  return {{in[0].shape, to}};
}

// threefry2x32(k0, k1, x0, x1): uint32 operands (0-d ones broadcast), one uint64 result holding
// both 32-bit result words (hi: the first), which the lax primitive splits.
std::vector<TypeInfo> infer_threefry(OpId op, const std::vector<TypeInfo>& in) {
  for (const TypeInfo& t : in)
    if (t.dtype != DType::UInt32) fail_type(op, "operands must be uint32, got " + types_str(in));
  return {{common_shape(op, in), DType::UInt64}};
}

DType complex_of(DType part) { return part == DType::Float64 ? DType::Complex128 : DType::Complex64; }
DType part_of(DType complex) { return complex == DType::Complex128 ? DType::Float64 : DType::Float32; }

// complex(re, im): float32 or float64 parts of one dtype (0-d ones broadcast) -> complex64/128.
std::vector<TypeInfo> infer_complex(OpId op, const std::vector<TypeInfo>& in) {
  check_same_dtypes(op, in);
  if (in[0].dtype != DType::Float32 && in[0].dtype != DType::Float64)
    fail_type(op, "operands must be float32 or float64, got " + types_str(in));
  return {{common_shape(op, in), complex_of(in[0].dtype)}};
}

// real, imag (-> the part's float dtype) and conj (-> the same dtype) of a complex operand.
std::vector<TypeInfo> infer_complex_unary(OpId op, const std::vector<TypeInfo>& in) {
  if (!is_complex(in[0].dtype)) fail_type(op, "operand must be complex64 or complex128, got " + types_str(in));
  return {{in[0].shape, op == OpId::conj_ ? in[0].dtype : part_of(in[0].dtype)}};
}

std::vector<TypeInfo> infer_iota(OpId op, const Attrs& attrs) {
  DType dt = dtype_attr(op, attrs, "dtype");
  if (dt == DType::Bool) fail_type(op, "dtype must be numeric, got bool");
  const Shape& shape = ints_attr(op, attrs, "shape");
  for (int64_t d : shape)
    if (d < 0) fail_value(op, "negative dimension in shape " + shape_str(shape));
  int64_t dim = int_attr(op, attrs, "dimension");
  if (dim < 0 || dim >= int64_t(shape.size()))
    fail_value(op, "dimension " + std::to_string(dim) + " is out of range for shape " + shape_str(shape));
  return {{shape, dt}};
}

std::vector<TypeInfo> infer_elementwise(OpId op, const std::vector<TypeInfo>& in, const Attrs& attrs) {
  switch (op) {
    case OpId::iota_: return infer_iota(op, attrs);
    case OpId::select_n_: return infer_select_n(op, in);
    case OpId::clamp_: return infer_clamp(op, in);
    case OpId::convert_element_type_: return {{in[0].shape, dtype_attr(op, attrs, "new_dtype")}};
    case OpId::bitcast_convert_type_: return infer_bitcast(op, in, attrs);
    case OpId::threefry2x32_: return infer_threefry(op, in);
    case OpId::complex_: return infer_complex(op, in);
    case OpId::real_: case OpId::imag_: case OpId::conj_: return infer_complex_unary(op, in);
    default: break;
  }
  Shape shape = common_shape(op, in);
  check_same_dtypes(op, in);
  DType dt = in[0].dtype;
  check_allowed(op, in, dt);
  if (op == OpId::integer_pow_) {
    int64_t y = int_attr(op, attrs, "y");
    if (y < 0 && !is_floating(dt) && !is_complex(dt))
      fail_type(op, "negative exponent " + std::to_string(y) + " needs a floating-point operand, got " + types_str(in));
  }
  if (op == OpId::round_) {
    int64_t m = int_attr_or(op, attrs, "rounding_method", 0);
    if (m != 0 && m != 1)
      fail_value(op, "rounding_method must be 0 (half away from zero) or 1 (half to even), got " + std::to_string(m));
  }
  if (op == OpId::abs_ && is_complex(dt)) return {{shape, part_of(dt)}};  // |z| is real
  return {{shape, to_bool(op) ? DType::Bool : dt}};
}

template <OpId kOp>
std::vector<TypeInfo> infer(const std::vector<TypeInfo>& in, const Attrs& attrs) {
  return infer_elementwise(kOp, in, attrs);
}

}  // namespace

void register_elementwise_infer(OpTable& t) {
#define XJAX_EW_REGISTER(name, kind, arity) \
  if (OpKind::kind == OpKind::Elementwise) t.set_infer(OpId::name##_, &infer<OpId::name##_>);
  XJAX_OP_LIST(XJAX_EW_REGISTER)
#undef XJAX_EW_REGISTER
  t.set_infer(OpId::iota_, &infer<OpId::iota_>);
}

}  // namespace xjax
