// Reading an op's attributes in its shape rule: one set of accessors for every op family.
//
// Errors name the op and follow Python's convention: a required attribute that is missing is a
// ValueError ("[op] missing attribute 'x'"), one of the wrong type a TypeError ("[op] attribute
// 'x' must be an int"). A value of the right type that the op cannot take (an axis out of range,
// an unknown mode) is the caller's ValueError. Python's bools arrive as ints.
#pragma once
#include <string>
#include <vector>

#include "core/ops/ops.h"

namespace xjax {

int64_t int_attr(OpId op, const Attrs& attrs, const std::string& name);
int64_t int_attr_or(OpId op, const Attrs& attrs, const std::string& name, int64_t dflt);

// An int that must be 0 or 1 (ValueError otherwise); "must be a bool" when mistyped.
bool bool_attr_or(OpId op, const Attrs& attrs, const std::string& name, bool dflt);

// An int or a float, as a double.
double number_attr(OpId op, const Attrs& attrs, const std::string& name);

const std::vector<int64_t>& ints_attr(OpId op, const Attrs& attrs, const std::string& name);
std::vector<int64_t> ints_attr_or(OpId op, const Attrs& attrs, const std::string& name,
                                  std::vector<int64_t> dflt);

const std::string& str_attr(OpId op, const Attrs& attrs, const std::string& name);
std::string str_attr_or(OpId op, const Attrs& attrs, const std::string& name, const std::string& dflt);

// A string naming a dtype ("float32"); ValueError for a name that is not one.
DType dtype_attr(OpId op, const Attrs& attrs, const std::string& name);

}  // namespace xjax
