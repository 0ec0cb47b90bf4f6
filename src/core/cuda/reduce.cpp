// CUDA generators of the reductions over axes (reduce_sum/prod/max/min/and/or/xor) and of
// argmax/argmin, as a two-stage tree: stage 1 reduces S chunks of every output's elements into
// partials (tmp), stage 2 combines each output's S partials in order. Two layouts:
// - the operand's innermost dim is reduced: a block of 256 threads per (output, chunk), each
//   thread striding over the chunk, then a tree in shared memory;
// - it is kept: a thread per (output, chunk), walking the chunk serially (neighbouring threads
//   read neighbouring elements).
// argmax/argmin keep (value, index) pairs and resolve ties by the smaller index (a NaN counts as
// the extreme; the first NaN wins), so their result does not depend on the split.
#include <algorithm>

#include "core/cuda/generators.h"

namespace xjax::cuda {

namespace {

constexpr int64_t kBlock = 256;

struct Dim {
  int64_t size, stride;
};

// The operand's dims merged into runs of kept and of reduced dims (size-1 dims dropped).
struct Split {
  std::vector<Dim> kept, reduced;
  bool inner_reduced = false;  // the innermost (stride 1) dim is reduced
};

Split split_dims(const Shape& x, const std::vector<int64_t>& axes) {
  Split s;
  std::vector<int64_t> st = contiguous_strides(x);
  int last_kind = -1;  // 0 kept, 1 reduced
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    const int kind = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end() ? 1 : 0;
    std::vector<Dim>& v = kind ? s.reduced : s.kept;
    if (kind == last_kind) {
      v.back().size *= x[d];
      v.back().stride = st[d];
    } else {
      v.push_back({x[d], st[d]});
    }
    last_kind = kind;
  }
  s.inner_reduced = last_kind == 1;
  return s;
}

// Statements: `name` = element offset of flat index `flat` over dims.
std::string offset_stmt(const std::vector<Dim>& dims, const std::string& flat, const std::string& name) {
  if (dims.empty()) return "const ix " + name + " = 0;\n";
  if (dims.size() == 1) return "const ix " + name + " = " + flat + " * " + lit(dims[0].stride) + ";\n";
  std::string s = "ix " + name + " = 0;\n{ ix q_ = " + flat + ";\n";
  for (size_t i = dims.size(); i-- > 0;) {
    s += name + " += (q_ % " + lit(dims[i].size) + ") * " + lit(dims[i].stride) + ";";
    if (i) s += " q_ /= " + lit(dims[i].size) + ";";
    s += "\n";
  }
  return s + "}\n";
}

int64_t product(const std::vector<Dim>& dims) {
  int64_t n = 1;
  for (const Dim& d : dims) n *= d.size;
  return n;
}

// What differs between a plain reduction and argmax/argmin: the accumulator state and its steps.
struct Acc {
  bool arg = false;
  std::string type;      // accumulator value type
  std::string init;      // its identity
  Combiner comb{};       // plain reductions
  bool is_max = false;   // arg reductions: argmax (else argmin)
};

std::string decl(const Acc& a, const std::string& v, const std::string& i) {
  return a.type + " " + v + " = " + a.init + ";" + (a.arg ? " i64 " + i + " = -1;" : "") + "\n";
}

// Folds (v, iv) into (acc, ia).
std::string fold(const Acc& a, const std::string& acc, const std::string& ia, const std::string& v, const std::string& iv) {
  if (!a.arg) return acc + " = " + combine(a.comb, acc, v) + ";\n";
  return "if (xjax_better(" + v + ", " + iv + ", " + acc + ", " + ia + ")) { " + acc + " = " + v + "; " + ia + " = " +
         iv + "; }\n";
}

std::string arg_better(bool is_max) {
  const std::string cmp = is_max ? "gt" : "lt";
  return "template <typename T> __device__ __forceinline__ bool xjax_better(T v, i64 i, T b, i64 j) {\n"
         "  if (j < 0) return i >= 0;\n"
         "  if (i < 0) return false;\n"
         "  if (xjax::scalar::ne(b, b)) return xjax::scalar::ne(v, v) && i < j;\n"  // NaN wins
         "  if (xjax::scalar::ne(v, v)) return true;\n"
         "  return xjax::scalar::" + cmp + "(v, b) || (xjax::scalar::eq(v, b) && i < j);\n}\n";
}

KernelPlan reduce_plan(const std::string& opname, const Types& in, const Types& out, const std::vector<int64_t>& axes,
                       const Acc& acc) {
  const DType dt = in[0].dtype;
  const Split sp = split_dims(in[0].shape, axes);
  const int64_t O = numel(out[0].shape), R = product(sp.reduced);
  KernelPlan p = start_plan(out, {numel(in[0].shape), O * 4});
  if (O == 0) return p;
  if (acc.arg) p.source += arg_better(acc.is_max);
  const Acc& a = acc;

  // Chunks per output: enough parallel work, chunks not too short.
  int64_t S = 1;
  if (sp.inner_reduced) S = std::clamp<int64_t>((512 + O - 1) / O, 1, std::max<int64_t>(1, (R + 2047) / 2048));
  else S = std::clamp<int64_t>((32768 + O - 1) / O, 1, std::max<int64_t>(1, (R + 63) / 64));
  const int64_t L = S > 1 ? (R + S - 1) / S : R;
  S = R == 0 ? 1 : (R + L - 1) / L;
  const bool two = S > 1;
  const std::string name1 = "xjax_" + opname + (two ? "_partial" : "");
  const std::string out_t = storage_type(out[0].dtype);

  // Where stage 1 puts a (output o, chunk s) result.
  std::vector<std::string> params{in_param(dt, 0)}, names{"in0"};
  std::string put;
  if (two) {
    params.push_back(a.type + "* __restrict__ tmp0");
    names.push_back("tmp0");
    put = "tmp0[s * " + lit(O) + " + o] = ACC;\n";
    p.scratch_bytes.push_back(S * O * 8);
    if (a.arg) {
      params.push_back("i64* __restrict__ tmp1");
      names.push_back("tmp1");
      put += "tmp1[s * " + lit(O) + " + o] = IDX;\n";
      p.scratch_bytes.push_back(S * O * 8);
    }
  } else {
    params.push_back(out_param(out[0].dtype, 0));
    names.push_back("out0");
    put = a.arg ? "out0[o] = (" + out_t + ")IDX;\n" : "out0[o] = " + store(dt, "ACC") + ";\n";
  }
  auto put_with = [&](const std::string& accv, const std::string& idx) {
    std::string s = put;
    for (size_t k; (k = s.find("ACC")) != std::string::npos;) s.replace(k, 3, accv);
    for (size_t k; (k = s.find("IDX")) != std::string::npos;) s.replace(k, 3, idx);
    return s;
  };
  const std::string elem = "(" + a.type + ")" + load(dt, "in0[ko + ro]");

  std::string s = kernel_head(name1, params);
  Launch l1;
  l1.name = name1;
  l1.params = names;
  if (sp.inner_reduced) {
    // A block per (o, s).
    s += "__shared__ " + a.type + " sh[" + std::to_string(kBlock) + "];\n";
    if (a.arg) s += "__shared__ i64 si[" + std::to_string(kBlock) + "];\n";
    s += "for (ix blk = blockIdx.x; blk < " + lit(O * S) + "; blk += gridDim.x) {\n";
    s += "const ix o = blk / " + lit(S) + ", s = blk % " + lit(S) + ";\n";
    s += offset_stmt(sp.kept, "o", "ko");
    s += decl(a, "acc", "ia");
    s += "const ix r1 = s * " + lit(L) + " + " + lit(L) + " < " + lit(R) + " ? s * " + lit(L) + " + " + lit(L) + " : " + lit(R) + ";\n";
    s += "for (ix r = s * " + lit(L) + " + (ix)threadIdx.x; r < r1; r += " + lit(kBlock) + ") {\n";
    s += offset_stmt(sp.reduced, "r", "ro");
    s += "const " + a.type + " v = " + elem + ";\n" + fold(a, "acc", "ia", "v", "(i64)r") + "}\n";
    s += "sh[threadIdx.x] = acc;" + std::string(a.arg ? " si[threadIdx.x] = ia;" : "") + "\n__syncthreads();\n";
    s += "for (int w = " + std::to_string(kBlock / 2) + "; w > 0; w >>= 1) {\n";
    s += "  if ((int)threadIdx.x < w) {\n";
    s += "    " + a.type + " x = sh[threadIdx.x], y = sh[threadIdx.x + w];\n";
    if (a.arg) s += "    i64 xi = si[threadIdx.x], yi = si[threadIdx.x + w];\n    " + fold(a, "x", "xi", "y", "yi") + "    si[threadIdx.x] = xi;\n";
    else s += "    " + fold(a, "x", "", "y", "");
    s += "    sh[threadIdx.x] = x;\n  }\n  __syncthreads();\n}\n";
    s += "if (threadIdx.x == 0) { " + put_with("sh[0]", "si[0]") + "}\n__syncthreads();\n}\n}\n";
    l1.block.x = kBlock;
    l1.grid.x = std::min<int64_t>(O * S, 65536);
  } else {
    // A thread per (o, s); o fastest so that neighbouring threads read neighbouring elements.
    s += grid_stride_loop("t", O * S) + " {\n";
    s += "const ix o = t % " + lit(O) + ", s = t / " + lit(O) + ";\n";
    s += offset_stmt(sp.kept, "o", "ko");
    s += decl(a, "acc", "ia");
    s += "const ix r1 = s * " + lit(L) + " + " + lit(L) + " < " + lit(R) + " ? s * " + lit(L) + " + " + lit(L) + " : " + lit(R) + ";\n";
    s += "for (ix r = s * " + lit(L) + "; r < r1; ++r) {\n";
    s += offset_stmt(sp.reduced, "r", "ro");
    s += "const " + a.type + " v = " + elem + ";\n" + fold(a, "acc", "ia", "v", "(i64)r") + "}\n";
    s += put_with("acc", "ia") + "}\n}\n";
    l1 = Launch{name1, {}, {}, 0, names};
    Launch g = grid_stride_launch(name1, O * S, names);
    l1.grid = g.grid;
    l1.block = g.block;
  }
  p.source += s;
  p.launches.push_back(l1);
  if (!two) return p;

  // Stage 2: each output combines its S partials in chunk order.
  const std::string name2 = "xjax_" + opname + "_final";
  std::vector<std::string> params2{a.type + "* __restrict__ tmp0"}, names2{"tmp0"};
  if (a.arg) {
    params2.push_back("i64* __restrict__ tmp1");
    names2.push_back("tmp1");
  }
  params2.push_back(out_param(out[0].dtype, 0));
  names2.push_back("out0");
  std::string f = kernel_head(name2, params2) + grid_stride_loop("o", O) + " {\n" + decl(a, "acc", "ia");
  f += "for (ix s = 0; s < " + lit(S) + "; ++s) {\n";
  f += "const " + a.type + " v = tmp0[s * " + lit(O) + " + o];\n";
  f += a.arg ? "const i64 vi = tmp1[s * " + lit(O) + " + o];\n" + fold(a, "acc", "ia", "v", "vi") : fold(a, "acc", "", "v", "");
  f += "}\n";
  f += a.arg ? "out0[o] = (" + out_t + ")ia;\n" : "out0[o] = " + store(dt, "acc") + ";\n";
  f += "}\n}\n";
  p.source += f;
  p.launches.push_back(grid_stride_launch(name2, O, names2));
  return p;
}

Combiner combiner_of(OpId op, DType dt) {
  const bool b = dt == DType::Bool;
  switch (op) {
    case OpId::reduce_sum_: return Combiner::Add;
    case OpId::reduce_prod_: return Combiner::Mul;
    case OpId::reduce_max_: return b ? Combiner::Or : Combiner::Max;
    case OpId::reduce_min_: return b ? Combiner::And : Combiner::Min;
    case OpId::reduce_and_: return Combiner::And;
    case OpId::reduce_or_: return Combiner::Or;
    default: return Combiner::Xor;
  }
}

}  // namespace

KernelPlan gen_reduce(OpId op, const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[0].dtype;
  Acc a;
  a.comb = combiner_of(op, dt);
  a.type = acc_type(a.comb, dt);
  a.init = identity(a.comb, dt);
  return reduce_plan(op_name(op), in, out, attrs.get_ints("axes"), a);
}

KernelPlan gen_arg_reduce(OpId op, const Types& in, const Types& out, const Attrs& attrs) {
  const DType dt = in[0].dtype;
  Acc a;
  a.arg = true;
  a.type = compute_type(dt);
  a.init = "(" + a.type + ")0";
  a.is_max = op == OpId::argmax_;
  return reduce_plan(op_name(op), in, out, attrs.get_ints("axes"), a);
}

}  // namespace xjax::cuda
