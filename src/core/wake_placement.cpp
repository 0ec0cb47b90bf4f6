#include "core/wake_placement.h"

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#endif

namespace xjax {

#if defined(__linux__)
static_assert(sizeof(cpu_set_t) <= 128, "cpu_set_t must fit WakePlacement's mask bytes");

namespace {
cpu_set_t as_set(const unsigned char* bytes) {
  cpu_set_t s;
  std::memcpy(&s, bytes, sizeof(s));
  return s;
}
}  // namespace

WakePlacement::WakePlacement(int threads) {
  cpu_set_t s;
  CPU_ZERO(&s);
  on_ = sched_getaffinity(0, sizeof(s), &s) == 0 && CPU_COUNT(&s) >= 2 && threads <= CPU_COUNT(&s);
  std::memcpy(mask_, &s, sizeof(s));
}

int WakePlacement::self_tid() { return int(syscall(SYS_gettid)); }

int WakePlacement::caller_cpu() const {
  if (!on_) return -1;
  const int cpu = sched_getcpu();
  const cpu_set_t s = as_set(mask_);
  return cpu >= 0 && CPU_ISSET(cpu, &s) ? cpu : -1;
}

void WakePlacement::keep_off_caller(std::vector<Sleeper>& sleepers) const {
  int cpu = -2;  // (looked up at the first sleeper found)
  for (Sleeper& s : sleepers) {
    if (!s.asleep_) continue;
    if (cpu == -2) cpu = caller_cpu();
    if (cpu < 0) return;
    if (s.kept_off_ == cpu) continue;
    cpu_set_t others = as_set(mask_);
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(s.tid_, sizeof(others), &others) == 0) s.kept_off_ = cpu;
  }
}

void WakePlacement::widen() const {
  const cpu_set_t s = as_set(mask_);
  sched_setaffinity(0, sizeof(s), &s);
}

#else

WakePlacement::WakePlacement(int) {}
int WakePlacement::self_tid() { return 0; }
int WakePlacement::caller_cpu() const { return -1; }
void WakePlacement::keep_off_caller(std::vector<Sleeper>&) const {}
void WakePlacement::widen() const {}

#endif

}  // namespace xjax
