#include "core/ops/ops.h"

#include <mutex>
#include <unordered_map>

#include "core/ops/complex_ops.h"
#include "core/size.h"

namespace xjax {

namespace {
OpInfo g_ops[kNumOps] = {
#define XJAX_OP_INFO(name, kind, arity) {#name, OpKind::kind, arity},
    XJAX_OP_LIST(XJAX_OP_INFO)
#undef XJAX_OP_INFO
};

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpTable t;
    register_elementwise_infer(t);
    register_reduction_infer(t);
    register_layout_infer(t);
    register_index_infer(t);
    register_contraction_infer(t);
    register_convolution_infer(t);
    register_window_infer(t);
    register_sort_infer(t);
    register_linalg_infer(t);
    register_linalg_forms_infer(t);
    register_fft_infer(t);
    register_compiler_infer(t);
    register_collective_ops(t);
  });
}
}  // namespace

void OpTable::set_infer(OpId op, InferFn f) { g_ops[int(op)].infer = f; }

const OpInfo& op_info(OpId op) {
  ensure_registered();
  return g_ops[int(op)];
}

OpId op_from_name(const std::string& name) {
  static const std::unordered_map<std::string, OpId> by_name = [] {
    std::unordered_map<std::string, OpId> m;
    for (int i = 0; i < kNumOps; ++i) m[g_ops[i].name] = OpId(i);
    return m;
  }();
  auto it = by_name.find(name);
  if (it == by_name.end()) throw ValueError("unknown op '" + name + "'");
  return it->second;
}

std::string types_str(const std::vector<TypeInfo>& in) {
  std::string s;
  for (size_t i = 0; i < in.size(); ++i) {
    if (i) s += ", ";
    s += std::string(dtype_name(in[i].dtype)) + shape_str(in[i].shape);
  }
  return s;
}

void fail_type(OpId op, const std::string& msg) { throw TypeError(std::string("[") + op_name(op) + "] " + msg); }
void fail_value(OpId op, const std::string& msg) { throw ValueError(std::string("[") + op_name(op) + "] " + msg); }

std::vector<TypeInfo> infer_types(OpId op, const std::vector<TypeInfo>& in, const Attrs& attrs) {
  const OpInfo& info = op_info(op);
  if (info.arity >= 0 && int(in.size()) != info.arity)
    fail_value(op, "expects " + std::to_string(info.arity) + " operands, got " + std::to_string(in.size()));
  for (const auto& t : in) checked_size(t.shape, t.dtype, info.name);  // the rules trust their operands' sizes
  if (!info.infer) throw std::logic_error(std::string("[") + info.name + "] has no shape rule");
  std::vector<TypeInfo> out = info.infer(in, attrs);
  for (const auto& t : out) checked_size(t.shape, t.dtype, info.name);  // so need no rule of its own
  check_complex_support(op, in, out);
  return out;
}

}  // namespace xjax
