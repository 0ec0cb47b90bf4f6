// CUDA generator of the scans along one axis (cumsum, cumprod, cummax, cummin, cumlogsumexp),
// forward or reversed. Two forms:
// - many lines, or short ones: a thread per line, walking it in order as the CPU kernel does (so
//   the float rounding is the same), neighbouring threads on neighbouring lines (coalesced when
//   the axis is not innermost);
// - few long lines (a thread per line would leave the GPU idle, e.g. the cumsum of one 1e7
//   vector): reduce, then scan, in three launches. The line is cut into tiles of kTile elements
//   (kBlock threads, kItems consecutive elements each); (1) a block per tile reduces it into
//   scratch; (2) a block per line scans its tile totals into each tile's carry (what precedes it);
//   (3) a block per tile scans it again, starting from its carry. Integer scans are exact; float
//   ones group the terms differently from the CPU's sequential order (equal up to rounding), and
//   16-bit floats round once per element, from the float32 accumulator.
// Scratch and accumulators hold the compute type (float for float16/bfloat16).
#include "core/cuda/generators.h"

namespace xjax::cuda {

namespace {

constexpr int64_t kBlock = 256, kItems = 8, kTile = kBlock * kItems;
// Block scans when the lines are too few to fill the GPU and long enough to pay for three passes.
constexpr int64_t kMaxLinesForBlocks = 2048, kMinLengthForBlocks = 2 * kTile;

struct Scan {
  std::string acc;   // accumulator (compute) type
  std::string step;  // combines `acc` (earlier elements) with `v` (later ones)
};

Scan scan_of(OpId op, DType dt) {
  if (op == OpId::cumlogsumexp_) return {compute_type(dt), "xjax::scalar::logaddexp(acc, v)"};
  const Combiner c = op == OpId::cumsum_ ? Combiner::Add
                     : op == OpId::cumprod_ ? Combiner::Mul
                     : op == OpId::cummax_ ? Combiner::Max
                     : Combiner::Min;
  return {acc_type(c, dt), combine(c, "acc", "v")};
}

// Statements: `base` = offset of line l's first element in memory order; at(j) = offset of its
// j-th element in scan order.
std::string line_base(int64_t n, int64_t inner) {
  return "const ix base = (l / " + lit(inner) + ") * " + lit(n * inner) + " + l % " + lit(inner) + ";\n";
}
std::string at(int64_t n, int64_t inner, bool reverse, const std::string& j) {
  return "base + (" + (reverse ? lit(n - 1) + " - " + j : j) + ") * " + lit(inner);
}

KernelPlan thread_per_line(const std::string& name, const Scan& sc, DType dt, int64_t n, int64_t inner,
                           bool reverse, int64_t lines, KernelPlan p) {
  std::string s = kernel_head(name, {in_param(dt, 0), out_param(dt, 0)});
  s += grid_stride_loop("l", lines) + " {\n" + line_base(n, inner);
  s += "ix at = base + " + lit(reverse ? (n - 1) * inner : 0) + ";\n";
  s += sc.acc + " acc = (" + sc.acc + ")" + load(dt, "in0[at]") + ";\n";
  s += "out0[at] = " + store(dt, "acc") + ";\n";
  s += "for (ix k = 1; k < " + lit(n) + "; ++k) {\n";
  s += std::string("at ") + (reverse ? "-=" : "+=") + " " + lit(inner) + ";\n";
  s += "const " + sc.acc + " v = (" + sc.acc + ")" + load(dt, "in0[at]") + ";\n";
  s += "acc = " + sc.step + ";\n";
  s += "out0[at] = " + store(dt, "acc") + ";\n}\n}\n}\n";
  p.source += s;
  p.launches.push_back(grid_stride_launch(name, lines, {"in0", "out0"}));
  return p;
}

// The block scan all three kernels use: the inclusive scan over the block's threads (in threadIdx
// order) of values v, present where h (absent ones contribute nothing); gives each thread the
// exclusive prefix (ex, present if hex) and the block's total (tot, htot).
std::string block_scan(const Scan& sc) {
  const std::string& A = sc.acc;
  std::string s = "__device__ __forceinline__ " + A + " xjax_step(" + A + " acc, " + A + " v) { return " + sc.step +
                  "; }\n";
  s += "__device__ void xjax_block_scan(" + A + " v, bool h, " + A + "& ex, bool& hex, " + A + "& tot, bool& htot) {\n";
  s += "__shared__ " + A + " s_v[" + std::to_string(kBlock) + "];\n";
  s += "__shared__ bool s_h[" + std::to_string(kBlock) + "];\n";
  s += "const int t = (int)threadIdx.x;\n";
  s += "s_v[t] = v; s_h[t] = h;\n__syncthreads();\n";
  s += "for (int d = 1; d < " + std::to_string(kBlock) + "; d <<= 1) {\n";
  s += A + " pv = v; bool ph = false;\n";
  s += "if (t >= d) { pv = s_v[t - d]; ph = s_h[t - d]; }\n__syncthreads();\n";
  s += "if (ph) { v = h ? xjax_step(pv, v) : pv; h = true; }\n";
  s += "s_v[t] = v; s_h[t] = h;\n__syncthreads();\n}\n";
  s += "hex = t > 0 && s_h[t - 1];\nex = hex ? s_v[t - 1] : v;\n";
  s += "htot = s_h[" + std::to_string(kBlock - 1) + "];\ntot = s_v[" + std::to_string(kBlock - 1) + "];\n";
  s += "__syncthreads();\n}\n";  // the next call overwrites s_v
  return s;
}

KernelPlan block_per_tile(const std::string& name, const Scan& sc, DType dt, int64_t n, int64_t inner, bool reverse,
                          int64_t lines, KernelPlan p) {
  const std::string& A = sc.acc;
  const int64_t tiles = (n + kTile - 1) / kTile;
  p.scratch_bytes.push_back(lines * tiles * 8);  // a compute value per tile (8 bytes: the widest)
  p.source += block_scan(sc);
  // This thread's elements: j0 + e for e < cnt.
  const std::string tile_head = "const ix l = (ix)blockIdx.y, tile = (ix)blockIdx.x;\n" + line_base(n, inner) +
                                "const ix j0 = tile * " + lit(kTile) + " + (ix)threadIdx.x * " + lit(kItems) + ";\n" +
                                "const int cnt = j0 >= " + lit(n) + " ? 0 : (int)(" + lit(n) + " - j0 < " +
                                lit(kItems) + " ? " + lit(n) + " - j0 : " + lit(kItems) + ");\n";
  const std::string local = A + " loc[" + std::to_string(kItems) + "];\n" +
                            "for (int e = 0; e < cnt; ++e) {\nconst " + A + " v = (" + A + ")" +
                            load(dt, "in0[" + at(n, inner, reverse, "(j0 + e)") + "]") + ";\n" +
                            "if (e == 0) { loc[0] = v; } else { const " + A +
                            " acc = loc[e - 1]; loc[e] = xjax_step(acc, v); }\n}\n" + A +
                            " ex, tot; bool hex, htot;\nxjax_block_scan(cnt ? loc[cnt - 1] : (" + A +
                            ")0, cnt > 0, ex, hex, tot, htot);\n";
  Dim3 tile_grid;
  tile_grid.x = tiles;
  tile_grid.y = lines;
  Dim3 block;
  block.x = kBlock;

  std::string s = kernel_head(name + "_totals", {in_param(dt, 0), A + "* __restrict__ tmp0"});
  s += tile_head + local + "if (threadIdx.x == 0) tmp0[l * " + lit(tiles) + " + tile] = tot;\n}\n";

  s += kernel_head(name + "_carries", {A + "* __restrict__ tmp0"});
  s += "const ix l = (ix)blockIdx.x;\n" + A + "* p = tmp0 + l * " + lit(tiles) + ";\n";
  s += A + " carry = (" + A + ")0; bool hc = false;\n";
  s += "for (ix c0 = 0; c0 < " + lit(tiles) + "; c0 += " + lit(kBlock) + ") {\n";
  s += "const ix j = c0 + (ix)threadIdx.x;\nconst bool h = j < " + lit(tiles) + ";\n";
  s += "const " + A + " v = h ? p[j] : (" + A + ")0;\n";
  s += A + " ex, tot; bool hex, htot;\nxjax_block_scan(v, h, ex, hex, tot, htot);\n";
  s += "if (h && hc) p[j] = hex ? xjax_step(carry, ex) : carry;\n";
  s += "else if (h) p[j] = ex;  // the line's first tile: never read\n";
  s += "if (htot) { carry = hc ? xjax_step(carry, tot) : tot; hc = true; }\n}\n}\n";

  s += kernel_head(name, {in_param(dt, 0), A + "* __restrict__ tmp0", out_param(dt, 0)});
  s += tile_head + local;
  s += A + " pre = ex; bool hp = hex;\n";
  s += "if (tile > 0) { const " + A + " c = tmp0[l * " + lit(tiles) + " + tile]; pre = hp ? xjax_step(c, ex) : c; " +
       "hp = true; }\n";
  s += "for (int e = 0; e < cnt; ++e) {\n";
  s += "const " + A + " r = hp ? xjax_step(pre, loc[e]) : loc[e];\n";
  s += "out0[" + at(n, inner, reverse, "(j0 + e)") + "] = " + store(dt, "r") + ";\n}\n}\n";
  p.source += s;

  Launch totals{name + "_totals", tile_grid, block, 0, {"in0", "tmp0"}};
  Dim3 line_grid;
  line_grid.x = lines;
  Launch carries{name + "_carries", line_grid, block, 0, {"tmp0"}};
  Launch scan{name, tile_grid, block, 0, {"in0", "tmp0", "out0"}};
  p.launches = {totals, carries, scan};
  return p;
}

}  // namespace

KernelPlan gen_cumulative(OpId op, const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[0].dtype;
  const Shape& x = in[0].shape;
  const size_t axis = size_t(attrs.get_int("axis"));
  const bool reverse = attrs.get_int_or("reverse", 0) != 0;
  const int64_t total = numel(x), n = x[axis];
  KernelPlan p = start_plan(out, {total});
  if (total == 0) return p;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  const int64_t lines = total / n;
  const std::string name = "xjax_" + std::string(op_name(op));
  const Scan sc = scan_of(op, dt);
  if (lines <= kMaxLinesForBlocks && n >= kMinLengthForBlocks)
    return block_per_tile(name, sc, dt, n, inner, reverse, lines, std::move(p));
  return thread_per_line(name, sc, dt, n, inner, reverse, lines, std::move(p));
}

}  // namespace xjax::cuda
