#include "worker/export_command.h"

#include <iostream>

#include "worker/trainer/export.h"

namespace sift::worker {

int RunExport(const std::string& checkpoint, const std::string& out) {
  try {
    const ExportedModel m = ExportCheckpoint(checkpoint, out);
    std::string sample;
    for (int64_t d : m.shape.sample) sample += (sample.empty() ? "" : ", ") + std::to_string(d);
    std::cout << "wrote " << out << ": " << m.hp.model << ", input [batch, " << sample
              << "] -> output [batch, " << m.shape.outputs
              << "], eval mode; load with torch.jit.load, feed it data prepared as the study's "
                 "data: section prepares it\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "sift-worker export: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace sift::worker
