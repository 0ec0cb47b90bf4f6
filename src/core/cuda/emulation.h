// A host emulation of the CUDA execution model, so that generated CUDA C compiles as host C++ and
// runs (the tests' way of running generated kernels where no GPU is present). Include it before
// the generated source; launch with emulate_launch(kernel, grid, block, shared_bytes, args...).
//
// Design: blocks run one at a time, in blockIdx order (x fastest); a block's threads run as
// cooperative fibers (ucontext), each on its own stack, in threadIdx order. A thread runs until it
// returns or reaches __syncthreads(), which switches back to the block's scheduler; when every
// live thread of the block waits at the barrier, all are resumed, again in threadIdx order. So
// barriers are honoured exactly, and nothing runs concurrently: atomics are plain
// read-modify-writes. `__shared__` variables are function-local statics: one copy, shared by the
// threads of the block that runs (only one block runs at a time). Dynamic shared memory
// (`extern __shared__`) is not emulated; generated kernels use static sizes only.
// XJAX_EMULATION_ORDER=reverse runs blocks, and threads within each round, in the opposite order:
// a kernel whose result depends on the order (a read racing a write with no barrier between them,
// one block relying on another's writes) gives a different answer one way or the other.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <stdexcept>
#include <tuple>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
  unsigned x, y, z;
};

namespace xjax_emu {

// The coordinates the running fiber sees; the scheduler sets them before resuming a thread.
inline uint3 block_idx, thread_idx;
inline dim3 block_dim, grid_dim;

struct Fiber {
  ucontext_t ctx;
  std::vector<char> stack;
  bool done = false;
};

struct Scheduler {
  ucontext_t main;
  std::vector<Fiber> fibers;
  Fiber* running = nullptr;
  void (*body)(void*) = nullptr;
  void* arg = nullptr;
};
inline Scheduler sched;

constexpr size_t kStackBytes = 64 * 1024;

inline void fiber_entry() {
  sched.body(sched.arg);
  sched.running->done = true;
  // Returning resumes uc_link: the scheduler.
}

inline void sync_threads() {
  Fiber* self = sched.running;
  if (!self) return;  // called outside a launch: nothing to wait for
  swapcontext(&self->ctx, &sched.main);
}

// Runs body(arg) once per thread of every block, honouring __syncthreads() barriers.
inline void run_grid(dim3 grid, dim3 block, void (*body)(void*), void* arg) {
  const size_t nthreads = size_t(block.x) * block.y * block.z;
  if (nthreads == 0 || nthreads > 1024) throw std::invalid_argument("emulate_launch: block must have 1..1024 threads");
  if (block.z > 64) throw std::invalid_argument("emulate_launch: block.z must be at most 64");
  if (grid.y > 65535 || grid.z > 65535) throw std::invalid_argument("emulate_launch: grid.y and grid.z must be at most 65535");
  grid_dim = grid;
  block_dim = block;
  sched.body = body;
  sched.arg = arg;
  sched.fibers.resize(nthreads);
  for (Fiber& f : sched.fibers)
    if (f.stack.size() != kStackBytes) f.stack.assign(kStackBytes, 0);
  const char* order = getenv("XJAX_EMULATION_ORDER");
  const bool reverse = order && strcmp(order, "reverse") == 0;
  // (index k of n, counted from the end in reverse order)
  auto nth = [reverse](size_t k, size_t n) { return reverse ? n - 1 - k : k; };
  const size_t nblocks = size_t(grid.x) * grid.y * grid.z;
  for (size_t kb = 0; kb < nblocks; ++kb) {
    const size_t b = nth(kb, nblocks);
    block_idx = {unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (size_t(grid.x) * grid.y))};
    for (size_t t = 0; t < nthreads; ++t) {
      Fiber& f = sched.fibers[t];
      f.done = false;
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.data();
      f.ctx.uc_stack.ss_size = f.stack.size();
      f.ctx.uc_link = &sched.main;
      makecontext(&f.ctx, fiber_entry, 0);
    }
    // Rounds: each live thread runs to its next barrier (or its end), in threadIdx order (or reversed).
    for (bool live = true; live;) {
      live = false;
      for (size_t k = 0; k < nthreads; ++k) {
        const size_t t = nth(k, nthreads);
        Fiber& f = sched.fibers[t];
        if (f.done) continue;
        thread_idx = {unsigned(t % block.x), unsigned(t / block.x % block.y), unsigned(t / (size_t(block.x) * block.y))};
        sched.running = &f;
        swapcontext(&sched.main, &f.ctx);
        sched.running = nullptr;
        live = live || !f.done;
      }
    }
  }
}

template <typename... P>
struct LaunchArgs {
  void (*kernel)(P...);
  std::tuple<P...> args;
  static void call(void* self) {
    auto* a = static_cast<LaunchArgs*>(self);
    std::apply(a->kernel, a->args);
  }
};

}  // namespace xjax_emu

#define blockIdx (::xjax_emu::block_idx)
#define threadIdx (::xjax_emu::thread_idx)
#define blockDim (::xjax_emu::block_dim)
#define gridDim (::xjax_emu::grid_dim)

inline void __syncthreads() { xjax_emu::sync_threads(); }

// Atomics: nothing runs concurrently, so each is a plain read-modify-write returning the old value.
inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) {
  unsigned old = *p;
  if (old == cmp) *p = v;
  return old;
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long cmp, unsigned long long v) {
  unsigned long long old = *p;
  if (old == cmp) *p = v;
  return old;
}
inline int atomicMax(int* p, int v) {
  int old = *p;
  if (v > old) *p = v;
  return old;
}
inline long long atomicMax(long long* p, long long v) {
  long long old = *p;
  if (v > old) *p = v;
  return old;
}
inline int atomicAdd(int* p, int v) {
  int old = *p;
  *p = int(unsigned(old) + unsigned(v));
  return old;
}
inline float __int_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  memcpy(&i, &f, 4);
  return i;
}
inline double __longlong_as_double(long long i) {
  double f;
  memcpy(&f, &i, 8);
  return f;
}
inline long long __double_as_longlong(double f) {
  long long i;
  memcpy(&i, &f, 8);
  return i;
}

// Launches kernel<<<grid, block, shared_bytes>>>(args...) on the emulator; the arguments are
// converted to the kernel's parameter types (e.g. void* buffers to typed pointers).
template <typename... P, typename... A>
void emulate_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, A... args) {
  static_assert(sizeof...(P) == sizeof...(A), "emulate_launch: wrong number of kernel arguments");
  if (shared_bytes != 0) throw std::invalid_argument("emulate_launch: dynamic shared memory is not emulated");
  xjax_emu::LaunchArgs<P...> launch{kernel, std::tuple<P...>((P)(args)...)};
  xjax_emu::run_grid(grid, block, &xjax_emu::LaunchArgs<P...>::call, &launch);
}
