// A settable clock for coordinator tests: leases and dollars depend on time.
#pragma once

#include <functional>
#include <memory>

namespace sift::coordinator::testing {

struct TestClock {
  std::shared_ptr<double> now = std::make_shared<double>(1.7e9);
  std::function<double()> fn() const {
    auto n = now;
    return [n] { return *n; };
  }
  void Advance(double seconds) { *now += seconds; }
};

}  // namespace sift::coordinator::testing
