// The C++ text of fused kernels' values: types, reads and writes of memory, constants, and each
// step as a call of its scalar definition (core/ops/scalar_ops.h). The generated code names the
// definitions through the alias xs = ::xjax::scalar; the op's name is the function's name.
#include <cstring>

#include "core/compiler/fusion.h"
#include "core/cuda/fused.h"

namespace xjax::cuda {

namespace {

bool is_half(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16; }

// The scalar header's storage type (convert and bitcast work on these).
std::string scalar_type(DType dt) {
  if (dt == DType::Bool) return "bool";
  if (dt == DType::Float16) return "::xjax::float16";
  if (dt == DType::BFloat16) return "::xjax::bfloat16";
  return slot_type(dt);
}

// A storage-type value from a slot value and back (a 16-bit slot holds an exact float of its format).
std::string to_scalar(DType dt, const std::string& v) {
  return is_half(dt) ? scalar_type(dt) + "(" + v + ")" : v;
}
std::string from_scalar(DType dt, const std::string& v) { return is_half(dt) ? "float(" + v + ")" : v; }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// The ops whose scalar definitions are host-only (special_functions.h).
bool host_only(OpId op) {
  switch (op) {
    case OpId::lgamma_: case OpId::digamma_: case OpId::bessel_i0e_: case OpId::bessel_i1e_:
    case OpId::igamma_: case OpId::igammac_: case OpId::igamma_grad_a_: case OpId::polygamma_:
    case OpId::zeta_: case OpId::regularized_incomplete_beta_:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string mem_type(DType dt) {
  if (dt == DType::Bool) return "xs::u8";
  if (is_half(dt)) return "xs::u16";
  return slot_type(dt);
}

std::string slot_type(DType dt) {
  switch (dt) {
    case DType::Bool: return "bool";
    case DType::Int8: return "xs::i8";
    case DType::Int16: return "xs::i16";
    case DType::Int32: return "xs::i32";
    case DType::Int64: return "xs::i64";
    case DType::UInt8: return "xs::u8";
    case DType::UInt16: return "xs::u16";
    case DType::UInt32: return "xs::u32";
    case DType::UInt64: return "xs::u64";
    case DType::Float16: case DType::BFloat16: case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "float";
}

std::string read_mem(DType dt, const std::string& mem) {
  if (dt == DType::Bool) return "(" + mem + " != 0)";
  if (dt == DType::Float16) return "xs::float16_value(" + mem + ")";
  if (dt == DType::BFloat16) return "xs::bfloat16_value(" + mem + ")";
  return mem;
}

std::string write_mem(DType dt, const std::string& value) {
  if (dt == DType::Bool) return "(xs::u8)(" + value + ")";
  if (dt == DType::Float16) return "xs::float16_bits(" + value + ")";
  if (dt == DType::BFloat16) return "xs::bfloat16_bits(" + value + ")";
  return value;
}

std::string literal(DType dt, const std::string& bytes) {
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), std::min<size_t>(bytes.size(), 8));
  const std::string hex = "0x" + [&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(bits));
    return std::string(buf);
  }() + "ull";
  switch (dt) {
    case DType::Bool: return bits & 0xff ? "true" : "false";
    case DType::Float16: case DType::BFloat16: return read_mem(dt, "(xs::u16)" + hex);
    case DType::Float32: return "xs::bit_cast<float>((xs::u32)" + hex + ")";
    case DType::Float64: return "xs::bit_cast<double>((xs::u64)" + hex + ")";
    default: return "(" + slot_type(dt) + ")" + hex;  // the low bytes: two's complement wraps
  }
}

std::string from_i64(DType dt, const std::string& v) {
  return from_scalar(dt, "xs::convert<xs::i64, " + scalar_type(dt) + ">((xs::i64)(" + v + "))");
}

std::string step_expr(const KernelStep& st, const std::vector<std::string>& args) {
  const DType a0 = st.arg_dtypes.empty() ? st.out_dtype : st.arg_dtypes[0];
  const std::string t = slot_type(a0);
  std::string e;
  switch (st.op) {
    case OpId::convert_element_type_: case OpId::bitcast_convert_type_: {
      const char* fn = st.op == OpId::convert_element_type_ ? "convert" : "bitcast";
      return from_scalar(st.out_dtype, std::string("xs::") + fn + "<" + scalar_type(a0) + ", " +
                                           scalar_type(st.out_dtype) + ">(" + to_scalar(a0, args[0]) + ")");
    }
    case OpId::nextafter_:  // on the operands' own format
      return from_scalar(a0, "xs::nextafter(" + to_scalar(a0, args[0]) + ", " + to_scalar(a0, args[1]) + ")");
    case OpId::select_n_: return "xs::select_n(" + join(args) + ")";  // cases are exact values already
    case OpId::threefry2x32_: return "xs::threefry2x32(" + join(args) + ")";
    case OpId::round_:
      e = "xs::round<" + t + ">(" + args[0] + ", " + std::to_string(st.attrs.get_int_or("rounding_method", 0)) + ")";
      break;
    case OpId::integer_pow_:
      e = "xs::integer_pow<" + t + ">(" + args[0] + ", (xs::i64)" + std::to_string(st.attrs.get_int("y")) + "LL)";
      break;
    default: e = std::string("xs::") + op_name(st.op) + "<" + t + ">(" + join(args) + ")"; break;
  }
  if (is_half(st.out_dtype)) e = "xs::round_to<" + scalar_type(st.out_dtype) + ">(" + e + ")";
  return e;
}

bool cuda_can_fuse(OpId op, const std::vector<DType>& in, DType out, const Attrs&) {
  const OpKind kind = op_info(op).kind;
  if (kind == OpKind::Reduction) return true;  // every reduction fusion accepts: RedOp over any dtype
  if (kind != OpKind::Elementwise || host_only(op)) return false;
  if (op == OpId::bitcast_convert_type_) return itemsize(in[0]) == itemsize(out);  // same shape only
  if (op == OpId::select_n_ || op == OpId::threefry2x32_ || op == OpId::convert_element_type_) return true;
  for (DType d : in)
    if (d != in[0]) return false;  // the definitions take one operand type
  return true;
}

const BackendCaps& cuda_caps() {
  static const BackendCaps caps{"cuda", cuda_can_fuse};
  return caps;
}

}  // namespace xjax::cuda
