// A persistent pool of worker threads that split loops into chunks; the caller works too.
#pragma once
#include <cstdint>
#include <functional>

namespace xjax {

class ThreadPool {
 public:
  // The process-wide pool; its size is XJAX_NUM_THREADS, or the number of cores.
  static ThreadPool& global();
  // The pool that parallel_for uses on this thread: the one made current by a Use in scope (a
  // device's share of the cores while the thread runs that device's work), else the global pool.
  static ThreadPool& current();
  // Makes `pool` the current pool of this thread while the Use lives.
  class Use {
   public:
    explicit Use(ThreadPool& pool);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    ThreadPool* prev_;
  };
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

// ThreadPool::current().parallel_for(n, grain, fn) for any callable: a range too small to split
// runs inline without a std::function, and a split one wraps a reference to fn (a lambda that
// captures more than two pointers would otherwise be copied to the heap, once per call).
template <typename Fn>
inline void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  if (n < 2 * (grain > 1 ? grain : 1)) {  // (the pool runs such a range inline too)
    fn(int64_t(0), n);
    return;
  }
  ThreadPool::current().parallel_for(n, grain, std::function<void(int64_t, int64_t)>(std::ref(fn)));
}

}  // namespace xjax
