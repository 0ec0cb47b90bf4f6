// Building the plan: storages for the values that need them, one step per fusion group (fused
// groups compiled into FusedPrograms), then the buffer plan.
#include "core/compiler/plan.h"

#include <cstring>
#include <map>

#include "core/compiler/constant.h"
#include "core/compiler/executable.h"
#include "core/compiler/passes.h"
#include "core/cpu/fused_loops.h"
#include "core/cpu/layout_copy.h"

namespace xjax {

namespace {

// Work counts are sums of element counts (each at most 2^62): saturate rather than overflow.
void add_work(int64_t& work, int64_t n) {
  if (__builtin_add_overflow(work, n, &work)) work = INT64_MAX;
}

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

// select_n(cmp(a, b), c0, c1) with the comparison's result used nowhere else becomes one step.
void merge_select_compare(FusedProgram& p, const std::vector<std::pair<int, int>>& stored) {
  std::vector<int> uses(p.slot_dtype.size(), 0);
  for (const FusedStep& st : p.steps)
    for (int a : st.args) ++uses[a];
  for (const auto& sv : stored) ++uses[sv.first];
  for (const FusedReduce& r : p.reductions) ++uses[r.slot];
  std::vector<bool> dropped(p.steps.size(), false);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    FusedStep& sel = p.steps[s];
    if (sel.op != OpId::select_n_ || sel.args.size() != 3 || uses[sel.args[0]] != 1) continue;
    for (size_t c = 0; c < s; ++c) {
      const FusedStep& cmp = p.steps[c];
      if (dropped[c] || cmp.out != sel.args[0] || cmp.args.size() != 2) continue;
      DType dt = p.slot_dtype[cmp.args[0]];
      if (p.slot_dtype[sel.args[1]] != dt || p.slot_dtype[sel.args[2]] != dt) break;
      bool scalar_b = false;
      for (const FusedLoad& L : p.loads) scalar_b = scalar_b || (L.slot == cmp.args[1] && L.kind == FusedLoad::Kind::Fill);
      ElementwiseLoop loop = fused_select_loop(cmp.op, dt, scalar_b);
      if (!loop) break;
      sel.loop = loop;
      sel.name = "select_" + cmp.name;
      sel.args = {cmp.args[0], cmp.args[1], sel.args[1], sel.args[2]};
      dropped[c] = true;
      break;
    }
  }
  std::vector<FusedStep> kept;
  for (size_t s = 0; s < p.steps.size(); ++s)
    if (!dropped[s]) kept.push_back(std::move(p.steps[s]));
  p.steps = std::move(kept);
}

// threefry2x32 whose packed result is only split into its two words and xor-ed (random bits:
// shift_right_logical by 32, two conversions to uint32, xor) becomes one step.
void merge_threefry_xor(FusedProgram& p, const std::vector<std::pair<int, int>>& stored) {
  const int num_slots = int(p.slot_dtype.size());
  std::vector<int> uses(num_slots, 0), producer(num_slots, -1);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    for (int a : p.steps[s].args) ++uses[a];
    producer[p.steps[s].out] = int(s);
  }
  for (const auto& sv : stored) uses[sv.first] += 2;  // an output: never merged away
  for (const FusedReduce& r : p.reductions) uses[r.slot] += 2;
  auto fill_of = [&](int slot) -> const FusedLoad* {
    for (const FusedLoad& L : p.loads)
      if (L.slot == slot && L.kind == FusedLoad::Kind::Fill) return &L;
    return nullptr;
  };
  auto is32 = [&](int slot) {  // a filled uint64 constant 32
    const FusedLoad* L = fill_of(slot);
    uint64_t v = 0;
    if (!L || L->input >= 0 || L->value.size() != 8) return false;
    std::memcpy(&v, L->value.data(), 8);
    return v == 32;
  };
  std::vector<bool> dropped(p.steps.size(), false);
  for (size_t x = 0; x < p.steps.size(); ++x) {
    FusedStep& xs = p.steps[x];
    if (xs.op != OpId::bitwise_xor_ || p.slot_dtype[xs.out] != DType::UInt32) continue;
    int hi = producer[xs.args[0]], lo = producer[xs.args[1]];
    if (hi < 0 || lo < 0) continue;
    if (p.steps[hi].op == OpId::convert_element_type_ && p.steps[lo].op == OpId::convert_element_type_ &&
        producer[p.steps[lo].args[0]] >= 0 && p.steps[producer[p.steps[lo].args[0]]].op == OpId::shift_right_logical_)
      std::swap(hi, lo);
    const FusedStep &h = p.steps[hi], &l = p.steps[lo];
    if (h.op != OpId::convert_element_type_ || l.op != OpId::convert_element_type_) continue;
    int sh = producer[h.args[0]];
    if (sh < 0 || p.steps[sh].op != OpId::shift_right_logical_ || !is32(p.steps[sh].args[1])) continue;
    int tf = producer[l.args[0]];
    if (tf < 0 || p.steps[tf].op != OpId::threefry2x32_ || p.steps[sh].args[0] != p.steps[tf].out ||
        p.slot_dtype[p.steps[tf].out] != DType::UInt64)
      continue;
    int packed = p.steps[tf].out;
    if (uses[packed] != 2 || uses[p.steps[sh].out] != 1 || uses[h.out] != 1 || uses[l.out] != 1) continue;
    const auto& ka = p.steps[tf].args;
    bool scalar_keys = fill_of(ka[0]) && fill_of(ka[1]);
    FusedStep merged;
    merged.loop = ew::threefry_xor_loop(scalar_keys);
    merged.args = ka;
    merged.out = xs.out;
    merged.name = "threefry2x32_xor";
    merged.op = OpId::threefry2x32_;
    p.steps[tf] = merged;  // where the cipher ran: its operands are ready there
    dropped[sh] = dropped[hi] = dropped[lo] = dropped[x] = true;
  }
  std::vector<FusedStep> kept;
  for (size_t s = 0; s < p.steps.size(); ++s)
    if (!dropped[s]) kept.push_back(std::move(p.steps[s]));
  p.steps = std::move(kept);
}

struct Builder {
  const Graph& g;
  const Fusion& fusion;
  const CompileOptions& options;
  Plan& plan;

  int new_storage(Storage::Kind kind, size_t nbytes, int index = -1) {
    plan.storages.push_back(Storage{kind, index, nbytes});
    return int(plan.storages.size()) - 1;
  }
  size_t bytes(const TypeInfo& t) { return size_t(numel(t.shape)) * itemsize(t.dtype); }

  void assign_storages();
  void fused_step(const FusionGroup& group, int gi);
  void single_step(int node);
  void make_views();
};

// dynamic_slice steps whose window is contiguous read their operand in place, when only kernels
// read the slice (control ops, callbacks and the caller need buffers of their own).
void Builder::make_views() {
  std::vector<char> needs_buffer(plan.storages.size(), 0);
  for (const Step& s : plan.steps)
    if (s.kind != Step::Kind::Fused && s.kind != Step::Kind::Kernel)
      for (int v : s.inputs) needs_buffer[plan.value_storage[v]] = 1;
  for (Step& s : plan.steps) {
    if (s.kind != Step::Kind::Kernel || g.nodes()[s.nodes[0]].op != OpId::dynamic_slice_) continue;
    const int st = plan.value_storage[s.outputs[0]];
    const Node& n = g.nodes()[s.nodes[0]];
    if (plan.storages[st].kind != Storage::Kind::Pool || needs_buffer[st] || plan.storages[st].nbytes == 0 ||
        !contiguous_window(g.type(n.inputs[0]).shape, n.outputs[0].shape))
      continue;
    s.kind = Step::Kind::View;
    plan.storages[st].kind = Storage::Kind::View;
  }
}

void Builder::assign_storages() {
  const auto& nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    int base = plan.value_base[i];
    if (!fusion.materialized[i] && n.op != OpId::parameter_) continue;
    OpKind kind = op_info(n.op).kind;
    if (n.op == OpId::parameter_) {
      plan.value_storage[base] = new_storage(Storage::Kind::Param, bytes(n.outputs[0]), int(n.attrs.get_int("index")));
    } else if (n.op == OpId::constant_) {
      plan.constants.push_back(constant_array(n));
      plan.constants.back().buffer->set_read_only();  // run() hands it out as a result
      plan.value_storage[base] =
          new_storage(Storage::Kind::Constant, bytes(n.outputs[0]), int(plan.constants.size()) - 1);
    } else if (kind == OpKind::Broadcast && numel(n.outputs[0].shape) == numel(g.type(n.inputs[0]).shape)) {
      plan.value_storage[base] = plan.value_storage[plan.value(n.inputs[0])];  // a view
    } else if (n.op == OpId::empty_) {
      plan.value_storage[base] = new_storage(Storage::Kind::Fresh, bytes(n.outputs[0]));
    } else if (kind == OpKind::Barrier) {  // its results are its operands
      for (size_t r = 0; r < n.outputs.size(); ++r) plan.value_storage[base + r] = plan.value_storage[plan.value(n.inputs[r])];
    } else {
      Storage::Kind k = kind == OpKind::Control ? Storage::Kind::Dynamic : Storage::Kind::Pool;
      for (size_t r = 0; r < n.outputs.size(); ++r) plan.value_storage[base + r] = new_storage(k, bytes(n.outputs[r]));
    }
  }
  for (ValueRef v : g.outputs()) {
    Storage& s = plan.storages[plan.value_storage[plan.value(v)]];
    if (s.kind == Storage::Kind::Pool || s.kind == Storage::Kind::Dynamic || s.kind == Storage::Kind::Fresh)
      s.kind = Storage::Kind::Output;
  }
}

void Builder::fused_step(const FusionGroup& group, int gi) {
  auto prog = std::make_shared<FusedProgram>();
  FusedProgram& p = *prog;
  Step step;
  step.kind = Step::Kind::Fused;
  step.nodes = group.nodes;
  const Node& first = g.nodes()[group.nodes[0]];
  bool has_red = false;
  for (int u : group.nodes) has_red = has_red || op_info(g.nodes()[u].op).kind == OpKind::Reduction;
  for (int u : group.nodes)
    if (op_info(g.nodes()[u].op).kind == OpKind::Reduction) {
      const Node& n = g.nodes()[u];
      p.n = numel(g.type(n.inputs[0]).shape);
      reduction_split(g.type(n.inputs[0]).shape, n.attrs.get_ints("axes"), p.k0, p.r, p.k1);
      break;
    }
  if (!has_red) p.n = numel(first.outputs[0].shape);

  std::map<int, int> slot_of;      // in-group value -> slot
  std::map<int, int> input_of;     // value -> program input
  std::map<std::string, int> loads;  // dedup of identical loads
  auto input_index = [&](int vid) {
    auto it = input_of.find(vid);
    if (it != input_of.end()) return it->second;
    step.inputs.push_back(vid);
    return input_of[vid] = int(step.inputs.size()) - 1;
  };
  auto operand_slot = [&](ValueRef v) {
    Resolved res = resolve(g, v);
    int rid = plan.value(res.root);
    if (fusion.group_of[res.root.node] == gi && res.flat) return slot_of.at(rid);
    const TypeInfo& vt = g.type(v);
    const Node& rn = g.nodes()[res.root.node];
    const Shape& rshape = g.type(res.root).shape;
    FusedLoad L;
    if (is_splat_constant(rn)) {
      L.kind = FusedLoad::Kind::Fill;
      L.value = splat_bytes(rn);
    } else if (generated_in_kernel(g, res) && !fusion.materialized[res.root.node]) {
      L.kind = FusedLoad::Kind::Iota;
      int64_t dim = rn.attrs.get_int("dimension");
      L.iota_len = rshape[dim];
      for (size_t d = size_t(dim) + 1; d < rshape.size(); ++d) L.iota_inner *= rshape[d];
      L.value = std::to_string(L.iota_inner) + "x" + std::to_string(L.iota_len);  // tells loads apart
    } else {
      L.input = input_index(rid);
      L.offset = res.flat ? 0 : res.offset(rshape);
      if ((numel(vt.shape) == 1 && p.n != 1) || numel(rshape) == 1) {
        L.kind = FusedLoad::Kind::Fill;
      } else if (res.flat) {
        L.kind = FusedLoad::Kind::Contiguous;
      } else {
        L.shape = res.space;
        L.strides = res.strides(rshape);
        merge_dims(L.shape, L.strides);
        bool zero = true;
        for (int64_t s : L.strides) zero = zero && s == 0;
        L.kind = zero ? FusedLoad::Kind::Fill : FusedLoad::Kind::Strided;
        if (L.shape.size() == 1 && L.strides[0] == 1 && L.shape[0] == p.n) {  // a contiguous run: read in place
          L.kind = FusedLoad::Kind::Contiguous;
          L.shape.clear();
          L.strides.clear();
        }
      }
    }
    std::string key = std::to_string(int(L.kind)) + "/" + std::to_string(L.input) + "+" + std::to_string(L.offset) +
                      "/" + L.value + "/" + std::to_string(int(vt.dtype)) + shape_str(L.shape) + shape_str(L.strides);
    auto it = loads.find(key);
    if (it != loads.end()) return it->second;
    L.slot = p.add_slot(vt.dtype);
    p.loads.push_back(L);
    return loads[key] = L.slot;
  };

  std::vector<std::pair<int, int>> stored;  // (slot, value)
  for (int u : group.nodes) {
    const Node& n = g.nodes()[u];
    int vid = plan.value_base[u];
    if (op_info(n.op).kind == OpKind::Reduction) {
      FusedReduce red;
      reduction_op(n.op, red.op);
      red.dtype = g.type(n.inputs[0]).dtype;
      red.slot = operand_slot(n.inputs[0]);
      red.output = -1;
      p.reductions.push_back(red);
      continue;
    }
    FusedStep st;
    std::vector<DType> dts;
    for (ValueRef v : n.inputs) {
      st.args.push_back(operand_slot(v));
      dts.push_back(g.type(v).dtype);
    }
    unsigned scalars = 0;
    for (size_t k = 0; k < st.args.size(); ++k)
      for (const FusedLoad& L : p.loads)
        if (L.slot == st.args[k] && L.kind == FusedLoad::Kind::Fill) scalars |= 1u << k;
    st.loop = fused_loop(n.op, dts, n.outputs[0].dtype, scalars);
    if (!st.loop) st.loop = elementwise_loop(n.op, dts, n.outputs[0].dtype, n.attrs);
    st.out = p.add_slot(n.outputs[0].dtype);
    st.name = op_name(n.op);
    st.op = n.op;
    slot_of[vid] = st.out;
    p.steps.push_back(st);
    if (fusion.materialized[u]) stored.push_back({st.out, vid});
  }
  merge_select_compare(p, stored);
  merge_threefry_xor(p, stored);
  for (auto [slot, vid] : stored) {
    p.stores.push_back({slot, int(step.outputs.size())});
    step.outputs.push_back(vid);
  }
  size_t r = 0;
  for (int u : group.nodes)
    if (op_info(g.nodes()[u].op).kind == OpKind::Reduction) {
      p.reductions[r++].output = int(step.outputs.size());
      step.outputs.push_back(plan.value_base[u]);
    }
  for (int vid : step.inputs)  // a group never waits for its own results (fusion guarantees it)
    for (int out : step.outputs)
      if (vid == out) throw std::logic_error("[fuse] a fused group reads its own result");
  p.num_inputs = int(step.inputs.size());
  p.num_outputs = int(step.outputs.size());
  p.finalize();
  step.work = p.n;
  step.program = prog;
  plan.steps.push_back(std::move(step));
}

void Builder::single_step(int node) {
  const Node& n = g.nodes()[node];
  OpKind kind = op_info(n.op).kind;
  if (kind == OpKind::Broadcast && numel(n.outputs[0].shape) == numel(g.type(n.inputs[0]).shape)) return;  // a view
  if (kind == OpKind::Barrier) return;  // nothing to run: its results share its operands' storage
  if (n.op == OpId::empty_) return;     // nothing to run: its storage is allocated per run
  Step step;
  step.nodes = {node};
  for (ValueRef v : n.inputs) step.inputs.push_back(plan.value(v));
  for (size_t r = 0; r < n.outputs.size(); ++r) {
    step.outputs.push_back(plan.value_base[node] + int(r));
    add_work(step.work, numel(n.outputs[r].shape));
  }
  for (ValueRef v : n.inputs) add_work(step.work, numel(g.type(v).shape));
  step.attrs = n.attrs;
  if (kind == OpKind::Control) {
    step.kind = n.op == OpId::cond_ ? Step::Kind::Cond : Step::Kind::While;
    for (size_t k = 0; k < n.subgraphs.size(); ++k) {
      CompileOptions sub = options;
      sub.donate_params = n.op == OpId::while_ && k == 1;  // the loop owns the body's carried buffers
      step.subs.push_back(compile(*n.subgraphs[k], sub));
    }
    step.work = int64_t(1) << 40;  // unknown: never inline
  } else if (kind == OpKind::Effect && !op_info(n.op).cpu) {
    step.kind = Step::Kind::Callback;
  } else {
    step.kind = Step::Kind::Kernel;
    step.kernel = op_info(n.op).cpu;
    if (!step.kernel) throw std::runtime_error(std::string("[") + op_name(n.op) + "] has no CPU kernel yet");
  }
  plan.steps.push_back(std::move(step));
}

}  // namespace

int Plan::num_kernels() const {
  int k = 0;
  for (const Step& s : steps) k += s.kind == Step::Kind::Fused || s.kind == Step::Kind::Kernel;
  return k;
}

Plan build_plan(const Graph& g, const CompileOptions& options) {
  Plan plan;
  Fusion fusion = fuse(g, options.fuse);
  const auto& nodes = g.nodes();
  plan.value_base.resize(nodes.size() + 1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    plan.value_base[i + 1] = plan.value_base[i] + int(nodes[i].outputs.size());
    for (const TypeInfo& t : nodes[i].outputs) plan.value_type.push_back(t);
  }
  plan.value_storage.assign(plan.value_type.size(), -1);
  Builder b{g, fusion, options, plan};
  b.assign_storages();
  for (size_t gi = 0; gi < fusion.groups.size(); ++gi) {
    const FusionGroup& group = fusion.groups[gi];
    if (group.fused) b.fused_step(group, int(gi));
    else b.single_step(group.nodes[0]);
  }
  if (options.fuse) b.make_views();
  for (ValueRef v : g.outputs()) plan.outputs.push_back(plan.value(v));
  for (const Step& s : plan.steps) {
    add_work(plan.work, s.work);
    bool effect = s.kind == Step::Kind::Callback ||
                  (s.kind == Step::Kind::Kernel && op_info(g.nodes()[s.nodes[0]].op).kind == OpKind::Effect);
    plan.has_effects = plan.has_effects || effect;
    for (const auto& sub : s.subs) plan.has_effects = plan.has_effects || sub->plan().has_effects;
  }
  plan_buffers(plan, g, options.reuse_buffers, options.donate_params);
  return plan;
}

}  // namespace xjax
