// Which arithmetic a trial trains in. `precision: auto` (the default) takes mixed precision where
// the hardware does it natively and fp32 elsewhere; the choice is a pure function of the request
// and the hardware, so it is tested with the hardware as input. Torch-free.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace sift::worker {

enum class Precision { kFp32, kBf16, kFp16 };

const char* PrecisionName(Precision p);  // "fp32", "bf16", "fp16"

struct PrecisionHardware {
  bool cuda = false;  // training on a CUDA device
  // The CUDA device's compute capability (8.0 is Ampere); nullopt when it could not be read.
  std::optional<std::pair<int, int>> capability;
  bool cpu_native_bf16 = false;  // AVX512-BF16 or AMX-BF16 (CpuHasNativeBf16())
};

struct PrecisionChoice {
  Precision precision = Precision::kFp32;
  std::string reason;  // one clause for the log: why this precision ("" when asked for exactly)
};

// requested: fp32 | bf16 | fp16 | auto. auto: on CUDA bf16 from compute capability 8.0 (native
// bf16 tensor cores, no loss scaler; on an H100 bf16 beat fp16 in every row of issue 15's
// table), fp16 before it (and when the capability is unknown); on the CPU bf16 where the CPU has
// bf16 instructions, fp32 elsewhere (emulated bf16 is slower than fp32). fp16 on the CPU becomes
// bf16: LibTorch's CPU autocast is bf16 only. Throws std::invalid_argument for other values.
PrecisionChoice ChoosePrecision(const std::string& requested, const PrecisionHardware& hw);

// The CPU's bf16 instructions, from CPUID: AVX512-BF16 (leaf 7 subleaf 1, EAX bit 5) or AMX-BF16
// (leaf 7 subleaf 0, EDX bit 22).
bool CpuHasNativeBf16();

// Compute capability of CUDA device `index` read through the driver library (libcuda.so.1,
// loaded on demand, so CPU builds and hosts without a driver get nullopt).
std::optional<std::pair<int, int>> CudaCapability(int index);

}  // namespace sift::worker
