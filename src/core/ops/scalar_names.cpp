// Generated-code names of the scalar op definitions (see scalar_names.h). The op -> function
// mapping comes from the catalogue lists of scalar_ops.h and scalar_special.h: a function is named
// as its op.
#include "core/ops/scalar_names.h"

#include "core/errors.h"

#include <cstdint>

#include "core/ops/scalar_ops.h"
#include "core/ops/scalar_special.h"

namespace xjax {

// The headers' text, embedded by the build (cmake/embed_text.cmake).
extern const char kScalarSourceText[];
extern const char kScalarSpecialText[];

const std::string& scalar_source() {
  static const std::string text(kScalarSourceText);
  return text;
}

const std::string& scalar_special_source() {
  static const std::string text(kScalarSpecialText);
  return text;
}

bool scalar_uses_special(OpId op) {
  switch (op) {
#define XJAX_NAMES_CASE(name, domain) case OpId::name##_:
    XJAX_SCALAR_SPECIAL_UNARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_SPECIAL_BINARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_SPECIAL_TERNARY_OPS(XJAX_NAMES_CASE)
#undef XJAX_NAMES_CASE
      return true;
    default: return false;
  }
}

std::string scalar_storage_type(DType dt) {
  switch (dt) {
    case DType::Bool: return "bool";
    case DType::Int8: return "xjax::scalar::i8";
    case DType::Int16: return "xjax::scalar::i16";
    case DType::Int32: return "xjax::scalar::i32";
    case DType::Int64: return "xjax::scalar::i64";
    case DType::UInt8: return "xjax::scalar::u8";
    case DType::UInt16: return "xjax::scalar::u16";
    case DType::UInt32: return "xjax::scalar::u32";
    case DType::UInt64: return "xjax::scalar::u64";
    case DType::Float16: return "xjax::float16";
    case DType::BFloat16: return "xjax::bfloat16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Complex64: return "xjax::scalar::cx::C<float>";
    case DType::Complex128: return "xjax::scalar::cx::C<double>";
    case DType::Float8E4M3FN: case DType::Float8E5M2: break;
  }
  throw NotImplementedError(std::string("generated kernels do not support ") + dtype_name(dt) + " yet");
}

namespace {

bool is_half(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16; }

std::string call(const std::string& fn, const std::vector<std::string>& args) {
  std::string s = fn + "(";
  for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
  return s + ")";
}

std::string int_literal(int64_t v) {  // an i64 expression (INT64_MIN has no literal)
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + "LL";
}

enum class Form { None, Plain, Predicate };

// Whether op is one call on compute values (the catalogue lists), and whether it gives bool.
Form plain_form(OpId op) {
  switch (op) {
#define XJAX_NAMES_CASE(name, domain) case OpId::name##_:
    XJAX_SCALAR_UNARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_BINARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_TERNARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_SPECIAL_UNARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_SPECIAL_BINARY_OPS(XJAX_NAMES_CASE)
    XJAX_SCALAR_SPECIAL_TERNARY_OPS(XJAX_NAMES_CASE)
    case OpId::integer_pow_: case OpId::round_:
      return Form::Plain;
    XJAX_SCALAR_COMPARE_OPS(XJAX_NAMES_CASE)
    case OpId::is_finite_:
      return Form::Predicate;
#undef XJAX_NAMES_CASE
    default: return Form::None;
  }
}

// Whether the shape rule accepts op on `in` with result dtype `out`.
bool valid(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs) {
  if (op_info(op).kind != OpKind::Elementwise) return false;
  std::vector<TypeInfo> types;
  for (DType d : in) types.push_back({{}, d});
  Attrs checked = attrs;
  if (op == OpId::convert_element_type_ || op == OpId::bitcast_convert_type_) checked.set("new_dtype", dtype_name(out));
  try {
    std::vector<TypeInfo> res = infer_types(op, types, checked);
    return res.size() == 1 && res[0].dtype == out;
  } catch (const std::exception&) {
    return false;
  }
}

// convert and bitcast act on storage values: operands and results cross to and from them.
std::string storage_call(const char* fn, DType from, DType to, const std::string& arg) {
  std::string x = is_half(from) ? "xjax::scalar::to_storage<" + scalar_storage_type(from) + ">(" + arg + ")" : arg;
  std::string r = std::string("xjax::scalar::") + fn + "<" + scalar_storage_type(from) + ", " +
                  scalar_storage_type(to) + ">(" + x + ")";
  return is_half(to) ? "xjax::scalar::to_compute(" + r + ")" : r;
}

// An op with a complex operand or result: scalar_complex.h's cx:: function of the op's name, over the
// part type; "" for the ops it defines on the host only (the trigonometric and hyperbolic families).
std::string complex_expression(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs,
                               const std::vector<std::string>& args) {
  const DType c = is_complex(in[0]) ? in[0] : out;
  const std::string part = c == DType::Complex64 ? "float" : "double";
  std::vector<std::string> operands = args;
  switch (op) {
    case OpId::convert_element_type_: return storage_call("cx::convert", in[0], out, args[0]);
    case OpId::complex_: return call("xjax::scalar::cx::make<" + part + ">", args);
    case OpId::copy_: return call("xjax::scalar::copy<" + scalar_compute_type(c) + ">", args);
    case OpId::integer_pow_: operands.push_back(int_literal(attrs.get_int("y"))); break;
    case OpId::add_: case OpId::sub_: case OpId::mul_: case OpId::div_: case OpId::eq_: case OpId::ne_:
    case OpId::max_: case OpId::min_: case OpId::neg_: case OpId::conj_: case OpId::real_: case OpId::imag_:
    case OpId::abs_: case OpId::sign_: case OpId::square_: case OpId::exp_: case OpId::log_: case OpId::sqrt_:
    case OpId::rsqrt_: case OpId::expm1_: case OpId::log1p_: case OpId::exp2_: case OpId::logistic_:
    case OpId::pow_: case OpId::atan2_: case OpId::clamp_:
      break;
    default: return "";
  }
  return call("xjax::scalar::cx::" + std::string(op_name(op)) + "<" + part + ">", operands);
}

}  // namespace

std::string scalar_compute_type(DType dt) { return is_half(dt) ? "float" : scalar_storage_type(dt); }

std::string scalar_load(DType dt, const std::string& slot) {
  return is_half(dt) ? "xjax::scalar::to_compute(" + slot + ")" : slot;
}

std::string scalar_store(DType dt, const std::string& value) {
  return is_half(dt) ? "xjax::scalar::to_storage<" + scalar_storage_type(dt) + ">(" + value + ")" : value;
}

std::string scalar_expression(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs,
                              const std::vector<std::string>& args) {
  if (args.size() != in.size() || in.empty() || !valid(op, in, out, attrs)) return "";
  if (op != OpId::select_n_ && (is_complex(out) || is_complex(in[0]) || (in.size() > 1 && is_complex(in[1]))))
    return complex_expression(op, in, out, attrs, args);
  switch (op) {
    case OpId::convert_element_type_: return storage_call("convert", in[0], out, args[0]);
    case OpId::bitcast_convert_type_: return storage_call("bitcast", in[0], out, args[0]);
    case OpId::threefry2x32_: return call("xjax::scalar::threefry2x32", args);
    case OpId::select_n_:  // returns one of the cases: nothing to round
      return call("xjax::scalar::select_n<" + scalar_compute_type(in[0]) + ", " + scalar_compute_type(in[1]) + ">", args);
    case OpId::nextafter_:
      if (is_half(out)) {  // steps on the format's own bits
        std::string s = scalar_storage_type(out);
        return "xjax::scalar::to_compute(xjax::scalar::nextafter(xjax::scalar::to_storage<" + s + ">(" + args[0] +
               "), xjax::scalar::to_storage<" + s + ">(" + args[1] + ")))";
      }
      break;
    default: break;
  }
  Form form = plain_form(op);
  if (form == Form::None) return "";
  std::vector<std::string> operands = args;
  if (op == OpId::integer_pow_) operands.push_back(int_literal(attrs.get_int("y")));
  if (op == OpId::round_) operands.push_back(std::to_string(attrs.get_int_or("rounding_method", 0)));
  std::string e = call("xjax::scalar::" + std::string(op_name(op)) + "<" + scalar_compute_type(in[0]) + ">", operands);
  if (form == Form::Plain && is_half(out)) e = "xjax::scalar::round_to<" + scalar_storage_type(out) + ">(" + e + ")";
  return e;
}

}  // namespace xjax
