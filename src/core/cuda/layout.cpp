// CUDA generators of the data-movement ops: transpose (tiled through shared memory), reshape,
// broadcast_in_dim, slice, pad, concatenate, rev, dynamic_slice, dynamic_update_slice, iota.
// Apart from transpose, each is one grid-stride pass over the result: split the flat result index
// into coordinates, map them to the operand's element. Elements move as bits (u8..u64).
#include <algorithm>

#include "core/cuda/generators.h"

namespace xjax::cuda {

std::string kernel_head(const std::string& name, const std::vector<std::string>& params) {
  std::string s = "extern \"C\" __global__ void " + name + "(";
  for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + params[i];
  return s + ") {\n";
}

std::string in_param(DType dt, int i, bool bits) {
  return "const " + (bits ? bits_type(dt) : storage_type(dt)) + "* __restrict__ in" + std::to_string(i);
}

std::string out_param(DType dt, int i, bool bits) {
  return (bits ? bits_type(dt) : storage_type(dt)) + "* __restrict__ out" + std::to_string(i);
}

KernelPlan start_plan(const Types& out, const std::vector<int64_t>& counts) {
  KernelPlan p;
  p.outputs = out;
  p.source = prelude(needs_wide(counts));
  return p;
}

namespace {

std::vector<int64_t> strides_of(const Shape& s) { return contiguous_strides(s); }

// sum of c<i> * strides[i] (entries with stride 0 left out), as an ix expression.
std::string offset_of(const std::string& prefix, const std::vector<int64_t>& strides) {
  std::string s = lit(0);
  for (size_t i = 0; i < strides.size(); ++i)
    if (strides[i] != 0) s += " + " + prefix + std::to_string(i) + " * " + lit(strides[i]);
  return s;
}

// One grid-stride kernel `name` over the result: `body` computes `src` (an ix offset into in0)
// from the result's coordinates c0..; out0[i] = in0[src].
KernelPlan gather_copy(const std::string& name, const Types& in, const Types& out, const std::string& body) {
  const DType dt = out[0].dtype;
  const int64_t n = numel(out[0].shape);
  KernelPlan p = start_plan(out, {n, numel(in[0].shape)});
  if (n == 0) return p;
  p.source += kernel_head(name, {in_param(dt, 0, true), out_param(dt, 0, true)});
  p.source += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c") + body + "out0[i] = in0[src];\n}\n}\n";
  p.launches.push_back(grid_stride_launch(name, n, {"in0", "out0"}));
  return p;
}

}  // namespace

KernelPlan gen_copy(OpId, const Types& in, const Types& out, const Attrs&) {
  return gather_copy("xjax_copy", in, out, "const ix src = i;\n");
}

KernelPlan gen_broadcast_in_dim(const Types& in, const Types& out, const Attrs& attrs) {
  const auto& dims = attrs.get_ints("broadcast_dimensions");
  const Shape& x = in[0].shape;
  std::vector<int64_t> st = strides_of(x), out_st(out[0].shape.size(), 0);
  for (size_t j = 0; j < x.size(); ++j)
    if (x[j] != 1) out_st[size_t(dims[j])] = st[j];
  return gather_copy("xjax_broadcast_in_dim", in, out, "const ix src = " + offset_of("c", out_st) + ";\n");
}

KernelPlan gen_slice(const Types& in, const Types& out, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const auto& start = attrs.get_ints("start_indices");
  std::vector<int64_t> step = attrs.has("strides") ? attrs.get_ints("strides") : std::vector<int64_t>(x.size(), 1);
  std::vector<int64_t> st = strides_of(x), out_st(x.size());
  int64_t base = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    base += start[d] * st[d];
    out_st[d] = step[d] * st[d];
  }
  return gather_copy("xjax_slice", in, out, "const ix src = " + lit(base) + " + " + offset_of("c", out_st) + ";\n");
}

KernelPlan gen_rev(const Types& in, const Types& out, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const auto& dims = attrs.get_ints("dimensions");
  std::vector<int64_t> st = strides_of(x);
  std::string body;
  for (int64_t d : dims) body += "c" + std::to_string(d) + " = " + lit(x[size_t(d)] - 1) + " - c" + std::to_string(d) + ";\n";
  return gather_copy("xjax_rev", in, out, body + "const ix src = " + offset_of("c", st) + ";\n");
}

KernelPlan gen_pad(const Types& in, const Types& out, const Attrs& attrs) {
  const Shape& x = in[0].shape;
  const DType dt = out[0].dtype;
  const auto& cfg = attrs.get_ints("padding_config");
  const int64_t n = numel(out[0].shape);
  KernelPlan p = start_plan(out, {n, numel(x)});
  if (n == 0) return p;
  std::vector<int64_t> st = strides_of(x);
  std::string body = "bool inside = true;\nix src = 0;\n";
  for (size_t d = 0; d < x.size(); ++d) {
    const std::string c = "c" + std::to_string(d);
    const int64_t lo = cfg[3 * d], step = cfg[3 * d + 2] + 1;
    body += "{ const ix t = " + c + " - " + lit(lo) + ";\n";
    body += "  inside = inside && t >= 0 && t % " + lit(step) + " == 0 && t / " + lit(step) + " < " + lit(x[d]) + ";\n";
    body += "  src += (t / " + lit(step) + ") * " + lit(st[d]) + "; }\n";
  }
  p.source += kernel_head("xjax_pad", {in_param(dt, 0, true), in_param(dt, 1, true), out_param(dt, 0, true)});
  p.source += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c") + body +
              "out0[i] = inside ? in0[src] : in1[0];\n}\n}\n";
  p.launches.push_back(grid_stride_launch("xjax_pad", n, {"in0", "in1", "out0"}));
  return p;
}

KernelPlan gen_concatenate(const Types& in, const Types& out, const Attrs& attrs) {
  const size_t dim = size_t(attrs.get_int("dimension"));
  const DType dt = out[0].dtype;
  const int64_t n = numel(out[0].shape);
  std::vector<int64_t> counts{n};
  for (const TypeInfo& t : in) counts.push_back(numel(t.shape));
  KernelPlan p = start_plan(out, counts);
  if (n == 0) return p;
  std::vector<std::string> params, names;
  for (size_t k = 0; k < in.size(); ++k) {
    params.push_back(in_param(dt, int(k), true));
    names.push_back("in" + std::to_string(k));
  }
  params.push_back(out_param(dt, 0, true));
  names.push_back("out0");
  const std::string c = "c" + std::to_string(dim);
  std::string body;
  int64_t begin = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const int64_t len = in[k].shape[dim];
    if (len == 0) continue;
    std::vector<int64_t> st = strides_of(in[k].shape);
    body += "if (" + c + " >= " + lit(begin) + " && " + c + " < " + lit(begin + len) + ") { " + c + " -= " + lit(begin) +
            "; out0[i] = in" + std::to_string(k) + "[" + offset_of("c", st) + "]; continue; }\n";
    begin += len;
  }
  p.source += kernel_head("xjax_concatenate", params);
  p.source += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c") + body + "}\n}\n";
  p.launches.push_back(grid_stride_launch("xjax_concatenate", n, names));
  return p;
}

namespace {

// Statements setting s<d> to dynamic start operand in<first + d>, clamped to [0, dim - size] as
// XLA does (computed in 64 bits: the operand may hold any value of its dtype).
std::string clamped_starts(const Types& in, size_t first, const Shape& whole, const Shape& part) {
  std::string s;
  const bool uns = is_unsigned(in[first].dtype);
  for (size_t d = 0; d < whole.size(); ++d) {
    const std::string v = "in" + std::to_string(first + d) + "[0]";
    const std::string hi = std::to_string(whole[d] - part[d]) + "LL";
    s += "ix s" + std::to_string(d) + ";\n{ ";
    if (uns) s += "const u64 v = (u64)" + v + "; s" + std::to_string(d) + " = (ix)(v > (u64)" + hi + " ? (u64)" + hi + " : v); }\n";
    else s += "const i64 v = (i64)" + v + "; s" + std::to_string(d) + " = (ix)(v < 0 ? 0 : v > " + hi + " ? " + hi + " : v); }\n";
  }
  return s;
}

std::vector<std::string> start_params(const Types& in, size_t first) {
  std::vector<std::string> ps;
  for (size_t k = first; k < in.size(); ++k) ps.push_back(in_param(in[k].dtype, int(k)));
  return ps;
}

}  // namespace

KernelPlan gen_dynamic_slice(const Types& in, const Types& out, const Attrs&) {
  const Shape& x = in[0].shape;
  const DType dt = out[0].dtype;
  const int64_t n = numel(out[0].shape);
  KernelPlan p = start_plan(out, {n, numel(x)});
  if (n == 0) return p;
  std::vector<std::string> params{in_param(dt, 0, true)}, names{"in0"};
  for (const std::string& s : start_params(in, 1)) params.push_back(s);
  for (size_t k = 1; k < in.size(); ++k) names.push_back("in" + std::to_string(k));
  params.push_back(out_param(dt, 0, true));
  names.push_back("out0");
  std::vector<int64_t> st = strides_of(x);
  std::string src = lit(0);
  for (size_t d = 0; d < x.size(); ++d)
    src += " + (s" + std::to_string(d) + " + c" + std::to_string(d) + ") * " + lit(st[d]);
  p.source += kernel_head("xjax_dynamic_slice", params) + clamped_starts(in, 1, x, out[0].shape);
  p.source += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c") + "out0[i] = in0[" + src + "];\n}\n}\n";
  p.launches.push_back(grid_stride_launch("xjax_dynamic_slice", n, names));
  return p;
}

KernelPlan gen_dynamic_update_slice(const Types& in, const Types& out, const Attrs&) {
  // One pass over the result: elements inside the update's window come from the update.
  const Shape& x = in[0].shape;
  const Shape& u = in[1].shape;
  const DType dt = out[0].dtype;
  const int64_t n = numel(x);
  KernelPlan p = start_plan(out, {n});
  if (n == 0) return p;
  std::vector<std::string> params{in_param(dt, 0, true), in_param(dt, 1, true)}, names{"in0", "in1"};
  for (const std::string& s : start_params(in, 2)) params.push_back(s);
  for (size_t k = 2; k < in.size(); ++k) names.push_back("in" + std::to_string(k));
  params.push_back(out_param(dt, 0, true));
  names.push_back("out0");
  std::vector<int64_t> ust = strides_of(u);
  std::string inside = "true", src = lit(0);
  for (size_t d = 0; d < x.size(); ++d) {
    const std::string r = "(c" + std::to_string(d) + " - s" + std::to_string(d) + ")";
    inside += " && " + r + " >= 0 && " + r + " < " + lit(u[d]);
    src += " + " + r + " * " + lit(ust[d]);
  }
  p.source += kernel_head("xjax_dynamic_update_slice", params) + clamped_starts(in, 2, x, u);
  p.source += grid_stride_loop("i", n) + " {\n" + decompose(x, "i", "c") + "out0[i] = (" + inside + ") ? in1[" + src +
              "] : in0[i];\n}\n}\n";
  p.launches.push_back(grid_stride_launch("xjax_dynamic_update_slice", n, names));
  return p;
}

KernelPlan gen_iota(const Types&, const Types& out, const Attrs& attrs) {
  const DType dt = out[0].dtype;
  const int64_t n = numel(out[0].shape);
  KernelPlan p = start_plan(out, {n});
  if (n == 0) return p;
  const std::string c = "c" + std::to_string(attrs.get_int("dimension"));
  p.source += kernel_head("xjax_iota", {out_param(dt, 0)});
  p.source += grid_stride_loop("i", n) + " {\n" + decompose(out[0].shape, "i", "c") + "out0[i] = " +
              store(dt, "(" + compute_type(dt) + ")" + c) + ";\n}\n}\n";
  p.launches.push_back(grid_stride_launch("xjax_iota", n, {"out0"}));
  return p;
}

KernelPlan gen_transpose(const Types& in, const Types& out, const Attrs& attrs) {
  const auto& perm = attrs.get_ints("permutation");
  const Shape& x = in[0].shape;
  const size_t rank = x.size();
  const DType dt = out[0].dtype;
  const int64_t n = numel(x);
  // The source dims that are innermost in the operand (a) and in the result (b).
  const size_t a = rank - 1, b = rank ? size_t(perm[rank - 1]) : 0;
  if (rank < 2 || a == b || n == 0) {
    std::vector<int64_t> st = strides_of(x), out_st(rank);
    for (size_t i = 0; i < rank; ++i) out_st[i] = st[size_t(perm[i])];
    return gather_copy("xjax_transpose", in, out, "const ix src = " + offset_of("c", out_st) + ";\n");
  }
  // Tiles of 32 x 32 over source dims (b, a): read with threads along a (contiguous in the
  // operand), written with threads along b (contiguous in the result), through shared memory.
  std::vector<int64_t> src_st = strides_of(x), dst_of(rank);
  std::vector<int64_t> out_st = strides_of(out[0].shape);
  for (size_t i = 0; i < rank; ++i) dst_of[size_t(perm[i])] = out_st[i];
  Shape batch;
  std::vector<int64_t> batch_src, batch_dst;
  for (size_t d = 0; d < rank; ++d)
    if (d != a && d != b) {
      batch.push_back(x[d]);
      batch_src.push_back(src_st[d]);
      batch_dst.push_back(dst_of[d]);
    }
  const int64_t ta = (x[a] + 31) / 32, tb = (x[b] + 31) / 32, nb = numel(batch);
  const int64_t tiles = ta * tb * nb;
  KernelPlan p = start_plan(out, {n, tiles});
  const std::string T = bits_type(dt);
  std::string s = kernel_head("xjax_transpose", {in_param(dt, 0, true), out_param(dt, 0, true)});
  s += "__shared__ " + T + " tile[32][33];\n";
  s += "for (ix t = blockIdx.x; t < " + lit(tiles) + "; t += gridDim.x) {\n";
  s += "const ix ja = t % " + lit(ta) + ", jb = (t / " + lit(ta) + ") % " + lit(tb) + ", bi = t / " + lit(ta * tb) + ";\n";
  s += decompose(batch, "bi", "c");
  s += "const ix src = " + offset_of("c", batch_src) + ", dst = " + offset_of("c", batch_dst) + ";\n";
  s += "const ix a0 = ja * 32, b0 = jb * 32;\n";
  s += "for (int r = threadIdx.y; r < 32; r += 8) {\n";
  s += "  const ix ia = a0 + threadIdx.x, ib = b0 + r;\n";
  s += "  if (ia < " + lit(x[a]) + " && ib < " + lit(x[b]) + ") tile[r][threadIdx.x] = in0[src + ib * " + lit(src_st[b]) +
       " + ia * " + lit(src_st[a]) + "];\n}\n";
  s += "__syncthreads();\n";
  s += "for (int r = threadIdx.y; r < 32; r += 8) {\n";
  s += "  const ix ib = b0 + threadIdx.x, ia = a0 + r;\n";
  s += "  if (ia < " + lit(x[a]) + " && ib < " + lit(x[b]) + ") out0[dst + ib * " + lit(dst_of[b]) + " + ia * " +
       lit(dst_of[a]) + "] = tile[threadIdx.x][r];\n}\n";
  s += "__syncthreads();\n}\n}\n";
  p.source += s;
  Launch l;
  l.name = "xjax_transpose";
  l.block = {32, 8, 1};
  l.grid.x = std::min<int64_t>(tiles, 65536);
  l.params = {"in0", "out0"};
  p.launches.push_back(l);
  return p;
}

}  // namespace xjax::cuda
