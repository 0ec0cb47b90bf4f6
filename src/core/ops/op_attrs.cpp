// The typed attribute accessors of the shape rules (see op_attrs.h).
#include "core/ops/op_attrs.h"

#include <stdexcept>
#include <variant>

namespace xjax {

namespace {

// What a TypeError says the attribute must be.
template <typename T> constexpr const char* kind();
template <> constexpr const char* kind<int64_t>() { return "an int"; }
template <> constexpr const char* kind<std::vector<int64_t>>() { return "a sequence of ints"; }
template <> constexpr const char* kind<std::string>() { return "a string"; }

// The attribute, or null when it is absent and not required.
const AttrValue* lookup(OpId op, const Attrs& attrs, const std::string& name, bool required) {
  auto it = attrs.items().find(name);
  if (it != attrs.items().end()) return &it->second;
  if (required) fail_value(op, "missing attribute '" + name + "'");
  return nullptr;
}

// The attribute as a T, or null when it is absent and not required.
template <typename T>
const T* find(OpId op, const Attrs& attrs, const std::string& name, bool required, const char* what = kind<T>()) {
  const AttrValue* v = lookup(op, attrs, name, required);
  if (!v) return nullptr;
  if (const T* t = std::get_if<T>(v)) return t;
  fail_type(op, "attribute '" + name + "' must be " + what);
}

}  // namespace

int64_t int_attr(OpId op, const Attrs& attrs, const std::string& name) {
  return *find<int64_t>(op, attrs, name, true);
}

int64_t int_attr_or(OpId op, const Attrs& attrs, const std::string& name, int64_t dflt) {
  const int64_t* v = find<int64_t>(op, attrs, name, false);
  return v ? *v : dflt;
}

bool bool_attr_or(OpId op, const Attrs& attrs, const std::string& name, bool dflt) {
  const int64_t* v = find<int64_t>(op, attrs, name, false, "a bool");
  if (!v) return dflt;
  if (*v != 0 && *v != 1) fail_value(op, "attribute '" + name + "' must be a bool (0 or 1), got " + std::to_string(*v));
  return *v == 1;
}

double number_attr(OpId op, const Attrs& attrs, const std::string& name) {
  const AttrValue* v = lookup(op, attrs, name, true);
  if (const auto* i = std::get_if<int64_t>(v)) return double(*i);
  if (const auto* d = std::get_if<double>(v)) return *d;
  fail_type(op, "attribute '" + name + "' must be a number");
}

const std::vector<int64_t>& ints_attr(OpId op, const Attrs& attrs, const std::string& name) {
  return *find<std::vector<int64_t>>(op, attrs, name, true);
}

std::vector<int64_t> ints_attr_or(OpId op, const Attrs& attrs, const std::string& name,
                                  std::vector<int64_t> dflt) {
  const auto* v = find<std::vector<int64_t>>(op, attrs, name, false);
  return v ? *v : dflt;
}

const std::string& str_attr(OpId op, const Attrs& attrs, const std::string& name) {
  return *find<std::string>(op, attrs, name, true);
}

std::string str_attr_or(OpId op, const Attrs& attrs, const std::string& name, const std::string& dflt) {
  const std::string* v = find<std::string>(op, attrs, name, false);
  return v ? *v : dflt;
}

DType dtype_attr(OpId op, const Attrs& attrs, const std::string& name) {
  const std::string& s = *find<std::string>(op, attrs, name, true, "a dtype name");
  try {
    return dtype_from_name(s);
  } catch (const std::invalid_argument&) {
    fail_value(op, "attribute '" + name + "' is not a dtype: '" + s + "'");
  }
}

}  // namespace xjax
