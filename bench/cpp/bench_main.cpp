// xjax_bench: the fused kernel engine, reductions and matmul against this machine's copy
// bandwidth and BLAS. Prints the median of a few runs per case; no Python involved.
#include <cstdlib>
#include <cstring>
#include <random>

#include "bench_util.h"
#include "core/compiler/executable.h"
#include "core/cpu/blas.h"
#include "core/thread_pool.h"

using namespace xjax;
using bench::median_seconds;
using bench::report;

namespace {

Array random_array(const Shape& shape, float lo = -3, float hi = 3) {
  Array a = Array::empty(shape, DType::Float32);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(lo, hi);
  float* p = static_cast<float*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = d(rng);
  return a;
}

ValueRef scalar(Graph& g, double v) {
  Attrs a;
  a.set("dtype", std::string("float32"));
  a.set("value", v);
  return g.add(OpId::constant_, {}, a)[0];
}

ValueRef op(Graph& g, OpId id, std::vector<ValueRef> in, const Attrs& attrs = Attrs()) { return g.add(id, in, attrs)[0]; }

Graph selu_graph(int64_t n) {
  Graph g;
  ValueRef x = g.parameter({{n}, DType::Float32});
  ValueRef alpha = scalar(g, 1.6732632423543772), lam = scalar(g, 1.0507009873554805), zero = scalar(g, 0.0);
  ValueRef neg = op(g, OpId::sub_, {op(g, OpId::mul_, {alpha, op(g, OpId::exp_, {x})}), alpha});
  ValueRef w = op(g, OpId::select_n_, {op(g, OpId::gt_, {x, zero}), neg, x});
  g.set_outputs({op(g, OpId::mul_, {lam, w})});
  return g;
}

Graph sum_squares_graph(int64_t n) {
  Graph g;
  ValueRef x = g.parameter({{n}, DType::Float32});
  Attrs axes;
  axes.set("axes", std::vector<int64_t>{0});
  g.set_outputs({op(g, OpId::reduce_sum_, {op(g, OpId::mul_, {x, x})}, axes)});
  return g;
}

// Runs exe synchronously on inputs into fresh outputs (allocated outside the timed region).
double time_exe(Executable& exe, const std::vector<Array>& in, int reps) {
  std::vector<Array> out;
  for (const TypeInfo& t : exe.output_types()) out.push_back(Array::empty(t.shape, t.dtype));
  return median_seconds(reps, [&] { exe.execute(in, out); });
}

void bench_copy(int64_t n) {
  Array a = random_array({n}), b = Array::empty({n}, DType::Float32);
  size_t bytes = size_t(n) * 4;
  double t1 = median_seconds(9, [&] { std::memcpy(b.data(), a.data(), bytes); });
  report("memcpy 64 MB, one thread (read+write)", t1, 2.0 * bytes, "GB/s");
  double t = median_seconds(9, [&] {
    parallel_for(n, 1 << 16, [&](int64_t s, int64_t e) {
      std::memcpy(static_cast<float*>(b.data()) + s, static_cast<float*>(a.data()) + s, size_t(e - s) * 4);
    });
  });
  report("memcpy 64 MB, all threads (read+write)", t, 2.0 * bytes, "GB/s");
}

void bench_fused(int64_t n) {
  Array x = random_array({n});
  CompileOptions unfused = default_compile_options();
  unfused.fuse = false;
  auto selu = compile(selu_graph(n));
  report("fused selu 16M f32 (1 kernel)", time_exe(*selu, {x}, 9), 8.0 * double(n), "GB/s");
  auto selu_unfused = compile(selu_graph(n), unfused);
  report("unfused selu 16M f32 (6 kernels)", time_exe(*selu_unfused, {x}, 5), 8.0 * double(n), "GB/s");
  auto ss = compile(sum_squares_graph(n));
  report("fused sum(x*x) 16M f32", time_exe(*ss, {x}, 9), 4.0 * double(n), "GB/s");
  Array small = random_array({1 << 20});
  auto selu_1m = compile(selu_graph(1 << 20));
  report("fused selu 1M f32", time_exe(*selu_1m, {small}, 51), 8.0 * double(1 << 20), "GB/s");
}

void bench_reductions() {
  Array x = random_array({4096, 4096});
  for (auto [name, axes] : {std::pair<const char*, std::vector<int64_t>>{"reduce_sum 4096x4096 all", {0, 1}},
                            {"reduce_sum 4096x4096 axis 1 (rows)", {1}},
                            {"reduce_sum 4096x4096 axis 0 (columns)", {0}}}) {
    Attrs a;
    a.set("axes", axes);
    auto exe = compile_op(OpId::reduce_sum_, {{{4096, 4096}, DType::Float32}}, a);
    report(name, time_exe(*exe, {x}, 9), 4.0 * 4096 * 4096, "GB/s");
  }
  Attrs a;
  a.set("axes", std::vector<int64_t>{0, 1});
  auto exe = compile_op(OpId::reduce_max_, {{{4096, 4096}, DType::Float32}}, a);
  report("reduce_max 4096x4096 all", time_exe(*exe, {x}, 9), 4.0 * 4096 * 4096, "GB/s");
}

void bench_matmul(const char* label) {
  const int64_t n = 1024;
  Array a = random_array({n, n}, -1, 1), b = random_array({n, n}, -1, 1);
  Attrs attrs;
  attrs.set("lhs_contracting_dimensions", std::vector<int64_t>{1});
  attrs.set("rhs_contracting_dimensions", std::vector<int64_t>{0});
  auto exe = compile_op(OpId::dot_general_, {{{n, n}, DType::Float32}, {{n, n}, DType::Float32}}, attrs);
  report(label, time_exe(*exe, {a, b}, 7), 2.0 * double(n) * n * n, "GFLOP/s");
}

}  // namespace

int main() {
  std::printf("xjax_bench: %d threads (XJAX_NUM_THREADS), medians\n", ThreadPool::global().size());
  bench_copy(16 << 20);
  bench_fused(16 << 20);
  bench_reductions();
  bench_matmul("matmul 1024 f32 (built-in kernels)");
  if (const char* path = std::getenv("XJAX_BLAS")) {
    if (load_blas(path)) bench_matmul("matmul 1024 f32 (BLAS loaded)");
    else std::printf("could not load BLAS from %s\n", path);
  } else {
    std::printf("(set XJAX_BLAS=<path of libscipy_openblas.so> to compare with BLAS)\n");
  }
  return 0;
}
