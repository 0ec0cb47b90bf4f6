// The in-order executor: work is queued and run by one host thread, so dispatch returns at once.
#pragma once
#include <functional>

namespace xjax {

class Stream {
 public:
  static Stream& global();
  Stream();
  ~Stream();
  // Queues a task; tasks run one after another, in the order given.
  void enqueue(std::function<void()> task);
  // True when nothing is queued or running: work may then run inline without reordering.
  bool idle() const;
  // Waits until every queued task has run. From inside a task (it would wait for itself): throws.
  void synchronize();
  // True on a thread while it runs a queued task (of any stream): work it waits for that is still
  // queued can never run.
  static bool in_task();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace xjax
