/* The interface between xjax's core and its MPI shim (mpi_shim.c): fixed C prototypes of xjax's own.

   The core neither includes nor links MPI. xjax.distributed compiles mpi_shim.c at run time against
   the mpi.h of the MPI library that mpi4py loaded (xjax/_src/mpi_shim.py), binds it to that library
   and to this run's communicators, and hands the core the addresses of the functions below: the
   core calls them through pointers of exactly these types, and the shim calls MPI through
   pointers of exactly the types its mpi.h declares. MPI handles never leave the shim: the core
   names communicators, datatypes and ops by the small codes below, and holds requests as opaque
   storage that the shim copies MPI_Request values into and out of.

   This header is C (the shim) and C++ (the core); its text goes into the shim's source
   (_core.mpi_shim_source()), so the two always agree. Every function returns MPI's error code
   (0: success) unless said otherwise. */
#ifndef XJAX_MPI_SHIM_H
#define XJAX_MPI_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XJAX_MPI_SHIM_VERSION 1

/* Communicators: the collectives' bytes; the checks around them (xjax/_src/distributed.py). */
enum { XJAX_MPI_DATA = 0, XJAX_MPI_CONTROL = 1, XJAX_MPI_NUM_COMMS = 2 };

/* Datatypes: bytes, then one per dtype MPI reduces (xjax's other dtypes have none). */
enum {
  XJAX_MPI_BYTE = 0, XJAX_MPI_BOOL, XJAX_MPI_INT8, XJAX_MPI_INT16, XJAX_MPI_INT32, XJAX_MPI_INT64,
  XJAX_MPI_UINT8, XJAX_MPI_UINT16, XJAX_MPI_UINT32, XJAX_MPI_UINT64, XJAX_MPI_FLOAT32, XJAX_MPI_FLOAT64,
  XJAX_MPI_NUM_TYPES
};

/* Reduction ops. */
enum { XJAX_MPI_SUM = 0, XJAX_MPI_MAX, XJAX_MPI_MIN, XJAX_MPI_LOR, XJAX_MPI_LAND, XJAX_MPI_NUM_OPS };

/* Storage for one MPI_Request (a pointer or an int in every MPI; the shim checks that it fits). */
typedef struct xjax_mpi_request {
  uint64_t words[2];
} xjax_mpi_request;

/* XJAX_MPI_SHIM_VERSION, as the shim was compiled. */
typedef int xjax_mpi_version_t(void);

/* What the shim was compiled against, for the host's checks: writes a NUL-terminated line naming
   the implementation and version mpi.h declares ("Open MPI 5.0.11", "MPICH 4.2.1", ...) and fills
   sizes[5] with sizeof MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Status. Returns 0. */
typedef int xjax_mpi_header_t(char* text, int text_bytes, int64_t* sizes);

/* Binds the shim to the MPI library and handles of this run (once per xjax.distributed.initialize;
   not while a collective runs). `lookup`: a dlopen handle of mpi4py's extension module: each MPI
   function is looked up where the dynamic linker bound mpi4py's own calls, in the global scope
   first, then in that module's libraries. `comms`, `types`, `ops`: addresses of MPI handles of
   those kinds (mpi4py's MPI._addressof), indexed by the codes above; a null type: MPI has none.
   Checks that MPI is initialized and not finalized, and writes this process's rank and the
   number of processes in each communicator (ranks[2], sizes[2]). On failure: nonzero, with a
   NUL-terminated reason in `error`. */
typedef int xjax_mpi_bind_t(void* lookup, const void* const* comms, const void* const* types, const void* const* ops,
                            int* ranks, int* sizes, char* error, int error_bytes);

/* The non-blocking collectives, on communicator `comm`. */
typedef int xjax_mpi_iallreduce_t(const void* send, void* recv, int count, int type, int op, int comm,
                                  xjax_mpi_request* request);
/* `bytes` from every process, gathered in rank order into `recv`. */
typedef int xjax_mpi_iallgather_t(const void* send, void* recv, int bytes, int comm, xjax_mpi_request* request);

/* Point to point, in bytes. Receives are blocking and only for messages iprobe found (the core
   never leaves a receive posted: nothing to cancel when a wait gives up). */
typedef int xjax_mpi_isend_t(const void* buf, int bytes, int dest, int tag, int comm, xjax_mpi_request* request);
/* `source` < 0: any source. Sets *found, and where found *found_source and *found_bytes. */
typedef int xjax_mpi_iprobe_t(int source, int tag, int comm, int* found, int* found_source, int* found_bytes);
typedef int xjax_mpi_recv_t(void* buf, int bytes, int source, int tag, int comm);

/* Sets *done once the request completed (then it is freed: test it no more). */
typedef int xjax_mpi_test_t(xjax_mpi_request* request, int* done);

#ifndef __cplusplus
xjax_mpi_version_t xjax_mpi_version;
xjax_mpi_header_t xjax_mpi_header;
xjax_mpi_bind_t xjax_mpi_bind;
xjax_mpi_iallreduce_t xjax_mpi_iallreduce;
xjax_mpi_iallgather_t xjax_mpi_iallgather;
xjax_mpi_isend_t xjax_mpi_isend;
xjax_mpi_iprobe_t xjax_mpi_iprobe;
xjax_mpi_recv_t xjax_mpi_recv;
xjax_mpi_test_t xjax_mpi_test;
#endif

#ifdef __cplusplus
}
#endif

#endif /* XJAX_MPI_SHIM_H */
