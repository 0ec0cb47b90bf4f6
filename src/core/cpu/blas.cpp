// BLAS loaded at run time: dlopen the scipy-openblas library whose path the caller found, resolve
// its scipy_-prefixed CBLAS symbols. No link-time dependency, so the core also runs without it.
#include "core/cpu/blas.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include "core/cpu/contraction_blas.h"
#include "core/float_env.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {
std::atomic<const BlasApi*> g_api{nullptr};
std::mutex g_load_mu;  // guards loading and sizing
std::atomic<int> g_threads{0};  // wanted pool size; 0: the global pool's
void (*g_set_threads)(int) = nullptr;  // (guarded by g_load_mu)

int wanted_threads() {
  int n = g_threads.load();
  return n > 0 ? n : ThreadPool::global().size();
}

template <typename F>
bool resolve(void* lib, const char* name, F*& out) {
  out = reinterpret_cast<F*>(dlsym(lib, name));
  return out != nullptr;
}
}  // namespace

const BlasApi* blas_api() { return g_api.load(std::memory_order_acquire); }

bool load_blas(const std::string& path) {
  // XJAX_DISABLE_BLAS=1 keeps the built-in kernels (for tests and for comparing results).
  const char* off = std::getenv("XJAX_DISABLE_BLAS");
  if (off && *off && std::string(off) != "0") return false;
  std::lock_guard<std::mutex> lock(g_load_mu);
  if (g_api.load()) return true;  // the first library loaded stays
  if (path.empty()) return false;
  // BLAS computes on its own threads, which we cannot reach; a new thread starts with its
  // creator's MXCSR, so the threads OpenBLAS starts here (at load, or when sized below) flush
  // subnormals as every kernel thread does (float_env.h). Threads it starts later start inside a
  // kernel run, under the same setting.
  FlushSubnormalsScope flush;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto* api = new BlasApi{};
  void (*set_threads)(int) = nullptr;
  bool ok = resolve(lib, "scipy_cblas_sgemm", api->sgemm) && resolve(lib, "scipy_cblas_dgemm", api->dgemm) &&
            resolve(lib, "scipy_openblas_set_num_threads", set_threads);
  if (!ok) {
    delete api;
    dlclose(lib);
    return false;
  }
  // OpenBLAS names the kernel set it picked for this CPU; only some of them use AVX-512.
  const char* (*core_name)() = nullptr;
  if (resolve(lib, "scipy_openblas_get_corename", core_name) && core_name()) {
    std::string core = core_name();
    for (auto& ch : core) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    for (const char* wide : {"skylakex", "cooperlake", "sapphirerapids", "zen4", "zen5"})
      if (core.find(wide) != std::string::npos) api->avx512_kernels = true;
  }
  // One pool size for both: BLAS threads run only while our own pool waits for the gemm.
  api->num_threads = wanted_threads();
  set_threads(api->num_threads);
  g_set_threads = set_threads;
  g_api.store(api, std::memory_order_release);  // never unloaded: kernels may hold the pointers
  return true;
}

bool blas_loaded() { return blas_api() != nullptr; }

void set_blas_num_threads(int n) {
  std::lock_guard<std::mutex> lock(g_load_mu);
  g_threads.store(std::max(n, 0));
  if (!g_set_threads) return;
  // The BLAS's own setter, then the size the kernels compare against: only the latter is read concurrently.
  BlasApi* api = const_cast<BlasApi*>(g_api.load());
  FlushSubnormalsScope flush;  // threads BLAS starts now flush subnormals, as at load
  g_set_threads(wanted_threads());
  api->num_threads.store(wanted_threads());
}

}  // namespace xjax
