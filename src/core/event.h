// A one-shot completion flag for asynchronously computed values; carries the error, if any.
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace xjax {

class Event {
 public:
  void set(std::exception_ptr error = nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = error;
      done_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
  }
  // Blocks until set; rethrows the error of the computation that produced the value.
  void wait() {
    if (!is_set()) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return done_.load(std::memory_order_relaxed); });
    }
    if (error_) std::rethrow_exception(error_);
  }
  // (The error is written once, before done_ is released: after an acquiring read of done_ it
  // is read without the lock.)
  bool is_set() const { return done_.load(std::memory_order_acquire); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
};

}  // namespace xjax
