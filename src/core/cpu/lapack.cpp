// LAPACK loaded at run time from the scipy-openblas library that blas.cpp opened: resolve the
// scipy_-prefixed Fortran symbols of each routine, real and complex, in single and double precision.
#include "core/cpu/lapack.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

namespace xjax {

namespace {
std::atomic<const LapackApi*> g_api{nullptr};

template <typename F>
bool resolve(void* lib, const std::string& name, F*& out) {
  out = reinterpret_cast<F*>(dlsym(lib, ("scipy_" + name + "_").c_str()));
  return out != nullptr;
}

// The routines of the matrix forms and Householder products (linalg_schur.cpp, linalg_forms.cpp).
template <typename T>
bool resolve_forms(void* lib, const std::string& s, LapackFns<T>& f) {
  return resolve(lib, s + "gees", f.gees) && resolve(lib, s + "gehrd", f.gehrd) && resolve(lib, s + "sytrd", f.sytrd) &&
         resolve(lib, s + "gtsv", f.gtsv) && resolve(lib, s + "ormqr", f.ormqr);
}

template <typename T>
bool resolve_all(void* lib, char p, LapackFns<T>& f) {
  const std::string s(1, p);
  return resolve(lib, s + "potrf", f.potrf) && resolve(lib, s + "getrf", f.getrf) &&
         resolve(lib, s + "geqrf", f.geqrf) && resolve(lib, s + "geqp3", f.geqp3) &&
         resolve(lib, s + "orgqr", f.orgqr) &&
         resolve(lib, s + "syevd", f.syevd) && resolve(lib, s + "geev", f.geev) && resolve(lib, s + "gesdd", f.gesdd) &&
         resolve(lib, s + "trsm", f.trsm) && resolve(lib, s + "gemm", f.gemm) && resolve(lib, s + "syrk", f.syrk) &&
         resolve(lib, s + "laswp", f.laswp) && resolve_forms(lib, s, f);
}

template <typename R>
bool resolve_all(void* lib, char p, LapackFns<std::complex<R>>& f) {
  const std::string s(1, p);
  return resolve(lib, s + "potrf", f.potrf) && resolve(lib, s + "getrf", f.getrf) &&
         resolve(lib, s + "geqrf", f.geqrf) && resolve(lib, s + "geqp3", f.geqp3) &&
         resolve(lib, s + "ungqr", f.ungqr) && resolve(lib, s + "heevd", f.heevd) &&
         resolve(lib, s + "gesdd", f.gesdd) && resolve(lib, s + "geev", f.geev) && resolve(lib, s + "trsm", f.trsm) &&
         resolve(lib, s + "gemm", f.gemm) &&
         resolve(lib, s + "herk", f.herk) && resolve(lib, s + "laswp", f.laswp) && resolve(lib, s + "gees", f.gees) &&
         resolve(lib, s + "gehrd", f.gehrd) && resolve(lib, s + "hetrd", f.hetrd) && resolve(lib, s + "gtsv", f.gtsv) &&
         resolve(lib, s + "unmqr", f.unmqr);
}
}  // namespace

bool load_lapack(void* lib) {
  if (g_api.load()) return true;
  auto* api = new LapackApi{};
  if (!resolve_all(lib, 's', api->s) || !resolve_all(lib, 'd', api->d) || !resolve_all(lib, 'c', api->c) ||
      !resolve_all(lib, 'z', api->z)) {  // all or none: a kernel never finds a routine missing
    delete api;
    return false;
  }
  g_api.store(api, std::memory_order_release);  // never unloaded: kernels may hold the pointers
  return true;
}

const LapackApi* lapack_api() { return g_api.load(std::memory_order_acquire); }

bool lapack_loaded() { return lapack_api() != nullptr; }

}  // namespace xjax
