// A program holding all_reduce ops as pmap's repeated calls across processes run it, in one call
// (mpi.cpp binds it as _core.MpiCall; the pmap call path, fast_call_pmap.cpp, runs it directly):
// the argument leaves' values viewed under the program's shapes and followed by its fixed extra
// inputs, the run bracketed by mpi::begin, its outputs waited for (with the GIL released) and
// viewed under the caller's shapes. (Per call, Python would pay for each of these steps.)
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/array.h"
#include "core/compiler/executable.h"

namespace xjax_mpi {

namespace py = pybind11;
using Shapes = std::vector<std::optional<xjax::Shape>>;

class MpiCall {
 public:
  MpiCall(std::shared_ptr<xjax::Executable> exe, std::vector<xjax::Array> extra, Shapes in, Shapes out,
          std::vector<py::object> avals);

  // The outputs of a run on the leaves' values (the GIL held on entry; released meanwhile).
  std::vector<xjax::Array> run(std::vector<xjax::Array> args, int64_t seq, double timeout, int64_t exited_after) const;
  // The Python call: leaves (xjax.Arrays) to the outputs as xjax.Arrays of the given avals.
  py::list operator()(const py::list& leaves, int64_t seq, double timeout, int64_t exited_after) const;

  size_t arity() const { return in_.size(); }
  const std::vector<py::object>& out_avals() const { return avals_; }

 private:
  std::shared_ptr<xjax::Executable> exe_;
  std::vector<xjax::Array> extra_;
  Shapes in_, out_;
  std::vector<py::object> avals_;
};

}  // namespace xjax_mpi
