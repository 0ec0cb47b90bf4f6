// The counted-loop analysis of while conditions (see passes.h).
#include <cstring>

#include "core/compiler/constant.h"
#include "core/compiler/passes.h"

namespace xjax {

CountedLoop recognize_counted_loop(const Graph& cond) {
  if (cond.outputs().size() != 1) return {};
  const auto& nodes = cond.nodes();
  const Node& lt = nodes[cond.outputs()[0].node];
  if (lt.op != OpId::lt_) return {};
  const Node& counter = nodes[lt.inputs[0].node];
  const Node& bound = nodes[lt.inputs[1].node];
  const TypeInfo int32_scalar{{}, DType::Int32};
  if (counter.op != OpId::parameter_ || !(counter.outputs[0] == int32_scalar)) return {};
  if (!is_splat_constant(bound) || !(bound.outputs[0] == int32_scalar)) return {};
  CountedLoop loop;
  loop.counter = int(counter.attrs.get_int("index"));
  const std::string element = splat_bytes(bound);
  std::memcpy(&loop.bound, element.data(), sizeof(int32_t));
  return loop;
}

}  // namespace xjax
