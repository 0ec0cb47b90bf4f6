// bench_export: the C++ API on exported files (bench/export_bench.py writes them and runs this).
//   load time of a ~50 MB model (mapped, with and without the checksum; read into memory)
//   call overhead of tiny functions (one with no kernel at all: the overhead alone)
//   the digits adam train step (batch 32), to set next to the same jitted step called from Python
// Medians; the clock's resolution is printed with them.
//
//   bench_export DIR [BLAS library]     (DIR: big.xjx, tiny.xjx, digits.xjx)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <xjax/xjax.h>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median seconds of one fn() over `reps` samples of `inner` calls each (after a warm-up).
template <typename F>
double time_per_call(int reps, int inner, F&& fn) {
  for (int i = 0; i < inner; ++i) fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto a = Clock::now();
    for (int i = 0; i < inner; ++i) fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count() / inner);
  }
  return median(t);
}

double clock_resolution() {
  double best = 1;
  for (int i = 0; i < 1000; ++i) {
    auto a = Clock::now(), b = Clock::now();
    while (b == a) b = Clock::now();
    best = std::min(best, std::chrono::duration<double>(b - a).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [blas_library]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  xjax::Options options;
  if (argc > 2) options.blas_library = argv[2];
  std::printf("clock resolution: %.0f ns\n", clock_resolution() * 1e9);

  // Load time of the big model (the file is in the page cache after the first load).
  for (int mode = 0; mode < 3; ++mode) {
    xjax::Options o = options;
    o.verify_checksum = mode != 1;
    o.map_file = mode != 2;
    double s = time_per_call(15, 1, [&] { xjax::load(dir + "/big.xjx", o); });
    const char* what[] = {"mapped, checksum verified", "mapped, no checksum", "read into memory, checksum verified"};
    std::printf("load big.xjx (%s): %.2f ms\n", what[mode], s * 1e3);
  }
  {
    xjax::Module big = xjax::load(dir + "/big.xjx", options);
    xjax::Function predict = big.function("predict");
    std::vector<float> x(size_t(xjax::num_elements(predict.signature().inputs[0].shape)), 0.5f);
    xjax::Array a = xjax::Array::borrow(x.data(), predict.signature().inputs[0].shape);
    double s = time_per_call(15, 1, [&] { predict.call({a}); });
    std::printf("big predict call: %.3f ms\n", s * 1e3);
  }

  // Call overhead.
  xjax::Module tiny = xjax::load(dir + "/tiny.xjx", options);
  std::vector<float> four = {1, 2, 3, 4};
  xjax::Array x4 = xjax::Array::borrow(four.data(), {4});
  for (const char* name : {"identity", "add_one"}) {
    xjax::Function f = tiny.function(name);
    double sync = time_per_call(31, 2000, [&] { f.call({x4}); });
    double async = time_per_call(31, 500, [&] { f.call_async({x4}).wait(); });
    std::printf("call %s f32[4]: %.3f us (call_async + wait: %.3f us)\n", name, sync * 1e6, async * 1e6);
  }
  {
    xjax::Function f = tiny.function("add_one");
    double copy_in = time_per_call(31, 2000, [&] { f.call({xjax::Array::copy(four, {4})}); });
    std::printf("call add_one f32[4] with a copied argument: %.3f us\n", copy_in * 1e6);
  }

  // The digits train step, state threaded through as in training.
  xjax::Module digits = xjax::load(dir + "/digits.xjx", options);
  xjax::Function step = digits.function("train_step");
  std::vector<xjax::Array> state = digits.function("init_state").call({});
  std::vector<xjax::Array> train = digits.function("train_set").call({});
  const float* images = train[0].data<float>();
  const float* targets = train[1].data<float>();
  double s = time_per_call(21, 20, [&] {
    std::vector<xjax::Array> args = state;
    args.push_back(xjax::Array::borrow(images, {32, 64}));
    args.push_back(xjax::Array::borrow(targets, {32, 10}));
    std::vector<xjax::Array> out = step.call(args);
    state.assign(out.begin() + 1, out.end());
  });
  std::printf("digits train_step (batch 32): %.1f us\n", s * 1e6);
  return 0;
}
