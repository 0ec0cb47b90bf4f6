#include "core/compiler/executable.h"

#include "core/stream.h"

namespace xjax {

namespace {
// Below this many elements an op runs on the caller's thread when the stream is idle:
// a queue hand-off costs more than the work.
constexpr int64_t kInlineElements = 1 << 15;

Tensor view(const Array& a) { return Tensor{a.data(), a.shape, a.dtype}; }
}  // namespace

Executable::Executable(Graph graph) : graph_(std::move(graph)) {
  for (const Node& n : graph_.nodes())
    for (const TypeInfo& t : n.outputs) work_elements_ += numel(t.shape);
}

std::vector<TypeInfo> Executable::input_types() const {
  std::vector<TypeInfo> out;
  for (int p : graph_.parameters()) out.push_back(graph_.nodes()[p].outputs[0]);
  return out;
}

std::vector<TypeInfo> Executable::output_types() const {
  std::vector<TypeInfo> out;
  for (ValueRef v : graph_.outputs()) out.push_back(graph_.type(v));
  return out;
}

void Executable::validate(const std::vector<Array>& inputs) const {
  const auto& params = graph_.parameters();
  if (inputs.size() != params.size())
    throw ValueError("[execute] expected " + std::to_string(params.size()) + " arguments, got " +
                     std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TypeInfo& t = graph_.nodes()[params[i]].outputs[0];
    if (inputs[i].shape != t.shape || inputs[i].dtype != t.dtype)
      throw ValueError("[execute] argument " + std::to_string(i) + " should be " + dtype_name(t.dtype) +
                       shape_str(t.shape) + ", got " + dtype_name(inputs[i].dtype) + shape_str(inputs[i].shape));
    if (!inputs[i].buffer) throw ValueError("[execute] argument " + std::to_string(i) + " has no buffer");
  }
}

void Executable::execute(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const {
  const auto& nodes = graph_.nodes();
  std::vector<std::vector<Array>> values(nodes.size());
  const auto& outs = graph_.outputs();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.op == OpId::parameter_) {
      values[i] = {inputs[n.attrs.get_int("index")]};
      continue;
    }
    std::vector<Array>& results = values[i];
    for (size_t r = 0; r < n.outputs.size(); ++r) {
      // Graph outputs are written straight into the arrays handed back to the caller.
      const Array* given = nullptr;
      for (size_t o = 0; o < outs.size(); ++o)
        if (outs[o].node == int(i) && outs[o].index == int(r)) given = &outputs[o];
      results.push_back(given ? *given : Array::empty(n.outputs[r].shape, n.outputs[r].dtype));
    }
    std::vector<Tensor> in, out;
    for (ValueRef v : n.inputs) in.push_back(view(values[v.node][v.index]));
    for (const Array& a : results) out.push_back(view(a));
    const OpInfo& info = op_info(n.op);
    if (!info.cpu) throw std::runtime_error(std::string("[") + info.name + "] has no CPU kernel yet");
    info.cpu(in, out, n.attrs);
  }
}

std::vector<Array> Executable::run(const std::vector<Array>& inputs) {
  validate(inputs);
  const auto& outs = graph_.outputs();
  std::vector<Array> outputs(outs.size());
  bool all_ready = true;
  for (const Array& a : inputs) all_ready = all_ready && (!a.ready || a.ready->is_set());
  Stream& stream = Stream::global();
  bool run_inline = work_elements_ <= kInlineElements && all_ready && stream.idle();

  std::shared_ptr<Event> event = run_inline ? nullptr : std::make_shared<Event>();
  for (size_t o = 0; o < outs.size(); ++o) {
    const Node& n = graph_.nodes()[outs[o].node];
    if (n.op == OpId::parameter_) {
      outputs[o] = inputs[n.attrs.get_int("index")];  // a graph that returns its input
    } else {
      outputs[o] = Array::empty(n.outputs[outs[o].index].shape, n.outputs[outs[o].index].dtype);
      outputs[o].ready = event;
    }
  }
  if (run_inline) {
    for (const Array& a : inputs) a.wait();  // rethrows an input's error
    execute(inputs, outputs);
    return outputs;
  }
  auto self = shared_from_this();
  stream.enqueue([self, inputs, outputs, event] {
    try {
      for (const Array& a : inputs) a.wait();
      self->execute(inputs, outputs);
      event->set();
    } catch (...) {
      event->set(std::current_exception());
    }
  });
  return outputs;
}

std::shared_ptr<Executable> compile(Graph graph) {
  if (graph.outputs().empty() && !graph.nodes().empty())
    throw ValueError("[compile] graph has no outputs");
  return std::make_shared<Executable>(std::move(graph));
}

std::shared_ptr<Executable> compile_op(OpId op, const std::vector<TypeInfo>& inputs, const Attrs& attrs) {
  Graph g;
  std::vector<ValueRef> params;
  for (const TypeInfo& t : inputs) params.push_back(g.parameter(t));
  g.set_outputs(g.add(op, params, attrs));
  return compile(std::move(g));
}

}  // namespace xjax
