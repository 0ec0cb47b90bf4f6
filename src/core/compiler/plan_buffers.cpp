// The buffer plan: liveness of every pooled storage over the steps, then a linear scan that
// hands each new value a free buffer (best fit) or the buffer of an operand read for the last
// time, where the step's lowering reads it element for element before writing (in place). Also
// the plan's text.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/compiler/executable.h"
#include "core/compiler/plan.h"

namespace xjax {

namespace {

// run_plan binds a pooled value to its pool buffer or, written in place, to a parameter's buffer:
// a plan with a pooled value bound to neither would hand a kernel a null pointer. Refuse it here.
void check_every_storage_bound(const Plan& plan) {
  for (size_t st = 0; st < plan.storages.size(); ++st) {
    const Storage& s = plan.storages[st];
    if (s.kind != Storage::Kind::Pool || s.index >= 0) continue;
    int src = plan.reused_in_place[st];
    if (src < 0 || plan.storages[src].kind != Storage::Kind::Param)
      throw std::logic_error("[compile] internal error: storage " + std::to_string(st) + " of the plan has no buffer");
  }
}

}  // namespace

void plan_buffers(Plan& plan, bool reuse, bool donate_params, const CpuPlan* cpu) {
  const size_t num = plan.storages.size();
  const int end = int(plan.steps.size());
  std::vector<int> def(num, -1), last(num, -1);
  for (int s = 0; s < end; ++s) {
    for (int v : plan.steps[s].outputs) {
      int st = plan.value_storage[v];
      if (st >= 0 && def[st] < 0) def[st] = s;
    }
    for (int v : plan.steps[s].inputs) {
      int st = plan.value_storage[v];
      if (st >= 0) last[st] = std::max(last[st], s);
    }
  }
  for (int v : plan.outputs) last[plan.value_storage[v]] = end;  // read by the caller
  // A view's operand lives as long as the view is read; `root` maps a view to the storage it reads.
  std::vector<int> root(num);
  for (size_t st = 0; st < num; ++st) root[st] = int(st);
  for (int s = end; s-- > 0;) {
    const Step& step = plan.steps[s];
    if (step.kind != Step::Kind::View) continue;
    int view = plan.value_storage[step.outputs[0]], src = plan.value_storage[step.inputs[0]];
    last[src] = std::max(last[src], last[view]);
  }
  for (const Step& step : plan.steps)  // in order: a view of a view reads the first one's root
    if (step.kind == Step::Kind::View)
      root[plan.value_storage[step.outputs[0]]] = root[plan.value_storage[step.inputs[0]]];
  std::vector<std::vector<int>> dying(plan.steps.size());
  for (size_t st = 0; st < num; ++st)
    if (plan.storages[st].kind == Storage::Kind::Pool && def[st] >= 0) dying[std::max(last[st], def[st])].push_back(int(st));
  plan.reused_in_place.assign(num, -1);
  std::vector<bool> busy;
  auto is_pool = [&](int st) { return st >= 0 && plan.storages[st].kind == Storage::Kind::Pool; };
  // Storages a step may overwrite: pooled ones, and parameters when the caller donates them.
  auto overwritable = [&](int st) {
    return is_pool(st) || (donate_params && st >= 0 && plan.storages[st].kind == Storage::Kind::Param);
  };
  for (int s = 0; s < end; ++s) {
    const Step& step = plan.steps[s];
    std::vector<int> claimed;
    // Whether output k may take over the buffer of input i (which dies here): the lowering says
    // whether the step's code allows it, the plan whether other operands alias that buffer.
    auto in_place_ok = [&](size_t k, size_t i, int ist) {
      if (!reuse || !cpu || !overwritable(ist) || last[ist] != s || std::count(claimed.begin(), claimed.end(), ist))
        return false;
      if (plan.storages[ist].nbytes != plan.storages[plan.value_storage[step.outputs[k]]].nbytes) return false;
      if (step.kind == Step::Kind::Fused) {
        for (const StepWindow& w : step.windows)  // a window is not read element for element
          if (!w.output && plan.value_storage[step.inputs[w.index]] == ist) return false;
        for (size_t j = 0; j < step.inputs.size(); ++j) {  // every operand held in that storage (or a view of it)
          int jst = plan.value_storage[step.inputs[j]];
          if (jst == ist && !cpu_may_overwrite(*cpu, s, int(k), int(j))) return false;
          if (jst != ist && root[jst] == ist) return false;
        }
        return true;
      }
      if (step.kind != Step::Kind::Kernel || !cpu_may_overwrite(*cpu, s, int(k), int(i))) return false;
      bool elementwise = op_info(step.op).kind == OpKind::Elementwise;
      for (size_t j = 0; j < step.inputs.size(); ++j)  // other operands in that storage: read as elements only
        if (j != i && root[plan.value_storage[step.inputs[j]]] == ist && !(elementwise && plan.value_storage[step.inputs[j]] == ist))
          return false;
      return true;
    };
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      int st = plan.value_storage[step.outputs[k]];
      if (st < 0 || def[st] != s || plan.storages[st].index >= 0 || plan.reused_in_place[st] >= 0) continue;
      Storage::Kind kind = plan.storages[st].kind;
      if (kind != Storage::Kind::Pool && !(donate_params && kind == Storage::Kind::Output)) continue;
      int phys = -1;
      for (size_t i = 0; i < step.inputs.size() && plan.reused_in_place[st] < 0; ++i) {
        int ist = plan.value_storage[step.inputs[i]];
        if (!in_place_ok(k, i, ist)) continue;
        claimed.push_back(ist);
        // A value over one that lives in a donated parameter's buffer lives there too: name the parameter.
        bool in_param = is_pool(ist) && plan.storages[ist].index == -2;
        plan.reused_in_place[st] = in_param ? plan.reused_in_place[ist] : ist;
        if (is_pool(ist) && !in_param) phys = plan.storages[ist].index;
      }
      if (kind != Storage::Kind::Pool) continue;  // an output bound to a donated parameter's buffer
      if (plan.reused_in_place[st] >= 0 && phys < 0) {
        plan.storages[st].index = -2;  // a pooled value living in a donated parameter's buffer
        continue;
      }
      if (phys < 0 && reuse) {  // the smallest free buffer that is big enough
        size_t need = plan.storages[st].nbytes;
        for (size_t b = 0; b < busy.size(); ++b)
          if (!busy[b] && plan.pool[b] >= need && (phys < 0 || plan.pool[b] < plan.pool[phys])) phys = int(b);
      }
      if (phys < 0) {
        plan.pool.push_back(plan.storages[st].nbytes);
        busy.push_back(false);
        phys = int(plan.pool.size()) - 1;
      }
      busy[phys] = true;
      plan.storages[st].index = phys;
    }
    for (int st : dying[s])
      if (plan.storages[st].index >= 0 && !std::count(claimed.begin(), claimed.end(), st))
        busy[plan.storages[st].index] = false;
  }
  // A while step takes over the buffers of fresh or control-made operands it reads for the last time,
  // so that its body may update them in place without a copy first.
  for (int s = 0; s < end; ++s) {
    Step& step = plan.steps[s];
    if (step.kind != Step::Kind::While) continue;
    step.consumed.assign(step.inputs.size(), 0);
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      int st = plan.value_storage[step.inputs[k]];
      Storage::Kind kind = plan.storages[st].kind;
      int reads = 0;
      for (int v : step.inputs) reads += plan.value_storage[v] == st;
      step.consumed[k] = (kind == Storage::Kind::Fresh || kind == Storage::Kind::Dynamic) && last[st] == s && reads == 1;
    }
  }
  for (size_t st = 0; st < num; ++st) {
    int src = plan.reused_in_place[st];
    if (src >= 0 && plan.storages[src].kind == Storage::Kind::Param) plan.donated.push_back(plan.storages[src].index);
  }
  for (const Step& step : plan.steps)  // parameters' buffers that windowed updates write (fusion.h)
    for (int v : step.outputs) {
      const Storage& s = plan.storages[plan.value_storage[v]];
      if (s.kind == Storage::Kind::Param && std::count(plan.donated.begin(), plan.donated.end(), s.index) == 0)
        plan.donated.push_back(s.index);
    }
  check_every_storage_bound(plan);
}

namespace {
std::string value_name(const Plan& p, int v) {
  int node = int(std::upper_bound(p.value_base.begin(), p.value_base.end(), v) - p.value_base.begin()) - 1;
  int idx = v - p.value_base[node];
  return "%" + std::to_string(node) + (idx ? "." + std::to_string(idx) : "");
}
}  // namespace

std::string Plan::text(const Graph& g, const CpuPlan* cpu) const {
  static const char* kinds[] = {"fused", "kernel", "cond", "while", "callback", "view"};
  std::string t;
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& st = steps[s];
    t += "step " + std::to_string(s) + ": " + kinds[int(st.kind)] + " [";
    for (size_t k = 0; k < st.nodes.size(); ++k)
      t += std::string(k ? " " : "") + op_name(g.nodes()[st.nodes[k]].op) + "%" + std::to_string(st.nodes[k]);
    t += "] in(";
    for (size_t k = 0; k < st.inputs.size(); ++k) t += (k ? " " : "") + value_name(*this, st.inputs[k]);
    t += ") out(";
    for (size_t k = 0; k < st.outputs.size(); ++k) t += (k ? " " : "") + value_name(*this, st.outputs[k]);
    t += ")";
    std::string takes;
    for (size_t k = 0; k < st.consumed.size(); ++k)
      if (st.consumed[k]) takes += (takes.empty() ? "" : " ") + value_name(*this, st.inputs[k]);
    if (!takes.empty()) t += " takes(" + takes + ")";
    if (st.counted.found())
      t += " counted(carry " + std::to_string(st.counted.counter) + " < " + std::to_string(st.counted.bound) + ")";
    for (const StepWindow& w : st.windows) {  // "window(out1 at %3)": where the step reads or writes in place
      t += std::string(" window(") + (w.output ? "out" : "in") + std::to_string(w.index) + " at";
      for (int k : w.starts) t += " " + value_name(*this, st.inputs[k]);
      t += ")";
    }
    if (cpu && st.kind == Step::Kind::Fused) t += " {" + describe_cpu_step(*cpu, int(s)) + "}";
    t += "\n";
    for (size_t k = 0; k < st.subs.size(); ++k) {  // the subgraphs' plans, indented
      std::string sub = st.subs[k]->plan_text();
      t += "  subplan " + std::to_string(k) + ":\n";
      for (size_t a = 0, b; a < sub.size(); a = b + 1) {
        b = sub.find('\n', a);
        if (b == std::string::npos) b = sub.size();
        t += "    " + sub.substr(a, b - a) + "\n";
      }
    }
  }
  static const char* skinds[] = {"param", "constant", "output", "buf", "dynamic", "fresh", "view"};
  for (size_t v = 0; v < value_storage.size(); ++v) {
    int st = value_storage[v];
    if (st < 0) continue;
    const Storage& s = storages[st];
    t += "value " + value_name(*this, int(v)) + ": " + skinds[int(s.kind)];
    if (s.kind == Storage::Kind::Pool && s.index >= 0) t += std::to_string(s.index);
    if (reused_in_place[st] >= 0) t += " in-place";
    t += "\n";
  }
  t += "buffers: " + std::to_string(pool.size()) + "\n";
  return t;
}

}  // namespace xjax
