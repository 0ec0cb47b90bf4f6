#include "core/devices.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/event.h"
#include "core/stream.h"

namespace xjax {

namespace {

struct Device {
  std::unique_ptr<ThreadPool> own_pool;  // null: the global pool (a single device)
  Stream host;                           // the device's host thread: runs its work in order
  ThreadPool& pool() { return own_pool ? *own_pool : ThreadPool::global(); }
};

thread_local bool tl_on_device = false;  // set while a thread runs a device's work

std::mutex g_mu;
int g_requested = 1;
std::vector<Device*>* g_devices = nullptr;  // made at first use, never destroyed (no exit races)

std::vector<Device*>& devices() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_devices) {
    const int n = g_requested, share = std::max(1, ThreadPool::global().size() / n);
    auto* made = new std::vector<Device*>();
    for (int i = 0; i < n; ++i) {
      auto* d = new Device();
      if (n > 1) d->own_pool.reset(new ThreadPool(share));
      made->push_back(d);
    }
    g_devices = made;
  }
  return *g_devices;
}

Device& device(int d) {
  auto& all = devices();
  if (d < 0 || d >= int(all.size()))
    throw std::out_of_range("[devices] no CPU device " + std::to_string(d) + " (there are " +
                            std::to_string(all.size()) + ")");
  return *all[d];
}

}  // namespace

void set_num_devices(int n) {
  if (n < 1)
    throw std::invalid_argument("[devices] the number of CPU devices must be at least 1, got " + std::to_string(n));
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_devices && int(g_devices->size()) != n)
    throw std::logic_error("[devices] the CPU is already split into " + std::to_string(g_devices->size()) +
                           " devices; the number can only be set before they are first used");
  g_requested = n;
}

int num_devices() { return int(devices().size()); }

ThreadPool& device_pool(int d) { return device(d).pool(); }

void run_on_devices(const std::vector<int>& ids, const std::vector<std::function<void()>>& work) {
  if (ids.size() != work.size()) throw std::invalid_argument("[run_on_devices] one work item per device");
  for (size_t i = 0; i < ids.size(); ++i) {
    device(ids[i]);  // checks the id
    if (std::count(ids.begin(), ids.end(), ids[i]) > 1)
      throw std::invalid_argument("[run_on_devices] device " + std::to_string(ids[i]) + " given twice");
  }
  if (tl_on_device) {  // waiting for another device's host thread could wait for ourselves
    for (size_t i = 0; i < ids.size(); ++i) {
      ThreadPool::Use use(device(ids[i]).pool());
      work[i]();
    }
    return;
  }
  std::vector<std::shared_ptr<Event>> done;
  for (size_t i = 0; i < ids.size(); ++i) {
    Device& dev = device(ids[i]);
    auto event = std::make_shared<Event>();
    done.push_back(event);
    const std::function<void()>* fn = &work[i];  // lives until every event is set (we wait below)
    ThreadPool* pool = &dev.pool();
    dev.host.enqueue([fn, pool, event] {
      tl_on_device = true;
      try {
        ThreadPool::Use use(*pool);
        (*fn)();
        event->set();
      } catch (...) {
        event->set(std::current_exception());
      }
      tl_on_device = false;
    });
  }
  std::exception_ptr first;
  for (auto& e : done) {
    try {
      e->wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace xjax
