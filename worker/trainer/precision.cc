#include "worker/trainer/precision.h"

#include <cpuid.h>
#include <dlfcn.h>

#include <stdexcept>

namespace sift::worker {

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
  }
  return "?";
}

PrecisionChoice ChoosePrecision(const std::string& requested, const PrecisionHardware& hw) {
  if (requested == "fp32") return {Precision::kFp32, ""};
  if (requested == "bf16") {
    if (hw.cuda || hw.cpu_native_bf16) return {Precision::kBf16, ""};
    // Measured on a 2-vCPU EPYC without AVX-512: about 5x slower than fp32, and the tiny CNN of
    // TrainerTest.TinyCnnLearnsInBf16 evaluated at 0.26-0.46 where fp32 reached 0.48-0.61.
    return {Precision::kBf16,
            "bf16 as asked, but this CPU has no bf16 instructions: emulated, slower than fp32 and "
            "less accurate for batch-norm CNNs; precision: auto picks fp32 here"};
  }
  if (requested == "fp16") {
    if (hw.cuda) return {Precision::kFp16, ""};
    return {Precision::kBf16, "fp16 needs CUDA; LibTorch autocasts CPU ops to bf16"};
  }
  if (requested != "auto") {
    throw std::invalid_argument("precision: '" + requested +
                                "' is not one of fp32, bf16, fp16, auto");
  }
  if (hw.cuda) {
    if (!hw.capability) return {Precision::kFp16, "auto: CUDA compute capability unknown"};
    const auto [major, minor] = *hw.capability;
    const std::string cc =
        "compute capability " + std::to_string(major) + "." + std::to_string(minor);
    if (major >= 8) return {Precision::kBf16, "auto: CUDA " + cc + " has bf16 tensor cores"};
    return {Precision::kFp16, "auto: CUDA " + cc + " predates bf16 (8.0)"};
  }
  if (hw.cpu_native_bf16) return {Precision::kBf16, "auto: the CPU has AVX512-BF16 or AMX"};
  return {Precision::kFp32, "auto: the CPU has no bf16 instructions"};
}

bool CpuHasNativeBf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool amx_bf16 = (edx >> 22) & 1;
  const unsigned max_subleaf = eax;
  bool avx512_bf16 = false;
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) != 0) {
    avx512_bf16 = (eax >> 5) & 1;
  }
  return avx512_bf16 || amx_bf16;
}

std::optional<std::pair<int, int>> CudaCapability(int index) {
  // The driver API's C ABI (cuda.h is not needed): CUresult is an int, 0 is CUDA_SUCCESS,
  // CUdevice an int; attributes 75 and 76 are the compute capability's major and minor.
  using Init = int (*)(unsigned);
  using Get = int (*)(int*, int);
  using Attribute = int (*)(int*, int, int);
  static void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return std::nullopt;
  auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  auto get = reinterpret_cast<Get>(::dlsym(lib, "cuDeviceGet"));
  auto attribute = reinterpret_cast<Attribute>(::dlsym(lib, "cuDeviceGetAttribute"));
  int device = 0, major = 0, minor = 0;
  if (!init || !get || !attribute || init(0) != 0 || get(&device, index) != 0 ||
      attribute(&major, 75, device) != 0 || attribute(&minor, 76, device) != 0) {
    return std::nullopt;
  }
  return std::make_pair(major, minor);
}

}  // namespace sift::worker
