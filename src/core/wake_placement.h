// Keeps a thread that sleeps until another wakes it (a thread pool's worker) off its waker's CPU.
//
// Linux may place a thread it wakes on the waker's CPU even while another CPU of the mask is idle
// (measured under KVM, where an idle vCPU does not count as available: 30 of 30 wakes of a pool
// worker landed on its caller's CPU). The woken thread then waits behind its waker for up to a time
// slice and shares the waker's core until the load balancer moves one of them, milliseconds later:
// a parallel job takes as long as on one core. So a waker first narrows the sleeper's CPU mask to
// exclude its own CPU (the kernel then has to wake it elsewhere), and the sleeper widens its mask
// again once it is awake. Nothing is done when the mask has one CPU, or on other systems.
#pragma once
#include <condition_variable>
#include <mutex>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace xjax {

class WakePlacement {
 public:
  // `threads`: how many threads (wakers and sleepers) share the mask; with more than its CPUs
  // they time-share cores anyway, and placement is left to the kernel.
  explicit WakePlacement(int threads);

  // One sleeping thread as its wakers see it; guarded by the mutex it sleeps under.
  class Sleeper {
   public:
    // On the sleeping thread, with `lock` held: waits on cv until pred(), then widens its mask
    // again if a waker narrowed it (a system call, made under the lock: what pred() found stays
    // valid; it happens only on a wake).
    template <typename Pred>
    void wait(const WakePlacement& placement, std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
              Pred pred) {
      if (tid_ == 0) tid_ = self_tid();
      asleep_ = true;
      cv.wait(lock, pred);
      asleep_ = false;
      if (kept_off_ < 0) return;
      kept_off_ = -1;
      placement.widen();
    }

   private:
    friend class WakePlacement;
    int tid_ = 0;
    bool asleep_ = false;
    int kept_off_ = -1;  // the CPU its mask now excludes, or -1
  };

  // On a waker, with the sleepers' mutex held, before notifying: keeps those that sleep off the
  // calling thread's CPU.
  void keep_off_caller(std::vector<Sleeper>& sleepers) const;

 private:
  int caller_cpu() const;  // -1 where sleepers are not to be kept off it
  static int self_tid();
  void widen() const;
  bool on_ = false;
#if defined(__linux__)
  cpu_set_t mask_;  // the creating thread's CPUs
#endif
};

}  // namespace xjax
