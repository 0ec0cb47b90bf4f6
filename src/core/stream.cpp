#include "core/stream.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace xjax {

namespace {
thread_local bool tl_in_task = false;
}  // namespace

struct Stream::Impl {
  std::mutex mu;
  std::condition_variable cv, drained;
  std::deque<std::function<void()>> queue;
  bool stop = false;
  std::atomic<int64_t> unfinished{0};  // tasks queued or running (read without the lock: idle())
  std::thread worker;

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty()) return;  // stop requested and drained
      auto task = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      tl_in_task = true;
      task();  // tasks catch their own errors and record them on their outputs' events
      tl_in_task = false;
      lock.lock();
      unfinished.fetch_sub(1, std::memory_order_release);
      if (unfinished.load(std::memory_order_relaxed) == 0) drained.notify_all();
    }
  }
};

Stream& Stream::global() {
  static Stream* s = new Stream();  // never destroyed: no exit races with Python finalisation
  return *s;
}

Stream::Stream() : impl_(new Impl) { impl_->worker = std::thread([this] { impl_->loop(); }); }

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->worker.join();
  delete impl_;
}

void Stream::enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->unfinished.fetch_add(1, std::memory_order_relaxed);
    impl_->queue.push_back(std::move(task));
  }
  impl_->cv.notify_one();
}

bool Stream::idle() const { return impl_->unfinished.load(std::memory_order_acquire) == 0; }

bool Stream::in_task() { return tl_in_task; }

void Stream::synchronize() {
  if (tl_in_task)
    throw std::runtime_error("[synchronize] called from inside a queued computation (a host callback): it would "
                             "wait for itself");
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->drained.wait(lock, [&] { return impl_->unfinished.load(std::memory_order_relaxed) == 0; });
}

}  // namespace xjax
