// Matrix products for dot_general, and the split of the work over the thread pool.
//
// Which kernels: float/double matrix-matrix products go to BLAS when it is loaded, unless its
// kernels for this CPU use narrower vectors than the built-in ones (OpenBLAS runs its AVX2
// kernels on CPUs it does not recognise, AVX-512 ones included: on the AMD EPYC dev machine,
// 1024^3 float32 took 19.7 ms on one core in OpenBLAS, 10.5 ms in the built-in AVX-512 kernel,
// 19.9 ms in the built-in AVX2 one). Matrix-vector and vector-vector products are memory-bound
// and always built-in, as are integers (and bool, counted as integers).
//
// Threads: a BLAS call runs on BLAS's own pool (sized like ours at load), so it is made only from
// outside our parallel regions; inside them (one small product per batch element) the built-in
// kernels run serially instead. Built-in results do not depend on the number of threads: every
// split is over output elements, or over fixed chunks of k summed in a fixed order.
#include "core/cpu/contraction_gemm.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/cpu/contraction_blas.h"
#include "core/cpu/contraction_kernels.h"
#include "core/thread_pool.h"

namespace xjax::contraction {

int64_t BatchDims::count() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

void BatchDims::offsets(int64_t b, int64_t* a_off, int64_t* b_off) const {
  int64_t x = 0, y = 0;
  for (size_t i = sizes.size(); i-- > 0;) {
    int64_t d = b % sizes[i];
    b /= sizes[i];
    x += d * a_strides[i];
    y += d * b_strides[i];
  }
  *a_off = x;
  *b_off = y;
}

namespace {

// Multiply-adds below which a product is not worth splitting over threads.
constexpr int64_t kSerialWork = int64_t(1) << 15;
// Multiply-adds from which one product keeps all threads busy by itself (about 128^3).
constexpr int64_t kBigProduct = int64_t(1) << 21;
// Bytes of packed B that one task of a large product walks for each panel of A (L2-sized).
constexpr int64_t kTaskB = int64_t(768) << 10;
// Multiply-adds from which one product goes to BLAS: its small-matrix kernels beat the built-in
// ones from here (an RNN step's 16x64x64 sgemm: the scan's grad took 20% less time on BLAS).
constexpr int64_t kBlasProduct = kSerialWork;

int num_threads() { return ThreadPool::current().size(); }

// Per-thread scratch, reused across calls. Slots: 0 packed B, 1 packed A, 2 contiguous x,
// 3 partial sums.
template <typename T>
T* scratch(int slot, int64_t n) {
  thread_local std::vector<T> bufs[4];
  std::vector<T>& v = bufs[slot];
  if (int64_t(v.size()) < n) v.resize(size_t(n));
  return v.data();
}

// Runs fn over [0, n) on the pool, or inline when `serial`.
void run(bool serial, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (serial) {
    if (n > 0) fn(0, n);
  } else {
    parallel_for(n, grain, fn);
  }
}

// Runs task(i) for every i in [0, n), handing tasks out one at a time: a thread that starts late
// (the machine is busy) takes fewer, instead of the others waiting for its share.
void run_tasks(bool serial, int64_t n, const std::function<void(int64_t)>& task) {
  if (serial || n <= 1) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<int64_t> next{0};
  parallel_for(std::min<int64_t>(n, num_threads()), 1, [&](int64_t, int64_t) {
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) task(i);
  });
}

// ---------------------------------------------------------------------------------------------
// Built-in kernels.

// Packs all of B (up to a budget) before one parallel pass over tiles of C, so that a product
// waits on the pool only twice; each task walks k for its tile of C, which stays in cache.
// `parallel`: may use the pool (false inside one of our parallel regions, where every thread
// already has its own product). The split never changes the result.
template <typename T>
void builtin_gemm(int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c, bool parallel, bool accumulate = false) {
  const Kernels<T>& kr = kernels<T>();
  const int64_t NR = kr.nr, KC = kr.kc, MC = kr.mc;
  constexpr int64_t kPackBudget = int64_t(1) << 21;  // elements of B packed at once
  const int64_t KS = std::min(k, 8 * KC);              // depth packed at once (a multiple of KC)
  const int64_t NC = std::max(NR, kPackBudget / KS / NR * NR);
  const bool serial = !parallel || m * n * k <= kSerialWork * 8;
  if (m * n * k <= kSerialWork * 8 && k <= KC && b.cs == 1 && (a.cs == 1 || a.rs == 1)) {
    // Small enough to stay in cache: packing would cost as much as the product (an RNN's step).
    kr.gemm_small(m, n, k, a.data, a.rs, a.cs, b.data, b.rs, c, n, accumulate, scratch<T>(1, kr.a_buf),
                  scratch<T>(0, KC * NR));
    return;
  }
  const int64_t mblocks = (m + MC - 1) / MC;
  if (m * n <= 64 * 64 && k >= 4 * KS) {
    // A small C over a long k (a Gram matrix of a few long rows): fixed chunks of k, each a
    // product of its own on one thread, then their sum in chunk order.
    const int64_t chunk = KS, chunks = (k + chunk - 1) / chunk;
    T* partial = scratch<T>(3, chunks * m * n);
    run_tasks(serial, chunks, [&](int64_t ci) {
      const int64_t k0 = ci * chunk;
      builtin_gemm(m, n, std::min(chunk, k - k0), Mat<T>{a.data + k0 * a.cs, a.rs, a.cs},
                   Mat<T>{b.data + k0 * b.rs, b.rs, b.cs}, partial + ci * m * n, false);
    });
    for (int64_t i = 0; i < m * n; ++i) {
      T s = partial[i];
      for (int64_t ci = 1; ci < chunks; ++ci) s += partial[ci * m * n + i];
      c[i] = accumulate ? c[i] + s : s;
    }
    return;
  }
  T* b_packed = scratch<T>(0, KS * std::min(NC, (n + NR - 1) / NR * NR));
  for (int64_t n0 = 0; n0 < n; n0 += NC) {
    const int64_t nc = std::min(NC, n - n0);
    const int64_t panels = (nc + NR - 1) / NR;
    // Split columns too: so that the packed B a task walks (kc x its columns) stays in L2 while
    // each panel of A meets it, and so that there are enough tasks to even out the threads' shares
    // (1024^3 float32 on two threads: 11 row blocks, B's 1.5 MB from L3; 426 -> 455-461 GFLOP/s).
    const int64_t fit = std::max<int64_t>(1, kTaskB / (KC * NR * int64_t(sizeof(T))));
    const int64_t splits =
        serial ? 1 : std::min(panels, std::max((panels + fit - 1) / fit, (8 * num_threads() + mblocks - 1) / mblocks));
    const int64_t panels_per_task = (panels + splits - 1) / splits;
    for (int64_t ks = 0; ks < k; ks += KS) {
      // Block kb (depth kc from k0) of the packed B starts at (k0 - ks) * panels * NR.
      const int64_t depth = std::min(KS, k - ks), kblocks = (depth + KC - 1) / KC;
      run(serial, kblocks * panels, 8, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1;) {
          const int64_t kb = i / panels, p0 = i % panels, p1 = std::min(panels, p0 + (i1 - i));
          const int64_t k0 = ks + kb * KC, kc = std::min(KC, k - k0);
          kr.pack_b(b.data + k0 * b.rs + (n0 + p0 * NR) * b.cs, b.rs, b.cs, kc, std::min(nc, p1 * NR) - p0 * NR,
                    b_packed + (k0 - ks) * panels * NR + p0 * NR * kc);
          i += p1 - p0;
        }
      });
      run_tasks(serial, mblocks * splits, [&](int64_t t) {
        const int64_t m0 = (t / splits) * MC, q0 = (t % splits) * panels_per_task;
        const int64_t q1 = std::min(panels, q0 + panels_per_task);
        if (q0 >= q1) return;
        const int64_t j0 = q0 * NR, jn = std::min(nc, q1 * NR) - j0;
        T* a_buf = scratch<T>(1, kr.a_buf);
        for (int64_t k0 = ks; k0 < ks + depth; k0 += KC) {
          const int64_t kc = std::min(KC, k - k0);
          kr.gemm_block(a.data + m0 * a.rs + k0 * a.cs, a.rs, a.cs, std::min(MC, m - m0), kc,
                        b_packed + (k0 - ks) * panels * NR + j0 * kc, jn, c + m0 * n + n0 + j0, n, accumulate || k0 > 0,
                        a_buf);
        }
      });
    }
  }
}

// y[0:m] = A x, A m x k, x with stride incx, y contiguous.
template <typename T>
void builtin_gemv(int64_t m, int64_t k, Mat<T> a, const T* x, int64_t incx, T* y) {
  const Kernels<T>& kr = kernels<T>();
  if (incx != 1) {
    T* xc = scratch<T>(2, k);
    for (int64_t i = 0; i < k; ++i) xc[i] = x[i * incx];
    x = xc;
  }
  const bool rows = a.cs == 1;  // else a.rs == 1: columns contiguous
  const int64_t lda = rows ? a.rs : a.cs;
  auto part = [&](int64_t i0, int64_t i1, int64_t k0, int64_t k1, T* out) {
    if (rows) {
      kr.gemv_rows(i1 - i0, k1 - k0, a.data + i0 * lda + k0, lda, x + k0, out);
    } else {
      kr.gemv_cols(i1 - i0, k1 - k0, a.data + k0 * lda + i0, lda, x + k0, out);
    }
  };
  if (m * k <= kSerialWork) {
    part(0, m, 0, k, y);
    return;
  }
  const int64_t min_rows = rows ? 16 : 512;  // rows per task for a split over rows to pay off
  if (m >= 4 * min_rows) {
    parallel_for(m, std::max(min_rows, kSerialWork / k), [&](int64_t i0, int64_t i1) { part(i0, i1, 0, k, y + i0); });
    return;
  }
  // Few, long rows: fixed chunks of k (independent of the thread count), then their sums in order.
  const int64_t chunk = std::max<int64_t>(4096, kSerialWork / m);
  const int64_t chunks = (k + chunk - 1) / chunk;
  T* partial = scratch<T>(3, chunks * m);
  run_tasks(false, chunks,
            [&](int64_t ci) { part(0, m, ci * chunk, std::min(k, (ci + 1) * chunk), partial + ci * m); });
  for (int64_t i = 0; i < m; ++i) {
    T s = partial[i];
    for (int64_t ci = 1; ci < chunks; ++ci) s += partial[ci * m + i];
    y[i] = s;
  }
}

// ---------------------------------------------------------------------------------------------
// BLAS.

bool fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

// XJAX_GEMM=blas sends every product BLAS can take to it (tests, comparisons).
bool blas_forced() {
  static const bool forced = [] {
    const char* env = std::getenv("XJAX_GEMM");
    return env && std::strcmp(env, "blas") == 0;
  }();
  return forced;
}

// The BLAS to use for matrix-matrix products of T, or nullptr for the built-in kernels.
template <typename T>
const BlasApi* gemm_blas() {
  if constexpr (std::is_floating_point_v<T>) {
    const BlasApi* api = blas_api();
    if (!api) return nullptr;
    static const bool builtin_wider = std::strcmp(kernels_isa(), "avx512") == 0;
    if (blas_forced() || api->avx512_kernels || !builtin_wider) return api;
  }
  return nullptr;
}

// C = A B (C += A B when accumulating) on row-major BLAS: the transpose flags and leading dimensions
// describe A and B in place; C has leading dimension ldc.
template <typename T>
void blas_call(const BlasApi& api, int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c, int64_t ldc,
               bool accumulate) {
  const int lda = int(a.cs == 1 ? a.rs : a.cs), ldb = int(b.cs == 1 ? b.rs : b.cs);
  const int ta = a.cs == 1 ? BlasApi::kNoTrans : BlasApi::kTrans;
  const int tb = b.cs == 1 ? BlasApi::kNoTrans : BlasApi::kTrans;
  if constexpr (std::is_same_v<T, float>) {
    api.sgemm(BlasApi::kRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, a.data, lda, b.data, ldb,
              accumulate ? 1.0f : 0.0f, c, int(ldc));
  } else {
    api.dgemm(BlasApi::kRowMajor, ta, tb, int(m), int(n), int(k), 1.0, a.data, lda, b.data, ldb,
              accumulate ? 1.0 : 0.0, c, int(ldc));
  }
}

// C = A B (or C += A B) on single-threaded BLAS, split over the current pool: by rows of C when it
// is taller than wide, else by columns (a block of rows of A, or of columns of B, is the same
// strided view).
template <typename T>
bool blas_gemm(const BlasApi& api, int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c, bool accumulate = false) {
  if constexpr (std::is_floating_point_v<T>) {
    const int64_t lda = a.cs == 1 ? a.rs : a.cs, ldb = b.cs == 1 ? b.rs : b.cs;
    if (!fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb)) return false;
    const int64_t threads = m * n * k < kBigProduct / 4 ? 1 : num_threads();
    if (m >= n) {
      parallel_for(m, (m + threads - 1) / threads, [&](int64_t r0, int64_t r1) {
        blas_call(api, r1 - r0, n, k, Mat<T>{a.data + r0 * a.rs, a.rs, a.cs}, b, c + r0 * n, n, accumulate);
      });
    } else {
      parallel_for(n, (n + threads - 1) / threads, [&](int64_t c0, int64_t c1) {
        blas_call(api, m, c1 - c0, k, a, Mat<T>{b.data + c0 * b.cs, b.rs, b.cs}, c + c0, n, accumulate);
      });
    }
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------

// One product. `top_level`: not inside one of our parallel regions, so BLAS may run.
template <typename T>
void matmul(int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c, bool top_level) {
  if (n == 1) {
    builtin_gemv(m, k, a, b.data, b.rs, c);
  } else if (m == 1) {
    builtin_gemv(n, k, Mat<T>{b.data, b.cs, b.rs}, a.data, a.cs, c);  // c^T = b^T a^T
  } else {
    // BLAS runs on this thread alone (blas.cpp): the smallest products stay on the built-in kernels,
    // whose call costs less.
    const BlasApi* api = top_level && (m * n * k >= kBlasProduct || blas_forced()) ? gemm_blas<T>() : nullptr;
    if (!api || !blas_gemm(*api, m, n, k, a, b, c)) builtin_gemm(m, n, k, a, b, c, top_level);
  }
}

}  // namespace

template <typename T>
void batched_matmul(const BatchDims& batch, int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c) {
  const int64_t count = batch.count(), work = m * n * k;
  auto one = [&](int64_t i, bool top_level) {
    int64_t ao = 0, bo = 0;
    batch.offsets(i, &ao, &bo);
    matmul(m, n, k, Mat<T>{a.data + ao, a.rs, a.cs}, Mat<T>{b.data + bo, b.rs, b.cs}, c + i * m * n, top_level);
  };
  // One product, or big ones on BLAS or too few to share out: one after the other, each on all
  // threads. Otherwise whole products per thread, on the built-in kernels.
  const bool blas = m > 1 && n > 1 && gemm_blas<T>();
  if (count == 1 || (work >= kBigProduct && (blas || count < 2 * num_threads()))) {
    for (int64_t i = 0; i < count; ++i) one(i, true);
    return;
  }
  const int64_t group = std::max<int64_t>(1, kSerialWork / std::max<int64_t>(work, 1));  // products per task
  run_tasks(false, (count + group - 1) / group, [&](int64_t g) {
    for (int64_t i = g * group; i < std::min(count, (g + 1) * group); ++i) one(i, false);
  });
}

template <typename T>
void matmul_serial(int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c) {
  matmul(m, n, k, a, b, c, false);
}

template void matmul_serial<float>(int64_t, int64_t, int64_t, Mat<float>, Mat<float>, float*);
template void matmul_serial<double>(int64_t, int64_t, int64_t, Mat<double>, Mat<double>, double*);
template void matmul_serial<uint32_t>(int64_t, int64_t, int64_t, Mat<uint32_t>, Mat<uint32_t>, uint32_t*);
template void matmul_serial<uint64_t>(int64_t, int64_t, int64_t, Mat<uint64_t>, Mat<uint64_t>, uint64_t*);

template <typename T>
void matmul_accumulate(int64_t m, int64_t n, int64_t k, Mat<T> a, Mat<T> b, T* c) {
  const BlasApi* api = gemm_blas<T>();
  if (!api || !blas_gemm(*api, m, n, k, a, b, c, true)) builtin_gemm(m, n, k, a, b, c, true, true);
}

template void matmul_accumulate<float>(int64_t, int64_t, int64_t, Mat<float>, Mat<float>, float*);
template void matmul_accumulate<double>(int64_t, int64_t, int64_t, Mat<double>, Mat<double>, double*);

template void batched_matmul<float>(const BatchDims&, int64_t, int64_t, int64_t, Mat<float>, Mat<float>, float*);
template void batched_matmul<double>(const BatchDims&, int64_t, int64_t, int64_t, Mat<double>, Mat<double>, double*);
template void batched_matmul<uint32_t>(const BatchDims&, int64_t, int64_t, int64_t, Mat<uint32_t>, Mat<uint32_t>,
                                       uint32_t*);
template void batched_matmul<uint64_t>(const BatchDims&, int64_t, int64_t, int64_t, Mat<uint64_t>, Mat<uint64_t>,
                                       uint64_t*);

}  // namespace xjax::contraction
