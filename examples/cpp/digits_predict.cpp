// Runs the digits model that train_digits.py trained and exported: predicts the test set with the
// exported `predict` and prints the test accuracy, which is the one Python printed (same program,
// same bits).
//
//   digits_predict digits.xjx [BLAS library]     (the library: `python -m xjax --blas-library`)
#include <cstdio>
#include <exception>
#include <vector>

#include <xjax/xjax.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s digits.xjx [blas_library]\n", argv[0]);
    return 2;
  }
  xjax::Options options;
  if (argc > 2) options.blas_library = argv[2];  // Python's BLAS: the same bits as Python's products
  try {
    xjax::Module module = xjax::load(argv[1], options);
    std::vector<xjax::Array> test = module.function("test_set").call({});  // (images, labels)
    std::vector<int32_t> predicted = module.function("predict").call({test[0]})[0].to_vector<int32_t>();
    std::vector<int32_t> labels = test[1].to_vector<int32_t>();
    size_t correct = 0;
    for (size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
    std::printf("c++: test accuracy %.4f\n", double(correct) / double(labels.size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
