// Forward + backward of the benchmark MLP (784-512-256-10, batch 256, cross-entropy) with the
// plain layers (linear, then ReLU in place) against FusedLinear
// (worker/trainer/kernels/fused_linear.h), in fp32 and under bf16 autocast (FusedLinearBf16
// where GemmBf16Available()), interleaved in one process so all see the same machine load.
// Prints the best and median milliseconds per step of each, and of the fused layers' eight
// products alone (gemms_fp32, gemms_bf16).
// SIFT_NO_ONEDNN_SGEMM=1 makes FusedLinear's fp32 products run at::mm (OpenBLAS) instead of
// oneDNN.
//
//   mlp_layers_bench [--rounds=200] [--threads=2]
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "worker/trainer/kernels/fused_linear.h"
#include "worker/trainer/kernels/sgemm.h"
#include "worker/trainer/torch_compat.h"

namespace {

using sift::worker::FusedLinear;
using sift::worker::FusedLinearBf16;
using sift::worker::SetAutocastDtype;
using sift::worker::SetAutocastEnabled;

struct Mlp {
  std::vector<torch::nn::Linear> layers{torch::nn::Linear(784, 512), torch::nn::Linear(512, 256),
                                        torch::nn::Linear(256, 10)};
  std::vector<sift::worker::Bf16Weight> bf16{3};
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

// Under autocast, as the trainer runs bf16; the weight copies are remade each step, as after an
// optimizer step.
struct Autocast {
  Autocast() {
    SetAutocastEnabled(c10::DeviceType::CPU, true);
    SetAutocastDtype(c10::DeviceType::CPU, at::kBFloat16);
  }
  ~Autocast() {
    at::autocast::clear_cache();
    SetAutocastEnabled(c10::DeviceType::CPU, false);
  }
};

torch::Tensor PlainBf16(Mlp& m, torch::Tensor x) {
  Autocast autocast;
  return Plain(m, x).to(torch::kFloat32);
}

torch::Tensor FusedBf16(Mlp& m, torch::Tensor x) {
  Autocast autocast;
  if (!sift::worker::FusedLinearBf16Applies(x, m.layers[0])) return Plain(m, x);
  for (auto& l : m.layers) l->weight.unsafeGetTensorImpl()->bump_version();
  x = FusedLinearBf16(x, m.layers[0], /*relu=*/true, m.bf16[0]);
  x = FusedLinearBf16(x, m.layers[1], /*relu=*/true, m.bf16[1]);
  return FusedLinearBf16(x, m.layers[2], /*relu=*/false, m.bf16[2]);
}

// Only the fused layers' eight products, on operands made once: bf16 through GemmBf16 (as
// FusedBf16), fp32 through Sgemm (as Fused). The rest of those rows' time is elementwise passes,
// autograd and the loss.
template <bool kBf16>
torch::Tensor Gemms(Mlp& m, torch::Tensor x) {
  static std::vector<torch::Tensor> ops;
  if (kBf16 && !sift::worker::GemmBf16Available()) {
    return torch::zeros({x.size(0), 10}, x.options());
  }
  const auto operand = [](const torch::Tensor& t) { return kBf16 ? t.to(torch::kBFloat16) : t; };
  if (ops.empty()) {
    for (int64_t width : {784, 512, 256, 10}) {
      ops.push_back(operand(torch::randn({x.size(0), width})));  // activations
      ops.push_back(torch::empty({x.size(0), width}));           // fp32 results
    }
    for (auto& l : m.layers) ops.push_back(operand(l->weight.detach().clone()));
    for (auto& l : m.layers) ops.push_back(torch::empty_like(l->weight));
  }
  const auto gemm = kBf16 ? sift::worker::GemmBf16 : sift::worker::Sgemm;
  for (int i = 0; i < 3; ++i) {
    const auto &in = ops[2 * i], &w = ops[8 + i];
    auto &out = ops[2 * i + 3], &grad_w = ops[11 + i];
    gemm(false, true, in, w, out);
    if (i > 0) gemm(false, false, ops[2 * i + 2], w, ops[2 * i + 1]);
    gemm(true, false, ops[2 * i + 2], in, grad_w);
  }
  return torch::zeros({x.size(0), 10}, x.options()).requires_grad_(true);
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
  constexpr int kImpls = 6;
  const Forward impls[kImpls] = {Plain, Fused, PlainBf16, FusedBf16, Gemms<false>, Gemms<true>};
  std::vector<double> ms[kImpls];
  for (int r = 0; r < rounds + 10; ++r) {
    for (int k = 0; k < kImpls; ++k) {
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
  const char* names[kImpls] = {"plain",      "fused",      "plain_bf16",
                               "fused_bf16", "gemms_fp32", "gemms_bf16"};
  for (int k = 0; k < kImpls; ++k) {
    std::sort(ms[k].begin(), ms[k].end());
    std::printf("%s best_ms=%.3f median_ms=%.3f ", names[k], ms[k].front(),
                ms[k][ms[k].size() / 2]);
  }
  std::printf("onednn=%d onednn_bf16=%d threads=%d\n", sift::worker::SgemmUsesOneDnn() ? 1 : 0,
              sift::worker::GemmBf16Available() ? 1 : 0, threads);
  return 0;
}
