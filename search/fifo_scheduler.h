// FIFO: never stops a trial early; every trial trains to its maximum resource.
#pragma once

#include "search/scheduler.h"

namespace sift::search {

class FifoScheduler : public Scheduler {
 public:
  Decision OnReport(const StudyView&, const TrialView&) override { return Decision::Continue(); }
};

}  // namespace sift::search
