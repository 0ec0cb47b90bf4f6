// The kernels of fused groups. Without reductions: one grid-stride loop over the index space.
// With reductions, the space is (k0, r, k1) and two stages fold r, in a fixed order whatever the
// hardware (results do not depend on scheduling):
// - stage 1: a block of TX x TY threads takes a tile: TX consecutive outputs o = (a, b) and one of
//   P parts of r; thread (tx, ty) walks j = part start + ty, += TY, computing (and storing) the
//   elements (a, j, b) and folding them; the TY partials of each column then meet in a tree in
//   shared memory. With P = 1 the tree's result is the output, else a partial in scratch;
// - stage 2 (P > 1): a thread per output folds its P partials in order.
// P grows only while the tiles are too few to fill a GPU and r is long enough to share.
#include "core/cuda/fused.h"

#include <algorithm>

#include "core/cuda/generators.h"
#include "core/ops/scalar_names.h"

namespace xjax::cuda {

namespace {

constexpr int64_t kBlock = 256;
constexpr int64_t kTargetTiles = 1024;  // stage-1 tiles wanted for a full GPU (132 SMs x ~8)
constexpr int64_t kMinRowsPerThread = 4;

std::string num(int64_t v) { return std::to_string(v); }
std::string slot(int s) { return "s" + num(s); }

// The accumulator of a reduction: 16-bit floats fold in float; the rest in their own type, with
// the scalar definitions' wrap-around, NaN and bool rules.
std::string acc_type(const KernelReduction& r) { return slot_type(r.dtype); }
int64_t acc_bytes(const KernelReduction& r) {
  return r.dtype == DType::Float16 || r.dtype == DType::BFloat16 ? 4 : int64_t(itemsize(r.dtype));
}

std::string fold(const KernelReduction& r, const std::string& a, const std::string& b) {
  static const char* fns[] = {"add", "mul", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor"};
  return std::string("xjax::scalar::") + fns[int(r.op)] + "<" + acc_type(r) + ">(" + a + ", " + b + ")";
}

std::string identity(const KernelReduction& r) {
  const std::string t = acc_type(r);
  const bool boolean = r.dtype == DType::Bool, floating = is_floating(r.dtype);
  switch (r.op) {
    case RedOp::Sum: case RedOp::Or: case RedOp::Xor: return "(" + t + ")0";
    case RedOp::Prod: return "(" + t + ")1";
    case RedOp::And: return boolean ? "true" : "(" + t + ")(~(xjax::scalar::u64)0)";
    case RedOp::Max:
      if (boolean) return "false";
      return floating ? "(-xjax::scalar::infinity<" + t + ">())" : "xjax::scalar::int_min<" + t + ">()";
    case RedOp::Min:
      if (boolean) return "true";
      return floating ? "xjax::scalar::infinity<" + t + ">()" : "xjax::scalar::int_max<" + t + ">()";
  }
  return "0";
}

// Statements computing every slot at flat index i (loads hoisted out of the loop excepted), then
// the stores.
std::string element_body(const FusedKernelSpec& spec) {
  std::string s;
  for (const KernelLoad& L : spec.loads) {
    const DType dt = spec.slot_dtype[L.slot];
    const std::string in = "in" + num(L.input);
    switch (L.kind) {
      case KernelLoad::Kind::Fill: break;  // hoisted
      case KernelLoad::Kind::Contiguous:
        s += "const " + slot_type(dt) + " " + slot(L.slot) + " = " +
             read_mem(dt, in + "[" + (L.offset ? lit(L.offset) + " + " : "") + "i]") + ";\n";
        break;
      case KernelLoad::Kind::Iota:
        s += "const " + slot_type(dt) + " " + slot(L.slot) + " = " +
             from_i64(dt, "(i / " + lit(L.iota_inner) + ") % " + lit(L.iota_len)) + ";\n";
        break;
      case KernelLoad::Kind::Strided: {
        // The offset of i's multi-index in L.shape, innermost dim first.
        const std::string o = "o" + num(L.slot), q = "q" + num(L.slot);
        s += "ix " + o + " = " + lit(L.offset) + ";\n{ ix " + q + " = i;\n";
        for (size_t d = L.shape.size(); d-- > 0;) {
          if (d == 0) {
            s += o + " += " + q + " * " + lit(L.strides[0]) + "; }\n";
          } else {
            s += o + " += (" + q + " % " + lit(L.shape[d]) + ") * " + lit(L.strides[d]) + "; " + q + " /= " +
                 lit(L.shape[d]) + ";\n";
          }
        }
        s += "const " + slot_type(dt) + " " + slot(L.slot) + " = " + read_mem(dt, in + "[" + o + "]") + ";\n";
        break;
      }
    }
  }
  for (const KernelStep& st : spec.steps) {
    std::vector<std::string> args;
    for (int a : st.args) args.push_back(slot(a));
    s += "const " + slot_type(st.out_dtype) + " " + slot(st.out) + " = " + step_expr(st, args) + ";\n";
  }
  for (const KernelStore& st : spec.stores)
    s += "out" + num(st.output) + "[i] = " + write_mem(spec.output_types[st.output].dtype, slot(st.slot)) + ";\n";
  return s;
}

// The Fill loads: one value for every element, read before the loop.
std::string fills(const FusedKernelSpec& spec) {
  std::string s;
  for (const KernelLoad& L : spec.loads) {
    if (L.kind != KernelLoad::Kind::Fill) continue;
    const DType dt = spec.slot_dtype[L.slot];
    const std::string v =
        L.input >= 0 ? read_mem(dt, "in" + num(L.input) + "[" + lit(L.offset) + "]") : literal(dt, L.value);
    s += "const " + slot_type(dt) + " " + slot(L.slot) + " = " + v + ";\n";
  }
  return s;
}

std::vector<std::string> io_params(const FusedKernelSpec& spec, std::vector<std::string>& names) {
  std::vector<std::string> p;
  for (size_t k = 0; k < spec.inputs.size(); ++k) {
    p.push_back("const " + mem_type(spec.input_types[k].dtype) + "* __restrict__ in" + num(int64_t(k)));
    names.push_back("in" + num(int64_t(k)));
  }
  for (size_t k = 0; k < spec.outputs.size(); ++k) {
    p.push_back(mem_type(spec.output_types[k].dtype) + "* __restrict__ out" + num(int64_t(k)));
    names.push_back("out" + num(int64_t(k)));
  }
  return p;
}

std::vector<int64_t> index_counts(const FusedKernelSpec& spec) {
  std::vector<int64_t> counts{spec.n};
  for (const TypeInfo& t : spec.input_types) counts.push_back(numel(t.shape));
  for (const TypeInfo& t : spec.output_types) counts.push_back(numel(t.shape));
  return counts;
}

KernelPlan elementwise(const FusedKernelSpec& spec, KernelPlan p) {
  if (spec.n == 0) return p;
  std::vector<std::string> names;
  std::vector<std::string> params = io_params(spec, names);
  p.source += kernel_head("xjax_fused", params) + fills(spec) + grid_stride_loop("i", spec.n) + " {\n" +
              element_body(spec) + "}\n}\n";
  p.launches.push_back(grid_stride_launch("xjax_fused", spec.n, names));
  return p;
}

struct Tiling {
  int64_t tx, ty, ntx, parts, chunk, tiles;
};

int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// Threads along r: enough for rows of kMinRowsPerThread each, at most 8 when neighbouring outputs
// are neighbours in memory (k1 >= 32: a warp reads 32 of them at once); the rest of the block
// takes consecutive outputs.
Tiling tiling(const FusedKernelSpec& spec) {
  Tiling t;
  const int64_t outs = spec.k0 * spec.k1;
  t.ty = std::min(spec.k1 >= 32 ? 8 : kBlock, pow2_at_least((spec.r + kMinRowsPerThread - 1) / kMinRowsPerThread));
  t.tx = kBlock / t.ty;
  t.ntx = (outs + t.tx - 1) / t.tx;
  const int64_t by_rows = std::max<int64_t>(1, spec.r / (t.ty * kMinRowsPerThread));
  t.parts = std::max<int64_t>(1, std::min((kTargetTiles + t.ntx - 1) / t.ntx, by_rows));
  t.chunk = std::max<int64_t>(1, (spec.r + t.parts - 1) / t.parts);
  t.parts = std::max<int64_t>(1, (spec.r + t.chunk - 1) / t.chunk);
  t.tiles = t.ntx * t.parts;
  return t;
}

KernelPlan reducing(const FusedKernelSpec& spec, KernelPlan p) {
  const int64_t outs = spec.k0 * spec.k1;
  if (outs == 0) return p;  // no element either (n = k0 r k1)
  const Tiling t = tiling(spec);
  const bool partial = t.parts > 1;
  std::vector<std::string> names;
  std::vector<std::string> params = io_params(spec, names);
  for (size_t k = 0; partial && k < spec.reductions.size(); ++k) {
    params.push_back(acc_type(spec.reductions[k]) + "* __restrict__ tmp" + num(int64_t(k)));
    names.push_back("tmp" + num(int64_t(k)));
    p.scratch_bytes.push_back(t.parts * outs * acc_bytes(spec.reductions[k]));
  }
  std::string s = kernel_head("xjax_fused", params) + fills(spec);
  s += "__shared__ unsigned long long smem[" + num(kBlock) + "];\n";
  s += "const ix tx = (ix)threadIdx.x % " + lit(t.tx) + ", ty = (ix)threadIdx.x / " + lit(t.tx) + ";\n";
  s += "for (ix t = blockIdx.x; t < " + lit(t.tiles) + "; t += gridDim.x) {\n";
  s += "const ix part = t % " + lit(t.parts) + ", rest = t / " + lit(t.parts) + ";\n";
  s += "const ix o = rest * " + lit(t.tx) + " + tx, a = o / " + lit(spec.k1) + ", b = o % " + lit(spec.k1) + ";\n";
  for (size_t k = 0; k < spec.reductions.size(); ++k)
    s += acc_type(spec.reductions[k]) + " acc" + num(int64_t(k)) + " = " + identity(spec.reductions[k]) + ";\n";
  s += "if (o < " + lit(outs) + ") {\nconst ix end = part * " + lit(t.chunk) + " + " + lit(t.chunk) + " < " +
       lit(spec.r) + " ? part * " + lit(t.chunk) + " + " + lit(t.chunk) + " : " + lit(spec.r) + ";\n";
  s += "for (ix j = part * " + lit(t.chunk) + " + ty; j < end; j += " + lit(t.ty) + ") {\n";
  s += "const ix i = (a * " + lit(spec.r) + " + j) * " + lit(spec.k1) + " + b;\n" + element_body(spec);
  for (size_t k = 0; k < spec.reductions.size(); ++k) {
    const KernelReduction& r = spec.reductions[k];
    const std::string acc = "acc" + num(int64_t(k));
    s += acc + " = " + fold(r, acc, slot(r.slot)) + ";\n";
  }
  s += "}\n}\n";
  for (size_t k = 0; k < spec.reductions.size(); ++k) {
    const KernelReduction& r = spec.reductions[k];
    const std::string at = acc_type(r);
    s += "{\n" + at + "* buf = (" + at + "*)smem;\nbuf[threadIdx.x] = acc" + num(int64_t(k)) + ";\n__syncthreads();\n";
    s += "for (ix w = " + lit(t.ty / 2) + "; w > 0; w /= 2) {\n";
    const std::string other = "buf[threadIdx.x + w * " + lit(t.tx) + "]";
    s += "if (ty < w) buf[threadIdx.x] = " + fold(r, "buf[threadIdx.x]", other) + ";\n";
    s += "__syncthreads();\n}\n";
    if (partial)
      s += "if (ty == 0 && o < " + lit(outs) + ") tmp" + num(int64_t(k)) + "[part * " + lit(outs) +
           " + o] = buf[tx];\n";
    else
      s += "if (ty == 0 && o < " + lit(outs) + ") out" + num(r.output) + "[o] = " +
           write_mem(r.dtype, "buf[tx]") + ";\n";
    s += "__syncthreads();\n}\n";  // buf is reused
  }
  s += "}\n}\n";
  Launch l1;
  l1.name = "xjax_fused";
  l1.block.x = kBlock;
  l1.grid.x = std::min<int64_t>(t.tiles, 1 << 20);
  l1.params = names;
  p.launches.push_back(l1);
  if (partial) {  // stage 2
    std::vector<std::string> params2, names2;
    std::string body;
    for (size_t k = 0; k < spec.reductions.size(); ++k) {
      const KernelReduction& r = spec.reductions[k];
      const std::string at = acc_type(r);
      params2.push_back("const " + at + "* __restrict__ tmp" + num(int64_t(k)));
      names2.push_back("tmp" + num(int64_t(k)));
      params2.push_back(mem_type(r.dtype) + "* __restrict__ out" + num(r.output));
      names2.push_back("out" + num(r.output));
      body += "{\n" + at + " acc = tmp" + num(int64_t(k)) + "[o];\n";
      const std::string partial_q = "tmp" + num(int64_t(k)) + "[q * " + lit(outs) + " + o]";
      body += "for (ix q = 1; q < " + lit(t.parts) + "; ++q) acc = " + fold(r, "acc", partial_q) + ";\n";
      body += "out" + num(r.output) + "[o] = " + write_mem(r.dtype, "acc") + ";\n}\n";
    }
    s += kernel_head("xjax_fused_finish", params2) + grid_stride_loop("o", outs) + " {\n" + body + "}\n}\n";
    p.launches.push_back(grid_stride_launch("xjax_fused_finish", outs, names2));
  }
  p.source += s;
  return p;
}

}  // namespace

std::string fused_source_prefix() {
  // Soft flush-to-zero: CUDA has no FTZ mode for float64, and NVRTC compiles float32 without one.
  return "#define XJAX_SCALAR_SOFT_FTZ 1\n" + scalar_source();
}

KernelPlan fused_kernel(const FusedKernelSpec& spec) {
  std::vector<int64_t> counts = index_counts(spec);
  if (!spec.reductions.empty()) counts.push_back(tiling(spec).parts * spec.k0 * spec.k1);
  KernelPlan p;
  p.outputs = spec.output_types;
  // Not the generators' prelude: everything but the index type comes from the scalar definitions.
  p.source = fused_source_prefix();
  auto special = [](const KernelStep& st) { return scalar_uses_special(st.op); };
  if (std::any_of(spec.steps.begin(), spec.steps.end(), special))
    p.source += scalar_special_source();  // only here: the other kernels compile without its length
  p.source += needs_wide(counts) ? "typedef long long ix;\n" : "typedef int ix;\n";
  return spec.reductions.empty() ? elementwise(spec, std::move(p)) : reducing(spec, std::move(p));
}

}  // namespace xjax::cuda
