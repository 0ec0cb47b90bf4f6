// Small builders of core graphs for the C++ tests: one op's first result, splat constants,
// broadcasts.
#pragma once
#include <string>
#include <vector>

#include "core/graph.h"

namespace xjax::test {

inline ValueRef op(Graph& g, OpId id, std::vector<ValueRef> in, const Attrs& attrs = Attrs()) {
  return g.add(id, in, attrs)[0];
}

inline ValueRef scalar(Graph& g, double v, DType dt = DType::Float32) {
  Attrs a;
  a.set("dtype", std::string(dtype_name(dt)));
  a.set("value", v);
  return g.add(OpId::constant_, {}, a)[0];
}

inline ValueRef bcast(Graph& g, ValueRef x, const Shape& shape, std::vector<int64_t> dims) {
  Attrs a;
  a.set("shape", shape);
  a.set("broadcast_dimensions", dims);
  return op(g, OpId::broadcast_in_dim_, {x}, a);
}

}  // namespace xjax::test
