// BLAS loaded at run time: dlopen the scipy-openblas library whose path the caller found, resolve
// its scipy_-prefixed CBLAS symbols. No link-time dependency, so the core also runs without it.
#include "core/cpu/blas.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/cpu/contraction_blas.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {
std::atomic<const BlasApi*> g_api{nullptr};
std::mutex g_load_mu;

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
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto* api = new BlasApi{};
  bool ok = resolve(lib, "scipy_cblas_sgemm", api->sgemm) && resolve(lib, "scipy_cblas_dgemm", api->dgemm) &&
            resolve(lib, "scipy_cblas_sgemv", api->sgemv) && resolve(lib, "scipy_cblas_dgemv", api->dgemv) &&
            resolve(lib, "scipy_cblas_sdot", api->sdot) && resolve(lib, "scipy_cblas_ddot", api->ddot);
  void (*set_threads)(int) = nullptr;
  ok = ok && resolve(lib, "scipy_openblas_set_num_threads", set_threads);
  if (!ok) {
    delete api;
    dlclose(lib);
    return false;
  }
  resolve(lib, "scipy_cblas_sgemm_batch_strided", api->sgemm_batch_strided);
  resolve(lib, "scipy_cblas_dgemm_batch_strided", api->dgemm_batch_strided);
  // One pool size for both: BLAS threads run only while our own pool waits for the gemm.
  api->num_threads = ThreadPool::global().size();
  set_threads(api->num_threads);
  g_api.store(api, std::memory_order_release);  // never unloaded: kernels may hold the pointers
  return true;
}

bool blas_loaded() { return blas_api() != nullptr; }

}  // namespace xjax
