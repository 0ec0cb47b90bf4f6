#include "api_sample.h"

#include "core/compiler/constant.h"
#include "core/export/format.h"

namespace api_sample {

using namespace xjax;

namespace {

FunctionDef elementwise(const std::string& name, const Shape& shape, OpId op) {
  auto g = std::make_shared<Graph>();
  ValueRef x = g->parameter({shape, DType::Int32});
  Attrs two;
  two.set("dtype", std::string("int32"));
  two.set("value", int64_t(op == OpId::mul_ ? 2 : 1));
  ValueRef c = g->add(OpId::constant_, {}, two)[0];
  Attrs b;
  b.set("shape", shape);
  b.set("broadcast_dimensions", std::vector<int64_t>{});
  ValueRef cb = g->add(OpId::broadcast_in_dim_, {c}, b)[0];
  g->set_outputs(g->add(op, {x, cb}, {}));
  FunctionDef f;
  f.name = name;
  f.graph = g;
  f.inputs = f.outputs = {{{shape, DType::Int32}, false}};
  f.in_tree = "{\"tuple\":[{\"tuple\":[\"*\"]},{\"dict\":[]}]}";
  f.out_tree = "\"*\"";
  return f;
}

}  // namespace

std::string module_bytes() {
  ModuleDef m;
  m.producer = "api_sample";
  Array w = Array::empty({2, 3}, DType::Float32);
  for (int i = 0; i < 6; ++i) static_cast<float*>(w.data())[i] = float(i + 1);
  m.weights.push_back(w);
  auto g = std::make_shared<Graph>();
  ValueRef x = g->parameter({{2, 3}, DType::Float32});
  ValueRef wv = g->parameter({{2, 3}, DType::Float32});
  ValueRef xw = g->add(OpId::mul_, {x, wv}, {})[0];
  Attrs one;
  one.set("dtype", std::string("float32"));
  one.set("shape", std::vector<int64_t>{2, 3});
  one.set("value", 1.0);
  ValueRef c = g->add(OpId::constant_, {}, one)[0];
  Attrs axes;
  axes.set("axes", std::vector<int64_t>{0, 1});
  g->set_outputs({g->add(OpId::add_, {xw, c}, {})[0], g->add(OpId::reduce_sum_, {xw}, axes)[0]});
  FunctionDef f;
  f.name = "f";
  f.graph = g;
  f.inputs = {{{{2, 3}, DType::Float32}, false}};
  f.outputs = {{{{2, 3}, DType::Float32}, false}, {{{}, DType::Float32}, false}};
  f.weights = {0};
  f.in_tree = "{\"tuple\":[{\"tuple\":[\"*\"]},{\"dict\":[]}]}";
  f.out_tree = "{\"tuple\":[\"*\",\"*\"]}";
  m.functions.push_back(f);
  m.functions.push_back(elementwise("g", {4}, OpId::mul_));
  m.functions.push_back(elementwise("g", {2, 2}, OpId::add_));
  return write_module(m);
}

}  // namespace api_sample
