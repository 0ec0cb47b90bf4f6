// Op attributes: a small name -> value map (ints, floats, int lists, strings).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/errors.h"

namespace xjax {

using AttrValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

class Attrs {
 public:
  void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  int64_t get_int(const std::string& name) const { return get<int64_t>(name); }
  double get_float(const std::string& name) const {
    const AttrValue& v = find(name);
    if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
    return get<double>(name);
  }
  const std::vector<int64_t>& get_ints(const std::string& name) const { return get<std::vector<int64_t>>(name); }
  const std::string& get_str(const std::string& name) const { return get<std::string>(name); }
  int64_t get_int_or(const std::string& name, int64_t dflt) const { return has(name) ? get_int(name) : dflt; }
  const std::map<std::string, AttrValue>& items() const { return values_; }
  bool operator==(const Attrs& o) const { return values_ == o.values_; }

 private:
  const AttrValue& find(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw ValueError("missing attribute '" + name + "'");
    return it->second;
  }
  template <typename T>
  const T& get(const std::string& name) const {
    const AttrValue& v = find(name);
    if (auto* p = std::get_if<T>(&v)) return *p;
    throw TypeError("attribute '" + name + "' has the wrong type");
  }
  std::map<std::string, AttrValue> values_;
};

}  // namespace xjax
