#include "search/factory.h"

#include <algorithm>
#include <limits>

#include "search/asha_scheduler.h"
#include "search/bo/gp_searcher.h"
#include "search/bohb_searcher.h"
#include "search/composite_scheduler.h"
#include "search/curve_scheduler.h"
#include "search/fifo_scheduler.h"
#include "search/grid_searcher.h"
#include "search/median_scheduler.h"
#include "search/multi/mo_asha_scheduler.h"
#include "search/multi/mo_median_scheduler.h"
#include "search/multi/mo_plateau_scheduler.h"
#include "search/multi/motpe_searcher.h"
#include "search/multi/nsga2_searcher.h"
#include "search/multi/parego_searcher.h"
#include "search/pbt_scheduler.h"
#include "search/plateau_scheduler.h"
#include "search/predict_guard.h"
#include "search/random_searcher.h"
#include "search/rungs.h"
#include "search/sobol_searcher.h"
#include "search/tpe/tpe_searcher.h"

namespace sift::search {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

PlateauOptions ReadPlateau(OptionReader& r, const std::string& prefix) {
  PlateauOptions o;
  o.patience = r.Int(prefix + "patience", o.patience, 1, kMaxInt);
  o.min_delta = r.Double(prefix + "min_delta", o.min_delta, 0.0, 1e300);
  o.smoothing = r.Double(prefix + "smoothing", o.smoothing, 0.0, 0.999);
  o.min_resource = r.Int(prefix + "min_resource", o.min_resource, 1, kMaxInt);
  return o;
}

MedianOptions ReadMedian(OptionReader& r, const std::string& prefix) {
  MedianOptions o;
  o.min_resource = r.Int(prefix + "min_resource", o.min_resource, 1, kMaxInt);
  o.min_trials = r.Int(prefix + "min_trials", o.min_trials, 1, kMaxInt);
  o.grace = r.Double(prefix + "grace", o.grace, 0.0, 1e300);
  o.running_average =
      r.String(prefix + "compare", "best", {"best", "running_average"}) == "running_average";
  return o;
}

AshaOptions ReadAsha(OptionReader& r, const SchedulerContext& context, bool hyperband) {
  AshaOptions o;
  o.eta = r.Int("eta", 3, 2, 1000);
  o.min_resource = r.Int("min_resource", 1, 1, kMaxInt);
  o.max_resource =
      r.Int("max_resource", context.max_resource, 1, std::max<int64_t>(1, context.max_resource));
  if (o.min_resource > o.max_resource) {
    r.AddError("min_resource", "must be <= max_resource (" + std::to_string(o.max_resource) + ")");
    o.min_resource = o.max_resource;
  }
  o.promotion = r.String("variant", "stopping", {"stopping", "promotion"}) == "promotion";
  if (hyperband) {
    const int64_t most = HyperbandBracketCount(o.min_resource, o.max_resource, o.eta);
    o.brackets = r.Int("brackets", most, 1, most);
  }
  return o;
}

CurveOptions ReadCurve(OptionReader& r) {
  CurveOptions o;
  o.min_epochs = r.Int("min_epochs", o.min_epochs, 1, kMaxInt);
  o.threshold = r.Double("threshold", o.threshold, 0.0, 1.0);
  o.k = r.Int("k", o.k, 1, kMaxInt);
  o.level = r.Double("interval_level", o.level, 0.5, 0.999);
  o.bar = r.String("bar", "finished", {"finished", "reached"}) == "reached" ? CurveBar::kReached
                                                                            : CurveBar::kFinished;
  return o;
}

PbtOptions ReadPbt(OptionReader& r) {
  PbtOptions o;
  o.population = r.Int("population", o.population, 2, 100000);
  o.interval_epochs = r.Int("interval_epochs", o.interval_epochs, 1, kMaxInt);
  o.quantile = r.Double("quantile", o.quantile, 0.01, 0.5);
  o.resample_probability = r.Double("resample_probability", o.resample_probability, 0.0, 1.0);
  if (r.Has("perturb") || r.Has("perturb.0")) {
    o.perturb.clear();
    for (const auto& v : r.List("perturb")) {
      const double* d = std::get_if<double>(&v);
      const int64_t* i = std::get_if<int64_t>(&v);
      const double f = d ? *d : i ? static_cast<double>(*i) : -1.0;
      if (!(f > 0.0 && f <= 100.0)) {
        r.AddError("perturb", "factors must be numbers in (0, 100], as in [0.8, 1.2]");
        o.perturb = {0.8, 1.2};
        break;
      }
      o.perturb.push_back(f);
    }
  } else {
    r.List("perturb");
  }
  for (const auto& v : r.List("mutable")) {
    if (const auto* s = std::get_if<std::string>(&v)) {
      o.mutable_params.push_back(*s);
    } else {
      r.AddError("mutable", "must list parameter names, as in [lr, weight_decay]");
    }
  }
  return o;
}

TpeOptions ReadTpe(OptionReader& r) {
  TpeOptions o;
  o.n_startup = r.Int("n_startup", o.n_startup, 0, kMaxInt);
  o.n_ei_candidates = r.Int("n_ei_candidates", o.n_ei_candidates, 1, 100000);
  o.gamma = r.Double("gamma", o.gamma, 1e-6, 1.0);
  o.gamma_max = r.Int("gamma_max", o.gamma_max, 1, kMaxInt);
  o.constant_liar = r.Bool("constant_liar", o.constant_liar);
  o.group = r.Bool("group", o.group);
  o.max_above = r.Int("max_above", o.max_above, 0, kMaxInt);
  o.kernel.multivariate = r.Bool("multivariate", o.kernel.multivariate);
  const bool scott = r.String("bandwidth", "scott", {"scott", "optuna"}) == "scott";
  o.kernel.bandwidth = scott ? TpeBandwidth::kScott : TpeBandwidth::kOptuna;
  // The prior weight and the clip's scale default to Optuna's unless the kernel is the one they
  // were measured with (multivariate, Scott's rule).
  const TpeKernelOptions optuna;
  const bool sift = o.kernel.multivariate && scott;
  o.kernel.consider_prior = r.Bool("consider_prior", o.kernel.consider_prior);
  o.kernel.prior_weight =
      r.Double("prior_weight", sift ? o.kernel.prior_weight : optuna.prior_weight, 1e-6, 1e6);
  o.kernel.consider_magic_clip = r.Bool("consider_magic_clip", o.kernel.consider_magic_clip);
  o.kernel.magic_clip_scale = r.Double(
      "magic_clip_scale", sift ? o.kernel.magic_clip_scale : optuna.magic_clip_scale, 1e-3, 1e3);
  o.kernel.consider_endpoints = r.Bool("consider_endpoints", o.kernel.consider_endpoints);
  return o;
}

Nsga2Options ReadNsga2(OptionReader& r) {
  Nsga2Options o;
  o.population = r.Int("population", o.population, 2, 100000);
  Nsga2Variation& v = o.variation;
  v.uniform_crossover = r.String("crossover", "sbx", {"sbx", "uniform"}) == "uniform";
  v.crossover_probability = r.Double("crossover_probability", v.crossover_probability, 0.0, 1.0);
  v.swap_probability = r.Double("swap_probability", v.swap_probability, 0.0, 1.0);
  v.sbx_eta = r.Double("sbx_eta", v.sbx_eta, 0.0, 1000.0);
  v.mutation_eta = r.Double("mutation_eta", v.mutation_eta, 0.0, 1000.0);
  // Absent: 1 / the number of parameters, as Deb's code.
  if (r.Has("mutation_probability")) {
    v.mutation_probability = r.Double("mutation_probability", 0.0, 0.0, 1.0);
  }
  return o;
}

// "key: <type> optimizes one objective; with several use a, b or c".
void RefuseSeveral(OptionReader& r, const std::string& key, const std::string& type,
                   const std::vector<std::string>& alternatives) {
  std::string list;
  for (size_t i = 0; i < alternatives.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == alternatives.size() ? " or " : ", ") + alternatives[i];
  }
  r.AddError(key, type + " supports one objective only; with several objectives use " + list);
}

bool HasPrefix(const Options& options, const std::string& prefix) {
  for (const auto& [key, value] : options) {
    if (key.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

PbtOptions ReadPbtOptions(const Options& options) {
  OptionReader r(options);
  return ReadPbt(r);
}

std::vector<std::string> SearcherTypes() {
  return {"random", "sobol", "grid", "tpe", "gp", "bohb", "nsga2"};
}
std::vector<std::string> SchedulerTypes() {
  return {"fifo", "plateau", "asha", "hyperband", "median", "curve", "pbt"};
}
std::vector<std::string> MultiObjectiveSearcherTypes() {
  return {"random", "sobol", "grid", "tpe", "gp", "nsga2"};
}
std::vector<std::string> MultiObjectiveSchedulerTypes() {
  return {"fifo", "plateau", "asha", "hyperband", "median"};
}

std::unique_ptr<Searcher> MakeSearcher(const std::string& type, const Options& options,
                                       const SearchSpace& space, std::vector<std::string>* errors,
                                       size_t objectives) {
  OptionReader r(options);
  std::unique_ptr<Searcher> out;
  const bool several = objectives > 1;
  if (several && type == "bohb") {
    RefuseSeveral(r, "type", type,
                  {"tpe (multi-objective TPE)", "gp (ParEGO)", "nsga2", "random", "sobol"});
    errors->insert(errors->end(), r.errors().begin(), r.errors().end());
    return nullptr;
  }
  if (type == "random") {
    out = std::make_unique<RandomSearcher>();
  } else if (type == "sobol") {
    out = std::make_unique<SobolSearcher>();
  } else if (type == "grid") {
    GridOptions o;
    o.points_per_float = r.Int("points_per_float", o.points_per_float, 1, 10000);
    o.points_per_int = r.Int("points_per_int", o.points_per_int, 1, 10000);
    o.shuffle = r.Bool("shuffle", o.shuffle);
    auto grid = std::make_unique<GridSearcher>(space, o);
    if (!grid->error().empty()) r.AddError("type", grid->error());
    out = std::move(grid);
  } else if (type == "tpe" && several) {
    out = std::make_unique<MoTpeSearcher>(ReadTpe(r));
  } else if (type == "tpe") {
    out = std::make_unique<TpeSearcher>(ReadTpe(r));
  } else if (type == "nsga2") {
    out = std::make_unique<Nsga2Searcher>(ReadNsga2(r));
  } else if (type == "gp") {
    GpOptions o;
    o.n_startup = r.Int("n_startup", o.n_startup, 0, kMaxInt);
    o.cost_aware = r.Bool("cost_aware", o.cost_aware);
    o.max_candidates = r.Int("max_candidates", o.max_candidates, 16, 1 << 20);
    o.fit_window = r.Int("fit_window", o.fit_window, 10, 5000);
    o.max_points = r.Int("max_points", o.max_points, 0, kMaxInt);
    if (several) {
      out = std::make_unique<ParegoSearcher>(space, o);
    } else {
      out = std::make_unique<GpSearcher>(space, o);
    }
  } else if (type == "bohb") {
    BohbOptions o;
    o.min_points = r.Int("min_points", o.min_points, 0, kMaxInt);
    o.random_fraction = r.Double("random_fraction", o.random_fraction, 0.0, 1.0);
    o.top_n_percent = r.Double("top_n_percent", o.top_n_percent, 1.0, 99.0);
    o.num_samples = r.Int("num_samples", o.num_samples, 1, 100000);
    o.bandwidth_factor = r.Double("bandwidth_factor", o.bandwidth_factor, 1e-3, 1e3);
    o.min_bandwidth = r.Double("min_bandwidth", o.min_bandwidth, 1e-9, 1.0);
    o.max_good = r.Int("max_good", o.max_good, 0, kMaxInt);
    o.max_bad = r.Int("max_bad", o.max_bad, 0, kMaxInt);
    out = std::make_unique<BohbSearcher>(o);
  } else {
    std::string list;
    for (const auto& t : SearcherTypes()) list += (list.empty() ? "" : ", ") + t;
    errors->push_back("type: unknown searcher '" + type + "' (known: " + list + ")");
    return nullptr;
  }
  r.RejectUnknown();
  if (!r.errors().empty()) {
    errors->insert(errors->end(), r.errors().begin(), r.errors().end());
    return nullptr;
  }
  return out;
}

std::unique_ptr<Scheduler> MakeScheduler(const std::string& type, const Options& options,
                                         const SchedulerContext& context,
                                         std::vector<std::string>* errors) {
  OptionReader r(options);
  std::unique_ptr<Scheduler> out;
  const bool several = context.objectives > 1;
  if (several && (type == "curve" || type == "pbt")) {
    RefuseSeveral(r, "type", type, {"asha", "hyperband", "median", "plateau", "fifo"});
    errors->insert(errors->end(), r.errors().begin(), r.errors().end());
    return nullptr;
  }
  if (type == "fifo") {
    out = std::make_unique<FifoScheduler>();
  } else if (type == "plateau" && several) {
    out = std::make_unique<MoPlateauScheduler>(ReadPlateau(r, ""));
  } else if (type == "plateau") {
    out = std::make_unique<PlateauScheduler>(ReadPlateau(r, ""));
  } else if ((type == "asha" || type == "hyperband") && several) {
    out = std::make_unique<MoAshaScheduler>(ReadAsha(r, context, type == "hyperband"));
  } else if (type == "asha" || type == "hyperband") {
    out = std::make_unique<AshaScheduler>(ReadAsha(r, context, type == "hyperband"));
  } else if (type == "median" && several) {
    out = std::make_unique<MoMedianScheduler>(ReadMedian(r, ""));
  } else if (type == "median") {
    out = std::make_unique<MedianScheduler>(ReadMedian(r, ""));
  } else if (type == "curve") {
    out = std::make_unique<CurveScheduler>(ReadCurve(r));
  } else if (type == "pbt") {
    out = std::make_unique<PbtScheduler>(ReadPbt(r));
  } else {
    std::string list;
    for (const auto& t : SchedulerTypes()) list += (list.empty() ? "" : ", ") + t;
    errors->push_back("type: unknown scheduler '" + type + "' (known: " + list + ")");
    return nullptr;
  }
  // Extra stopping rules nested under the primary: {type: asha, plateau.patience: 3}.
  std::vector<std::unique_ptr<Scheduler>> extra;
  if (type != "plateau" && HasPrefix(options, "plateau.")) {
    const PlateauOptions o = ReadPlateau(r, "plateau.");
    extra.push_back(several ? std::unique_ptr<Scheduler>(std::make_unique<MoPlateauScheduler>(o))
                            : std::make_unique<PlateauScheduler>(o));
  }
  if (type != "median" && HasPrefix(options, "median.")) {
    const MedianOptions o = ReadMedian(r, "median.");
    extra.push_back(several ? std::unique_ptr<Scheduler>(std::make_unique<MoMedianScheduler>(o))
                            : std::make_unique<MedianScheduler>(o));
  }
  if (!extra.empty()) out = std::make_unique<CompositeScheduler>(std::move(out), std::move(extra));
  // The curve model guarding the rung rules: {type: asha, predict: true} or predict: {keep: 0.6}.
  const bool rungs = type == "asha" || type == "hyperband";
  const bool asked = r.Has("predict") || HasPrefix(options, "predict.");
  const bool guard = (rungs || asked) && r.Bool("predict", HasPrefix(options, "predict."));
  if (guard && several) {
    r.AddError("predict",
               "the curve model guards one objective only; with several objectives "
               "use asha or hyperband without predict");
  } else if (guard && !rungs) {
    r.AddError("predict", "guards asha or hyperband only (type: curve is the predictor itself)");
  } else if (guard) {
    PredictGuardOptions o;
    o.keep = r.Double("predict.keep", o.keep, 0.0, 1.0);
    o.k = r.Int("predict.k", o.k, 1, kMaxInt);
    o.min_epochs = r.Int("predict.min_epochs", o.min_epochs, CurveFitter::kMinPoints, kMaxInt);
    o.level = r.Double("predict.interval_level", o.level, 0.5, 0.999);
    out = std::make_unique<PredictGuard>(std::move(out), o);
  }
  r.RejectUnknown();
  if (!r.errors().empty()) {
    errors->insert(errors->end(), r.errors().begin(), r.errors().end());
    return nullptr;
  }
  return out;
}

}  // namespace sift::search
