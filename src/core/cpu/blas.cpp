// BLAS loaded at run time: dlopen the scipy-openblas library whose path the caller found, resolve
// its scipy_-prefixed CBLAS symbols. No link-time dependency, so the core also runs without it.
#include "core/cpu/blas.h"

#include <dlfcn.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include "core/cpu/contraction_blas.h"
#include "core/cpu/lapack.h"
#include "core/float_env.h"

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
  // BLAS computes on our kernel threads, which flush subnormals (float_env.h); any thread
  // OpenBLAS starts at load starts with its creator's MXCSR, so flush here too.
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
  // BLAS runs on the calling thread only: the contraction kernels split a product over our own
  // (current) pool. BLAS's own threads would compete with our pool's workers for the same cores
  // (measured: a 1024x784x64 sgemm 5x slower on 2 cores), and a device's share of the cores
  // could not be given to them.
  set_threads(1);
  load_lapack(lib);  // LAPACK comes from the same library; without it only the linalg ops fail
  g_api.store(api, std::memory_order_release);  // never unloaded: kernels may hold the pointers
  return true;
}

bool blas_loaded() { return blas_api() != nullptr; }

}  // namespace xjax
