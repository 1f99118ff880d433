// Balanced accuracy, macro F1 and ROC AUC against values worked out by hand (and matching
// scikit-learn's balanced_accuracy_score, f1_score(average="macro") and roc_auc_score).
#include "common/class_scores.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sift::common {
namespace class_scores_test {

// 10 samples, 8 of class 0 and 2 of class 1; a model that says 0 for all but one sample of each.
// Accuracy is 8/10 = 0.8, which hides that class 1 is found half the time.
ClassCounts Imbalanced() {
  ClassCounts c;
  c.total = {8, 2};
  c.correct = {7, 1};    // class 0: 7 of 8 right; class 1: 1 of 2
  c.predicted = {8, 2};  // 7 + 1 wrong ones said 0; 1 + 1 wrong one said 1
  return c;
}

TEST(ClassScoresTest, BalancedAccuracyIsTheMeanRecall) {
  EXPECT_DOUBLE_EQ(BalancedAccuracy(Imbalanced()), (7.0 / 8 + 1.0 / 2) / 2);  // 0.6875
  // Always predicting the majority: accuracy 0.8, balanced accuracy 0.5.
  ClassCounts majority{{8, 0}, {10, 0}, {8, 2}};
  EXPECT_DOUBLE_EQ(BalancedAccuracy(majority), 0.5);
  // A class absent from the split does not count.
  ClassCounts absent{{3, 1, 0}, {4, 1, 0}, {4, 1, 0}};
  EXPECT_DOUBLE_EQ(BalancedAccuracy(absent), (0.75 + 1.0) / 2);
  EXPECT_EQ(BalancedAccuracy({}), 0.0);
}

TEST(ClassScoresTest, MacroF1IsTheMeanOfPerClassF1) {
  // class 0: tp 7, fp 1, fn 1 -> F1 = 14/16; class 1: tp 1, fp 1, fn 1 -> F1 = 2/4.
  EXPECT_DOUBLE_EQ(MacroF1(Imbalanced()), (14.0 / 16 + 2.0 / 4) / 2);  // 0.6875
  // The majority guess: class 0 F1 = 16/18, class 1 never predicted nor found: F1 0.
  ClassCounts majority{{8, 0}, {10, 0}, {8, 2}};
  EXPECT_DOUBLE_EQ(MacroF1(majority), (16.0 / 18 + 0.0) / 2);
  // Three classes, one neither present nor predicted: left out (as scikit-learn's labels are).
  ClassCounts three{{2, 1, 0}, {3, 1, 0}, {2, 2, 0}};
  // class 0: 2*2/(3+2) = 0.8; class 1: 2*1/(1+2) = 2/3.
  EXPECT_DOUBLE_EQ(MacroF1(three), (0.8 + 2.0 / 3) / 2);
}

TEST(ClassScoresTest, RocAucCountsPairsRankedRightWithTiesHalf) {
  // Positives 0.8 and 0.4; negatives 0.1, 0.4, 0.35, 0.9. Pairs (p, n) with p > n:
  // 0.8 beats 0.1, 0.4, 0.35 (3); 0.4 beats 0.1, 0.35 (2) and ties 0.4 (0.5). 5.5 of 8.
  const std::vector<double> scores = {0.1, 0.8, 0.4, 0.4, 0.35, 0.9};
  const std::vector<int64_t> labels = {0, 1, 0, 1, 0, 0};
  EXPECT_DOUBLE_EQ(BinaryRocAuc(scores, labels), 5.5 / 8);
  EXPECT_DOUBLE_EQ(BinaryRocAuc({1, 2, 3, 4}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(BinaryRocAuc({4, 3, 2, 1}, {0, 0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(BinaryRocAuc({5, 5, 5, 5}, {0, 1, 0, 1}), 0.5);
  EXPECT_TRUE(std::isnan(BinaryRocAuc({1, 2}, {1, 1})));  // no negatives
}

}  // namespace class_scores_test
}  // namespace sift::common
