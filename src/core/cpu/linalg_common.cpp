// The shared parts of the linear-algebra kernels: LAPACK lookup, batch split, workspace cache,
// pivots to permutation; and the registration of the kernels.
#include "core/cpu/linalg_common.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "core/cpu/kernels.h"
#include "core/cpu/linalg_kernels.h"
#include "core/thread_pool.h"

namespace xjax::linalg {

const LapackApi& lapack(OpId op) {
  const LapackApi* api = lapack_api();
  if (!api)
    throw std::runtime_error(std::string("[") + op_name(op) +
                             "] needs LAPACK, which is not loaded (the scipy-openblas32 library was not found, or "
                             "XJAX_DISABLE_BLAS is set)");
  return *api;
}

void for_batch(int64_t count, double cost, const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) return;
  // A LAPACK call costs about a microsecond beyond its flops; a task should be worth ~50 us.
  constexpr double kTaskWork = 1e5, kCallWork = 2e3;
  const int64_t grain = std::max<int64_t>(1, int64_t(kTaskWork / (cost + kCallWork)));
  parallel_for(count, grain, fn);
}

void parallel_rows(int64_t rows, int64_t cols, const std::function<void(int64_t, int64_t)>& fn) {
  // Blocks of 8 rows (the transpose's tile), ~64K elements per task.
  const int64_t blocks = (rows + 7) / 8;
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(8 * cols, 1));
  parallel_for(blocks, grain, [&](int64_t b0, int64_t b1) { fn(b0 * 8, std::min(rows, b1 * 8)); });
}

std::array<int, 2> workspace(Routine r, DType dt, std::array<int64_t, 4> dims,
                             const std::function<std::array<int, 2>()>& query) {
  using Key = std::array<int64_t, 6>;
  static std::mutex mu;
  static std::map<Key, std::array<int, 2>> cache;
  const Key key{int64_t(r), int64_t(dt), dims[0], dims[1], dims[2], dims[3]};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::array<int, 2> sizes = query();  // outside the lock: queries of other shapes may run at once
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 4096) cache.clear();  // bounded: shapes seen once do not pile up
  cache[key] = sizes;
  return sizes;
}

void pivots_to_permutation(const int32_t* pivots, int64_t k, int32_t* perm, int64_t m) {
  for (int64_t i = 0; i < m; ++i) perm[i] = int32_t(i);
  if (m == 0) return;
  for (int64_t i = 0; i < std::min(k, m); ++i) {
    int64_t j = pivots[i];
    if (j < 0) j += m;
    const int64_t read = std::min<int64_t>(std::max<int64_t>(j, 0), m - 1);
    const int32_t x = perm[i], y = perm[read];
    perm[i] = y;
    if (j >= 0 && j < m) perm[j] = x;
  }
}

}  // namespace xjax::linalg

namespace xjax {

void register_linalg_cpu(CpuKernelTable& t) {
  t.set_cpu(OpId::cholesky_, cholesky_cpu);
  t.set_cpu(OpId::lu_, lu_cpu);
  t.set_cpu(OpId::qr_, qr_cpu);
  t.set_cpu(OpId::eigh_, eigh_cpu);
  t.set_cpu(OpId::eig_, eig_cpu);
  t.set_cpu(OpId::svd_, svd_cpu);
  t.set_cpu(OpId::triangular_solve_, triangular_solve_cpu);
  t.set_cpu(OpId::lu_pivots_to_permutation_, lu_pivots_to_permutation_cpu);
  // matrix forms and Householder products
  t.set_cpu(OpId::schur_, schur_cpu);
  t.set_cpu(OpId::hessenberg_, hessenberg_cpu);
  t.set_cpu(OpId::tridiagonal_, tridiagonal_cpu);
  t.set_cpu(OpId::geqrf_, geqrf_cpu);
  t.set_cpu(OpId::householder_product_, householder_product_cpu);
  t.set_cpu(OpId::ormqr_, ormqr_cpu);
  t.set_cpu(OpId::tridiagonal_solve_, tridiagonal_solve_cpu);
}

}  // namespace xjax
