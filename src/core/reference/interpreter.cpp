// The reference interpreter's driver: node by node over materialised arrays, with plain loops for
// broadcast_in_dim, reshape and the reductions, and the ops' own kernels for the rest.
#include "core/reference/interpreter.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/compiler/backend.h"
#include "core/compiler/callbacks.h"
#include "core/compiler/constant.h"
#include "core/float_env.h"
#include "core/reference/scalar.h"

namespace xjax {

namespace {

using ref::get_f;
using ref::get_i;
using ref::set_f;
using ref::set_i;

// Row-major multi-index of flat index i in shape.
void unravel(int64_t i, const Shape& shape, std::vector<int64_t>& idx) {
  idx.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}

void broadcast(const Array& x, Array& out, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx, xs = contiguous_strides(x.shape);
  size_t es = itemsize(x.dtype);
  for (int64_t i = 0; i < out.size(); ++i) {
    unravel(i, out.shape, idx);
    int64_t off = 0;
    for (size_t k = 0; k < dims.size(); ++k) off += (x.shape[k] == 1 ? 0 : idx[dims[k]]) * xs[k];
    std::memcpy(static_cast<char*>(out.data()) + i * es, static_cast<const char*>(x.data()) + off * es, es);
  }
}

// The value of an empty reduction.
void identity(OpId op, DType dt, double& f, int64_t& i) {
  f = 0, i = 0;
  if (op == OpId::reduce_prod_) f = 1, i = 1;
  if (op == OpId::reduce_and_) i = dt == DType::Bool ? 1 : -1;
  if (op == OpId::reduce_max_ || op == OpId::reduce_min_) {
    bool max = op == OpId::reduce_max_;
    f = max ? -INFINITY : INFINITY;
    dispatch_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) i = int64_t(max ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max());
    });
  }
}

// out[kept index] = the fold over the reduced indices, in double (floats) or wrapped 64-bit ints.
void reduce(OpId op, const Array& x, Array& out, const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(x.shape.size(), false);
  for (int64_t a : axes) reduced[a] = true;
  const bool fl = is_floating(x.dtype);
  const bool uns64 = x.dtype == DType::UInt64;
  auto less = [&](int64_t a, int64_t b) { return uns64 ? uint64_t(a) < uint64_t(b) : a < b; };
  std::vector<double> accf(size_t(out.size()));
  std::vector<int64_t> acci(size_t(out.size()));
  for (int64_t o = 0; o < out.size(); ++o) identity(op, x.dtype, accf[o], acci[o]);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < x.size(); ++i) {
    unravel(i, x.shape, idx);
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!reduced[d]) o = o * x.shape[d] + idx[d];
    double& a = accf[o];
    int64_t& b = acci[o];
    if (fl) {
      double v = get_f(x, i);
      if (op == OpId::reduce_sum_) a += v;
      else if (op == OpId::reduce_prod_) a *= v;
      else if (op == OpId::reduce_max_) a = a != a ? a : (v > a || v != v ? v : a);
      else if (op == OpId::reduce_min_) a = a != a ? a : (v < a || v != v ? v : a);
      continue;
    }
    int64_t v = get_i(x, i);
    switch (op) {
      case OpId::reduce_sum_: b = int64_t(uint64_t(b) + uint64_t(v)); break;
      case OpId::reduce_prod_: b = int64_t(uint64_t(b) * uint64_t(v)); break;
      case OpId::reduce_max_: b = less(b, v) ? v : b; break;
      case OpId::reduce_min_: b = less(v, b) ? v : b; break;
      case OpId::reduce_and_: b &= v; break;
      case OpId::reduce_or_: b |= v; break;
      case OpId::reduce_xor_: b ^= v; break;
      default: break;
    }
  }
  for (int64_t o = 0; o < out.size(); ++o) {
    if (fl) set_f(out, o, accf[o]);
    else set_i(out, o, acci[o]);
  }
}

Tensor view(const Array& a) { return Tensor{a.data(), a.shape, a.dtype}; }

}  // namespace

std::vector<Array> reference_run(const Graph& g, const std::vector<Array>& inputs) {
  FlushSubnormalsScope flush;  // the kernels' floating-point environment
  const auto& nodes = g.nodes();
  std::vector<std::vector<Array>> vals(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    std::vector<Array> in;
    for (ValueRef v : n.inputs) in.push_back(vals[v.node][v.index]);
    std::vector<Array>& out = vals[i];
    switch (n.op) {
      case OpId::parameter_: out = {inputs[n.attrs.get_int("index")]}; continue;
      case OpId::constant_: out = {constant_array(n)}; continue;
      case OpId::host_callback_: call_callback(n.attrs.get_int("callback_id"), in); continue;
      case OpId::optimization_barrier_: out = in; continue;
      case OpId::empty_: {  // zero-filled, as the executor's
        Array a = Array::empty(n.outputs[0].shape, n.outputs[0].dtype);
        if (a.nbytes()) std::memset(a.data(), 0, a.nbytes());
        out = {a};
        continue;
      }
      case OpId::cond_: {
        int64_t k = get_i(in[0], 0), last = int64_t(n.subgraphs.size()) - 1;
        k = k < 0 ? 0 : (k > last ? last : k);
        out = reference_run(*n.subgraphs[k], std::vector<Array>(in.begin() + 1, in.end()));
        continue;
      }
      case OpId::while_: {
        while (get_i(reference_run(*n.subgraphs[0], in)[0], 0)) in = reference_run(*n.subgraphs[1], in);
        out = in;
        continue;
      }
      default: break;
    }
    for (const TypeInfo& t : n.outputs) out.push_back(Array::empty(t.shape, t.dtype));
    OpKind kind = op_info(n.op).kind;
    if (kind == OpKind::Elementwise && ref::elementwise(n, in, out[0])) continue;
    if (n.op == OpId::broadcast_in_dim_) {
      broadcast(in[0], out[0], n.attrs.get_ints("broadcast_dimensions"));
    } else if (n.op == OpId::reshape_) {
      if (in[0].nbytes()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
    } else if (kind == OpKind::Reduction && n.op != OpId::argmax_ && n.op != OpId::argmin_) {
      reduce(n.op, in[0], out[0], n.attrs.get_ints("axes"));
    } else {
      std::vector<Tensor> ti, to;
      for (const Array& a : in) ti.push_back(view(a));
      for (const Array& a : out) to.push_back(view(a));
      run_cpu_op(n.op, ti, to, n.attrs);
    }
  }
  std::vector<Array> res;
  for (ValueRef v : g.outputs()) res.push_back(vals[v.node][v.index]);
  return res;
}

}  // namespace xjax
