#include "core/wake_placement.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace xjax {

#if defined(__linux__)
WakePlacement::WakePlacement(int threads) {
  CPU_ZERO(&mask_);
  on_ = sched_getaffinity(0, sizeof(mask_), &mask_) == 0 && threads <= CPU_COUNT(&mask_);
}

int WakePlacement::self_tid() { return int(syscall(SYS_gettid)); }

int WakePlacement::caller_cpu() const {
  if (!on_) return -1;
  const int cpu = sched_getcpu();
  return cpu >= 0 && CPU_ISSET(cpu, &mask_) ? cpu : -1;
}

void WakePlacement::keep_off_caller(std::vector<Sleeper>& sleepers) const {
  int cpu = -2;  // (looked up at the first sleeper found)
  for (Sleeper& s : sleepers) {
    if (!s.asleep_) continue;
    if (cpu == -2) cpu = caller_cpu();
    if (cpu < 0) return;
    if (s.kept_off_ == cpu) continue;
    cpu_set_t others = mask_;
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(s.tid_, sizeof(others), &others) == 0) s.kept_off_ = cpu;
  }
}

void WakePlacement::widen() const { sched_setaffinity(0, sizeof(mask_), &mask_); }

#else

WakePlacement::WakePlacement(int) {}
int WakePlacement::self_tid() { return 0; }
int WakePlacement::caller_cpu() const { return -1; }
void WakePlacement::keep_off_caller(std::vector<Sleeper>&) const {}
void WakePlacement::widen() const {}

#endif

}  // namespace xjax
