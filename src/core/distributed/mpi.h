// Collectives across processes inside compiled programs, over MPI.
//
// The core neither includes nor links MPI. The host (xjax.distributed, through mpi4py) compiles
// a small shim against the mpi.h of the MPI library mpi4py loaded (mpi_shim.h, mpi_shim.c),
// binds it to that library and to this run's communicators, and installs the shim's functions
// here: C functions with xjax's own fixed prototypes (mpi_shim.h), called through pointers of
// exactly those types. MPI handles stay inside the shim; the core names communicators, datatypes
// and ops by small codes and holds requests as opaque storage.
//
// The all_reduce op (kind Effect: kept and run in program order) runs one checked exchange: its
// operands travel as point-to-point messages between pairs of processes (recursive doubling, on
// the control communicator, tag `exchange_tag`), each message headed by the check -- the maxima
// over the processes it speaks for of the collective's number (a counter shared with the host),
// the crc32 and the length of its description, and of their negations. Every process runs the
// same collective iff, at the end, the maxima equal the minima: the check costs no message of
// its own, and an all-reduce as many round trips as MPI's (one for two processes). A message of
// another size (another collective's) is read for its head and the rest of the exchange sends
// heads only. A mismatch, known on every process, is then named: the processes all-gather their
// 256-byte signatures (number, crc32, length, text) and each reports its own collective and the
// first process that differs. The host's Python collectives (xjax/_src/mpi_channel.py) run their
// check as an exchange with no operands (check()), so the two kinds interleave in one program
// order. Each message is combined in rank order, so every process gets the same bits. A sum of
// more than 1 MiB runs the check alone, then MPI_Iallreduce on the data communicator (faster for
// large arrays).
// When the processes all live on one host (share()), every exchange goes instead through their
// shared memory (shared_slots.h), in rounds of up to 64 KiB: each process writes its head and
// that round's part of its payload, and reads everyone's once they are published. The heads must
// be identical (else the mismatch is named as above), and each process combines the parts in the
// pairs recursive doubling makes, so the bits are those of the MPI path, at every size.
// Every wait polls: a process that does not arrive within the timeout, or a notice from a process
// that failed or exited (tag `notice_tag` on the control communicator), ends the wait with an
// error, recorded for the host (take_failure) so that it can raise its own DistributedError. On a
// timeout a roll call names the absent processes: the process asks every other one
// (`roll_tag`) which collective it waits in, and those that do not answer (`answer_tag`) with
// this one's number within a second are named. Every wait loop answers roll calls.
//
// A wait that gives up leaves MPI operations in flight: sends and collectives cannot be cancelled,
// and a late process may still complete them. What they read and write is then kept alive for the
// life of the process (the operands' buffers, through Tensor::owner, or the core's own staging
// buffers), never freed under MPI's feet; after that every collective fails at once (the host's
// state.failed; here too), so a process abandons at most one set per initialize(). The core
// posts no receive that could be left pending: it receives only messages it probed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "core/distributed/mpi_shim.h"

namespace xjax::mpi {

struct Api {
  // The shim's functions (mpi_shim.h), bound to the host's MPI library and communicators.
  xjax_mpi_iallreduce_t* iallreduce = nullptr;
  xjax_mpi_iallgather_t* iallgather = nullptr;
  xjax_mpi_isend_t* isend = nullptr;
  xjax_mpi_iprobe_t* iprobe = nullptr;
  xjax_mpi_recv_t* recv = nullptr;
  xjax_mpi_test_t* test = nullptr;
  int rank = 0, size = 1;
  int notice_tag = 2, roll_tag = 3, answer_tag = 4, exchange_tag = 5;  // on the control communicator
};

// Installs the API (xjax.distributed.initialize); clear() forgets it (shutdown).
void install(const Api& api);
void clear();
bool installed();

// The shared-memory segment of a run whose processes all live on one host (shared_slots.h),
// which each process maps at xjax.distributed.initialize: share() maps it (throws when it cannot),
// unshare() drops it. While it is mapped every exchange passes through it.
void share(const std::string& name, int processes, int rank);
void unshare();
bool sharing();

// Per run of a program holding collectives: the host's collective counter, its timeout, and the fewest collectives run by a process known to have exited (INT64_MAX: none; a
// collective past that number cannot complete) go in before; the counter comes back after.
void begin(int64_t seq, double timeout_s, int64_t exited_after);
int64_t seq();

// The check of the host's collective number seq() (after begin), whose 256-byte signature is
// `signature`: an exchange with no operands. Throws as a failed all_reduce does.
void check(const std::string& signature);

// The failure that stopped the last collective, taken once: kind ("timeout", "mismatch",
// "notice", "mpi") and message; kind is empty when there was none.
std::pair<std::string, std::string> take_failure();

// How many sets of MPI operations this process abandoned in flight (their memory kept alive).
size_t abandoned();

// The shim's C source (mpi_shim.h, then mpi_shim.c), which the host compiles against mpi.h.
const char* shim_source();

}  // namespace xjax::mpi
