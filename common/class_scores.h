// A classifier's scores beyond accuracy, for imbalanced labels where predicting the common class
// scores well: balanced accuracy, macro F1 and (two classes) ROC AUC, as scikit-learn defines them.
// Torch-free: the trainer fills the counts, tests check them by hand.
#pragma once

#include <cstdint>
#include <vector>

namespace sift::common {

// Per class index: samples predicted right, samples predicted as the class, samples of the class.
struct ClassCounts {
  std::vector<int64_t> correct, predicted, total;
};

// The mean recall (correct / total) over the classes present (total > 0); 0 when none is.
double BalancedAccuracy(const ClassCounts& c);

// The mean F1 = 2 correct / (predicted + total) over the classes present or predicted; 0 when none.
double MacroF1(const ClassCounts& c);

// The area under the ROC curve of `scores` (higher: more likely class 1) against `labels` (0 or
// 1): the chance a random positive outscores a random negative, ties counting half. NaN when
// either class is absent.
double BinaryRocAuc(const std::vector<double>& scores, const std::vector<int64_t>& labels);

}  // namespace sift::common
