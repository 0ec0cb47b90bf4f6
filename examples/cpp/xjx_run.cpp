// Runs one function of an .xjx file on raw inputs: DIR/in<i>.bin holds argument i's elements
// (row-major, the types of the function's first signature); the results go to DIR/out<i>.bin.
// The tests run exported functions through it to check that C++ gives Python's bits.
//
//   xjx_run model.xjx function DIR [BLAS library]
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <xjax/xjax.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s model.xjx function DIR [blas_library]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[3];
  xjax::Options options;
  if (argc > 4) options.blas_library = argv[4];
  try {
    xjax::Function f = xjax::load(argv[1], options).function(argv[2]);
    const xjax::Signature& sig = f.signature();
    std::vector<std::vector<char>> data;  // kept alive: the arrays borrow it
    std::vector<xjax::Array> args;
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      std::ifstream in(dir + "/in" + std::to_string(i) + ".bin", std::ios::binary);
      data.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      const xjax::TensorSpec& s = sig.inputs[i];
      // (aligned: vector storage comes from operator new)
      args.push_back(xjax::Array::borrow(data.back().data(), data.back().size(), s.shape, s.dtype));
    }
    std::vector<xjax::Array> out = f.call(args);
    for (size_t i = 0; i < out.size(); ++i) {
      std::ofstream o(dir + "/out" + std::to_string(i) + ".bin", std::ios::binary);
      o.write(static_cast<const char*>(out[i].data()), std::streamsize(out[i].nbytes()));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
