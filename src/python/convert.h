// Conversions from Python shared by the binding files (defined in module.cpp).
#pragma once
#include <pybind11/pybind11.h>

#include "core/attrs.h"
#include "core/ops/ops.h"

// A (shape, dtype name) pair as a TypeInfo; a dict of attributes (ints, floats, strs, bytes,
// sequences of ints) as Attrs. Errors are ValueError/TypeError naming what is wrong.
xjax::TypeInfo type_from_py(const pybind11::handle& h);
xjax::Attrs attrs_from_py(const pybind11::dict& d);
