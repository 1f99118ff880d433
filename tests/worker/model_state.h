// A trainer's model state by name, and the bitwise comparison the resume tests make of it.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "worker/trainer/trainer.h"

namespace sift::worker::testing {

// Parameters and buffers (batch-norm statistics) of the trainer's model, by name.
inline std::vector<std::pair<std::string, torch::Tensor>> State(Trainer& t) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : t.model().named_parameters()) out.emplace_back(p.key(), p.value());
  for (const auto& b : t.model().named_buffers()) out.emplace_back(b.key(), b.value());
  return out;
}

inline void ExpectBitwiseEqual(Trainer& a, Trainer& b) {
  auto sa = State(a), sb = State(b);
  ASSERT_EQ(sa.size(), sb.size());
  for (size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].first, sb[i].first);
    EXPECT_TRUE(torch::equal(sa[i].second, sb[i].second)) << sa[i].first << " differs";
  }
}

}  // namespace sift::worker::testing
