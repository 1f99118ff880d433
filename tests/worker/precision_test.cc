// `precision: auto` and the explicit settings, with the hardware as input.
#include "worker/trainer/precision.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "common/hparams/hparams.h"

namespace sift::worker {
namespace precision_test {

PrecisionHardware Cuda(int major, int minor) {
  PrecisionHardware hw;
  hw.cuda = true;
  hw.capability = std::make_pair(major, minor);
  return hw;
}

PrecisionHardware Cpu(bool native_bf16) {
  PrecisionHardware hw;
  hw.cpu_native_bf16 = native_bf16;
  return hw;
}

TEST(PrecisionTest, AutoIsTheDefault) { EXPECT_EQ(common::HParams{}.precision, "auto"); }

TEST(PrecisionTest, AutoOnCudaIsBf16FromAmpereOnAndFp16Before) {
  EXPECT_EQ(ChoosePrecision("auto", Cuda(9, 0)).precision, Precision::kBf16);   // H100
  EXPECT_EQ(ChoosePrecision("auto", Cuda(8, 0)).precision, Precision::kBf16);   // A100
  EXPECT_EQ(ChoosePrecision("auto", Cuda(8, 9)).precision, Precision::kBf16);   // L4
  EXPECT_EQ(ChoosePrecision("auto", Cuda(10, 0)).precision, Precision::kBf16);  // B200
  EXPECT_EQ(ChoosePrecision("auto", Cuda(7, 5)).precision, Precision::kFp16);   // T4
  EXPECT_EQ(ChoosePrecision("auto", Cuda(7, 0)).precision, Precision::kFp16);   // V100
  PrecisionHardware unknown;
  unknown.cuda = true;
  EXPECT_EQ(ChoosePrecision("auto", unknown).precision, Precision::kFp16);
}

TEST(PrecisionTest, AutoOnTheCpuIsBf16OnlyWithBf16Instructions) {
  EXPECT_EQ(ChoosePrecision("auto", Cpu(true)).precision, Precision::kBf16);
  EXPECT_EQ(ChoosePrecision("auto", Cpu(false)).precision, Precision::kFp32);
}

TEST(PrecisionTest, TheReasonNamesTheHardware) {
  EXPECT_EQ(ChoosePrecision("auto", Cuda(7, 5)).reason,
            "auto: CUDA compute capability 7.5 predates bf16 (8.0)");
  EXPECT_EQ(ChoosePrecision("auto", Cuda(9, 0)).reason,
            "auto: CUDA compute capability 9.0 has bf16 tensor cores");
  EXPECT_EQ(ChoosePrecision("auto", Cpu(false)).reason, "auto: the CPU has no bf16 instructions");
  EXPECT_EQ(ChoosePrecision("fp32", Cpu(false)).reason, "");
}

TEST(PrecisionTest, ExplicitSettingsAreKeptExceptFp16OnTheCpu) {
  for (const auto& hw : {Cpu(false), Cpu(true), Cuda(9, 0), Cuda(7, 0)}) {
    EXPECT_EQ(ChoosePrecision("fp32", hw).precision, Precision::kFp32);
    EXPECT_EQ(ChoosePrecision("bf16", hw).precision, Precision::kBf16);
  }
  EXPECT_EQ(ChoosePrecision("fp16", Cuda(9, 0)).precision, Precision::kFp16);
  // bf16 asked of a CPU that only emulates it: kept, and the log says what it costs.
  EXPECT_EQ(ChoosePrecision("bf16", Cpu(true)).reason, "");
  EXPECT_NE(ChoosePrecision("bf16", Cpu(false)).reason.find("no bf16 instructions"),
            std::string::npos);
  const PrecisionChoice cpu = ChoosePrecision("fp16", Cpu(true));
  EXPECT_EQ(cpu.precision, Precision::kBf16);
  EXPECT_NE(cpu.reason.find("fp16 needs CUDA"), std::string::npos);
}

TEST(PrecisionTest, RefusesUnknownValuesByName) {
  try {
    ChoosePrecision("fp8", Cpu(false));
    FAIL() << "fp8 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "precision: 'fp8' is not one of fp32, bf16, fp16, auto");
  }
}

TEST(PrecisionTest, NamesAndHostDetection) {
  EXPECT_STREQ(PrecisionName(Precision::kFp32), "fp32");
  EXPECT_STREQ(PrecisionName(Precision::kBf16), "bf16");
  EXPECT_STREQ(PrecisionName(Precision::kFp16), "fp16");
  // CPUID agrees with the compiler's view of AVX512-BF16 (AMX-BF16 may add to it).
  if (__builtin_cpu_supports("avx512bf16")) {
    EXPECT_TRUE(CpuHasNativeBf16());
  }
  // Without a driver (CI, this CPU build) there is no capability to read; with one, a real one.
  if (const auto cc = CudaCapability(0)) {
    EXPECT_GE(cc->first, 3);
  }
}

}  // namespace precision_test
}  // namespace sift::worker
