// Continues training the digits model in C++: the exported adam `train_step` runs on batches of
// the training set (borrowed from the array train_set() returned: no copies), then `evaluate`
// measures the test accuracy of the parameters C++ trained.
//
//   digits_train digits.xjx [epochs] [BLAS library]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include <xjax/xjax.h>

namespace {

double accuracy(const xjax::Function& evaluate, const std::vector<xjax::Array>& params, const xjax::Array& x,
                const std::vector<int32_t>& labels) {
  std::vector<xjax::Array> args = params;
  args.push_back(x);
  std::vector<int32_t> predicted = evaluate.call(args)[0].to_vector<int32_t>();
  size_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
  return double(correct) / double(labels.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s digits.xjx [epochs] [blas_library]\n", argv[0]);
    return 2;
  }
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 5;
  xjax::Options options;
  if (argc > 3) options.blas_library = argv[3];
  try {
    xjax::Module module = xjax::load(argv[1], options);
    xjax::Function train_step = module.function("train_step");
    xjax::Function evaluate = module.function("evaluate");
    // The state is flat: the parameters (what evaluate takes before the images), then adam's state.
    std::vector<xjax::Array> state = module.function("init_state").call({});
    const size_t num_params = evaluate.signature().inputs.size() - 1;
    std::vector<xjax::Array> test = module.function("test_set").call({});
    std::vector<int32_t> test_labels = test[1].to_vector<int32_t>();
    std::vector<xjax::Array> train = module.function("train_set").call({});
    const xjax::Signature& sig = train_step.signature();
    const int64_t batch = sig.inputs[sig.inputs.size() - 2].shape[0];
    const int64_t features = train[0].shape()[1], classes = train[1].shape()[1];
    const int64_t steps = train[0].shape()[0] / batch;
    const float* images = train[0].data<float>();
    const float* targets = train[1].data<float>();

    auto params = [&] { return std::vector<xjax::Array>(state.begin(), state.begin() + long(num_params)); };
    std::printf("c++: test accuracy before %.4f\n", accuracy(evaluate, params(), test[0], test_labels));
    double seconds = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      float loss = 0;
      for (int64_t s = 0; s < steps; ++s) {
        std::vector<xjax::Array> args = state;
        args.push_back(xjax::Array::borrow(images + s * batch * features, {batch, features}));
        args.push_back(xjax::Array::borrow(targets + s * batch * classes, {batch, classes}));
        auto t0 = std::chrono::steady_clock::now();
        std::vector<xjax::Array> out = train_step.call(args);  // (loss, params..., adam state...)
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        loss = out[0].item<float>();
        state.assign(out.begin() + 1, out.end());
      }
      std::printf("c++: epoch %d loss %.4f\n", epoch, loss);
    }
    std::printf("c++: test accuracy after %.4f\n", accuracy(evaluate, params(), test[0], test_labels));
    if (epochs > 0) std::printf("c++: %.1f us per train step\n", 1e6 * seconds / double(epochs * steps));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
