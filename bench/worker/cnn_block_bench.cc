// Forward + backward of the benchmark CNN's norm-pool-ReLU tails (batch norm, 2x2 max pool,
// ReLU after conv1 [256, 32, 28, 28] and conv2 [256, 64, 14, 14], channels-last), as LibTorch's
// three ops against NormPoolRelu (worker/trainer/kernels/norm_pool_relu.h), in fp32 and bf16,
// with its AVX-512 loops and with the portable ones (what CPUs without AVX-512 run), interleaved
// in one process so all see the same machine load. The convolutions are left out: they are the
// same in both. Prints the best and median milliseconds per step of each.
//
//   cnn_block_bench [--rounds=100] [--threads=2] [--only=0..5 (one row, for profiling)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "worker/trainer/kernels/norm_pool_kernels.h"
#include "worker/trainer/kernels/norm_pool_relu.h"

namespace {

struct Block {
  torch::nn::BatchNorm2d norm;
  torch::Tensor x, upstream;
};

std::vector<Block> Blocks(torch::Dtype dtype) {
  std::vector<Block> blocks;
  for (auto [c, size] : {std::pair<int64_t, int64_t>{32, 28}, {64, 14}}) {
    torch::nn::BatchNorm2d norm(c);
    auto x = torch::randn({256, c, size, size})
                 .to(dtype)
                 .contiguous(at::MemoryFormat::ChannelsLast)
                 .requires_grad_(true);
    auto up = torch::randn({256, c, size / 2, size / 2})
                  .to(dtype)
                  .contiguous(at::MemoryFormat::ChannelsLast);
    blocks.push_back({norm, x, up});
  }
  return blocks;
}

double Step(std::vector<Block>& blocks, bool fused) {
  const auto start = std::chrono::steady_clock::now();
  for (auto& b : blocks) {
    torch::Tensor out;
    if (fused) {
      out = sift::worker::NormPoolRelu(b.x, b.norm, /*pool=*/true);
    } else {
      out = torch::max_pool2d(b.norm->forward(b.x), 2).relu_();
    }
    out.backward(b.upstream);
    b.x.mutable_grad().reset();
    b.norm->weight.mutable_grad().reset();
    b.norm->bias.mutable_grad().reset();
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int64_t Flag(int argc, char** argv, const char* name, int64_t fallback) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      return std::atoll(argv[i] + prefix.size());
    }
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t rounds = Flag(argc, argv, "rounds", 100);
  torch::set_num_threads(static_cast<int>(Flag(argc, argv, "threads", 2)));
  const int64_t only = Flag(argc, argv, "only", -1);
  const char* names[] = {"plain-fp32", "fused-fp32",          "plain-bf16",
                         "fused-bf16", "fused-portable-fp32", "fused-portable-bf16"};
  const bool avx512 = sift::worker::NormPoolAvx512Enabled();
  std::vector<std::vector<Block>> inputs = {Blocks(torch::kFloat32), Blocks(torch::kBFloat16)};
  std::vector<std::vector<double>> ms(6);
  for (int64_t r = 0; r < rounds + 3; ++r) {
    for (int k = 0; k < 6; ++k) {
      if ((only >= 0 && k != only) || (k >= 4 && !avx512)) continue;
      sift::worker::EnableNormPoolAvx512(avx512 && k < 4);
      const double t =
          k < 4 ? Step(inputs[k / 2], /*fused=*/k % 2 == 1) : Step(inputs[k - 4], /*fused=*/true);
      if (r >= 3) ms[k].push_back(t);  // the first rounds warm the allocator
    }
  }
  sift::worker::EnableNormPoolAvx512(avx512);
  std::printf(
      "# norm+pool+ReLU forward+backward, conv1 and conv2 tails, batch 256, threads %d, "
      "AVX-512 loops %s\n",
      torch::get_num_threads(), avx512 ? "yes" : "no (fused rows ran the portable ones)");
  for (int k = 0; k < 6; ++k) {
    if (ms[k].empty()) continue;
    std::sort(ms[k].begin(), ms[k].end());
    std::printf("%-20s best %6.2f ms  median %6.2f ms\n", names[k], ms[k].front(),
                ms[k][ms[k].size() / 2]);
  }
}
