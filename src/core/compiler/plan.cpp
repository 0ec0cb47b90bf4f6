// Building the plan: storages for the values that need them, one step per fusion group (fused
// groups described by kernel specs, other groups by their op), for a backend to lower.
#include "core/compiler/plan.h"

#include <algorithm>

#include "core/compiler/constant.h"
#include "core/compiler/executable.h"
#include "core/compiler/passes.h"
#include "core/ops/dynamic_window.h"

namespace xjax {

namespace {

// Work counts are sums of element counts (each at most 2^62): saturate rather than overflow.
void add_work(int64_t& work, int64_t n) {
  if (__builtin_add_overflow(work, n, &work)) work = INT64_MAX;
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
  void fused_step(int gi);
  void single_step(int node);
  void make_views();
  void fold_views();
};

// The index into step.inputs of value v, added when missing.
int input_slot(Step& step, int v) {
  for (size_t k = 0; k < step.inputs.size(); ++k)
    if (step.inputs[k] == v) return int(k);
  step.inputs.push_back(v);
  return int(step.inputs.size()) - 1;
}

// dynamic_slice steps whose window is contiguous read their operand in place, when only kernels
// read the slice (control ops, callbacks and the caller need buffers of their own).
void Builder::make_views() {
  std::vector<char> needs_buffer(plan.storages.size(), 0);
  for (const Step& s : plan.steps)
    if (s.kind != Step::Kind::Fused && s.kind != Step::Kind::Kernel)
      for (int v : s.inputs) needs_buffer[plan.value_storage[v]] = 1;
  for (Step& s : plan.steps) {
    if (s.kind != Step::Kind::Kernel || s.op != OpId::dynamic_slice_) continue;
    const int st = plan.value_storage[s.outputs[0]];
    const Node& n = g.nodes()[s.nodes[0]];
    if (plan.storages[st].kind != Storage::Kind::Pool || needs_buffer[st] || plan.storages[st].nbytes == 0 ||
        !contiguous_window(g.type(n.inputs[0]).shape, n.outputs[0].shape))
      continue;
    s.kind = Step::Kind::View;
    plan.storages[st].kind = Storage::Kind::View;
  }
}

// Views that only fused steps read (on the CPU) are read by them in place: each reads
// the view's operand through a window placed by its start indices, and the view's step goes.
void Builder::fold_views() {
  std::vector<char> fused_only(plan.storages.size(), 1);
  for (const Step& s : plan.steps)
    if (s.kind != Step::Kind::Fused)
      for (int v : s.inputs) fused_only[plan.value_storage[v]] = 0;
  for (int v : plan.outputs) fused_only[plan.value_storage[v]] = 0;
  std::vector<int> view_of(plan.storages.size(), -1);  // storage -> the step of the view it holds
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    if (step.kind == Step::Kind::View && fused_only[plan.value_storage[step.outputs[0]]])
      view_of[plan.value_storage[step.outputs[0]]] = int(s);
  }
  for (Step& s : plan.steps) {
    if (s.kind != Step::Kind::Fused) continue;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      int vs = view_of[plan.value_storage[s.inputs[k]]];
      if (vs < 0) continue;
      const Step& view = plan.steps[vs];
      const TypeInfo& whole = plan.value_type[view.inputs[0]];
      StepWindow w{false, int(k), whole.shape, plan.value_type[view.outputs[0]].shape, itemsize(whole.dtype), {}};
      s.inputs[k] = view.inputs[0];
      for (size_t d = 1; d < view.inputs.size(); ++d) w.starts.push_back(input_slot(s, view.inputs[d]));
      s.windows.push_back(std::move(w));
    }
  }
  std::vector<Step> kept;
  for (Step& step : plan.steps)
    if (step.kind != Step::Kind::View || view_of[plan.value_storage[step.outputs[0]]] < 0) kept.push_back(std::move(step));
  plan.steps = std::move(kept);
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
    } else if (n.op == OpId::dynamic_update_slice_ && fusion.groups[fusion.group_of[i]].fused) {
      plan.value_storage[base] = plan.value_storage[plan.value(n.inputs[0])];  // written in place (fusion.h)
    } else if (n.op == OpId::empty_) {
      plan.value_storage[base] = new_storage(Storage::Kind::Fresh, bytes(n.outputs[0]));
    } else if (kind == OpKind::Barrier) {  // its results are its operands
      for (size_t r = 0; r < n.outputs.size(); ++r) plan.value_storage[base + r] = plan.value_storage[plan.value(n.inputs[r])];
    } else {
      Storage::Kind k = kind == OpKind::Control ? Storage::Kind::Dynamic : Storage::Kind::Pool;
      for (size_t r = 0; r < n.outputs.size(); ++r) plan.value_storage[base + r] = new_storage(k, bytes(n.outputs[r]));
    }
  }
  for (ValueRef v : g.outputs()) {  // (an `empty` result stays Fresh: its zeros are copied out)
    Storage& s = plan.storages[plan.value_storage[plan.value(v)]];
    if (s.kind == Storage::Kind::Pool || s.kind == Storage::Kind::Dynamic) s.kind = Storage::Kind::Output;
  }
}

void Builder::fused_step(int gi) {
  auto spec = std::make_shared<FusedKernelSpec>(build_kernel_spec(g, fusion, gi, plan.value_base));
  Step step;
  step.kind = Step::Kind::Fused;
  step.nodes = fusion.groups[gi].nodes;
  step.inputs = spec->inputs;
  step.outputs = spec->outputs;
  step.work = spec->n;
  for (int u : step.nodes) {  // windowed updates: stores into a window of the updated buffer
    const Node& n = g.nodes()[u];
    if (n.op != OpId::dynamic_update_slice_) continue;
    const TypeInfo& whole = n.outputs[0];
    size_t k = std::find(spec->outputs.begin(), spec->outputs.end(), plan.value_base[u]) - spec->outputs.begin();
    StepWindow w{true, int(k), whole.shape, g.type(n.inputs[1]).shape, itemsize(whole.dtype), {}};
    for (size_t d = 2; d < n.inputs.size(); ++d) w.starts.push_back(input_slot(step, plan.value(n.inputs[d])));
    step.windows.push_back(std::move(w));
  }
  step.spec = std::move(spec);
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
  step.op = n.op;
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
    if (n.op == OpId::while_) step.counted = recognize_counted_loop(step.subs[0]->graph());
    step.work = int64_t(1) << 40;  // unknown: never inline
  } else if (n.op == OpId::host_callback_) {  // Python's, through the callback registry (callbacks.h)
    step.kind = Step::Kind::Callback;
  } else {
    step.kind = Step::Kind::Kernel;  // the backend's kernel of step.op (its lowering checks there is one)
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
  // Windows of fused steps (StepWindow) are placed by the CPU's executor.
  const bool windows = options.fuse && runs_on_cpu(options);
  Fusion fusion = fuse(g, options.fuse, options.caps ? *options.caps : cpu_caps(), windows && options.donate_params);
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
    if (group.fused) b.fused_step(int(gi));
    else b.single_step(group.nodes[0]);
  }
  for (ValueRef v : g.outputs()) plan.outputs.push_back(plan.value(v));
  if (options.fuse) b.make_views();
  if (windows) b.fold_views();
  for (Step& s : plan.steps)  // the stores and loads of many leaves at one index: one offset
    for (size_t k = 0; k < s.windows.size(); ++k)
      for (size_t j = 0; j < k && s.windows[k].same_as < 0; ++j) {
        const StepWindow &a = s.windows[j], &w = s.windows[k];
        if (a.same_as < 0 && a.whole == w.whole && a.part == w.part && a.elem == w.elem && a.starts == w.starts)
          s.windows[k].same_as = int(j);
      }
  for (const Step& s : plan.steps) {
    add_work(plan.work, s.work);
    bool effect =
        s.kind == Step::Kind::Callback || (s.kind == Step::Kind::Kernel && op_info(s.op).kind == OpKind::Effect);
    plan.has_effects = plan.has_effects || effect;
    for (const auto& sub : s.subs) plan.has_effects = plan.has_effects || sub->plan().has_effects;
  }
  return plan;
}

bool runs_on_cpu(const CompileOptions& options) { return !options.caps || options.caps == &cpu_caps(); }

}  // namespace xjax
