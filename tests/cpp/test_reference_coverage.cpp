// The reference interpreter defines every elementwise op itself (through core/ops/scalar_ops.h
// and its companions) for every dtype the op's shape rule accepts, never by falling back to
// the CPU kernel it is meant to check (float8: the ops that take float8 values themselves).
#include <cstring>

#include "check.h"
#include "core/ops/float8_ops.h"
#include "core/ops/ops.h"
#include "core/reference/scalar.h"

using namespace xjax;

int main() {
  int covered = 0;
  for (int o = 0; o < kNumOps; ++o) {
    const OpId op = OpId(o);
    if (op_info(op).kind != OpKind::Elementwise) continue;
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dt = DType(d);
      // The compiler runs the other ops on float8 values in float32 (widen_float8): no graph the
      // interpreter runs holds one.
      if (is_float8(dt) && !accepts_float8(op)) continue;
      std::vector<DType> ins(op_info(op).arity < 0 ? 3 : op_info(op).arity, dt);
      if (op == OpId::select_n_) ins[0] = DType::Int32;
      Attrs attrs;
      if (op == OpId::integer_pow_) attrs.set("y", int64_t(2));
      if (op == OpId::convert_element_type_ || op == OpId::bitcast_convert_type_)
        attrs.set("new_dtype", std::string(dtype_name(dt == DType::Bool ? DType::Bool : DType(kNumDTypes - 1 - d))));
      std::vector<TypeInfo> types;
      for (DType t : ins) types.push_back({{3}, t});
      std::vector<TypeInfo> out;
      try {
        out = infer_types(op, types, attrs);
      } catch (const std::exception&) {
        continue;  // a combination the op does not take
      }
      Node n;
      n.op = op;
      n.attrs = attrs;
      std::vector<Array> in;
      for (DType t : ins) {
        in.push_back(Array::empty({3}, t));
        std::memset(in.back().data(), 0, in.back().nbytes());
      }
      Array res = Array::empty(out[0].shape, out[0].dtype);
      bool ok = ref::elementwise(n, in, res);
      if (!ok) std::printf("no reference for %s on %s\n", op_name(op), dtype_name(dt));
      CHECK(ok);
      covered += ok;
    }
  }
  CHECK(covered > 400);  // the loop reached the catalogue
  return check_report();
}
