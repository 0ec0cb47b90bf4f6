#include "core/export/loaded.h"

#include <algorithm>
#include <map>

namespace xjax {

namespace {
// The most bytes one run of the plan may hold in its own buffers at once: the pooled ones, the
// per-run ones (outputs, `empty` values, control results) and, nested, the largest subplan's.
int64_t peak_bytes(const Plan& p) {
  int64_t total = 0, nested = 0;
  for (size_t b : p.pool) total += int64_t(b);
  for (const Storage& s : p.storages)
    if (s.kind == Storage::Kind::Output || s.kind == Storage::Kind::Fresh || s.kind == Storage::Kind::Dynamic)
      total += int64_t(s.nbytes);
  for (const Step& step : p.steps)
    for (const auto& sub : step.subs) nested = std::max(nested, peak_bytes(sub->plan()));
  return total + nested;
}
}  // namespace

LoadedFunction::LoadedFunction(FunctionDef def, const std::vector<Array>& module_weights, int64_t max_plan_bytes,
                               const LoadedFunction* same_graph)
    : def_(std::move(def)) {
  for (int64_t w : def_.weights) weights_.push_back(module_weights.at(size_t(w)));
  if (same_graph) {
    exe_ = same_graph->exe_;
    out_pos_ = same_graph->out_pos_;
    return;
  }
  // The executable returns each value once; results that repeat one share its array.
  std::vector<ValueRef> unique;
  for (ValueRef v : def_.graph->outputs()) {
    auto it = std::find(unique.begin(), unique.end(), v);
    out_pos_.push_back(int(it - unique.begin()));
    if (it == unique.end()) unique.push_back(v);
  }
  if (unique.empty()) return;
  Graph g = *def_.graph;
  g.set_outputs(unique);
  try {
    exe_ = compile(std::move(g));
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw FormatError("[xjx] function '" + def_.name + "' does not compile: " + e.what());
  }
  const int64_t peak = peak_bytes(exe_->plan());
  if (peak > max_plan_bytes)
    throw FormatError("[xjx] function '" + def_.name + "' needs " + std::to_string(peak) +
                      " bytes of buffers per run, more than the limit of " + std::to_string(max_plan_bytes));
}

void LoadedFunction::check(const std::vector<Array>& inputs) const {
  if (inputs.size() != def_.inputs.size())
    throw ValueError("[" + def_.name + "] takes " + std::to_string(def_.inputs.size()) + " arguments, got " +
                     std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TypeInfo& t = def_.inputs[i].type;
    if (inputs[i].shape != t.shape || inputs[i].dtype != t.dtype)
      throw ValueError("[" + def_.name + "] argument " + std::to_string(i) + " must be " + dtype_name(t.dtype) + shape_str(t.shape) +
                       ", got " + dtype_name(inputs[i].dtype) + shape_str(inputs[i].shape));
  }
}

std::vector<Array> LoadedFunction::with_weights(const std::vector<Array>& inputs) const {
  check(inputs);
  std::vector<Array> all = inputs;
  all.insert(all.end(), weights_.begin(), weights_.end());
  return all;
}

std::vector<Array> LoadedFunction::results(std::vector<Array> unique) const {
  std::vector<Array> out;
  out.reserve(out_pos_.size());
  for (int k : out_pos_) out.push_back(unique[size_t(k)]);
  return out;
}

std::vector<Array> LoadedFunction::call(const std::vector<Array>& inputs) const {
  std::vector<Array> all = with_weights(inputs);
  if (!exe_) return {};
  return results(exe_->run(all));
}

std::vector<Array> LoadedFunction::call_now(const std::vector<Array>& inputs) const {
  std::vector<Array> all = with_weights(inputs);
  if (!exe_) return {};
  return results(exe_->run_now(all));
}

std::vector<std::shared_ptr<LoadedFunction>> compile_module(const ModuleDef& m, int64_t max_plan_bytes) {
  std::vector<std::shared_ptr<LoadedFunction>> out;
  std::map<const Graph*, const LoadedFunction*> compiled;  // records sharing a graph share its executable
  for (const FunctionDef& f : m.functions) {
    auto it = compiled.find(f.graph.get());
    out.push_back(std::make_shared<LoadedFunction>(f, m.weights, max_plan_bytes,
                                                   it == compiled.end() ? nullptr : it->second));
    compiled.emplace(f.graph.get(), out.back().get());
  }
  return out;
}

}  // namespace xjax
