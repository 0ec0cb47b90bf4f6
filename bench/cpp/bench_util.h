// Timing helpers for the compiled benchmarks: medians of repeated runs, aligned buffers.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

namespace xjax::bench {

// Median seconds of `reps` runs of fn after one warm-up run.
inline double median_seconds(int reps, const std::function<void()>& fn) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto a = std::chrono::steady_clock::now();
    fn();
    auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double>(b - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

inline void report(const char* name, double seconds, double amount, const char* unit) {
  std::printf("%-44s %9.3f ms  %8.1f %s\n", name, seconds * 1e3, amount / seconds / 1e9, unit);
}

}  // namespace xjax::bench
