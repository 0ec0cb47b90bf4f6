// The public C++ API (include/xjax/xjax.h) through the shared library: load from a file (mapped)
// and from memory, signatures, calls with copied and borrowed arrays, overloads, call_async, a
// per-module thread pool, and the documented exceptions (caught across the library boundary).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "api_sample.h"
#include "check.h"
#include "xjax/xjax.h"

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

std::string write_temp(const std::string& bytes) {
  std::string path = "/tmp/xjax_test_api_" + std::to_string(::getpid()) + ".xjx";
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return path;
}

void test_load_and_call(const xjax::Module& m) {
  CHECK(m.producer() == "api_sample");
  CHECK(m.format_version() == xjax::supported_format_version());
  CHECK((m.function_names() == std::vector<std::string>{"f", "g"}));
  CHECK(m.has_function("g") && !m.has_function("h"));
  xjax::Function f = m.function("f");
  const xjax::Signature& sig = f.signature();
  CHECK(sig.name == "f" && sig.inputs.size() == 1 && sig.outputs.size() == 2);
  CHECK((sig.inputs[0].shape == xjax::Shape{2, 3}) && sig.inputs[0].dtype == xjax::DType::Float32);
  CHECK(sig.outputs[1].shape.empty());
  CHECK(contains(sig.out_tree, "tuple"));

  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (bool borrowed : {false, true}) {
    xjax::Array a = borrowed ? xjax::Array::borrow(x.data(), {2, 3}) : xjax::Array::copy(x, {2, 3});
    std::vector<xjax::Array> out = f.call({a});
    CHECK(out.size() == 2);
    CHECK((out[0].to_vector<float>() == std::vector<float>{2, 5, 10, 17, 26, 37}));
    CHECK(out[1].item<float>() == 91.0f);
    CHECK(out[0].dtype() == xjax::DType::Float32 && (out[0].shape() == xjax::Shape{2, 3}));
    std::vector<float> back(6);
    out[0].copy_to(back.data(), back.size() * sizeof(float));
    CHECK(back[5] == 37.0f);
  }
  // Two signatures of g: the arguments pick one.
  xjax::Function g = m.function("g");
  CHECK(g.signatures().size() == 2);
  std::vector<int32_t> v = {1, 2, 3, 4};
  CHECK((g.call({xjax::Array::copy(v, {4})})[0].to_vector<int32_t>() == std::vector<int32_t>{2, 4, 6, 8}));
  CHECK((g.call({xjax::Array::copy(v, {2, 2})})[0].to_vector<int32_t>() == std::vector<int32_t>{2, 3, 4, 5}));
  // Asynchronous calls, several in flight.
  std::vector<xjax::Future> futures;
  for (int k = 0; k < 8; ++k) futures.push_back(f.call_async({xjax::Array::copy(x, {2, 3})}));
  for (auto& fut : futures) CHECK(fut.wait()[1].item<float>() == 91.0f);
  CHECK(futures[0].ready() && futures[0].wait()[1].item<float>() == 91.0f);
}

void test_errors(const xjax::Module& m, const std::string& bytes, const std::string& path) {
  xjax::Function f = m.function("f");
  std::vector<float> x(6, 1.0f);
  CHECK(contains(error_of<xjax::ArgumentError>([&] { f.call({xjax::Array::copy(x, {3, 2})}); }),
                 "[f] argument 0 must be float32(2, 3), got float32(3, 2)"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { f.call({}); }), "[f] takes 1 arguments, got 0"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { f.call_async({xjax::Array()}); }), "argument 0 is an empty Array"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { m.function("g").call({xjax::Array::copy(x, {6})}); }),
                 "[g] no signature takes (float32(6,)); it has (int32(4,)); (int32(2, 2))"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { m.function("h"); }), "no function 'h'; the module has 'f', 'g'"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { xjax::Array::copy(x.data(), 20, {2, 3}, xjax::DType::Float32); }),
                 "float32(2, 3) needs 24 bytes, the memory given has 20"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { xjax::Array::copy(x, {-1, 3}); }), "negative dimension"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { xjax::Array::borrow(reinterpret_cast<const char*>(x.data()) + 1, 4,
                                                                          {}, xjax::DType::Float32); }),
                 "not aligned"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { xjax::Array::copy(x, {2, 3}).data<int32_t>(); }),
                 "the array is float32, not int32"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { xjax::Array().shape(); }), "empty"));
  CHECK(contains(error_of<xjax::ArgumentError>([&] { xjax::Module().function("f"); }), "default-constructed"));
  // The file: FormatError (a std::invalid_argument) naming what is wrong; I/O: std::runtime_error.
  std::string bad = bytes;
  bad[8] = 2;
  CHECK(contains(error_of<xjax::FormatError>([&] { xjax::load_from_memory(bad.data(), bad.size()); }),
                 "format version 2, this reader reads version 1"));
  CHECK(contains(error_of<std::invalid_argument>([&] { xjax::load_from_memory(bytes.data(), 100); }), "truncated"));
  CHECK(contains(error_of<std::runtime_error>([&] { xjax::load("/nonexistent/model.xjx"); }), "cannot open"));
  xjax::Options o;
  o.blas_library = "/nonexistent/libblas.so";
  CHECK(contains(error_of<std::runtime_error>([&] { xjax::load(path, o); }), "cannot load the BLAS library") ||
        xjax::load(path, o).has_function("f"));  // (a BLAS already loaded is kept)
}

void test_threads_option(const std::string& path) {
  xjax::Options o;
  o.num_threads = 2;
  o.map_file = false;
  xjax::Module m = xjax::load(path, o);
  xjax::Function f = m.function("f");
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  // Calls from several threads at once, on the module's own pool.
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k)
        if (f.call({xjax::Array::borrow(x.data(), {2, 3})})[1].item<float>() == 91.0f) ++good;
    });
  for (auto& t : threads) t.join();
  CHECK(good == 200);
}

}  // namespace

int main() {
  const std::string bytes = api_sample::module_bytes();
  const std::string path = write_temp(bytes);
  {
    xjax::Module mapped = xjax::load(path);
    xjax::Function f = mapped.function("f");
    mapped = xjax::Module();  // the function keeps its module (and the mapping) alive
    std::vector<float> x(6, 0.0f);
    CHECK(f.call({xjax::Array::copy(x, {2, 3})})[0].to_vector<float>()[0] == 1.0f);
  }
  test_load_and_call(xjax::load(path));
  test_load_and_call(xjax::load_from_memory(bytes.data(), bytes.size()));
  test_errors(xjax::load(path), bytes, path);
  test_threads_option(path);
  CHECK(std::string(xjax::dtype_name(xjax::DType::BFloat16)) == "bfloat16" && xjax::dtype_size(xjax::DType::Int64) == 8);
  std::remove(path.c_str());
  return check_report();
}
