// The top_k kernel: per row of the last axis, the k largest values in descending order, ties
// to the lower index, NaN above everything and +0.0 above -0.0. A small k keeps a sorted
// buffer in one pass; a larger k selects with nth_element; k near n sorts. Rows run in parallel.
#include <algorithm>
#include <vector>

#include "core/cpu/sort_keys.h"
#include "core/cpu/sort_kernels.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

constexpr int64_t kSmallK = 32;

// For small k: one pass keeping the best k in a sorted buffer. Positions only grow, so an
// element that ties the current k-th is never better and is skipped.
template <typename T, typename Item>
void top_few(const T* src, int64_t n, int64_t k, Item* best) {
  using K = decltype(Item::key);
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const K key = K(~sort_key(src[i], false));
    if (m == k && !(key < best[k - 1].key)) continue;
    int64_t j = (m < k ? m++ : k - 1) - 1;
    while (j >= 0 && best[j].key > key) {
      best[j + 1] = best[j];
      --j;
    }
    best[j + 1] = {key, uint32_t(i)};
  }
}

template <typename T>
void top_k_rows(const T* x, T* values, int32_t* indices, int64_t rows, int64_t n, int64_t k) {
  using K = typename KeyOf<T>::type;
  using Item = SortItem<K>;
  parallel_for(rows, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
    std::vector<Item> items(static_cast<size_t>(n)), tmp;
    // Ascending order of the complemented key is descending order of the value; equal keys
    // fall back to the position, which makes the order total and the result deterministic.
    auto before = [](const Item& a, const Item& b) { return a.key < b.key || (a.key == b.key && a.pos < b.pos); };
    for (int64_t r = r0; r < r1; ++r) {
      const T* src = x + r * n;
      if (k <= kSmallK && k < n / 4) {
        top_few(src, n, k, items.data());
      } else {
        for (int64_t i = 0; i < n; ++i) items[i] = {K(~sort_key(src[i], false)), uint32_t(i)};
        if (k < n / 2) {
          std::nth_element(items.begin(), items.begin() + k, items.end(), before);
          std::sort(items.begin(), items.begin() + k, before);
        } else {
          tmp.resize(size_t(n));
          stable_sort_items(items.data(), tmp.data(), n, rows < ThreadPool::current().size());  // stable: ties keep position order
        }
      }
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = src[items[j].pos];
        indices[r * k + j] = int32_t(items[j].pos);
      }
    }
  });
}

}  // namespace

void top_k_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor& x = in[0];
  const int64_t k = attrs.get_int("k");
  const int64_t n = x.shape.back();
  if (k == 0 || x.size() == 0) return;
  const int64_t rows = x.size() / n;
  dispatch_dtype(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    top_k_rows<T>(x.as<T>(), out[0].as<T>(), out[1].as<int32_t>(), rows, n, k);
  });
}

}  // namespace xjax
