// A one-shot completion flag for asynchronously computed values; carries the error, if any.
#pragma once
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
      done_ = true;
    }
    cv_.notify_all();
  }
  // Blocks until set; rethrows the error of the computation that produced the value.
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  bool is_set() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  std::exception_ptr error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace xjax
