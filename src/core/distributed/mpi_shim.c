/* xjax's MPI shim: the functions of mpi_shim.h over the MPI library that mpi4py loaded.

   Compiled at run time by xjax.distributed (xjax/_src/mpi_shim.py) against the mpi.h of that
   library, with the C compiler its MPI wrapper (mpicc) names, into a small shared library. It
   references no MPI symbol: each MPI function is looked up once (bind), where the dynamic linker
   bound mpi4py's calls, into a pointer whose type is the one mpi.h declares for that function
   (__typeof__), so every call matches the callee's real type; the predefined handles come from
   mpi4py's objects, copied as the MPI_Comm, MPI_Datatype and MPI_Op values they are. Loading the
   shim therefore never loads or binds an MPI library of its own. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#ifndef XJAX_MPI_SHIM_H /* (the embedded source carries the header's text before this file's) */
#include "mpi_shim.h"
#endif

_Static_assert(sizeof(MPI_Request) <= sizeof(xjax_mpi_request), "an MPI_Request does not fit xjax_mpi_request");

/* The MPI functions used, each through a pointer of exactly its declared type. */
#define XJAX_MPI_FUNCTIONS(X)                                                                              \
  X(MPI_Initialized) X(MPI_Finalized) X(MPI_Comm_rank) X(MPI_Comm_size) X(MPI_Iallreduce) X(MPI_Iallgather) \
  X(MPI_Isend) X(MPI_Iprobe) X(MPI_Get_count) X(MPI_Recv) X(MPI_Test)
#define XJAX_DECLARE(name) static __typeof__(name)* p_##name;
XJAX_MPI_FUNCTIONS(XJAX_DECLARE)
#undef XJAX_DECLARE

static MPI_Comm comms[XJAX_MPI_NUM_COMMS];
static MPI_Datatype types[XJAX_MPI_NUM_TYPES];
static int have_type[XJAX_MPI_NUM_TYPES];
static MPI_Op ops[XJAX_MPI_NUM_OPS];
static int bound;

int xjax_mpi_version(void) { return XJAX_MPI_SHIM_VERSION; }

int xjax_mpi_header(char* text, int text_bytes, int64_t* sizes) {
  char name[96];
#if defined(MPI_ABI_VERSION) && MPI_ABI_VERSION > 0 /* the standard ABI (MPI 5): one for every MPI */
  snprintf(name, sizeof name, "MPI ABI %d.%d", (int)MPI_ABI_VERSION, (int)MPI_ABI_SUBVERSION);
#elif defined(OPEN_MPI)
  snprintf(name, sizeof name, "Open MPI %d.%d.%d", (int)OMPI_MAJOR_VERSION, (int)OMPI_MINOR_VERSION,
           (int)OMPI_RELEASE_VERSION);
#elif defined(I_MPI_VERSION)
  snprintf(name, sizeof name, "Intel MPI %s", I_MPI_VERSION);
#elif defined(MPICH_VERSION)
  snprintf(name, sizeof name, "MPICH %s", MPICH_VERSION);
#else
  snprintf(name, sizeof name, "unknown MPI");
#endif
  if (text_bytes > 0) snprintf(text, (size_t)text_bytes, "%s (MPI %d.%d)", name, (int)MPI_VERSION, (int)MPI_SUBVERSION);
  sizes[0] = (int64_t)sizeof(MPI_Comm);
  sizes[1] = (int64_t)sizeof(MPI_Datatype);
  sizes[2] = (int64_t)sizeof(MPI_Op);
  sizes[3] = (int64_t)sizeof(MPI_Request);
  sizes[4] = (int64_t)sizeof(MPI_Status);
  return 0;
}

static void* lookup_function(void* lookup, const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name); /* as the dynamic linker binds: the global scope first */
  return f ? f : dlsym(lookup, name);
}

int xjax_mpi_bind(void* lookup, const void* const* comm_addrs, const void* const* type_addrs,
                  const void* const* op_addrs, int* ranks, int* sizes, char* error, int error_bytes) {
  int k, flag = 0, rc;
  bound = 0;
#define XJAX_RESOLVE(name)                                                                     \
  p_##name = (__typeof__(name)*)lookup_function(lookup, #name);                                \
  if (!p_##name) {                                                                             \
    snprintf(error, (size_t)error_bytes, "%s not found in the MPI library mpi4py loaded", #name); \
    return 1;                                                                                  \
  }
  XJAX_MPI_FUNCTIONS(XJAX_RESOLVE)
#undef XJAX_RESOLVE
  if ((rc = p_MPI_Initialized(&flag)) != MPI_SUCCESS || !flag) {
    snprintf(error, (size_t)error_bytes, "the MPI library the shim found is not initialized (MPI_Initialized: "
             "rc %d, flag %d): it is not the one mpi4py initialized", rc, flag);
    return 1;
  }
  if ((rc = p_MPI_Finalized(&flag)) != MPI_SUCCESS || flag) {
    snprintf(error, (size_t)error_bytes, "MPI is finalized");
    return 1;
  }
  for (k = 0; k < XJAX_MPI_NUM_COMMS; ++k) {
    memcpy(&comms[k], comm_addrs[k], sizeof(MPI_Comm));
    if ((rc = p_MPI_Comm_rank(comms[k], &ranks[k])) != MPI_SUCCESS ||
        (rc = p_MPI_Comm_size(comms[k], &sizes[k])) != MPI_SUCCESS) {
      snprintf(error, (size_t)error_bytes, "MPI_Comm_rank/MPI_Comm_size of communicator %d failed (rc %d)", k, rc);
      return 1;
    }
  }
  for (k = 0; k < XJAX_MPI_NUM_TYPES; ++k) {
    have_type[k] = type_addrs[k] != NULL;
    if (have_type[k]) memcpy(&types[k], type_addrs[k], sizeof(MPI_Datatype));
  }
  if (!have_type[XJAX_MPI_BYTE] || !have_type[XJAX_MPI_INT64]) {
    snprintf(error, (size_t)error_bytes, "no MPI datatype for bytes or int64");
    return 1;
  }
  for (k = 0; k < XJAX_MPI_NUM_OPS; ++k) memcpy(&ops[k], op_addrs[k], sizeof(MPI_Op));
  bound = 1;
  return 0;
}

static int valid_comm(int comm) { return bound && comm >= 0 && comm < XJAX_MPI_NUM_COMMS; }

int xjax_mpi_iallreduce(const void* send, void* recv, int count, int type, int op, int comm,
                        xjax_mpi_request* request) {
  MPI_Request r;
  int rc;
  if (!valid_comm(comm) || op < 0 || op >= XJAX_MPI_NUM_OPS) return MPI_ERR_ARG;
  if (type < 0 || type >= XJAX_MPI_NUM_TYPES || !have_type[type]) return MPI_ERR_TYPE;
  rc = p_MPI_Iallreduce(send, recv, count, types[type], ops[op], comms[comm], &r);
  memcpy(request->words, &r, sizeof r);
  return rc;
}

int xjax_mpi_iallgather(const void* send, void* recv, int bytes, int comm, xjax_mpi_request* request) {
  MPI_Request r;
  int rc;
  if (!valid_comm(comm)) return MPI_ERR_ARG;
  rc = p_MPI_Iallgather(send, bytes, types[XJAX_MPI_BYTE], recv, bytes, types[XJAX_MPI_BYTE], comms[comm], &r);
  memcpy(request->words, &r, sizeof r);
  return rc;
}

int xjax_mpi_isend(const void* buf, int bytes, int dest, int tag, int comm, xjax_mpi_request* request) {
  MPI_Request r;
  int rc;
  if (!valid_comm(comm)) return MPI_ERR_ARG;
  rc = p_MPI_Isend(buf, bytes, types[XJAX_MPI_BYTE], dest, tag, comms[comm], &r);
  memcpy(request->words, &r, sizeof r);
  return rc;
}

int xjax_mpi_iprobe(int source, int tag, int comm, int* found, int* found_source, int* found_bytes) {
  MPI_Status status;
  int rc;
  if (!valid_comm(comm)) return MPI_ERR_ARG;
  rc = p_MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, tag, comms[comm], found, &status);
  if (rc != MPI_SUCCESS || !*found) return rc;
  *found_source = status.MPI_SOURCE;
  return p_MPI_Get_count(&status, types[XJAX_MPI_BYTE], found_bytes);
}

int xjax_mpi_recv(void* buf, int bytes, int source, int tag, int comm) {
  if (!valid_comm(comm)) return MPI_ERR_ARG;
  return p_MPI_Recv(buf, bytes, types[XJAX_MPI_BYTE], source, tag, comms[comm], MPI_STATUS_IGNORE);
}

int xjax_mpi_test(xjax_mpi_request* request, int* done) {
  MPI_Request r;
  int rc;
  memcpy(&r, request->words, sizeof r);
  rc = p_MPI_Test(&r, done, MPI_STATUS_IGNORE);
  memcpy(request->words, &r, sizeof r);
  return rc;
}
