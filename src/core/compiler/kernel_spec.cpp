// Building a fused group's kernel spec from the graph: each operand becomes a slot, read through
// a load (an index map over a kernel input, a fill, or an iota) unless a step of the group
// computes it; each node becomes a step or a reduction.
#include "core/compiler/kernel_spec.h"

#include <cstdio>
#include <map>
#include <stdexcept>

#include "core/compiler/constant.h"
#include "core/compiler/fusion.h"

namespace xjax {

namespace {

// Merges adjacent dims of a strided load that walk memory as one (and drops size-1 dims).
void merge_dims(Shape& shape, std::vector<int64_t>& strides) {
  Shape s;
  std::vector<int64_t> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.empty() && st.back() == strides[d] * shape[d]) {
      s.back() *= shape[d];
      st.back() = strides[d];
      continue;
    }
    s.push_back(shape[d]);
    st.push_back(strides[d]);
  }
  if (s.empty()) s = {1}, st = {0};
  shape = s;
  strides = st;
}

// The load of a value read through views of input `input` (res: how it is read), for an index
// space of n elements.
KernelLoad strided_load(const Resolved& res, const Shape& root_shape, int64_t value_numel, int64_t n, int input) {
  KernelLoad L;
  L.input = input;
  L.offset = res.flat ? 0 : res.offset(root_shape);
  if ((value_numel == 1 && n != 1) || numel(root_shape) == 1) {
    L.kind = KernelLoad::Kind::Fill;
    return L;
  }
  if (res.flat) return L;  // Contiguous
  L.shape = res.space;
  L.strides = res.strides(root_shape);
  merge_dims(L.shape, L.strides);
  bool zero = true;
  for (int64_t s : L.strides) zero = zero && s == 0;
  L.kind = zero ? KernelLoad::Kind::Fill : KernelLoad::Kind::Strided;
  if (L.shape.size() == 1 && L.strides[0] == 1 && L.shape[0] == n) {  // a contiguous run: read in place
    L.kind = KernelLoad::Kind::Contiguous;
    L.shape.clear();
    L.strides.clear();
  }
  return L;
}

// The load of an iota's values, generated from the flat index.
KernelLoad iota_load(const Node& iota, const Shape& shape) {
  KernelLoad L;
  L.kind = KernelLoad::Kind::Iota;
  int64_t dim = iota.attrs.get_int("dimension");
  L.iota_len = shape[dim];
  for (size_t d = size_t(dim) + 1; d < shape.size(); ++d) L.iota_inner *= shape[d];
  return L;
}

// Tells loads apart: equal keys read equal values.
std::string load_key(const KernelLoad& L, DType dt) {
  std::string key = std::to_string(int(L.kind)) + "/" + std::to_string(L.input) + "+" + std::to_string(L.offset) +
                    "/" + L.value + "/" + std::to_string(int(dt));
  if (L.kind == KernelLoad::Kind::Strided) key += shape_str(L.shape) + shape_str(L.strides);
  if (L.kind == KernelLoad::Kind::Iota) key += std::to_string(L.iota_inner) + "x" + std::to_string(L.iota_len);
  return key;
}

struct SpecBuilder {
  const Graph& g;
  const Fusion& fusion;
  int group;
  const std::vector<int>& value_base;
  FusedKernelSpec spec;
  std::map<int, int> slot_of;               // in-group value -> slot
  std::map<int, int> input_of;              // value -> kernel input
  std::map<std::string, int> load_slot;     // load key -> slot

  int value_id(ValueRef v) const { return value_base[v.node] + v.index; }
  int input_index(ValueRef v) {
    int vid = value_id(v);
    auto it = input_of.find(vid);
    if (it != input_of.end()) return it->second;
    spec.inputs.push_back(vid);
    spec.input_types.push_back(g.type(v));
    return input_of[vid] = int(spec.inputs.size()) - 1;
  }
  int operand_slot(ValueRef v);
  void index_space();
  void add_node(int u);
};

int SpecBuilder::operand_slot(ValueRef v) {
  Resolved res = resolve(g, v);
  if (fusion.group_of[res.root.node] == group && res.flat) return slot_of.at(value_id(res.root));
  const TypeInfo& vt = g.type(v);
  const Node& rn = g.nodes()[res.root.node];
  const Shape& rshape = g.type(res.root).shape;
  KernelLoad L;
  if (is_splat_constant(rn)) {
    L.kind = KernelLoad::Kind::Fill;
    L.value = splat_bytes(rn);
  } else if (generated_in_kernel(g, res) && !fusion.materialized[res.root.node]) {
    L = iota_load(rn, rshape);
  } else {
    L = strided_load(res, rshape, numel(vt.shape), spec.n, input_index(res.root));
  }
  std::string key = load_key(L, vt.dtype);
  auto it = load_slot.find(key);
  if (it != load_slot.end()) return it->second;
  L.slot = spec.add_slot(vt.dtype);
  spec.loads.push_back(L);
  return load_slot[key] = L.slot;
}

// n, and with reductions their (k0, r, k1) split (fusion gives every reduction of a group the same).
void SpecBuilder::index_space() {
  const FusionGroup& gr = fusion.groups[group];
  for (int u : gr.nodes) {
    const Node& n = g.nodes()[u];
    if (op_info(n.op).kind != OpKind::Reduction) continue;
    const Shape& in = g.type(n.inputs[0]).shape;
    spec.n = numel(in);
    reduction_split(in, n.attrs.get_ints("axes"), spec.k0, spec.r, spec.k1);
    return;
  }
  const Node& first = g.nodes()[gr.nodes[0]];  // (a windowed update's space: its update's)
  spec.n = numel(first.op == OpId::dynamic_update_slice_ ? g.type(first.inputs[1]).shape : first.outputs[0].shape);
}

void SpecBuilder::add_node(int u) {
  const Node& n = g.nodes()[u];
  if (op_info(n.op).kind == OpKind::Reduction) {
    KernelReduction red;
    if (!reduction_op(n.op, red.op)) throw std::logic_error(std::string("[fuse] ") + op_name(n.op) + " is not fusible");
    red.dtype = g.type(n.inputs[0]).dtype;
    red.slot = operand_slot(n.inputs[0]);
    red.output = -1;  // numbered after the stores
    spec.reductions.push_back(red);
    return;
  }
  if (n.op == OpId::dynamic_update_slice_) {  // a windowed update: its update stored (fusion.h)
    slot_of[value_base[u]] = operand_slot(n.inputs[1]);
    return;
  }
  KernelStep st;
  st.op = n.op;
  st.attrs = n.attrs;
  for (ValueRef v : n.inputs) {
    st.args.push_back(operand_slot(v));
    st.arg_dtypes.push_back(g.type(v).dtype);
  }
  st.out_dtype = n.outputs[0].dtype;
  st.out = spec.add_slot(st.out_dtype);
  slot_of[value_base[u]] = st.out;
  spec.steps.push_back(std::move(st));
}

std::string hex_bytes(const std::string& b) {
  std::string s = "0x";
  char buf[3];
  for (size_t i = b.size(); i-- > 0;) {  // little-endian: most significant byte first
    std::snprintf(buf, sizeof buf, "%02x", unsigned(static_cast<unsigned char>(b[i])));
    s += buf;
  }
  return s;
}

std::string attr_str(const AttrValue& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    return buf;
  }
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  return shape_str(std::get<std::vector<int64_t>>(v));
}

}  // namespace

FusedKernelSpec build_kernel_spec(const Graph& g, const Fusion& fusion, int group, const std::vector<int>& value_base) {
  SpecBuilder b{g, fusion, group, value_base, {}, {}, {}, {}};
  b.index_space();
  const FusionGroup& gr = fusion.groups[group];
  b.spec.steps.reserve(gr.nodes.size());
  for (int u : gr.nodes) b.add_node(u);
  FusedKernelSpec& spec = b.spec;
  for (int u : gr.nodes) {  // stores: the group's materialised element-for-element values
    const Node& n = g.nodes()[u];
    if (op_info(n.op).kind == OpKind::Reduction || !fusion.materialized[u]) continue;
    spec.stores.push_back({b.slot_of.at(value_base[u]), int(spec.outputs.size())});
    spec.outputs.push_back(value_base[u]);
    spec.output_types.push_back(n.outputs[0]);
  }
  size_t r = 0;
  for (int u : gr.nodes)
    if (op_info(g.nodes()[u].op).kind == OpKind::Reduction) {
      spec.reductions[r++].output = int(spec.outputs.size());
      spec.outputs.push_back(value_base[u]);
      spec.output_types.push_back(g.nodes()[u].outputs[0]);
    }
  for (int vid : spec.inputs)  // a group never waits for its own results (fusion guarantees it)
    for (int out : spec.outputs)
      if (vid == out) throw std::logic_error("[fuse] a fused group reads its own result");
  return std::move(b.spec);
}

std::string FusedKernelSpec::describe() const {
  auto slot = [](int s) { return "$" + std::to_string(s); };
  std::vector<std::string> def(slot_dtype.size());  // per slot, in slot order: reads like SSA
  for (const KernelLoad& L : loads) {
    std::string& d = def[L.slot];
    switch (L.kind) {
      case KernelLoad::Kind::Contiguous: d = "load in" + std::to_string(L.input); break;
      case KernelLoad::Kind::Fill:
        d = L.input >= 0 ? "fill in" + std::to_string(L.input) : "fill " + hex_bytes(L.value);
        break;
      case KernelLoad::Kind::Strided:
        d = "gather in" + std::to_string(L.input) + shape_str(L.shape) + ":" + shape_str(L.strides);
        break;
      case KernelLoad::Kind::Iota: d = "iota " + std::to_string(L.iota_inner) + "x" + std::to_string(L.iota_len); break;
    }
    if (L.offset) d += "+" + std::to_string(L.offset);
  }
  for (const KernelStep& st : steps) {
    std::string& d = def[st.out];
    d = op_name(st.op);
    if (!st.attrs.items().empty()) {
      d += "[";
      bool first = true;
      for (const auto& [name, v] : st.attrs.items()) {
        d += (first ? "" : ",") + name + "=" + attr_str(v);
        first = false;
      }
      d += "]";
    }
    d += "(";
    for (size_t k = 0; k < st.args.size(); ++k) d += (k ? "," : "") + slot(st.args[k]);
    d += ")";
  }
  std::string d = "n=" + std::to_string(n);
  if (!reductions.empty()) d += " over (" + std::to_string(k0) + "," + std::to_string(r) + "," + std::to_string(k1) + ")";
  for (size_t s = 0; s < def.size(); ++s) d += "; " + slot(int(s)) + ":" + dtype_name(slot_dtype[s]) + "=" + def[s];
  for (const KernelStore& s : stores) d += "; out" + std::to_string(s.output) + "=" + slot(s.slot);
  for (const KernelReduction& red : reductions)
    d += "; out" + std::to_string(red.output) + "=" + red_op_name(red.op) + "(" + slot(red.slot) + ")";
  return d;
}

}  // namespace xjax
