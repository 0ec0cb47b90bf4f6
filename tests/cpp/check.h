// The C++ tests' assertion: CHECK(cond) prints the failed condition and counts it (from any
// thread); check_report() prints the verdict and gives main's exit code.
#pragma once
#include <atomic>
#include <cstdio>

inline std::atomic<int> check_failures{0};

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++check_failures;                                                    \
    }                                                                      \
  } while (0)

inline int check_report() {
  const int n = check_failures.load();
  std::printf("%s (%d failures)\n", n ? "FAILED" : "ok", n);
  return n ? 1 : 0;
}
