#include "core/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace xjax {

namespace {
thread_local bool tl_in_parallel_region = false;

int default_num_threads() {
  if (const char* env = std::getenv("XJAX_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Waking a sleeping thread costs tens of microseconds, as much as a mid-size kernel; so threads
// spin this long for the next job (or for the workers to finish) before they sleep.
constexpr auto kSpin = std::chrono::microseconds(50);

template <typename Done>
void spin_until(Done done) {
  auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0; !done(); ++i) {
    _mm_pause();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return;
  }
}
}  // namespace

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex submit_mu;  // one job at a time
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  bool stop = false;
  uint64_t generation = 0;
  std::atomic<uint64_t> published{0};  // == generation, readable without the lock for spinning
  // The current job.
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, chunk = 1, num_chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> chunks_done{0};
  int active_workers = 0;
  std::exception_ptr error;

  void run_chunks() {
    tl_in_parallel_region = true;
    for (;;) {
      int64_t c = next_chunk.fetch_add(1);
      if (c >= num_chunks) break;
      int64_t b = c * chunk, e = std::min(n, b + chunk);
      try {
        (*fn)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      chunks_done.fetch_add(1);
    }
    tl_in_parallel_region = false;
  }

  void worker_loop() {
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return published.load(std::memory_order_acquire) != seen; });
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
        ++active_workers;
      }
      run_chunks();
      {
        std::lock_guard<std::mutex> lock(mu);
        --active_workers;
      }
      done_cv.notify_all();
    }
  }
};

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = new ThreadPool(default_num_threads());  // never destroyed: no exit races
  return *pool;
}

ThreadPool::ThreadPool(int num_threads) : impl_(new Impl) {
  for (int i = 1; i < num_threads; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->work_cv.notify_all();
  for (auto& t : impl_->workers) t.join();
  delete impl_;
}

int ThreadPool::size() const { return int(impl_->workers.size()) + 1; }

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads = size();
  if (tl_in_parallel_region || threads == 1 || n < 2 * grain) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> submit(impl_->submit_mu);
  // A few chunks per thread balances uneven work without much overhead.
  int64_t chunks = std::min<int64_t>(n / grain, int64_t(threads) * 4);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->fn = &fn;
    impl_->n = n;
    impl_->chunk = (n + chunks - 1) / chunks;
    impl_->num_chunks = (n + impl_->chunk - 1) / impl_->chunk;
    impl_->next_chunk = 0;
    impl_->chunks_done = 0;
    impl_->error = nullptr;
    ++impl_->generation;
    impl_->published.store(impl_->generation, std::memory_order_release);
  }
  impl_->work_cv.notify_all();
  impl_->run_chunks();
  spin_until([&] { return impl_->chunks_done.load() == impl_->num_chunks; });
  {
    std::unique_lock<std::mutex> lock(impl_->mu);
    impl_->done_cv.wait(lock, [&] {
      return impl_->chunks_done.load() == impl_->num_chunks && impl_->active_workers == 0;
    });
    impl_->fn = nullptr;
  }
  if (impl_->error) std::rethrow_exception(impl_->error);
}

}  // namespace xjax
