#include "worker/trainer/kernels/sgemm.h"

#include <dlfcn.h>

namespace sift::worker {
namespace {

// oneDNN's C API (dnnl.h, not installed with LibTorch): row-major, dnnl_dim_t is int64_t,
// bfloat16_t is 16 bits, 0 is dnnl_success.
template <typename In>
using DnnlGemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                         const In* a, int64_t lda, const In* b, int64_t ldb, float beta, float* c,
                         int64_t ldc);

// Looked up in the libraries already loaded, not linked: a LibTorch with oneDNN built in
// statically (pip wheels) or without it falls back. `off` names an environment variable that
// disables it, for A/B comparisons.
template <typename In>
DnnlGemm<In> Find(const char* symbol, const char* off) {
  if (std::getenv(off) != nullptr) return nullptr;
  return reinterpret_cast<DnnlGemm<In>>(::dlsym(RTLD_DEFAULT, symbol));
}

DnnlGemm<float> DnnlSgemm() {
  static const DnnlGemm<float> f = Find<float>("dnnl_sgemm", "SIFT_NO_ONEDNN_SGEMM");
  return f;
}

DnnlGemm<uint16_t> DnnlBf16() {
  static const DnnlGemm<uint16_t> f =
      __builtin_cpu_supports("avx512bf16")
          ? Find<uint16_t>("dnnl_gemm_bf16bf16f32", "SIFT_NO_ONEDNN_BF16")
          : nullptr;
  return f;
}

template <typename In>
void Run(DnnlGemm<In> f, const char* name, bool trans_a, bool trans_b, const In* a, const In* b,
         int64_t lda, int64_t ldb, torch::Tensor& c, int64_t k) {
  const int64_t m = c.size(0), n = c.size(1);
  const int status = f(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
                       0.0f, c.data_ptr<float>(), n);
  TORCH_CHECK(status == 0, name, " failed with status ", status);
}

}  // namespace

bool SgemmUsesOneDnn() { return DnnlSgemm() != nullptr; }

bool GemmBf16Available() { return DnnlBf16() != nullptr; }

void Sgemm(bool trans_a, bool trans_b, const torch::Tensor& a, const torch::Tensor& b,
           torch::Tensor& c) {
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  if (DnnlGemm<float> f = DnnlSgemm(); f != nullptr && c.numel() > 0 && k > 0) {
    Run(f, "dnnl_sgemm", trans_a, trans_b, a.data_ptr<float>(), b.data_ptr<float>(), a.size(1),
        b.size(1), c, k);
    return;
  }
  at::mm_out(c, trans_a ? a.t() : a, trans_b ? b.t() : b);
}

void GemmBf16(bool trans_a, bool trans_b, const torch::Tensor& a, const torch::Tensor& b,
              torch::Tensor& c) {
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  if (c.numel() == 0) return;
  if (k == 0) {
    c.zero_();
    return;
  }
  const DnnlGemm<uint16_t> f = DnnlBf16();
  TORCH_CHECK(f != nullptr, "GemmBf16: oneDNN's bf16 gemm is not available");
  const auto bits = [](const torch::Tensor& t) {
    return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
  };
  Run(f, "dnnl_gemm_bf16bf16f32", trans_a, trans_b, bits(a), bits(b), a.size(1), b.size(1), c, k);
}

}  // namespace sift::worker
