// CPU kernel of conv_general_dilated. The operands are brought to canonical layouts in the
// compute type C (compute_types.h): lhs as [batch, spatial..., feature] (the features under one
// tap contiguous), rhs as [group][tap][in feature][out feature]; conv_blocks.cpp computes the
// result [group][batch, spatial...][out feature] by im2col blocks into the GEMM (depthwise ones
// directly, conv_depthwise.cpp, as [batch, spatial...][feature]), which is then laid out (and
// converted) as the out spec says.
//
// An lhs with holes (lhs_dilation > 1: the input gradient of a strided convolution, conv_transpose)
// would have most taps fall on holes: its outputs are split into classes by position modulo the
// dilation, and each class is a dense convolution over the taps that land on input elements.
//
// A complex convolution is four real ones over the parts' planes (as dot_general's products).
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "core/cpu/compute_types.h"
#include "core/cpu/conv_blocks.h"
#include "core/cpu/kernels.h"
#include "core/cpu/layout_copy.h"
#include "core/thread_pool.h"

namespace xjax {

namespace {

using conv::Geometry;

// ---- canonical layouts ----------------------------------------------------------------------

// The strides are row-major for the shape (those of size-1 dims do not matter).
bool dense(const Shape& shape, const std::vector<int64_t>& strides) {
  const auto want = contiguous_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && strides[i] != want[i]) return false;
  return true;
}

// `t` viewed through (shape, element strides) as a contiguous array of C: t's own data when it
// already is one, else a converted and/or permuted copy held by `holder`.
template <typename C>
const C* gather_as(const Tensor& t, const Shape& shape, const std::vector<int64_t>& strides,
                   std::unique_ptr<C[]>& holder) {
  const bool contiguous = dense(shape, strides);
  const void* src = t.data;
  std::unique_ptr<C[]> converted;
  if (!same_storage<C>(t.dtype)) {
    const int64_t n = t.size();
    converted.reset(new C[size_t(std::max<int64_t>(n, 1))]);
    C* dst = converted.get();
    dispatch_dtype(t.dtype, [&](auto tag) {
      using S = decltype(tag);
      const S* s = static_cast<const S*>(t.data);
      parallel_for(n, 1 << 15, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) dst[i] = to_compute<C>(s[i]);
      });
    });
    if (contiguous) {
      holder = std::move(converted);
      return holder.get();
    }
    src = converted.get();
  } else if (contiguous) {
    return static_cast<const C*>(t.data);
  }
  holder.reset(new C[size_t(std::max<int64_t>(numel(shape), 1))]);
  strided_copy(sizeof(C), src, strides, holder.get(), contiguous_strides(shape), shape);
  return holder.get();
}

// lhs as [batch, spatial..., feature].
template <typename C>
const C* canonical_lhs(const Tensor& lhs, const ConvDims& d, std::unique_ptr<C[]>& holder) {
  const auto st = contiguous_strides(lhs.shape);
  Shape shape{lhs.shape[d.lhs_spec[0]]};
  std::vector<int64_t> strides{st[d.lhs_spec[0]]};
  for (size_t i = 2; i < d.lhs_spec.size(); ++i) {
    shape.push_back(lhs.shape[d.lhs_spec[i]]);
    strides.push_back(st[d.lhs_spec[i]]);
  }
  shape.push_back(lhs.shape[d.lhs_spec[1]]);
  strides.push_back(st[d.lhs_spec[1]]);
  return gather_as<C>(lhs, shape, strides, holder);
}

// rhs as [group][spatial...][in feature][out feature of the group].
template <typename C>
const C* canonical_rhs(const Tensor& rhs, const ConvDims& d, const Geometry& g, std::unique_ptr<C[]>& holder) {
  const auto st = contiguous_strides(rhs.shape);
  const int64_t so = st[d.rhs_spec[0]];
  Shape shape{g.groups};
  std::vector<int64_t> strides{g.og * so};
  for (size_t i = 2; i < d.rhs_spec.size(); ++i) {
    shape.push_back(rhs.shape[d.rhs_spec[i]]);
    strides.push_back(st[d.rhs_spec[i]]);
  }
  shape.push_back(g.cg);
  strides.push_back(st[d.rhs_spec[1]]);
  shape.push_back(g.og);
  strides.push_back(so);
  return gather_as<C>(rhs, shape, strides, holder);
}

// The canonical result [group][batch][spatial...][out feature of the group], or with
// `groups_last` [batch][spatial...][group][out feature of the group], as `out`'s layout: (shape,
// destination strides in out).
void canonical_out_view(const Tensor& out, const ConvDims& d, const Geometry& g, bool groups_last, Shape& shape,
                        std::vector<int64_t>& strides) {
  const auto st = contiguous_strides(out.shape);
  const int64_t sf = st[d.out_spec[1]];
  shape = {g.batch_out};
  strides = {st[d.out_spec[0]]};
  for (size_t i = 2; i < d.out_spec.size(); ++i) {
    shape.push_back(out.shape[d.out_spec[i]]);
    strides.push_back(st[d.out_spec[i]]);
  }
  shape.insert(groups_last ? shape.end() : shape.begin(), g.groups);
  strides.insert(groups_last ? strides.end() : strides.begin(), g.og * sf);
  shape.push_back(g.og);
  strides.push_back(sf);
}

// ---- an lhs with holes ----------------------------------------------------------------------

// One class of output positions along a dim (o = c + i * period, i < n) and the taps that land on
// input elements for all of them (k = k0 + j * dk, j < count), as a dense window over the input.
struct Phase {
  int64_t n = 0, k0 = 0, dk = 1, count = 0;
  WindowDim dim;
};

std::vector<Phase> phases(const WindowDim& w, int64_t out, int64_t& period) {
  const int64_t d = w.base_dilation, s = w.stride, r = w.window_dilation;
  period = d / std::gcd(s, d);
  std::vector<Phase> ps(static_cast<size_t>(period));
  for (int64_t c = 0; c < period; ++c) {
    Phase& p = ps[size_t(c)];
    p.n = out > c ? (out - c + period - 1) / period : 0;
    p.dk = d / std::gcd(r, d);
    p.k0 = -1;
    for (int64_t k = 0; k < std::min(w.window, p.dk) && p.k0 < 0; ++k)
      if (((c * s + k * r - w.pad_lo) % d + d) % d == 0) p.k0 = k;
    p.count = p.k0 < 0 ? 0 : (w.window - p.k0 + p.dk - 1) / p.dk;
    if (p.n == 0 || p.count == 0) continue;
    // Input index of (i, j): (c s + k0 r - lo) / d + i (s / gcd(s, d)) + j (r / gcd(r, d)).
    p.dim.size = w.size;
    p.dim.window = p.count;
    p.dim.stride = s / std::gcd(s, d);
    p.dim.window_dilation = r / std::gcd(r, d);
    p.dim.pad_lo = -((c * s + p.k0 * r - w.pad_lo) / d);
    const int64_t span = (p.count - 1) * p.dim.window_dilation + 1;
    p.dim.pad_hi = (p.n - 1) * p.dim.stride + span - p.dim.size - p.dim.pad_lo;  // exactly n windows
  }
  return ps;
}

// The convolution of an lhs with holes: one dense convolution per class of output positions, all
// computed by one set of tasks that write their rows in place.
template <typename C>
void conv_phases(const Geometry& g, const C* x, const C* w, C* out) {
  const size_t nsp = g.sp.size();
  std::vector<int64_t> period(nsp);
  std::vector<std::vector<Phase>> ps(nsp);
  for (size_t i = 0; i < nsp; ++i) ps[i] = phases(g.sp[i], g.out_sp[i], period[i]);
  const int64_t og = g.og, cg = g.cg;
  std::vector<conv::RowClass<C>> classes;
  std::vector<std::unique_ptr<C[]>> kernels;  // each class's kernel rows
  std::vector<int64_t> c(nsp, 0);
  for (bool more = true; more;) {
    std::vector<WindowDim> dims;
    bool empty = false, zero = false;
    for (size_t i = 0; i < nsp; ++i) {
      const Phase& p = ps[i][size_t(c[i])];
      empty = empty || p.n == 0;
      zero = zero || p.count == 0;
      dims.push_back(p.dim);
    }
    if (!empty) {
      conv::RowClass<C> k;
      k.first = c;
      k.period = period;
      if (zero)  // no tap lands on the input: zero rows, one per position of the class
        for (size_t i = 0; i < nsp; ++i) dims[i] = WindowDim{ps[i][size_t(c[i])].n, 1, 1, 0, 0, 1, 1};
      k.g = conv::with_spatial(g, dims);
      if (!zero) {
        // The kernel rows for the class's taps: [group][tap j...][cg][og].
        kernels.emplace_back(new C[size_t(g.groups * k.g.taps * cg * og)]);
        C* wc = kernels.back().get();
        for (int64_t grp = 0; grp < g.groups; ++grp)
          for (int64_t t = 0; t < k.g.taps; ++t) {
            int64_t rest = t, tap = 0, scale = 1;
            for (size_t i = nsp; i-- > 0;) {
              const Phase& p = ps[i][size_t(c[i])];
              tap += (p.k0 + (rest % p.count) * p.dk) * scale;
              rest /= p.count;
              scale *= g.k_sp[i];
            }
            std::memcpy(wc + (grp * k.g.taps + t) * cg * og, w + (grp * g.taps + tap) * cg * og,
                        size_t(cg * og) * sizeof(C));
          }
        k.w = wc;
      }
      classes.push_back(std::move(k));
    }
    more = false;
    for (size_t i = nsp; i-- > 0;) {  // next class
      if (++c[i] < period[i]) {
        more = true;
        break;
      }
      c[i] = 0;
    }
  }
  conv::conv_classes<C>(classes, x, g.out_sp, g.rows, out);
}

template <typename C>
void run(const ConvDims& d, const Tensor& lhs, const Tensor& rhs, const Tensor& out) {
  Geometry g = conv::geometry(d, lhs.shape, rhs.shape, false);  // (tables only where they are used)
  bool holes = false;
  for (const WindowDim& s : g.sp) holes = holes || s.base_dilation > 1;
  const bool depthwise = !holes && conv::is_depthwise(g);
  Shape cshape;
  std::vector<int64_t> cstrides;
  canonical_out_view(out, d, g, depthwise, cshape, cstrides);
  if (g.taps * g.cg == 0) {  // empty sums: zeros (all-zero bits in every dtype)
    std::memset(out.data, 0, size_t(out.size()) * itemsize(out.dtype));
    return;
  }
  std::unique_ptr<C[]> lhs_holder, rhs_holder, out_holder;
  const C* x = canonical_lhs<C>(lhs, d, lhs_holder);
  const C* w = canonical_rhs<C>(rhs, d, g, rhs_holder);
  const bool in_place = same_storage<C>(out.dtype) && dense(cshape, cstrides);
  C* res = static_cast<C*>(out.data);
  if (!in_place) {
    out_holder.reset(new C[size_t(out.size())]);
    res = out_holder.get();
  }
  if (depthwise) {
    conv::conv_depthwise<C>(g, x, w, res);
  } else if (holes) {
    conv_phases<C>(g, x, w, res);
  } else if (!conv::conv_single_channel<C>(g, x, w, res)) {
    conv::add_tap_tables(g);
    conv::conv_groups<C>(g, x, w, res);
  }
  if (in_place) return;
  if (same_storage<C>(out.dtype)) {
    strided_copy(sizeof(C), res, contiguous_strides(cshape), out.data, cstrides, cshape);
    return;
  }
  dispatch_dtype(out.dtype, [&](auto tag) {
    using Y = decltype(tag);
    std::unique_ptr<Y[]> converted(new Y[size_t(out.size())]);
    Y* y = converted.get();
    parallel_for(out.size(), 1 << 15, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = from_compute<Y>(res[i]);
    });
    strided_copy(sizeof(Y), y, contiguous_strides(cshape), out.data, cstrides, cshape);
  });
}

void conv_real(const Tensor& lhs, const Tensor& rhs, const Tensor& res, const Attrs& attrs) {
  const ConvDims d = conv_dims(lhs.shape, rhs.shape, attrs);
  int64_t k = rhs.size() / std::max<int64_t>(rhs.shape[d.rhs_spec[0]], 1);
  dispatch_compute(lhs.dtype, res.dtype, k, [&](auto tag) { run<decltype(tag)>(d, lhs, rhs, res); });
}

// One part (0: real, 1: imaginary) of a complex tensor as a contiguous real one held by `holder`.
template <typename P>
Tensor part_plane(const Tensor& t, int part, std::unique_ptr<P[]>& holder) {
  holder.reset(new P[size_t(t.size())]);
  std::vector<int64_t> strides = contiguous_strides(t.shape);
  for (int64_t& s : strides) s *= 2;
  strided_copy(sizeof(P), static_cast<const P*>(t.data) + part, strides, holder.get(), contiguous_strides(t.shape),
               t.shape);
  return Tensor{holder.get(), t.shape, dtype_of<P>()};
}

// re = xr wr - xi wi, im = xr wi + xi wr: the real kernels (their blocking, threading and
// rounding) on the planes of part type P (a complex result keeps its operands' dtype).
template <typename P>
void conv_complex(const Tensor& lhs, const Tensor& rhs, const Tensor& res, const Attrs& attrs) {
  std::unique_ptr<P[]> holders[4];
  const Tensor xr = part_plane<P>(lhs, 0, holders[0]), xi = part_plane<P>(lhs, 1, holders[1]);
  const Tensor wr = part_plane<P>(rhs, 0, holders[2]), wi = part_plane<P>(rhs, 1, holders[3]);
  const int64_t total = res.size();
  std::unique_ptr<P[]> prods(new P[size_t(4 * total)]);
  P *rr = prods.get(), *ii = rr + total, *ri = ii + total, *ir = ri + total;
  conv_real(xr, wr, Tensor{rr, res.shape, dtype_of<P>()}, attrs);
  conv_real(xi, wi, Tensor{ii, res.shape, dtype_of<P>()}, attrs);
  conv_real(xr, wi, Tensor{ri, res.shape, dtype_of<P>()}, attrs);
  conv_real(xi, wr, Tensor{ir, res.shape, dtype_of<P>()}, attrs);
  auto* c = static_cast<std::complex<P>*>(res.data);
  parallel_for(total, 1 << 15, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) c[i] = std::complex<P>(rr[i] - ii[i], ri[i] + ir[i]);
  });
}

void conv_cpu(const std::vector<Tensor>& in, const std::vector<Tensor>& out, const Attrs& attrs) {
  const Tensor &lhs = in[0], &rhs = in[1], &res = out[0];
  if (res.size() == 0) return;
  if (!is_complex(lhs.dtype)) return conv_real(lhs, rhs, res, attrs);
  dispatch_complex(lhs.dtype, [&](auto tag) {
    conv_complex<typename decltype(tag)::value_type>(lhs, rhs, res, attrs);
  });
}

}  // namespace

void register_convolution_cpu(CpuKernelTable& t) { t.set_cpu(OpId::conv_general_dilated_, conv_cpu); }

}  // namespace xjax
