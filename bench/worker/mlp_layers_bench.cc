// Forward + backward of the benchmark MLP (784-512-256-10, batch 256, fp32, cross-entropy) with
// the plain layers (linear, then ReLU in place) against FusedLinear (worker/trainer/
// fused_linear.h), interleaved in one process so both see the same machine load. Prints the
// best and median milliseconds per step of each. SIFT_NO_ONEDNN_SGEMM=1 makes FusedLinear's
// products run at::mm (OpenBLAS) instead of oneDNN.
//
//   mlp_layers_bench [--rounds=200] [--threads=2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "worker/trainer/fused_linear.h"
#include "worker/trainer/sgemm.h"

namespace {

using sift::worker::FusedLinear;

struct Mlp {
  std::vector<torch::nn::Linear> layers{torch::nn::Linear(784, 512), torch::nn::Linear(512, 256),
                                        torch::nn::Linear(256, 10)};
};

torch::Tensor Plain(Mlp& m, torch::Tensor x) {
  x = m.layers[0]->forward(x).relu_();
  x = m.layers[1]->forward(x).relu_();
  return m.layers[2]->forward(x);
}

torch::Tensor Fused(Mlp& m, torch::Tensor x) {
  x = FusedLinear(x, m.layers[0], /*relu=*/true);
  x = FusedLinear(x, m.layers[1], /*relu=*/true);
  return FusedLinear(x, m.layers[2], /*relu=*/false);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 200, threads = 2;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--rounds=", 9) == 0) rounds = std::atoi(argv[i] + 9);
    if (std::strncmp(argv[i], "--threads=", 10) == 0) threads = std::atoi(argv[i] + 10);
  }
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  Mlp m;
  const auto x = torch::randn({256, 784});
  const auto y = torch::randint(10, {256});
  using Forward = torch::Tensor (*)(Mlp&, torch::Tensor);
  const Forward impls[2] = {Plain, Fused};
  std::vector<double> ms[2];
  for (int r = 0; r < rounds + 10; ++r) {
    for (int k = 0; k < 2; ++k) {
      for (auto& l : m.layers) {
        l->weight.mutable_grad() = torch::Tensor();
        l->bias.mutable_grad() = torch::Tensor();
      }
      const auto start = std::chrono::steady_clock::now();
      torch::cross_entropy_loss(impls[k](m, x), y).backward();
      const std::chrono::duration<double, std::milli> took =
          std::chrono::steady_clock::now() - start;
      if (r >= 10) ms[k].push_back(took.count());  // the first rounds warm up
    }
  }
  const char* names[2] = {"plain", "fused"};
  for (int k = 0; k < 2; ++k) {
    std::sort(ms[k].begin(), ms[k].end());
    std::printf("%s best_ms=%.3f median_ms=%.3f ", names[k], ms[k].front(),
                ms[k][ms[k].size() / 2]);
  }
  std::printf("onednn=%d threads=%d\n", sift::worker::SgemmUsesOneDnn() ? 1 : 0, threads);
  return 0;
}
