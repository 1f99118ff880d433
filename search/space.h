// The search space: typed parameters, their ranges and scales, and conditions between them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "search/param_value.h"
#include "search/rng.h"

namespace sift::search {

enum class ParamType { kFloat, kInt, kCategorical };
enum class Scale { kLinear, kLog };

// A parameter is active only when `parent` (declared earlier) takes one of `values`,
// e.g. momentum only when optimizer is sgd.
struct Condition {
  std::string parent;
  std::vector<ParamValue> values;
};

// Integer bounds past 2^53 are not exact as doubles (the bounds' storage type), and samples
// outside int64 would be undefined to convert, so int parameters stay within this magnitude.
inline constexpr double kMaxIntBound = 9007199254740992.0;  // 2^53
inline bool IntBoundInRange(double v) { return v >= -kMaxIntBound && v <= kMaxIntBound; }

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kFloat;
  double low = 0.0;  // float and int: inclusive bounds
  double high = 0.0;
  Scale scale = Scale::kLinear;
  std::vector<ParamValue> choices;  // categorical only
  std::optional<Condition> condition;

  bool numeric() const { return type != ParamType::kCategorical; }
};

class SearchSpace {
 public:
  SearchSpace() = default;
  explicit SearchSpace(std::vector<ParamSpec> params) : params_(std::move(params)) {}

  const std::vector<ParamSpec>& params() const { return params_; }
  size_t size() const { return params_.size(); }
  const ParamSpec* Find(const std::string& name) const;

  // Every problem, each as "<name>.<field>: <what is wrong>"; empty when the space is valid.
  std::vector<std::string> Validate() const;

  // Whether `spec` is active given the (possibly partial) assignment of earlier parameters.
  bool IsActive(const ParamSpec& spec, const Params& params) const;

  // Maps a numeric value to [0, 1] (log-scaled parameters in log space) and back; FromUnit rounds
  // integers and clamps into range. For categoricals the unit value indexes the choices.
  double ToUnit(const ParamSpec& spec, const ParamValue& value) const;
  ParamValue FromUnit(const ParamSpec& spec, double u) const;

  // Index of `value` among a categorical's choices, or -1.
  int ChoiceIndex(const ParamSpec& spec, const ParamValue& value) const;

  // Draws every active parameter uniformly (in unit space), in declaration order.
  Params Sample(Rng& rng) const;
  // The same, keeping `fixed`'s value for each parameter it sets (a partial configuration, such
  // as an enqueued one); a fixed parameter inactive under the others is left out (Check it).
  Params Complete(const Params& fixed, Rng& rng) const;

  // Checks an assignment: every active parameter present and in range, no inactive or unknown one.
  // Returns the first problem, or an empty string.
  std::string Check(const Params& params) const;

 private:
  std::vector<ParamSpec> params_;
};

}  // namespace sift::search
