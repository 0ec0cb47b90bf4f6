// Internal to the reference interpreter: element access in double / int64, and the elementwise
// ops' reference semantics.
#pragma once
#include <cstring>
#include <vector>

#include "core/array.h"
#include "core/graph.h"

namespace xjax::ref {

double get_f(const Array& a, int64_t i);   // element i as double
int64_t get_i(const Array& a, int64_t i);  // element i as int64 (uint64: its bits)
void set_f(Array& a, int64_t i, double v);
void set_i(Array& a, int64_t i, int64_t v);  // wraps to the element width

// Computes elementwise node n into out; false when the op has no reference loop here.
bool elementwise(const Node& n, const std::vector<Array>& in, Array& out);
// The same for a node with a complex operand or result (complex.cpp).
bool complex_elementwise(const Node& n, const std::vector<Array>& in, Array& out);
// convert_element_type with a float8 operand or result (float8.cpp).
void float8_convert(const Array& in, Array& out);

}  // namespace xjax::ref
