// Bindings of the collectives across processes (src/core/distributed/mpi.h): the host installs the MPI
// functions and handles it resolved, and brackets each run of a program holding collectives.
// Conversion only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/distributed/mpi.h"
#include "core/errors.h"

namespace py = pybind11;
using namespace xjax;

namespace {

template <typename Fn>
void function(const py::dict& d, const char* name, Fn& fn) {
  if (!d.contains(name)) throw ValueError(std::string("[mpi_install] missing the address of ") + name);
  fn = reinterpret_cast<Fn>(d[name].cast<uintptr_t>());
}

mpi::Handle handle(const py::dict& d, const char* name) {
  if (!d.contains(name)) throw ValueError(std::string("[mpi_install] missing the handle ") + name);
  return mpi::Handle(d[name].cast<int64_t>());
}

void install(const py::dict& d) {
  mpi::Api a;
  function(d, "MPI_Iallreduce", a.Iallreduce);
  function(d, "MPI_Isend", a.Isend);
  function(d, "MPI_Irecv", a.Irecv);
  function(d, "MPI_Test", a.Test);
  function(d, "MPI_Iprobe", a.Iprobe);
  a.data = handle(d, "data");
  a.control = handle(d, "control");
  a.byte_type = handle(d, "byte");
  a.sum = handle(d, "sum"), a.max = handle(d, "max"), a.min = handle(d, "min");
  a.lor = handle(d, "lor"), a.land = handle(d, "land");
  for (auto [name, h] : d["types"].cast<py::dict>())
    a.types[int(dtype_from_name(name.cast<std::string>()))] = mpi::Handle(h.cast<int64_t>());
  a.rank = d["rank"].cast<int>(), a.size = d["size"].cast<int>(), a.any_source = d["any_source"].cast<int>();
  a.sig_tag = d["sig_tag"].cast<int>(), a.notice_tag = d["notice_tag"].cast<int>();
  mpi::install(a);
}

}  // namespace

void init_mpi(py::module_& m) {
  m.def("mpi_install", &install, py::arg("api"),
        "Installs MPI for the all_reduce op: function addresses, handles (as ints), rank, size, tags.");
  m.def("mpi_clear", &mpi::clear);
  m.def("mpi_begin", &mpi::begin, py::arg("seq"), py::arg("check"), py::arg("timeout"), py::arg("exited_after"));
  m.def("mpi_seq", &mpi::seq);
  m.def("mpi_take_failure", [] {
    auto [kind, msg] = mpi::take_failure();
    return kind.empty() ? py::object(py::none()) : py::object(py::make_tuple(kind, msg));
  });
}
