// The buffer plan: liveness of every pooled storage over the steps, then a linear scan that
// hands each new value a free buffer (best fit) or, for a fused kernel, the buffer of an operand
// read for the last time element for element (in place). Also the plan's text.
#include <algorithm>

#include "core/compiler/plan.h"

namespace xjax {

void plan_buffers(Plan& plan, bool reuse) {
  const size_t num = plan.storages.size();
  std::vector<int> def(num, -1), last(num, -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int v : plan.steps[s].outputs) {
      int st = plan.value_storage[v];
      if (st >= 0 && def[st] < 0) def[st] = int(s);
    }
    for (int v : plan.steps[s].inputs) {
      int st = plan.value_storage[v];
      if (st >= 0) last[st] = std::max(last[st], int(s));
    }
  }
  std::vector<std::vector<int>> dying(plan.steps.size());
  for (size_t st = 0; st < num; ++st)
    if (plan.storages[st].kind == Storage::Kind::Pool && def[st] >= 0) dying[std::max(last[st], def[st])].push_back(int(st));
  plan.reused_in_place.assign(num, -1);
  std::vector<bool> busy;
  auto is_pool = [&](int st) { return st >= 0 && plan.storages[st].kind == Storage::Kind::Pool; };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    std::vector<int> claimed;
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      int st = plan.value_storage[step.outputs[k]];
      if (!is_pool(st) || def[st] != int(s) || plan.storages[st].index >= 0) continue;
      size_t need = plan.storages[st].nbytes;
      int phys = -1;
      if (reuse && step.kind == Step::Kind::Fused) {
        for (size_t i = 0; i < step.inputs.size() && phys < 0; ++i) {
          int ist = plan.value_storage[step.inputs[i]];
          if (!is_pool(ist) || last[ist] != int(s) || plan.storages[ist].nbytes != need ||
              std::count(claimed.begin(), claimed.end(), ist))
            continue;
          bool safe = true;  // every operand of the kernel held in that storage
          for (size_t j = 0; j < step.inputs.size(); ++j)
            if (plan.value_storage[step.inputs[j]] == ist) safe = safe && step.program->may_overwrite(int(k), int(j));
          if (!safe) continue;
          phys = plan.storages[ist].index;
          claimed.push_back(ist);
          plan.reused_in_place[st] = ist;
        }
      }
      if (phys < 0 && reuse) {  // the smallest free buffer that is big enough
        for (size_t b = 0; b < busy.size(); ++b)
          if (!busy[b] && plan.pool[b] >= need && (phys < 0 || plan.pool[b] < plan.pool[phys])) phys = int(b);
      }
      if (phys < 0) {
        plan.pool.push_back(need);
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
}

namespace {
std::string value_name(const Plan& p, int v) {
  int node = int(std::upper_bound(p.value_base.begin(), p.value_base.end(), v) - p.value_base.begin()) - 1;
  int idx = v - p.value_base[node];
  return "%" + std::to_string(node) + (idx ? "." + std::to_string(idx) : "");
}
}  // namespace

std::string Plan::text(const Graph& g) const {
  static const char* kinds[] = {"fused", "kernel", "cond", "while", "callback"};
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
    if (st.program) t += " {" + st.program->describe() + "}";
    t += "\n";
  }
  static const char* skinds[] = {"param", "constant", "output", "buf", "dynamic"};
  for (size_t v = 0; v < value_storage.size(); ++v) {
    int st = value_storage[v];
    if (st < 0) continue;
    const Storage& s = storages[st];
    t += "value " + value_name(*this, int(v)) + ": " + skinds[int(s.kind)];
    if (s.kind == Storage::Kind::Pool) {
      t += std::to_string(s.index);
      if (reused_in_place[st] >= 0) t += " in-place";
    }
    t += "\n";
  }
  t += "buffers: " + std::to_string(pool.size()) + "\n";
  return t;
}

}  // namespace xjax
