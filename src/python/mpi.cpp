// Bindings of the collectives across processes (src/core/distributed/mpi.h): the host installs the
// functions of the MPI shim it compiled and bound (src/core/distributed/mpi_shim.h), and brackets
// each run of a program holding collectives (MpiCall: mpi_call.h). Conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "core/array.h"
#include "core/compiler/executable.h"
#include "core/distributed/mpi.h"
#include "core/distributed/shared_slots.h"
#include "core/errors.h"
#include "fast_call.h"
#include "mpi_call.h"

namespace py = pybind11;
using namespace xjax;

namespace {

// The address of a shim function, as the type mpi_shim.h gives it (the shim defines it so).
template <typename Fn>
void function(const py::dict& functions, const char* name, Fn*& fn) {
  if (!functions.contains(name)) throw ValueError(std::string("[mpi_install] missing the address of ") + name);
  uintptr_t address = functions[name].cast<uintptr_t>();
  if (!address) throw ValueError(std::string("[mpi_install] a null address for ") + name);
  fn = reinterpret_cast<Fn*>(address);
}

void install(const py::dict& d) {
  mpi::Api a;
  py::dict f = d["functions"].cast<py::dict>();
  function(f, "xjax_mpi_iallreduce", a.iallreduce);
  function(f, "xjax_mpi_iallgather", a.iallgather);
  function(f, "xjax_mpi_isend", a.isend);
  function(f, "xjax_mpi_iprobe", a.iprobe);
  function(f, "xjax_mpi_recv", a.recv);
  function(f, "xjax_mpi_test", a.test);
  a.rank = d["rank"].cast<int>(), a.size = d["size"].cast<int>();
  a.notice_tag = d["notice_tag"].cast<int>(), a.roll_tag = d["roll_tag"].cast<int>();
  a.answer_tag = d["answer_tag"].cast<int>(), a.exchange_tag = d["exchange_tag"].cast<int>();
  mpi::install(a);
}

using xjax_mpi::MpiCall;
using xjax_mpi::Shapes;

// Views of arrays under other shapes of as many elements (nullopt: its own), as Array.reshaped.
void view_as(std::vector<Array>& arrays, const Shapes& shapes) {
  for (size_t k = 0; k < arrays.size() && k < shapes.size(); ++k) {
    if (!shapes[k]) continue;
    if (numel(*shapes[k]) != arrays[k].size())
      throw ValueError("[MpiCall] " + shape_str(arrays[k].shape) + " has " + std::to_string(arrays[k].size()) +
                       " elements, " + shape_str(*shapes[k]) + " needs " + std::to_string(numel(*shapes[k])));
    arrays[k].shape = *shapes[k];
  }
}

}  // namespace

namespace xjax_mpi {

MpiCall::MpiCall(std::shared_ptr<Executable> exe, std::vector<Array> extra, Shapes in, Shapes out,
                 std::vector<py::object> avals)
    : exe_(std::move(exe)), extra_(std::move(extra)), in_(std::move(in)), out_(std::move(out)), avals_(std::move(avals)) {
  if (!exe_) throw ValueError("[MpiCall] no executable");
  if (avals_.size() != out_.size())
    throw ValueError("[MpiCall] " + std::to_string(avals_.size()) + " avals for " + std::to_string(out_.size()) +
                     " outputs");
}

std::vector<Array> MpiCall::run(std::vector<Array> args, int64_t seq, double timeout, int64_t exited_after) const {
  if (args.size() != in_.size())
    throw ValueError("[MpiCall] " + std::to_string(args.size()) + " arguments for " + std::to_string(in_.size()));
  py::gil_scoped_release released;
  view_as(args, in_);
  args.insert(args.end(), extra_.begin(), extra_.end());
  mpi::begin(seq, timeout, exited_after);
  std::vector<Array> outs = exe_->run(args);
  if (outs.size() != out_.size())
    throw ValueError("[MpiCall] " + std::to_string(outs.size()) + " outputs for " + std::to_string(out_.size()));
  for (const Array& o : outs) o.wait();  // (rethrows a failed collective's error)
  view_as(outs, out_);
  return outs;
}

py::list MpiCall::operator()(const py::list& leaves, int64_t seq, double timeout, int64_t exited_after) const {
  const Py_ssize_t n = PyList_GET_SIZE(leaves.ptr());
  PyObject* const* items = n ? &PyList_GET_ITEM(leaves.ptr(), 0) : nullptr;
  if (!xjax_fast::leaf_avals(items, n, nullptr)) throw TypeError("[MpiCall] the arguments must be xjax Arrays");
  std::vector<Array> args;
  args.reserve(size_t(n) + extra_.size());
  for (Py_ssize_t i = 0; i < n; ++i) args.push_back(xjax_fast::value_of(items[i]));
  std::vector<Array> outs = run(std::move(args), seq, timeout, exited_after);
  py::list result(outs.size());
  for (size_t k = 0; k < outs.size(); ++k) {
    PyObject* a = xjax_fast::make_array(std::move(outs[k]), avals_[k].ptr());
    if (!a) throw py::error_already_set();
    PyList_SET_ITEM(result.ptr(), Py_ssize_t(k), a);
  }
  return result;
}

}  // namespace xjax_mpi

void init_mpi(py::module_& m) {
  m.def("mpi_install", &install, py::arg("api"),
        "Installs the MPI shim for the all_reduce op: {'functions': {name: address}, rank, size, tags}.");
  m.def("mpi_clear", &mpi::clear);
  m.def("mpi_begin", &mpi::begin, py::arg("seq"), py::arg("timeout"), py::arg("exited_after"));
  m.def("mpi_check", &mpi::check, py::arg("signature"),
        py::call_guard<py::gil_scoped_release>(),
        "The check of collective mpi_seq() (after mpi_begin), whose signature is given: an exchange with no operands.");
  m.def("mpi_seq", &mpi::seq);
  m.def("mpi_shared_create", &mpi::SharedSlots::create, py::arg("processes"),
        "Creates a shared-memory segment for the processes' slots under a fresh name, and returns the name.");
  m.def("mpi_shared_unlink", &mpi::SharedSlots::unlink, py::arg("name"));
  m.def("mpi_share", &mpi::share, py::arg("name"), py::arg("processes"), py::arg("rank"),
        "Maps the segment: the collectives pass through it from now on.");
  m.def("mpi_unshare", &mpi::unshare);
  m.def("mpi_sharing", &mpi::sharing);
  py::class_<MpiCall>(m, "MpiCall")
      .def(py::init<std::shared_ptr<Executable>, std::vector<Array>, Shapes, Shapes, std::vector<py::object>>(),
           py::arg("executable"), py::arg("extra"), py::arg("in_shapes"), py::arg("out_shapes"), py::arg("out_avals"))
      .def("__call__", &MpiCall::operator(), py::arg("args"), py::arg("seq"), py::arg("timeout"),
           py::arg("exited_after"),
           "mpi_begin, the run, its outputs waited for: the outputs as xjax.Arrays (then mpi_seq is the counter).");
  m.def("mpi_take_failure", [] {
    auto [kind, msg] = mpi::take_failure();
    return kind.empty() ? py::object(py::none()) : py::object(py::make_tuple(kind, msg));
  });
  m.def("mpi_abandoned", &mpi::abandoned, "Sets of MPI operations abandoned in flight (their memory kept alive).");
  m.def("mpi_shim_source", [] { return std::string(mpi::shim_source()); },
        "The MPI shim's C source (mpi_shim.h, then mpi_shim.c), compiled by the host against mpi.h.");
  m.def("mpi_shim_version", [] { return XJAX_MPI_SHIM_VERSION; });
}
