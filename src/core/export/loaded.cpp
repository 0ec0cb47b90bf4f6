#include "core/export/loaded.h"

#include <algorithm>

namespace xjax {

LoadedFunction::LoadedFunction(FunctionDef def, const std::vector<Array>& module_weights) : def_(std::move(def)) {
  for (int64_t w : def_.weights) weights_.push_back(module_weights.at(size_t(w)));
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

std::vector<std::shared_ptr<LoadedFunction>> compile_module(const ModuleDef& m) {
  std::vector<std::shared_ptr<LoadedFunction>> out;
  for (const FunctionDef& f : m.functions) out.push_back(std::make_shared<LoadedFunction>(f, m.weights));
  return out;
}

}  // namespace xjax
