// The convolution as blocked products on the built-in GEMM.
//
// Per group the convolution is the product out[row, o] = A[row, (tap, c)] W[(tap, c), o], with
// one row per (batch, output position) and A ("im2col") the input under each tap, zero on padding
// and holes. A is never built whole. Blocks of rows and taps are multiplied at once on one thread,
// the blocks spread over the pool, by the kernels' gemm_indirect, which reads A's rows through
// pointers. With at least kInPlaceFeatures input features per group the pointers point into the
// input itself (the canonical lhs keeps a position's features contiguous: each row of A under a
// tap is a run of it), so nothing is copied. With fewer, im2col writes A into the kernels' packed
// layout, copying runs of taps at once, and the pointers point at its rows. Either way each element
// is the same sum in the same order. Otherwise (one output feature, or more input features than a
// packed block holds) blocks that fit in L2 go through contraction::matmul_serial.
//
// When rows are few (the kernel-gradient convolutions: rows = taps x in features of the original
// kernel, taps = its output positions) a block row of A is long: its taps are cut into chunks
// multiplied by separate tasks into partial sums, added in chunk order. Blocks depend only on the
// shapes, so results do not depend on the number of threads.
//
// The classes of output positions of a convolution with lhs holes (conv_classes) are all cut into
// row blocks of one set of tasks; each row block's tiles are stored at their rows of the whole
// result (gemm_indirect's row pointers), which lie apart, so nothing is gathered or scattered
// afterwards.
#include "core/cpu/conv_blocks.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>

#include "core/cpu/contraction_gemm.h"
#include "core/cpu/contraction_kernels.h"
#include "core/thread_pool.h"

namespace xjax::conv {

namespace {

using contraction::Mat;

constexpr int64_t kBlockElems = int64_t(1) << 16;     // elements of one block of A (L2-sized)
constexpr int64_t kPartialElems = int64_t(1) << 24;   // budget of the partial sums of split taps
constexpr int64_t kMaxTapChunks = 16;
constexpr int64_t kFewRowBlocks = 8;  // below this many row blocks, taps are split over tasks

// Per-thread scratch, reused across calls. Slots: 0 A, 1 a product to add, 2 packed B, 3 a block
// of a class's rows.
template <typename T>
T* scratch(int slot, int64_t n) {
  thread_local std::vector<T> bufs[4];
  std::vector<T>& v = bufs[slot];
  if (int64_t(v.size()) < n) v.resize(size_t(n));
  return v.data();
}

// Copies n elements; short runs (a few channels) without a call to memcpy (fixed-size memcpy
// compiles to plain moves).
template <typename C>
inline void copy_run(C* d, const C* s, int64_t n) {
  if (n > 32) {
    std::memcpy(d, s, size_t(n) * sizeof(C));
    return;
  }
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) std::memcpy(d + i, s + i, 4 * sizeof(C));
  switch (n - i) {
    case 3: d[i + 2] = s[i + 2]; [[fallthrough]];
    case 2: d[i + 1] = s[i + 1]; [[fallthrough]];
    case 1: d[i] = s[i]; [[fallthrough]];
    default: break;
  }
}

template <typename C>
inline void zero_run(C* d, int64_t n) {
  std::memset(static_cast<void*>(d), 0, size_t(n) * sizeof(C));  // zero bits: zero in every compute type
}

// Calls segment(r, seg, q, pos) for rows [r0, r1) of g in segments along the last output dim:
// rows r .. r + seg - 1 are batch q's output positions pos, pos + 1, ... along the last dim, so
// their outer dims (and a tap's offset along them) are the same.
template <typename Segment>
void for_each_segment(const Geometry& g, int64_t r0, int64_t r1, Segment segment) {
  const size_t nsp = g.sp.size(), last = nsp - 1;
  std::vector<int64_t> pos(nsp);
  int64_t q = r0;
  for (size_t i = nsp; i-- > 0;) {
    pos[i] = q % g.out_sp[i];
    q /= g.out_sp[i];
  }
  for (int64_t r = r0; r < r1;) {
    const int64_t seg = std::min(r1 - r, g.out_sp[last] - pos[last]);
    segment(r, seg, q, static_cast<const std::vector<int64_t>&>(pos));
    r += seg;
    pos[last] += seg;
    for (size_t i = nsp; i-- > 0 && pos[i] == g.out_sp[i];) {  // carry into the outer dims
      pos[i] = 0;
      if (i == 0) {
        ++q;
      } else {
        ++pos[i - 1];
      }
    }
  }
}

// Fills a[(r - r0) * lda + (t - t0) * cg + c] for rows [r0, r1) and taps [t0, t1) of group `grp`.
//
// The taps are cut into runs along the last spatial dim (the same for every row); rows come in
// segments along the last output dim, over which the outer dims' offset of a run is constant. So
// each (row, run) is one small copy (one per tap when the run's inputs are not contiguous).
template <typename C>
void fill_block(const Geometry& g, const C* lhs, int64_t grp, int64_t r0, int64_t r1, int64_t t0, int64_t t1, C* a,
                int64_t lda) {
  const size_t nsp = g.sp.size(), last = nsp - 1;
  const int64_t cg = g.cg, kl = g.k_sp[last];
  const int64_t* tab_last = g.tab[last].data();
  const int64_t chan0 = g.batch_groups ? 0 : grp * cg;
  const int64_t batch0 = g.batch_groups ? grp * g.batch_out : 0;
  // Runs: (column in the row of a, first tap along the last dim, taps), and their outer taps.
  thread_local std::vector<int64_t> runs, run_k;
  runs.clear();
  run_k.clear();
  for (int64_t t = t0; t < t1;) {
    const int64_t k0 = t % kl, n = std::min(kl - k0, t1 - t);
    runs.insert(runs.end(), {(t - t0) * cg, k0, n});
    int64_t rest = t / kl;
    const size_t at = run_k.size();
    run_k.resize(at + last);
    for (size_t i = last; i-- > 0;) {
      run_k[at + i] = rest % g.k_sp[i];
      rest /= g.k_sp[i];
    }
    t += n;
  }
  const size_t n_runs = runs.size() / 3;
  for_each_segment(g, r0, r1, [&](int64_t r, int64_t seg, int64_t q, const std::vector<int64_t>& o) {
    const int64_t ol0 = o[last];
    const C* src_row = lhs + (batch0 + q) * g.lhs_batch_stride + chan0;
    for (size_t ri = 0; ri < n_runs; ++ri) {
      const int64_t col = runs[3 * ri], k0 = runs[3 * ri + 1], n = runs[3 * ri + 2], k1 = k0 + n;
      int64_t off = 0;
      for (size_t i = 0; i < last && off >= 0; ++i) {
        const int64_t x = g.tab[i][size_t(o[i] * g.k_sp[i] + run_k[ri * last + i])];
        off = x < 0 ? -1 : off + x;
      }
      C* dst = a + (r - r0) * lda + col;
      if (off < 0) {
        for (int64_t j = 0; j < seg; ++j, dst += lda) zero_run(dst, n * cg);
      } else if (g.runs) {
        const C* src = src_row + off;
        for (int64_t ol = ol0; ol < ol0 + seg; ++ol, dst += lda) {
          const int64_t lo = std::clamp(g.lo[size_t(ol)], k0, k1), hi = std::clamp(g.hi[size_t(ol)], lo, k1);
          if (lo > k0) zero_run(dst, (lo - k0) * cg);
          if (hi > lo) copy_run(dst + (lo - k0) * cg, src + tab_last[ol * kl + lo], (hi - lo) * cg);
          if (k1 > hi) zero_run(dst + (hi - k0) * cg, (k1 - hi) * cg);
        }
      } else {
        const C* src = src_row + off;
        for (int64_t ol = ol0; ol < ol0 + seg; ++ol, dst += lda)
          for (int64_t k = k0; k < k1; ++k) {
            const int64_t x = tab_last[ol * kl + k];
            if (x < 0) {
              zero_run(dst + (k - k0) * cg, cg);
            } else {
              copy_run(dst + (k - k0) * cg, src + x, cg);
            }
          }
      }
    }
  });
}

// The input under taps [t0, t1) of rows [r0, r1) of group `grp`, read in place: rows[(t - t0) *
// ld + (r - r0)] points at its cg features (`zeros` on padding and holes). The canonical lhs keeps
// a position's features contiguous, so every row of A is a run of the input.
template <typename C>
void tap_rows(const Geometry& g, const C* lhs, int64_t grp, int64_t r0, int64_t r1, int64_t t0, int64_t t1,
              const C* zeros, const C** rows, int64_t ld) {
  const int64_t chan0 = g.batch_groups ? 0 : grp * g.cg;
  const int64_t batch0 = g.batch_groups ? grp * g.batch_out : 0;
  if (g.direct) {  // one tap, no padding: row r is input position r
    const C* src = lhs + batch0 * g.lhs_batch_stride + chan0;
    for (int64_t r = r0; r < r1; ++r) rows[r - r0] = src + r * g.cin;
    return;
  }
  // Rows come in segments along the last output dim, over which a tap's offset along the outer
  // dims is constant: it is looked up once per segment, and each row adds its last dim's.
  const size_t nsp = g.sp.size(), last = nsp - 1;
  const int64_t kl = g.k_sp[last], ol_size = g.out_sp[last];
  std::vector<int64_t> k_outer(size_t(t1 - t0) * last);  // the taps' window indices, outer dims
  for (int64_t t = t0; t < t1; ++t) {
    int64_t rest = t / kl;
    for (size_t i = last; i-- > 0;) {
      k_outer[size_t(t - t0) * last + i] = rest % g.k_sp[i];
      rest /= g.k_sp[i];
    }
  }
  for_each_segment(g, r0, r1, [&](int64_t r, int64_t seg, int64_t q, const std::vector<int64_t>& pos) {
    const int64_t ol0 = pos[last];
    const C* src = lhs + (batch0 + q) * g.lhs_batch_stride + chan0;
    for (int64_t t = t0; t < t1; ++t) {
      int64_t outer = 0, holes = 0;  // (offsets are >= 0 and holes -1: any hole makes `holes` negative)
      for (size_t i = 0; i < last; ++i) {
        const int64_t x = g.tab[i][size_t(pos[i] * g.k_sp[i] + k_outer[size_t(t - t0) * last + i])];
        outer += x;
        holes |= x;
      }
      const C** out = rows + (t - t0) * ld + (r - r0);
      const int64_t* xs = g.tab_last_by_tap.data() + (t % kl) * ol_size + ol0;
      const C* base = src + outer;
      if (holes < 0) {
        for (int64_t j = 0; j < seg; ++j) out[j] = zeros;
      } else {
        for (int64_t j = 0; j < seg; ++j) out[j] = xs[j] < 0 ? zeros : base + xs[j];
      }
    }
  });
}

// Runs task(i) for i in [0, n) on the pool, handing tasks out one at a time.
void run_tasks(int64_t n, const std::function<void(int64_t)>& task) {
  if (n <= 1) {
    if (n == 1) task(0);
    return;
  }
  std::atomic<int64_t> next{0};
  parallel_for(std::min<int64_t>(n, ThreadPool::global().size()), 1, [&](int64_t, int64_t) {
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) task(i);
  });
}

// How the product of one group is cut: row blocks of `rb` rows, tap blocks of `tb` taps, and the
// tap blocks of a row block in `chunks` chunks (one task each; > 1 only for few row blocks).
// `packed`: the product runs on the built-in kernels' blocks (gemm_indirect), A's rows read
// through pointers: `in_place`, the input under each tap itself; otherwise im2col rows written
// straight into the micro-kernel's packed layout, kc columns (whole taps) at a time.
struct Blocking {
  int64_t rb, tb, n_rb, n_tb, chunks, tb_per_chunk;
  bool packed, in_place;
};

// Input features per tap from which A is read in place: with fewer, the micro-kernel would reload
// its row pointers every few steps of k, and im2col's runs of taps are cheaper.
constexpr int64_t kInPlaceFeatures = 16;

template <typename C>
Blocking blocking(const Geometry& g) {
  const contraction::Kernels<C>& kr = contraction::kernels<C>();
  Blocking b;
  const int64_t kg = std::max<int64_t>(g.taps * g.cg, 1), cg = std::max<int64_t>(g.cg, 1);
  const bool blocks = g.og >= 2 && g.cg <= kr.kc;  // (one output feature: matrix-vector products)
  b.in_place = blocks && g.cg >= kInPlaceFeatures;
  b.packed = b.in_place || (blocks && !g.direct);
  if (g.rows <= 512) {
    b.rb = std::max<int64_t>(g.rows, 1);
  } else {
    b.rb = std::clamp<int64_t>(kBlockElems / kg, 96, 768) / 48 * 48;
  }
  if (g.direct) {
    b.tb = 1;
  } else if (b.packed) {
    b.tb = std::clamp<int64_t>(kr.kc / cg, 1, g.taps);
  } else {
    b.tb = std::clamp<int64_t>(kBlockElems / (b.rb * cg), 1, g.taps);
  }
  b.n_rb = (g.rows + b.rb - 1) / b.rb;
  b.n_tb = (g.taps + b.tb - 1) / b.tb;
  b.chunks = 1;
  if (b.n_rb < kFewRowBlocks && b.n_tb > 1) {
    const int64_t by_memory = kPartialElems / std::max<int64_t>(g.rows * g.og, 1);
    b.chunks = std::clamp<int64_t>(std::min(by_memory, kMaxTapChunks), 1, b.n_tb);
  }
  b.tb_per_chunk = (b.n_tb + b.chunks - 1) / b.chunks;
  b.chunks = (b.n_tb + b.tb_per_chunk - 1) / b.tb_per_chunk;
  return b;
}

// Rows [r0, r1) of group grp times its tap blocks [tb0, tb1) into row r at rows[r - r0] (= or,
// from the second tap block on, +=), A's rows read in place or built by im2col MC rows at a time.
template <typename C>
void multiply_packed(const Geometry& g, const Blocking& b, const C* lhs, const C* wg, int64_t grp, int64_t r0,
                     int64_t r1, int64_t tb0, int64_t tb1, C* const* rows) {
  const contraction::Kernels<C>& kr = contraction::kernels<C>();
  const int64_t og = g.og, cg = g.cg, mr = kr.mr, ka = kr.ka;
  alignas(64) static const C zeros[512] = {};  // a row of A on padding and holes (cg <= kc <= 512)
  C* ap = b.in_place ? nullptr : scratch<C>(0, (kr.mc + mr) * ka);
  C* bp = scratch<C>(2, b.tb * cg * ((og + kr.nr - 1) / kr.nr * kr.nr));
  thread_local std::vector<const C*> a_rows;
  a_rows.resize(size_t(b.tb * (kr.mc + mr)));
  for (int64_t tbi = tb0; tbi < tb1; ++tbi) {
    const int64_t t0 = tbi * b.tb, t1 = std::min(g.taps, t0 + b.tb), kb = (t1 - t0) * cg;
    kr.pack_b(wg + t0 * cg * og, og, 1, kb, og, bp);
    for (int64_t m0 = r0; m0 < r1; m0 += kr.mc) {
      const int64_t mc = std::min(kr.mc, r1 - m0), ld = (mc + mr - 1) / mr * mr;
      const int64_t nt = b.in_place ? t1 - t0 : 1;
      if (b.in_place) {
        tap_rows(g, lhs, grp, m0, m0 + mc, t0, t1, zeros, a_rows.data(), ld);
      } else {
        fill_block(g, lhs, grp, m0, m0 + mc, t0, t1, ap, ka);
        for (int64_t i = 0; i < mc; ++i) a_rows[size_t(i)] = ap + i * ka;
      }
      for (int64_t t = 0; t < nt; ++t)  // the last panel's padding rows
        for (int64_t i = mc; i < ld; ++i) a_rows[size_t(t * ld + i)] = zeros;
      kr.gemm_indirect(mc, nt, b.in_place ? cg : kb, a_rows.data(), ld, bp, og, rows + (m0 - r0), tbi != tb0);
    }
  }
}

// dst[0:r1-r0, og] = rows [r0, r1) of group grp times its tap blocks [tb0, tb1) (wg: the group's
// kernel rows), on the calling thread.
template <typename C>
void multiply_rows(const Geometry& g, const Blocking& b, const C* lhs, const C* wg, int64_t grp, int64_t r0,
                   int64_t r1, int64_t tb0, int64_t tb1, C* dst) {
  const int64_t og = g.og, cg = g.cg, nr = r1 - r0;
  if (b.packed) {
    thread_local std::vector<C*> rows;
    rows.resize(size_t(nr));
    for (int64_t r = 0; r < nr; ++r) rows[size_t(r)] = dst + r * og;
    return multiply_packed(g, b, lhs, wg, grp, r0, r1, tb0, tb1, rows.data());
  }
  C* a = g.direct ? nullptr : scratch<C>(0, nr * b.tb * cg);
  C* tmp = nullptr;
  for (int64_t tbi = tb0; tbi < tb1; ++tbi) {
    const int64_t t0 = tbi * b.tb, t1 = std::min(g.taps, t0 + b.tb), kb = (t1 - t0) * cg;
    Mat<C> am;
    if (g.direct) {
      const int64_t base = g.batch_groups ? grp * g.batch_out * g.lhs_batch_stride : grp * cg;
      am = Mat<C>{lhs + base + r0 * g.cin, g.cin, 1};
    } else {
      fill_block(g, lhs, grp, r0, r1, t0, t1, a, kb);
      am = Mat<C>{a, kb, 1};
    }
    const Mat<C> bm{wg + t0 * cg * og, og, 1};
    if (tbi == tb0) {
      contraction::matmul_serial<C>(nr, og, kb, am, bm, dst);
    } else {
      if (!tmp) tmp = scratch<C>(1, nr * og);
      contraction::matmul_serial<C>(nr, og, kb, am, bm, tmp);
      for (int64_t i = 0; i < nr * og; ++i) dst[i] += tmp[i];
    }
  }
}

}  // namespace

Geometry geometry(const ConvDims& d, const Shape& lhs, const Shape& rhs, bool tap_tables) {
  Geometry g;
  g.groups = std::max(d.feature_groups, d.batch_groups);
  g.batch_groups = d.batch_groups > 1;
  g.batch_out = lhs[d.lhs_spec[0]] / d.batch_groups;
  g.cin = lhs[d.lhs_spec[1]];
  g.cg = rhs[d.rhs_spec[1]];
  g.og = rhs[d.rhs_spec[0]] / g.groups;
  return with_spatial(g, d.spatial, tap_tables);
}

Geometry with_spatial(const Geometry& base, std::vector<WindowDim> sp, bool tap_tables) {
  Geometry g;
  g.groups = base.groups;
  g.batch_groups = base.batch_groups;
  g.batch_out = base.batch_out;
  g.cin = base.cin;
  g.cg = base.cg;
  g.og = base.og;
  g.sp = std::move(sp);
  g.rows = g.batch_out;
  g.direct = true;
  int64_t stride = g.cin;
  g.lhs_sp_strides.assign(g.sp.size(), 0);
  for (size_t i = g.sp.size(); i-- > 0;) {
    g.lhs_sp_strides[i] = stride;
    stride *= g.sp[i].size;
  }
  g.lhs_batch_stride = stride;
  for (const WindowDim& w : g.sp) {
    g.out_sp.push_back(w.out_size());
    g.k_sp.push_back(w.window);
    g.rows *= w.out_size();
    g.taps *= w.window;
    g.direct = g.direct && w.window == 1 && w.stride == 1 && w.pad_lo == 0 && w.pad_hi == 0 && w.base_dilation == 1;
  }
  if (tap_tables) add_tap_tables(g);
  return g;
}

void add_tap_tables(Geometry& g) {
  if (g.direct || g.sp.empty() || !g.tab.empty()) return;
  for (size_t i = 0; i < g.sp.size(); ++i) {
    const WindowDim& w = g.sp[i];
    std::vector<int64_t> t(size_t(w.out_size() * w.window));
    for (int64_t o = 0; o < w.out_size(); ++o)
      for (int64_t k = 0; k < w.window; ++k) {
        const int64_t src = w.source(o, k);
        t[size_t(o * w.window + k)] = src < 0 ? -1 : src * g.lhs_sp_strides[i];
      }
    g.tab.push_back(std::move(t));
  }
  const WindowDim& last = g.sp.back();
  const std::vector<int64_t>& tl = g.tab.back();
  g.tab_last_by_tap.resize(tl.size());
  for (int64_t o = 0; o < last.out_size(); ++o)
    for (int64_t k = 0; k < last.window; ++k)
      g.tab_last_by_tap[size_t(k * last.out_size() + o)] = tl[size_t(o * last.window + k)];
  if (last.base_dilation == 1) {
    g.runs = last.window_dilation == 1 && g.cg == g.cin;
    for (int64_t o = 0; o < last.out_size(); ++o) {
      int64_t lo = last.window, hi = 0;
      for (int64_t k = 0; k < last.window; ++k)
        if (last.source(o, k) >= 0) lo = std::min(lo, k), hi = k + 1;
      g.lo.push_back(lo);
      g.hi.push_back(std::max(lo, hi));
    }
  }
}

template <typename C>
void conv_groups(const Geometry& g, const C* lhs, const C* w, C* out) {
  const Blocking b = blocking<C>(g);
  const int64_t og = g.og, kg = g.taps * g.cg;
  // Partial sums of the chunks after the first: [group][chunk - 1][rows][og].
  std::unique_ptr<C[]> partial;
  if (b.chunks > 1) partial.reset(new C[size_t(g.groups * (b.chunks - 1) * g.rows * og)]);
  const int64_t tasks_per_group = b.n_rb * b.chunks;
  run_tasks(g.groups * tasks_per_group, [&](int64_t task) {
    const int64_t grp = task / tasks_per_group, ri = (task % tasks_per_group) / b.chunks, ci = task % b.chunks;
    const int64_t r0 = ri * b.rb, r1 = std::min(g.rows, r0 + b.rb);
    C* dst = ci == 0 ? out + (grp * g.rows + r0) * og
                     : partial.get() + ((grp * (b.chunks - 1) + ci - 1) * g.rows + r0) * og;
    const int64_t tb0 = ci * b.tb_per_chunk, tb1 = std::min(b.n_tb, tb0 + b.tb_per_chunk);
    multiply_rows(g, b, lhs, w + grp * kg * og, grp, r0, r1, tb0, tb1, dst);
  });
  if (b.chunks == 1) return;
  const int64_t per_group = g.rows * og;
  parallel_for(g.groups * per_group, 1 << 14, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t grp = i / per_group, j = i % per_group;
      C s = out[i];
      for (int64_t ci = 1; ci < b.chunks; ++ci) s += partial[(grp * (b.chunks - 1) + ci - 1) * per_group + j];
      out[i] = s;
    }
  });
}

template <typename C>
void conv_classes(const std::vector<RowClass<C>>& classes, const C* lhs, const Shape& out_sp, int64_t rows, C* out) {
  // Tasks: per class, per group, per row block; every tap block of a row block in one task (so
  // each row sums its tap blocks in order), into a block of scratch that is then placed.
  std::vector<Blocking> bs;
  std::vector<int64_t> task0{0};
  for (const RowClass<C>& k : classes) {
    Blocking b = blocking<C>(k.g);
    b.chunks = 1;
    b.tb_per_chunk = b.n_tb;
    bs.push_back(b);
    task0.push_back(task0.back() + k.g.groups * b.n_rb);
  }
  const size_t nsp = out_sp.size();
  run_tasks(task0.back(), [&](int64_t task) {
    const size_t ki = size_t(std::upper_bound(task0.begin(), task0.end(), task) - task0.begin() - 1);
    const RowClass<C>& k = classes[ki];
    const Geometry& g = k.g;
    const Blocking& b = bs[ki];
    const int64_t og = g.og, grp = (task - task0[ki]) / b.n_rb, ri = (task - task0[ki]) % b.n_rb;
    const int64_t r0 = ri * b.rb, r1 = std::min(g.rows, r0 + b.rb);
    // Row (b, i...) of the class is row (b, first + i period...) of the result: decoded once per
    // run of rows along the last dim, whose rows lie period * og apart.
    thread_local std::vector<C*> dst_rows;
    dst_rows.resize(size_t(r1 - r0));
    C** dst = dst_rows.data();  // (one thread-local lookup, not one per row)
    const int64_t n_last = g.out_sp[nsp - 1], step = k.period[nsp - 1] * og;
    for (int64_t r = r0; r < r1;) {
      int64_t rest = r, row = 0, scale = 1;
      for (size_t i = nsp; i-- > 0;) {
        row += (k.first[i] + (rest % g.out_sp[i]) * k.period[i]) * scale;
        rest /= g.out_sp[i];
        scale *= out_sp[i];
      }
      row += rest * scale;  // the batch index
      const int64_t run = std::min(r1 - r, n_last - r % n_last);
      for (int64_t t = 0; t < run; ++t) dst[r - r0 + t] = out + (grp * rows + row) * og + t * step;
      r += run;
    }
    if (k.w && b.packed) {  // the product's tiles are stored in place
      multiply_packed<C>(g, b, lhs, k.w + grp * g.taps * g.cg * og, grp, r0, r1, 0, b.n_tb, dst);
      return;
    }
    C* block = scratch<C>(3, (r1 - r0) * og);
    if (k.w) {
      multiply_rows(g, b, lhs, k.w + grp * g.taps * g.cg * og, grp, r0, r1, 0, b.n_tb, block);
    } else {
      zero_run(block, (r1 - r0) * og);
    }
    for (int64_t r = r0; r < r1; ++r) std::memcpy(dst[r - r0], block + (r - r0) * og, size_t(og) * sizeof(C));
  });
}

template void conv_groups<float>(const Geometry&, const float*, const float*, float*);
template void conv_groups<double>(const Geometry&, const double*, const double*, double*);
template void conv_groups<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*, uint32_t*);
template void conv_groups<uint64_t>(const Geometry&, const uint64_t*, const uint64_t*, uint64_t*);
template void conv_classes<float>(const std::vector<RowClass<float>>&, const float*, const Shape&, int64_t, float*);
template void conv_classes<double>(const std::vector<RowClass<double>>&, const double*, const Shape&, int64_t,
                                   double*);
template void conv_classes<uint32_t>(const std::vector<RowClass<uint32_t>>&, const uint32_t*, const Shape&, int64_t,
                                     uint32_t*);
template void conv_classes<uint64_t>(const std::vector<RowClass<uint64_t>>&, const uint64_t*, const Shape&, int64_t,
                                     uint64_t*);

}  // namespace xjax::conv
