// The convolution as blocked products (see conv_blocks.cpp): its geometry in canonical layouts
// and the im2col-block GEMM that computes it. Used by the conv_general_dilated kernel.
#pragma once
#include <vector>

#include "core/ops/window_dims.h"

namespace xjax::conv {

// The convolution seen in canonical layouts: lhs [batch, spatial..., feature], rhs
// [group][tap][in feature][out feature], out [group][batch, spatial...][out feature].
struct Geometry {
  std::vector<WindowDim> sp;
  int64_t batch_out = 0, cin = 0, cg = 0, og = 0, groups = 1;
  bool batch_groups = false;
  int64_t rows = 0, taps = 1;  // rows and taps of one group's product
  Shape out_sp, k_sp;
  std::vector<int64_t> lhs_sp_strides;  // canonical lhs strides of the spatial dims
  int64_t lhs_batch_stride = 0;
  bool direct = false;  // A is the canonical lhs itself (1x1 window, no stride, padding or dilation)
  // tab[i][o * window + k]: offset in the canonical lhs of tap k of output position o along spatial
  // dim i, or -1 on padding and holes.
  std::vector<std::vector<int64_t>> tab;
  // Along the last spatial dim the valid taps of output position o are [lo[o], hi[o]) (no holes),
  // and `runs`: their inputs are contiguous (window_dilation 1, a tap's features are all of them).
  std::vector<int64_t> lo, hi;
  bool runs = false;
  // tab_last_by_tap[k * out_sp.back() + o] = tab.back()[o * window + k]: the last dim's offsets of
  // one tap for consecutive output positions, contiguous (tap_rows reads them so).
  std::vector<int64_t> tab_last_by_tap;
};

// The geometry of the convolution `d` of lhs and rhs shapes; without its tap tables (tab, lo, hi,
// runs: out positions x taps entries, which conv_groups needs) unless `tap_tables`.
Geometry geometry(const ConvDims& d, const Shape& lhs, const Shape& rhs, bool tap_tables = true);

// The geometry of `base` (same operands and groups) with the spatial dims `sp` instead.
Geometry with_spatial(const Geometry& base, std::vector<WindowDim> sp, bool tap_tables = true);

// Builds g's tap tables if it has none.
void add_tap_tables(Geometry& g);

// out[group][row][og] = the convolution of the canonical lhs and rhs, for C in float, double,
// uint32_t, uint64_t. Splits its work over the thread pool.
template <typename C>
void conv_groups(const Geometry& g, const C* lhs, const C* w, C* out);

// A class of the output positions of a convolution with lhs holes (convolution.cpp): its dense
// convolution `g` over the taps that land on input elements, with kernel rows `w`
// ([group][tap][cg][og]; null when no tap does: the rows are zeros). Row (b, i...) of g is row
// (b, first + i * period...) of the whole result.
template <typename C>
struct RowClass {
  Geometry g;
  const C* w = nullptr;
  std::vector<int64_t> first, period;
};

// out[group][row][og] (`rows` rows per group, spatial dims out_sp) from all its classes, computed
// by one set of tasks and each row block written in place (no intermediate result).
template <typename C>
void conv_classes(const std::vector<RowClass<C>>& classes, const C* lhs, const Shape& out_sp, int64_t rows, C* out);

// The one-channel 1-D convolutions with long windows (no stride or dilation) as a GEMM over blocks
// of outputs (conv_single_channel.cpp); false, computing nothing, for any other convolution.
template <typename C>
bool conv_single_channel(const Geometry& g, const C* lhs, const C* w, C* out);

// Depthwise convolutions: as many groups as input features, one input and one output feature per
// group, a window of more than one tap. conv_depthwise computes them directly (conv_depthwise.cpp)
// into out[batch, spatial...][feature], the features last (not conv_groups' layout).
bool is_depthwise(const Geometry& g);
template <typename C>
void conv_depthwise(const Geometry& g, const C* lhs, const C* w, C* out);

}  // namespace xjax::conv
