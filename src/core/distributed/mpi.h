// Collectives across processes inside compiled programs, over MPI.
//
// The core neither includes nor links MPI: the host (xjax.distributed, through mpi4py) hands over
// the addresses of the few MPI functions used, resolved in the MPI library already loaded, and the
// handles of the communicators, datatypes and ops. Handles travel as integers: an MPI whose handles
// are pointers (Open MPI) and one whose handles are ints (MPICH) are called alike (the callee reads
// the int from the low half of the register; a request it writes is read back the same way).
//
// The all_reduce op (kind Effect: kept and run in program order) runs one checked exchange, as
// the host's Python collectives do (xjax/_src/mpi_channel.py), on the same communicators and tags,
// so the two kinds interleave in one program order:
//   1. unless checks are off, a 256-byte signature goes to every other process on the control
//      communicator: the collective's number (a counter shared with the host) and a description
//      (crc32, length, text); a different signature fails on every process before data moves;
//   2. one MPI_Iallreduce per dtype of the operands (several operands of one dtype are packed).
// Every wait polls: a process that does not arrive within the timeout, or a notice from a process
// that failed or exited (tag `notice_tag` on the control communicator), ends the wait with an
// error, recorded for the host (take_failure) so that it can raise its own DistributedError.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "core/dtype.h"

namespace xjax::mpi {

using Handle = intptr_t;  // MPI_Comm, MPI_Datatype, MPI_Op: pointers or ints

struct Api {
  // The MPI functions, with handles passed as Handle and MPI_Request*/MPI_Status* as void*.
  int (*Iallreduce)(const void*, void*, int, Handle, Handle, Handle, void*) = nullptr;
  int (*Isend)(const void*, int, Handle, int, int, Handle, void*) = nullptr;
  int (*Irecv)(void*, int, Handle, int, int, Handle, void*) = nullptr;
  int (*Test)(void*, int*, void*) = nullptr;
  int (*Iprobe)(int, int, Handle, int*, void*) = nullptr;
  Handle data = 0, control = 0;  // communicators: the collectives' bytes; signatures and notices
  Handle byte_type = 0;
  Handle types[kNumDTypes] = {};  // per dtype: MPI's predefined type, 0 where MPI has none
  Handle sum = 0, max = 0, min = 0, lor = 0, land = 0;
  int rank = 0, size = 1, any_source = -1, sig_tag = 1, notice_tag = 2;
};

// Installs the API (xjax.distributed.initialize); clear() forgets it (shutdown).
void install(const Api& api);
void clear();
bool installed();

// Per run of a program holding collectives: the host's collective counter, its check setting,
// timeout, and the fewest collectives run by a process known to have exited (INT64_MAX: none; a
// collective past that number cannot complete) go in before; the counter comes back after.
void begin(int64_t seq, bool check, double timeout_s, int64_t exited_after);
int64_t seq();

// The failure that stopped the last collective, taken once: kind ("timeout", "mismatch",
// "notice", "mpi") and message; kind is empty when there was none.
std::pair<std::string, std::string> take_failure();

}  // namespace xjax::mpi
