#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

#include "core/arch.h"
#include "core/float_env.h"
#include "core/wake_placement.h"

namespace xjax {

namespace {
thread_local bool tl_in_parallel_region = false;
thread_local ThreadPool* tl_current = nullptr;  // null: the global pool

// The CPUs this process may run on: its affinity mask (an MPI launcher's binding of each process
// to its cores, a container's cpuset, taskset), not every CPU of the machine. A pool larger than
// the mask time-shares its cores, and a worker spinning for the next job (kSpin) then takes the
// core from the thread it shares it with.
int available_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int default_num_threads() {
  if (const char* env = std::getenv("XJAX_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return available_cpus();
}

// Waking a sleeping thread costs tens of microseconds, as much as a mid-size kernel; so threads
// spin this long for the next job (or for the workers to finish) before they sleep.
constexpr auto kSpin = std::chrono::microseconds(50);

template <typename Done>
void spin_until(Done done) {
  auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0; !done(); ++i) {
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return;
  }
}

// One parallel_for call. It lives on its caller's stack: the caller takes it off the open list
// before waiting, and a worker joins it (active++) only while it is listed, under the pool's
// lock, so no worker can touch it once the caller has seen `active == 0` and returned.
struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, chunk, num_chunks;  // fixed for the job's life
  uint32_t float_env;            // the caller's: workers compute as the caller would
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> chunks_done{0};
  int active = 0;            // workers inside run_chunks (guarded by the pool's lock)
  std::exception_ptr error;  // the first error (guarded by the pool's lock)
  std::condition_variable finished;

  bool all_done() const { return chunks_done.load(std::memory_order_acquire) == num_chunks; }
};
}  // namespace

struct ThreadPool::Impl {
  explicit Impl(int num_threads) : placement(num_threads), sleepers(size_t(std::max(num_threads - 1, 0))) {}

  WakePlacement placement;
  std::vector<WakePlacement::Sleeper> sleepers;  // one per worker (guarded by mu)
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable work_cv;
  bool stop = false;
  // Open jobs, oldest first: several callers may share the pool at once (e.g. two Python
  // threads running compiled functions); idle workers help the oldest job with chunks left.
  std::vector<Job*> jobs;
  std::atomic<uint64_t> published{0};  // counts jobs opened; read without the lock for spinning

  void run_chunks(Job& job) {
    tl_in_parallel_region = true;
    for (;;) {
      int64_t c = job.next_chunk.fetch_add(1);
      if (c >= job.num_chunks) break;
      int64_t b = c * job.chunk, e = std::min(job.n, b + job.chunk);
      try {
        (*job.fn)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!job.error) job.error = std::current_exception();
      }
      job.chunks_done.fetch_add(1, std::memory_order_acq_rel);
    }
    tl_in_parallel_region = false;
  }

  // The oldest listed job with chunks nobody has claimed yet (call with mu held).
  Job* pick() {
    for (Job* j : jobs)
      if (j->next_chunk.load() < j->num_chunks) return j;
    return nullptr;
  }

  void worker_loop(ThreadPool* owner, WakePlacement::Sleeper& me) {
    tl_current = owner;  // kernels asking for the pool size inside a chunk get this pool's
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      Job* job = stop ? nullptr : pick();
      if (!job && !stop) {
        uint64_t seen = published.load();
        lock.unlock();
        spin_until([&] { return published.load(std::memory_order_acquire) != seen; });
        lock.lock();
        me.wait(placement, work_cv, lock, [&] { return stop || (job = pick()) != nullptr; });
      }
      if (stop) return;
      ++job->active;
      lock.unlock();
      set_float_env(job->float_env);
      run_chunks(*job);
      lock.lock();
      // Notified under the lock: the caller cannot return (and free the job) before we let go.
      if (--job->active == 0 && job->all_done()) job->finished.notify_one();
    }
  }
};

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = new ThreadPool(default_num_threads());  // never destroyed: no exit races
  return *pool;
}

ThreadPool& ThreadPool::current() { return tl_current ? *tl_current : global(); }

ThreadPool::Use::Use(ThreadPool& pool) : prev_(tl_current) { tl_current = &pool; }

ThreadPool::Use::~Use() { tl_current = prev_; }

ThreadPool::ThreadPool(int num_threads) : impl_(new Impl(num_threads)) {
  for (auto& sleeper : impl_->sleepers)
    impl_->workers.emplace_back([this, &sleeper] { impl_->worker_loop(this, sleeper); });
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
  Impl& p = *impl_;
  Job job;
  job.fn = &fn;
  job.n = n;
  // A few chunks per thread balances uneven work without much overhead.
  int64_t chunks = std::min<int64_t>(n / grain, int64_t(threads) * 4);
  job.chunk = (n + chunks - 1) / chunks;
  job.num_chunks = (n + job.chunk - 1) / job.chunk;
  job.float_env = float_env();
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.jobs.push_back(&job);
    p.published.fetch_add(1, std::memory_order_release);
    p.placement.keep_off_caller(p.sleepers);  // (sleeping workers wake on another CPU)
  }
  p.work_cv.notify_all();
  p.run_chunks(job);
  {
    // Every chunk is claimed: unlist the job so that no worker joins it from now on.
    std::lock_guard<std::mutex> lock(p.mu);
    p.jobs.erase(std::find(p.jobs.begin(), p.jobs.end(), &job));
  }
  spin_until([&] { return job.all_done(); });
  {
    std::unique_lock<std::mutex> lock(p.mu);
    job.finished.wait(lock, [&] { return job.all_done() && job.active == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace xjax
