// A host program that embeds tide: it owns a training set in plain arrays, hands them to a
// script without copying (Tensor::from_blob), lets the script train a linear model
// (train.lua), receives progress through a host function, and reads the weights back.
//
//   embed_host path/to/train.lua [epochs]
#include <tide/tide.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s train.lua [epochs]\n", argv[0]);
    return 2;
  }
  // The host's data: y = 3 x1 - 2 x2 + 0.5 plus a little noise.
  constexpr int n = 256;
  std::vector<float> x(n * 2), y(n);
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int i = 0; i < n; ++i) {
    x[2 * i] = normal(rng);
    x[2 * i + 1] = normal(rng);
    y[i] = 3 * x[2 * i] - 2 * x[2 * i + 1] + 0.5f + 0.01f * normal(rng);
  }

  try {
    tide::Interpreter vm;
    vm.set("X", tide::Tensor::from_blob(x.data(), {n, 2}, tide::DType::Float32));
    vm.set("y", tide::Tensor::from_blob(y.data(), {n, 1}, tide::DType::Float32));
    vm.def("log_metric", [](std::string name, double value) { std::printf("%s = %.6f\n", name.c_str(), value); });
    vm.run_file(argv[1], {argc > 2 ? argv[2] : "200"});

    auto weight = vm.get<tide::Tensor>("weight");
    auto bias = vm.get<tide::Tensor>("bias");
    const float* w = weight.data<float>();
    std::printf("weight = [%.3f, %.3f], bias = %.3f (shape %s)\n", w[0], w[1], bias.data<float>()[0],
                weight.shape().str().c_str());
  } catch (const tide::ScriptError& e) {
    std::fprintf(stderr, "script error: %s\n", e.what());
    return 1;
  }
  return 0;
}
