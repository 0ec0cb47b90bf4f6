// Several threads at once on the thread pool, on one executable (inline and queued runs), and on
// the compiler: results must be right, and the ThreadSanitizer build (XJAX_SANITIZE=thread) must
// report nothing. Also: kernels flush subnormals on every pool thread, and the caller's floating-
// point environment comes back. Exits non-zero on the first failure.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

#include "core/compiler/executable.h"
#include "core/ops/scalar_ops.h"
#include "core/thread_pool.h"
#include "check.h"

using namespace xjax;

namespace {

constexpr int kThreads = 4;

template <class F>
void on_threads(F f) {
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) ts.emplace_back(f, t);
  for (auto& t : ts) t.join();
}

ValueRef op(Graph& g, OpId id, std::vector<ValueRef> in, const Attrs& attrs = Attrs()) { return g.add(id, in, attrs)[0]; }

ValueRef scalar(Graph& g, double v) {
  Attrs a;
  a.set("dtype", std::string("float32"));
  a.set("value", v);
  return g.add(OpId::constant_, {}, a)[0];
}

ValueRef bcast(Graph& g, ValueRef x, int64_t n) {
  Attrs a;
  a.set("shape", Shape{n});
  a.set("broadcast_dimensions", std::vector<int64_t>{});
  return op(g, OpId::broadcast_in_dim_, {x}, a);
}

// out0 = x * 2 + 1 (elementwise), out1 = sum(out0): one fused kernel split over the pool.
Graph affine_sum_graph(int64_t n) {
  Graph g;
  ValueRef x = g.parameter({{n}, DType::Float32});
  ValueRef y = op(g, OpId::add_, {op(g, OpId::mul_, {x, bcast(g, scalar(g, 2), n)}), bcast(g, scalar(g, 1), n)});
  Attrs axes;
  axes.set("axes", std::vector<int64_t>{0});
  g.set_outputs({y, op(g, OpId::reduce_sum_, {y}, axes)});
  return g;
}

Array filled(int64_t n, float v) {
  Array a = Array::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(a.data())[i] = v;
  return a;
}

bool all_equal(const Array& a, float v) {
  const float* p = static_cast<const float*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i)
    if (p[i] != v) return false;
  return true;
}

// Concurrent parallel_for calls share the pool: every chunk runs exactly once, errors reach their
// own caller, and nested calls run inline.
void test_pool_concurrent_callers() {
  on_threads([](int t) {
    for (int it = 0; it < 200; ++it) {
      const int64_t n = 5000 + 37 * t + it;
      std::vector<int> hits(size_t(n), 0);
      parallel_for(n, 64, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
        if (b == 0) parallel_for(100, 1, [](int64_t, int64_t) {});  // nested: inline
      });
      bool once = true;
      for (int h : hits) once = once && h == 1;
      CHECK(once);
      if (it % 10 == 0) {
        bool thrown = false;
        try {
          parallel_for(n, 64, [&](int64_t b, int64_t) {
            if (b > n / 2) throw std::runtime_error("chunk failed");
          });
        } catch (const std::runtime_error&) {
          thrown = true;
        }
        CHECK(thrown);
      }
    }
  });
}

// Many tiny jobs back to back on a pool with more workers than cores: workers that wake late for
// a finished job must not touch it while the next job is being set up (a race TSan once found).
void test_pool_back_to_back_jobs() {
  ThreadPool pool(6);
  for (int it = 0; it < 20000; ++it) {
    const int64_t n = 2 + it % 7;
    std::atomic<int64_t> sum{0};
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
    CHECK(sum == n * (n - 1) / 2);
  }
}

#if defined(__linux__)
// A worker woken for a job runs on another CPU than the job's caller, with the pool's whole mask
// (core/wake_placement.h). Each trial lets the worker fall asleep, then runs two chunks: the
// caller's waits for the worker's, so the worker must join.
void test_pool_wakes_workers_off_caller_cpu() {
  cpu_set_t all;
  CPU_ZERO(&all);
  if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2) return;
  ThreadPool pool(2);
  int trials = 0;
  for (int it = 0; it < 30; ++it) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // past the workers' spin
    const std::thread::id caller = std::this_thread::get_id();
    const int caller_cpu = sched_getcpu();
    if (caller_cpu < 0) return;  // (no CPU numbers here)
    std::atomic<int> started{0}, worker_cpu{-1}, caller_cpu_after{-1};
    std::atomic<bool> worker_mask_whole{false};
    pool.parallel_for(2, 1, [&](int64_t, int64_t) {
      ++started;
      if (std::this_thread::get_id() == caller) {
        caller_cpu_after = sched_getcpu();
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (started.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
      } else {
        worker_cpu = sched_getcpu();
        cpu_set_t mine;
        CPU_ZERO(&mine);
        worker_mask_whole = sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_EQUAL(&mine, &all);
      }
    });
    if (worker_cpu < 0 || caller_cpu_after != caller_cpu) continue;  // (the caller moved: no verdict)
    ++trials;
    CHECK(worker_cpu != caller_cpu);
    CHECK(worker_mask_whole);
  }
  CHECK(trials >= 10);
}
#endif

// One executable run from several threads at once: inline runs (small) and queued ones (large),
// some chained on not-yet-computed inputs.
void test_one_executable_many_threads(int64_t n, int iterations) {
  auto exe = compile(affine_sum_graph(n));
  on_threads([&](int t) {
    for (int it = 0; it < iterations; ++it) {
      float v = float(t + it % 3);
      std::vector<Array> out = exe->run({filled(n, v)});
      std::vector<Array> again = exe->run({out[0]});  // chained: waits for out[0]'s event
      out[1].wait();
      again[0].wait();
      CHECK(all_equal(out[0], 2 * v + 1));
      CHECK(std::fabs(*static_cast<const float*>(out[1].data()) - float(n) * (2 * v + 1)) <= 1e-3f * float(n) * (2 * v + 1));
      CHECK(all_equal(again[0], 2 * (2 * v + 1) + 1));
    }
  });
}

// Compiling (constant folding runs kernels on the compiling thread) from several threads.
void test_concurrent_compile() {
  on_threads([](int t) {
    for (int it = 0; it < 20; ++it) {
      Graph g;
      ValueRef c = op(g, OpId::mul_, {bcast(g, scalar(g, t + 1), 3000), bcast(g, scalar(g, it), 3000)});
      g.set_outputs({op(g, OpId::exp_, {op(g, OpId::neg_, {c})})});
      auto exe = compile(g);
      CHECK(exe->num_kernels() == 0);  // folded
      std::vector<Array> out = exe->run({});
      out[0].wait();
      CHECK(all_equal(out[0], scalar::exp(-float((t + 1) * it))));  // the op's own definition (not libm's)
    }
  });
}

// 1e-20f * 1e-20f is subnormal: kernels give 0 on every thread (JAX's FTZ/DAZ), while this
// thread keeps IEEE subnormals before and after.
void test_subnormals_flush_in_kernels_only() {
  const int64_t n = int64_t(1) << 20;  // split over the pool
  auto exe = compile_op(OpId::mul_, {{{n}, DType::Float32}, {{n}, DType::Float32}}, Attrs());
  volatile float tiny = 1e-20f;
  CHECK(tiny * tiny != 0.0f);
  on_threads([&](int) {
    Array x = filled(n, 1e-20f);
    std::vector<Array> out = exe->run({x, x});
    out[0].wait();
    CHECK(all_equal(out[0], 0.0f));
    volatile float t2 = 1e-20f;
    CHECK(t2 * t2 != 0.0f);
  });
  CHECK(tiny * tiny != 0.0f);
}

}  // namespace

int main() {
  test_pool_back_to_back_jobs();
  test_pool_concurrent_callers();
#if defined(__linux__)
  test_pool_wakes_workers_off_caller_cpu();
#endif
  test_one_executable_many_threads(int64_t(1) << 16, 40);   // inline runs, split over the pool
  test_one_executable_many_threads((int64_t(1) << 22) + 7, 2);  // over kInlineElements: queued
  test_concurrent_compile();
  test_subnormals_flush_in_kernels_only();
  return check_report();
}
