// The CPU split into devices (core/devices.h): each device's work runs on its own host thread with
// its own share of the pool current, the devices' work runs at once, errors come back, and an
// executable runs on several devices side by side. A ThreadSanitizer target too. Exits non-zero on
// the first failure.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/compiler/executable.h"
#include "core/devices.h"
#include "core/thread_pool.h"
#include "check.h"

using namespace xjax;

namespace {

constexpr int kDevices = 2;

void test_pools() {
  CHECK(num_devices() == kDevices);
  const int share = std::max(1, ThreadPool::global().size() / kDevices);
  for (int d = 0; d < kDevices; ++d) {
    CHECK(device_pool(d).size() == share);
    CHECK(&device_pool(d) != &ThreadPool::global());
  }
  CHECK(&device_pool(0) != &device_pool(1));
  CHECK(&ThreadPool::current() == &ThreadPool::global());  // outside device work
  bool bad_id = false;
  try {
    device_pool(kDevices);
  } catch (const std::out_of_range&) {
    bad_id = true;
  }
  CHECK(bad_id);
}

void test_number_fixed_after_first_use() {
  set_num_devices(kDevices);  // unchanged: fine
  bool thrown = false;
  try {
    set_num_devices(kDevices + 1);
  } catch (const std::logic_error&) {
    thrown = true;
  }
  CHECK(thrown);
  CHECK(num_devices() == kDevices);
}

// Each device's work sees its own pool, and the two run at the same time: each waits (bounded)
// until both have started.
void test_work_runs_at_once_on_own_pools() {
  for (int it = 0; it < 50; ++it) {
    std::atomic<int> started{0};
    std::atomic<bool> both[kDevices] = {false, false};
    std::vector<std::function<void()>> work;
    for (int d = 0; d < kDevices; ++d) {
      work.push_back([&, d] {
        CHECK(&ThreadPool::current() == &device_pool(d));
        ++started;
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (started.load() < kDevices && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        both[d] = started.load() == kDevices;
        std::vector<int> hits(10000, 0);
        parallel_for(10000, 16, [&](int64_t b, int64_t e) {
          CHECK(&ThreadPool::current() == &device_pool(d));  // on the device's workers too
          for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
        });
        bool once = true;
        for (int h : hits) once = once && h == 1;
        CHECK(once);
      });
    }
    run_on_devices({0, 1}, work);
    CHECK(both[0] && both[1]);
  }
  CHECK(&ThreadPool::current() == &ThreadPool::global());
}

void test_errors_and_nesting() {
  bool thrown = false;
  try {
    run_on_devices({1, 0}, {[] {}, [] { throw std::runtime_error("shard failed"); }});
  } catch (const std::runtime_error& e) {
    thrown = std::string(e.what()) == "shard failed";
  }
  CHECK(thrown);
  bool twice = false;
  try {
    run_on_devices({0, 0}, {[] {}, [] {}});
  } catch (const std::invalid_argument&) {
    twice = true;
  }
  CHECK(twice);
  // From inside a device's work: the nested items run in place, each with its device's pool.
  int ran = 0;
  run_on_devices({0}, {[&] {
    run_on_devices({1, 0}, {[&] { ran += &ThreadPool::current() == &device_pool(1); },
                            [&] { ran += &ThreadPool::current() == &device_pool(0); }});
  }});
  CHECK(ran == 2);
}

ValueRef op(Graph& g, OpId id, std::vector<ValueRef> in, const Attrs& attrs = Attrs()) {
  return g.add(id, in, attrs)[0];
}

// out = x * x summed: one executable on both devices at once, with different inputs.
void test_executable_on_devices() {
  const int64_t n = int64_t(1) << 18;
  Graph g;
  ValueRef x = g.parameter({{n}, DType::Float32});
  Attrs axes;
  axes.set("axes", std::vector<int64_t>{0});
  g.set_outputs({op(g, OpId::reduce_sum_, {op(g, OpId::mul_, {x, x})}, axes)});
  auto exe = compile(g);
  for (int it = 0; it < 20; ++it) {
    std::vector<std::vector<Array>> inputs;
    for (int d = 0; d < kDevices; ++d) {
      Array a = Array::empty({n}, DType::Float32);
      for (int64_t i = 0; i < n; ++i) static_cast<float*>(a.data())[i] = (i % 2 ? 1.0f : 0.0f) * float(d + 1);
      inputs.push_back({a});
    }
    auto out = exe->run_on_devices(inputs, {0, 1});
    CHECK(out.size() == 2);
    for (int d = 0; d < kDevices; ++d) {
      CHECK(!out[d][0].ready);  // computed already
      CHECK(*static_cast<const float*>(out[d][0].data()) == float(n / 2) * float((d + 1) * (d + 1)));
    }
  }
}

}  // namespace

int main() {
  set_num_devices(kDevices);
  test_pools();
  test_number_fixed_after_first_use();
  test_work_runs_at_once_on_own_pools();
  test_errors_and_nesting();
  test_executable_on_devices();
  return check_report();
}
