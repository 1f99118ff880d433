// `sift-worker export --checkpoint FILE --out model.pt`: a trial checkpoint's trained model as
// TorchScript for PyTorch's torch.jit.load (worker/trainer/export.h).
#pragma once

#include <string>

namespace sift::worker {

// Returns the exit code: 0 written, 1 the checkpoint cannot be exported (the reason on stderr).
int RunExport(const std::string& checkpoint, const std::string& out);

}  // namespace sift::worker
