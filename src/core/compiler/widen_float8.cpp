// widen_float8: runs every op that does not take float8 values itself (ops/float8_ops.h) in
// float32, as XLA's float-normalization pass does: float8 operands are converted to float32, the
// op is built again over them (a dtype attribute naming a float8 type names float32 instead:
// iota's dtype, dot_general's preferred type), and its float8 results are converted back, each
// rounded once to nearest even. float32 holds every float8 value exactly, and the ops compute as
// JAX's CPU backend does for these types (in float32, then one rounding).
#include "core/compiler/passes.h"
#include "core/ops/float8_ops.h"
#include "core/size.h"

namespace xjax {

namespace {

bool touches_float8(const Graph& g, const Node& n) {
  for (ValueRef v : n.inputs)
    if (is_float8(g.type(v).dtype)) return true;
  for (const TypeInfo& t : n.outputs)
    if (is_float8(t.dtype)) return true;
  return false;
}

Attrs convert_to(DType dt) {
  Attrs a;
  a.set("new_dtype", std::string(dtype_name(dt)));
  return a;
}

// The node's attributes with every float8 dtype name replaced by float32's.
Attrs widened_attrs(const Attrs& attrs) {
  Attrs out = attrs;
  for (const auto& [name, v] : attrs.items())
    if (const auto* s = std::get_if<std::string>(&v)) {
      try {
        if (is_float8(dtype_from_name(*s))) out.set(name, std::string(dtype_name(DType::Float32)));
      } catch (const std::invalid_argument&) {  // not a dtype name
      }
    }
  return out;
}

// e4m3fn has no infinities: the identity of an empty max (min) is its lowest (highest) value, as
// XLA's, where float32's -inf (+inf) would convert to NaN.
bool empty_e4m3fn_extremum(const Graph& g, const Node& n) {
  return (n.op == OpId::reduce_max_ || n.op == OpId::reduce_min_) && n.outputs[0].dtype == DType::Float8E4M3FN &&
         numel(g.type(n.inputs[0]).shape) == 0;
}

Attrs splat(const TypeInfo& t, double value) {
  Attrs a;
  a.set("dtype", std::string(dtype_name(t.dtype)));
  a.set("shape", t.shape);
  a.set("value", value);
  return a;
}

}  // namespace

Graph widen_float8(const Graph& g) {
  const auto& nodes = g.nodes();
  Rewriter r(g);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (accepts_float8(n.op) || !touches_float8(g, n)) {
      r.copy(int(i));
      continue;
    }
    Graph& dst = r.dst();
    if (empty_e4m3fn_extremum(g, n)) {
      r.replace(int(i), dst.add(OpId::constant_, {}, splat(n.outputs[0], n.op == OpId::reduce_max_ ? -448.0 : 448.0)));
      continue;
    }
    std::vector<ValueRef> in = r.inputs(int(i));
    for (ValueRef v : in)
      if (is_float8(dst.type(v).dtype)) check_float8_widens(n.op, dst.type(v).dtype);
    for (ValueRef& v : in)
      if (is_float8(dst.type(v).dtype)) v = dst.add(OpId::convert_element_type_, {v}, convert_to(DType::Float32))[0];
    std::vector<ValueRef> out = dst.add(n.op, in, widened_attrs(n.attrs));
    for (size_t k = 0; k < out.size(); ++k)
      if (is_float8(n.outputs[k].dtype))
        out[k] = dst.add(OpId::convert_element_type_, {out[k]}, convert_to(n.outputs[k].dtype))[0];
    r.replace(int(i), out);
  }
  return r.finish();
}

}  // namespace xjax
