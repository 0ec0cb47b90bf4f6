// The C++ text of fused kernels' values: types, reads and writes of memory, constants, and each
// step, all as core/ops/scalar_names.h names the scalar definitions.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/compiler/fusion.h"
#include "core/cuda/fused.h"
#include "core/ops/scalar_names.h"

namespace xjax::cuda {

namespace {

bool is_half(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16; }

// An operand list of n placeholder names (scalar_expression checks only its length).
std::vector<std::string> placeholders(size_t n) { return std::vector<std::string>(n, "x"); }

}  // namespace

std::string mem_type(DType dt) { return scalar_storage_type(dt); }

std::string slot_type(DType dt) { return scalar_compute_type(dt); }

std::string read_mem(DType dt, const std::string& mem) { return scalar_load(dt, mem); }

std::string write_mem(DType dt, const std::string& value) { return scalar_store(dt, value); }

std::string literal(DType dt, const std::string& bytes) {
  if (is_complex(dt)) {  // its parts' literals
    const DType p = dt == DType::Complex64 ? DType::Float32 : DType::Float64;
    const size_t h = itemsize(p);
    return slot_type(dt) + "(" + literal(p, bytes.substr(0, h)) + ", " + literal(p, bytes.substr(h, h)) + ")";
  }
  uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), std::min<size_t>(bytes.size(), 8));
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llxull", static_cast<unsigned long long>(bits));
  const std::string u = std::string("(xjax::scalar::u") + std::to_string(8 * itemsize(dt)) + ")" + hex;
  switch (dt) {
    case DType::Bool: return bits & 0xff ? "true" : "false";
    case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Float64:
      return scalar_load(dt, "xjax::scalar::bitcast<xjax::scalar::u" + std::to_string(8 * itemsize(dt)) + ", " +
                                 scalar_storage_type(dt) + ">(" + u + ")");
    default: return "(" + slot_type(dt) + ")" + u;  // two's complement wraps
  }
}

std::string from_i64(DType dt, const std::string& v) {
  Attrs attrs;
  attrs.set("new_dtype", std::string(dtype_name(dt)));
  return scalar_expression(OpId::convert_element_type_, {DType::Int64}, dt, attrs, {"(xjax::scalar::i64)(" + v + ")"});
}

std::string step_expr(const KernelStep& st, const std::vector<std::string>& args) {
  std::string e = scalar_expression(st.op, st.arg_dtypes, st.out_dtype, st.attrs, args);
  if (e.empty())
    throw NoKernelError(std::string("[cuda] no scalar definition of '") + op_name(st.op) + "' for these dtypes");
  return e;
}

bool cuda_can_fuse(OpId op, const std::vector<DType>& in, DType out, const Attrs& attrs) {
  const OpKind kind = op_info(op).kind;
  // Complex reductions are not generated yet (they run nowhere on the GPU: gpu_plan refuses them).
  if (kind == OpKind::Reduction && (is_complex(out) || std::any_of(in.begin(), in.end(), is_complex))) return false;
  if (kind == OpKind::Reduction) return true;  // every reduction fusion accepts: RedOp over any dtype
  return kind == OpKind::Elementwise && !scalar_expression(op, in, out, attrs, placeholders(in.size())).empty();
}

const BackendCaps& cuda_caps() {
  static const BackendCaps caps{"cuda", cuda_can_fuse};
  return caps;
}

}  // namespace xjax::cuda
