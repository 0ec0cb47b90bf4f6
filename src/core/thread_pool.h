// A persistent pool of worker threads that split loops into chunks; the caller works too.
#pragma once
#include <cstdint>
#include <functional>

namespace xjax {

class ThreadPool {
 public:
  // The process-wide pool; its size is XJAX_NUM_THREADS, or the number of cores.
  static ThreadPool& global();
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  int size() const;

  // Runs fn(begin, end) over [0, n) in chunks of at least `grain` iterations. Runs inline when
  // the range is small or when called from inside another parallel_for. Rethrows the first error.
  // Safe to call from several threads at once: their jobs share the workers. Workers run a job
  // in its caller's floating-point environment (float_env.h).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Impl;
  Impl* impl_;
};

inline void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool::global().parallel_for(n, grain, fn);
}

}  // namespace xjax
