#include "worker/trainer/sgemm.h"

#include <dlfcn.h>

namespace sift::worker {
namespace {

// oneDNN's C API (dnnl.h, not installed with LibTorch): row-major, dnnl_dim_t is int64_t, 0 is
// dnnl_success.
using DnnlSgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                          float* c, int64_t ldc);

// Looked up in the libraries already loaded, not linked: a LibTorch with oneDNN built in
// statically (pip wheels) or without it falls back to at::mm_out.
DnnlSgemm FindDnnlSgemm() {
  if (std::getenv("SIFT_NO_ONEDNN_SGEMM") != nullptr) return nullptr;  // A/B comparisons
  return reinterpret_cast<DnnlSgemm>(::dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
}

DnnlSgemm Dnnl() {
  static const DnnlSgemm f = FindDnnlSgemm();
  return f;
}

}  // namespace

bool SgemmUsesOneDnn() { return Dnnl() != nullptr; }

void Sgemm(bool trans_a, bool trans_b, const torch::Tensor& a, const torch::Tensor& b,
           torch::Tensor& c) {
  const int64_t m = c.size(0), n = c.size(1), k = trans_a ? a.size(0) : a.size(1);
  if (DnnlSgemm f = Dnnl(); f != nullptr && m > 0 && n > 0 && k > 0) {
    const int status = f(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f,
                         a.data_ptr<float>(), a.size(1), b.data_ptr<float>(), b.size(1), 0.0f,
                         c.data_ptr<float>(), n);
    TORCH_CHECK(status == 0, "dnnl_sgemm failed with status ", status);
    return;
  }
  at::mm_out(c, trans_a ? a.t() : a, trans_b ? b.t() : b);
}

}  // namespace sift::worker
