// The constant folding pass: nodes whose operands are all constants are evaluated at compile time
// by the ops' own CPU kernels (so folded values are exactly what running them would give).
#include "core/compiler/backend.h"
#include "core/compiler/constant.h"
#include "core/compiler/passes.h"
#include "core/float_env.h"

#include <cstring>

namespace xjax {

namespace {

bool foldable_kind(OpKind k) {
  return k == OpKind::Elementwise || k == OpKind::Broadcast || k == OpKind::Layout || k == OpKind::Reduction ||
         k == OpKind::Cumulative;
}

Tensor view(const Array& a) { return Tensor{a.data(), a.shape, a.dtype}; }

// The folded constant's attributes, or false when n is not worth folding.
bool fold(const Node& n, const std::vector<const Node*>& in, Attrs& out) {
  const TypeInfo& t = n.outputs[0];
  const OpInfo& info = op_info(n.op);
  bool all_splat = true;
  for (const Node* c : in) all_splat = all_splat && is_splat_constant(*c);
  if (all_splat && (info.kind == OpKind::Broadcast || n.op == OpId::transpose_ || n.op == OpId::rev_)) {
    out = splat_attrs(splat_bytes(*in[0]), t);  // re-indexing a splat changes nothing
    return true;
  }
  if (all_splat && info.kind == OpKind::Elementwise) {  // one element computes the splat result
    std::vector<Array> args;
    std::vector<Tensor> views;
    for (const Node* c : in) {
      args.push_back(Array::empty({}, c->outputs[0].dtype));
      std::string b = splat_bytes(*c);
      std::memcpy(args.back().data(), b.data(), b.size());
      views.push_back(view(args.back()));
    }
    Array res = Array::empty({}, t.dtype);
    run_cpu_op(n.op, views, {view(res)}, n.attrs);
    out = splat_attrs(std::string(static_cast<const char*>(res.data()), itemsize(t.dtype)), t);
    return true;
  }
  if (numel(t.shape) > kFoldLimit) return false;
  std::vector<Array> args;
  std::vector<Tensor> views;
  for (const Node* c : in) {
    if (numel(c->outputs[0].shape) > kFoldLimit) return false;
    args.push_back(constant_array(*c));
    views.push_back(view(args.back()));
  }
  Array res = Array::empty(t.shape, t.dtype);
  run_cpu_op(n.op, views, {view(res)}, n.attrs);
  out = constant_attrs_from(res.data(), t);
  return true;
}

}  // namespace

Graph fold_constants(const Graph& g) {
  FlushSubnormalsScope flush;  // fold as the kernels compute at run time, whatever thread compiles
  Rewriter r(g);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const OpInfo& info = op_info(n.op);
    std::vector<ValueRef> in = r.inputs(int(i));
    std::vector<const Node*> consts;
    for (ValueRef v : in)
      if (r.dst().nodes()[v.node].op == OpId::constant_) consts.push_back(&r.dst().nodes()[v.node]);
    Attrs folded;
    // (Complex results are not folded: a splat constant holds its value as a real attribute.)
    if (!in.empty() && consts.size() == in.size() && n.outputs.size() == 1 && foldable_kind(info.kind) &&
        !is_complex(n.outputs[0].dtype) && has_cpu_kernel(n.op) && fold(n, consts, folded)) {
      r.replace(int(i), r.dst().add(OpId::constant_, {}, folded));
      continue;
    }
    r.copy(int(i));
  }
  return r.finish();
}

}  // namespace xjax
