// The `constant` source op: a value held in the graph. Attributes: dtype (name), shape (ints,
// default 0-d), and either value (an int or float that fills every element: a "splat") or data
// (the elements' bytes, row-major, native little-endian). Also the shape rules of the ops the
// compiler owns (constant, host_callback, and the guard of cond/while).
#pragma once
#include <string>

#include "core/array.h"
#include "core/graph.h"

namespace xjax {

// True for a constant node whose every element is the same value (a splat or one element).
bool is_splat_constant(const Node& n);
// The bytes of one element of a splat constant (itemsize of its dtype).
std::string splat_bytes(const Node& n);
// Whether every element of constant node n equals v (compared as double; -0.0 == 0.0).
bool constant_all_equal(const Node& n, double v);
// Writes the constant's elements (numel * itemsize bytes) to out.
void constant_fill(const Node& n, void* out);
// The constant as a new array.
Array constant_array(const Node& n);
// Attributes of a constant holding array a (data) of the given type.
Attrs constant_attrs_from(const void* data, const TypeInfo& type);
// Attributes of a splat constant of the given type from the bytes of one element.
Attrs splat_attrs(const std::string& element, const TypeInfo& type);

}  // namespace xjax
