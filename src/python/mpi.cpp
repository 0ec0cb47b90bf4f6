// Bindings of the collectives across processes (src/core/distributed/mpi.h): the host installs the
// functions of the MPI shim it compiled and bound (src/core/distributed/mpi_shim.h), and brackets
// each run of a program holding collectives. Conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/distributed/mpi.h"
#include "core/errors.h"

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
  a.answer_tag = d["answer_tag"].cast<int>();
  mpi::install(a);
}

}  // namespace

void init_mpi(py::module_& m) {
  m.def("mpi_install", &install, py::arg("api"),
        "Installs the MPI shim for the all_reduce op: {'functions': {name: address}, rank, size, tags}.");
  m.def("mpi_clear", &mpi::clear);
  m.def("mpi_begin", &mpi::begin, py::arg("seq"), py::arg("check"), py::arg("timeout"), py::arg("exited_after"));
  m.def("mpi_seq", &mpi::seq);
  m.def("mpi_take_failure", [] {
    auto [kind, msg] = mpi::take_failure();
    return kind.empty() ? py::object(py::none()) : py::object(py::make_tuple(kind, msg));
  });
  m.def("mpi_abandoned", &mpi::abandoned, "Sets of MPI operations abandoned in flight (their memory kept alive).");
  m.def("mpi_shim_source", [] { return std::string(mpi::shim_source()); },
        "The MPI shim's C source (mpi_shim.h, then mpi_shim.c), compiled by the host against mpi.h.");
  m.def("mpi_shim_version", [] { return XJAX_MPI_SHIM_VERSION; });
}
