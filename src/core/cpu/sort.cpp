// CPU kernels of the sort ops. sort: each row (the elements along `dimension`) is sorted by a
// stable LSD pass per key, last key first, which gives the lexicographic order; the resulting
// permutation is then applied to every operand. A complex key is two float keys (sort_keys.h).
// Always stable. Rows run in parallel, or the work within a row when there are few long rows.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/cpu/bytes16.h"
#include "core/cpu/kernels.h"
#include "core/cpu/sort_keys.h"
#include "core/cpu/sort_kernels.h"
#include "core/ops/ops.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

// Element loops of one row run in parallel only when rows do not.
constexpr int64_t kGrain = 1 << 16;

// A row of `n` elements, `stride` apart, starting at `base`; `parallel`: split its loops.
struct Row {
  int64_t base, stride, n;
  bool parallel;
};

// Scratch space of one thread, reused across its rows.
// Uninitialised: every pass writes before it reads.
struct SortScratch {
  std::unique_ptr<uint32_t[]> perm;
  std::unique_ptr<uint64_t[]> items, tmp;  // n items of item_words * 8 bytes
  SortScratch(int64_t n, int64_t item_words)
      : perm(new uint32_t[size_t(n)]),
        items(new uint64_t[size_t(n * item_words)]),
        tmp(new uint64_t[size_t(n * item_words)]) {}
};

// Stably reorders perm by the key operand x (perm is the identity on the first pass).
template <typename T>
void sort_pass(const T* x, const Row& row, bool first, SortScratch& s) {
  using K = typename KeyOf<T>::type;
  auto* items = reinterpret_cast<SortItem<K>*>(s.items.get());
  auto* tmp = reinterpret_cast<SortItem<K>*>(s.tmp.get());
  const T* src = x + row.base;
  uint32_t* perm = s.perm.get();
  for_range(row.parallel, row.n, kGrain, [&](int64_t i0, int64_t i1) {
    if (first) {
      for (int64_t i = i0; i < i1; ++i) items[i] = {sort_key(src[i * row.stride], true), uint32_t(i)};
    } else {
      for (int64_t i = i0; i < i1; ++i) items[i] = {sort_key(src[int64_t(perm[i]) * row.stride], true), perm[i]};
    }
  });
  stable_sort_items(items, tmp, row.n, row.parallel);
  for_range(row.parallel, row.n, kGrain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) perm[i] = items[i].pos;
  });
}

// out[i] = in[perm[i]] along the row; U is an unsigned type of the element's size.
template <typename U>
void permute_row(const void* in, void* out, const Row& row, const uint32_t* perm) {
  const U* src = static_cast<const U*>(in) + row.base;
  U* dst = static_cast<U*>(out) + row.base;
  for_range(row.parallel, row.n, kGrain, [&](int64_t i0, int64_t i1) {
    if (row.stride == 1) {
      for (int64_t i = i0; i < i1; ++i) dst[i] = src[perm[i]];
    } else {
      for (int64_t i = i0; i < i1; ++i) dst[i * row.stride] = src[int64_t(perm[i]) * row.stride];
    }
  });
}

void permute_row_bytes(const Tensor& in, const Tensor& out, const Row& row, const uint32_t* perm) {
  switch (itemsize(in.dtype)) {
    case 1: permute_row<uint8_t>(in.data, out.data, row, perm); break;
    case 2: permute_row<uint16_t>(in.data, out.data, row, perm); break;
    case 4: permute_row<uint32_t>(in.data, out.data, row, perm); break;
    case 8: permute_row<uint64_t>(in.data, out.data, row, perm); break;
    default: permute_row<Bytes16>(in.data, out.data, row, perm); break;
  }
}

void sort_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Shape& shape = in[0].shape;
  if (in[0].size() == 0) return;
  const int64_t dim = attrs.get_int("dimension");
  const int64_t num_keys = attrs.get_int_or("num_keys", 1);
  const int64_t n = shape[dim];
  int64_t inner = 1;
  for (size_t d = size_t(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t rows = in[0].size() / n;

  int64_t item_words = 1;  // a (key, position) item takes 8 bytes, or 16 for 64-bit keys
  for (int64_t k = 0; k < num_keys; ++k) {
    const size_t key_bytes = itemsize(in[k].dtype) / (is_complex(in[k].dtype) ? 2 : 1);  // (a part's)
    if (key_bytes == 8) item_words = 2;
  }

  // Many rows: one thread per group of rows. A few long rows: one after another, each using
  // all threads.
  const bool row_parallel = rows >= 2 * ThreadPool::current().size() || n < 4 * kGrain;
  auto sort_rows = [&](int64_t r0, int64_t r1) {
    SortScratch s(n, item_words);
    for (int64_t r = r0; r < r1; ++r) {
      const Row row{(r / inner) * n * inner + r % inner, inner, n, !row_parallel};
      for (int64_t k = num_keys - 1; k >= 0; --k) {
        const bool first = k == num_keys - 1;
        if (is_complex(in[k].dtype)) {  // its parts, as real keys over rows of twice the stride
          dispatch_complex(in[k].dtype, [&](auto tag) {
            using T = typename decltype(tag)::value_type;
            const Row parts{2 * row.base, 2 * row.stride, row.n, row.parallel};
            const T* x = static_cast<const T*>(in[k].data);
            sort_pass<T>(x + kComplexKeyParts[1], parts, first, s);
            sort_pass<T>(x + kComplexKeyParts[0], parts, false, s);
          });
          continue;
        }
        dispatch_dtype(in[k].dtype, [&](auto tag) {
          using T = decltype(tag);
          sort_pass<T>(static_cast<const T*>(in[k].data), row, first, s);
        });
      }
      for (size_t o = 0; o < in.size(); ++o) permute_row_bytes(in[o], out[o], row, s.perm.get());
    }
  };
  if (row_parallel) parallel_for(rows, std::max<int64_t>(1, 16384 / n), sort_rows);
  else sort_rows(0, rows);
}

}  // namespace

void register_sort_cpu(CpuKernelTable& t) {
  t.set_cpu(OpId::sort_, sort_cpu);
  t.set_cpu(OpId::top_k_, top_k_cpu);
}

}  // namespace xjax
