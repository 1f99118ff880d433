#include "common/data/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

#include "common/data/csv.h"
#include "common/data/file_bytes.h"
#include "common/data/npy.h"
#include "common/data/permutation.h"

namespace sift::data {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw std::runtime_error(message); }

std::string Join(const std::vector<std::string>& names, size_t max = 12) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + ")";
}

// Cells that mean "no value" (what pandas and R write for one, and an empty field).
bool IsMissing(const std::string& s) {
  return s.empty() || s == "NA" || s == "NaN" || s == "nan" || s == "N/A" || s == "null" ||
         s == "?";
}

bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// One spelling per number, so "1", "1.0" and a stored 1.0 are the same class.
std::string NumberKey(double v) {
  if (std::isnan(v)) return "nan";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// One file's rows before encoding.
struct Raw {
  std::string file;
  bool csv = false;
  CsvTable table;
  int label_col = -1;
  std::vector<int> feature_cols;
  std::string label_name;      // for errors: the csv column or the npz/npy array
  std::vector<float> x;        // arrays: rows x prod(shape)
  std::vector<int64_t> shape;  // arrays: one sample's shape
  std::vector<double> y;

  int64_t rows() const {
    return csv ? static_cast<int64_t>(table.rows.size()) : static_cast<int64_t>(y.size());
  }
  std::string Where(int64_t i) const {
    return csv ? file + ": line " + std::to_string(table.rows[static_cast<size_t>(i)].line)
               : file + ": row " + std::to_string(i);
  }
  const std::string& Cell(int64_t i, int col) const {
    return table.rows[static_cast<size_t>(i)].cells[static_cast<size_t>(col)];
  }
  std::string LabelText(int64_t i) const {
    return csv ? Cell(i, label_col) : NumberKey(y[static_cast<size_t>(i)]);
  }
  std::string LabelWhere(int64_t i) const { return Where(i) + ", column '" + label_name + "'"; }
  int64_t sample_size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// The rows of one file that make up one split.
struct Part {
  const Raw* raw = nullptr;
  std::vector<int64_t> rows;
};

Raw ReadCsv(const DataSpec& spec, const std::string& path, std::vector<std::string>* features) {
  Raw r;
  r.file = path;
  r.csv = true;
  r.label_name = spec.label;
  r.table = ParseCsv(path, ReadFileBytes(path));
  r.label_col = r.table.Column(spec.label);
  if (r.label_col < 0) {
    Fail(path + ": no column '" + spec.label + "' (data.label); columns: " + Join(r.table.header));
  }
  if (features->empty()) {  // the first file names them: every column but the label
    for (const auto& name : r.table.header) {
      if (name != spec.label) features->push_back(name);
    }
  }
  for (const auto& name : *features) {
    const int col = r.table.Column(name);
    if (col < 0) {
      Fail(path + ": no column '" + name + "' (a feature); columns: " + Join(r.table.header));
    }
    if (col == r.label_col) Fail(path + ": column '" + name + "' is the label, not a feature");
    r.feature_cols.push_back(col);
  }
  if (r.feature_cols.empty()) Fail(path + ": no feature columns besides the label");
  return r;
}

Raw ReadArrays(const DataSpec& spec, const std::string& format, const FileRef& ref) {
  NpyArray x, y;
  if (format == "npz") {
    const auto members = ReadZipMembers(ref.path, ReadFileBytes(ref.path));
    x = NpzArray(ref.path, members, spec.x_key);
    y = NpzArray(ref.path, members, spec.y_key);
  } else {
    x = ParseNpy(ref.path, ReadFileBytes(ref.path));
    y = ParseNpy(ref.labels, ReadFileBytes(ref.labels));
  }
  if (x.shape.empty()) Fail(x.name + ": features must have a sample dimension, got a scalar");
  if (y.shape.size() != 1 && !(y.shape.size() == 2 && y.shape[1] == 1)) {
    Fail(y.name + ": labels must be one value per sample, shape (N,), got " + ShapeText(y.shape));
  }
  if (y.shape[0] != x.shape[0]) {
    Fail(y.name + ": " + std::to_string(y.shape[0]) + " labels for " + std::to_string(x.shape[0]) +
         " samples in " + x.name);
  }
  Raw r;
  r.file = ref.path;
  r.label_name = format == "npz" ? spec.y_key : ref.labels;
  r.shape.assign(x.shape.begin() + 1, x.shape.end());
  if (r.shape.empty()) r.shape = {1};
  r.x = x.ToFloats();
  r.y = y.ToDoubles();
  return r;
}

Raw ReadRaw(const DataSpec& spec, const std::string& format, const FileRef& ref,
            std::vector<std::string>* features) {
  Raw r = format == "csv" ? ReadCsv(spec, ref.path, features) : ReadArrays(spec, format, ref);
  if (r.rows() == 0) Fail(ref.path + ": no rows");
  return r;
}

Part AllRows(const Raw& raw) {
  Part p{&raw, {}};
  for (int64_t i = 0; i < raw.rows(); ++i) p.rows.push_back(i);
  return p;
}

std::string InferTask(const std::vector<const Part*>& parts) {
  std::set<std::string> distinct;
  bool text = false, fractional = false;
  for (const Part* p : parts) {
    for (int64_t i : p->rows) {
      const std::string label = p->raw->LabelText(i);
      if (IsMissing(label)) Fail(p->raw->LabelWhere(i) + ": missing label");
      double v;
      if (!ParseNumber(label, &v)) {
        text = true;
      } else if (v != std::floor(v)) {
        fractional = true;
      }
      distinct.insert(label);
    }
  }
  if (text) return "classification";
  if (fractional || distinct.size() > static_cast<size_t>(kMaxInferredClasses)) return "regression";
  return "classification";
}

// The class of a label: numbers by value ("1.0" is "1"), text as written.
std::string ClassKey(const std::string& label) {
  double v;
  return ParseNumber(label, &v) ? NumberKey(v) : label;
}

// Splits one file's rows by the fractions; per class when classifying (stratified), each class
// keeping at least one training row.
void SplitRows(const Raw& raw, const SplitFractions& f, bool stratify, Part* train, Part* val,
               Part* test) {
  std::map<std::string, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < raw.rows(); ++i) {
    groups[stratify ? ClassKey(raw.LabelText(i)) : std::string()].push_back(i);
  }
  *train = *val = *test = Part{&raw, {}};
  uint64_t group_seed = f.seed;
  for (const auto& [key, rows] : groups) {
    const auto n = static_cast<int64_t>(rows.size());
    int64_t n_val = std::llround(static_cast<double>(n) * f.val);
    int64_t n_test = std::llround(static_cast<double>(n) * f.test);
    while (n_val + n_test >= n && n_test > 0) --n_test;
    while (n_val + n_test >= n && n_val > 0) --n_val;
    const std::vector<int64_t> order =
        SplitMixPermutation(n, group_seed++ * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);
    for (int64_t k = 0; k < n; ++k) {
      Part* to = k < n_val ? val : k < n_val + n_test ? test : train;
      to->rows.push_back(rows[static_cast<size_t>(order[static_cast<size_t>(k)])]);
    }
  }
  for (Part* p : {train, val, test}) std::sort(p->rows.begin(), p->rows.end());
  auto empty = [&](const char* which, double fraction) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", fraction);
    Fail(raw.file + ": data.split." + which + " " + text + " of " + std::to_string(raw.rows()) +
         " rows leaves the " + which + " split empty; use more rows or a larger fraction");
  };
  if (val->rows.empty()) empty("val", f.val);
  if (test->rows.empty() && f.test > 0) empty("test", f.test);
}

// How one csv feature column becomes numbers: as it is, or one-hot over the training values.
struct ColumnCode {
  std::string name;
  bool numeric = true;
  double fill = 0;                 // the training mean, for `missing: mean`
  std::vector<std::string> vocab;  // text columns: sorted training values
};

std::vector<ColumnCode> PlanColumns(const Part& train, const std::vector<std::string>& names) {
  const Raw& raw = *train.raw;
  std::vector<ColumnCode> codes;
  for (size_t c = 0; c < raw.feature_cols.size(); ++c) {
    ColumnCode code;
    code.name = names[c];
    std::set<std::string> values;
    double sum = 0;
    int64_t count = 0;
    for (int64_t i : train.rows) {
      const std::string& cell = raw.Cell(i, raw.feature_cols[c]);
      if (IsMissing(cell)) continue;
      double v;
      if (ParseNumber(cell, &v)) {
        sum += v;
        ++count;
      } else {
        code.numeric = false;
      }
      values.insert(cell);
    }
    if (values.empty())
      Fail(raw.file + ": column '" + code.name + "' has no values in the training rows");
    if (code.numeric) {
      code.fill = sum / static_cast<double>(count);
    } else {
      code.vocab.assign(values.begin(), values.end());
    }
    codes.push_back(std::move(code));
  }
  return codes;
}

void EncodeCsv(const Part& part, const std::vector<ColumnCode>& codes, bool impute, Split* out) {
  const Raw& raw = *part.raw;
  for (int64_t i : part.rows) {
    for (size_t c = 0; c < codes.size(); ++c) {
      const ColumnCode& code = codes[c];
      const std::string& cell = raw.Cell(i, raw.feature_cols[c]);
      const std::string where = raw.Where(i) + ", column '" + code.name + "'";
      if (IsMissing(cell) && !impute) {
        Fail(where + ": missing value (set data.missing: mean to impute it)");
      }
      if (code.numeric) {
        double v = code.fill;
        if (!IsMissing(cell) && !ParseNumber(cell, &v)) {
          Fail(where + ": '" + cell +
               "' is not a number (the column is numeric in the training rows)");
        }
        out->x.push_back(static_cast<float>(v));
        continue;
      }
      // One-hot; a missing value or one the training rows never had sets no position.
      const auto at = std::lower_bound(code.vocab.begin(), code.vocab.end(), cell);
      for (auto it = code.vocab.begin(); it != code.vocab.end(); ++it) {
        out->x.push_back(it == at && *at == cell ? 1.0f : 0.0f);
      }
    }
  }
}

void EncodeArrays(const Part& part, const std::vector<double>& fill, bool impute, Split* out) {
  const Raw& raw = *part.raw;
  const int64_t f = raw.sample_size();
  for (int64_t i : part.rows) {
    for (int64_t j = 0; j < f; ++j) {
      float v = raw.x[static_cast<size_t>(i * f + j)];
      if (std::isnan(v)) {
        if (!impute) {
          Fail(raw.Where(i) + ", feature " + std::to_string(j) +
               ": missing value (NaN; set data.missing: mean to impute it)");
        }
        v = static_cast<float>(fill[static_cast<size_t>(j)]);
      }
      out->x.push_back(v);
    }
  }
}

void EncodeLabels(const Part& part, const Dataset& d, const std::map<std::string, int64_t>& classes,
                  Split* out) {
  const Raw& raw = *part.raw;
  for (int64_t i : part.rows) {
    const std::string label = raw.LabelText(i);
    if (IsMissing(label)) Fail(raw.LabelWhere(i) + ": missing label");
    if (d.task == "classification") {
      const auto it = classes.find(ClassKey(label));
      if (it == classes.end()) {
        Fail(raw.LabelWhere(i) + ": label '" + label +
             "' is not a class of the training rows (classes: " + Join(d.class_names) + ")");
      }
      out->classes.push_back(it->second);
    } else {
      double v;
      if (!ParseNumber(label, &v)) {
        Fail(raw.LabelWhere(i) + ": label '" + label + "' is not a number (task: regression)");
      }
      out->targets.push_back(static_cast<float>(v));
    }
  }
}

std::map<std::string, int64_t> ClassIndex(const Part& train, Dataset* d) {
  std::set<std::string> keys;
  bool numeric = true;
  for (int64_t i : train.rows) {
    const std::string label = train.raw->LabelText(i);
    if (IsMissing(label)) Fail(train.raw->LabelWhere(i) + ": missing label");
    double v;
    numeric = numeric && ParseNumber(label, &v);
    keys.insert(ClassKey(label));
  }
  d->class_names.assign(keys.begin(), keys.end());
  if (numeric) {
    std::sort(d->class_names.begin(), d->class_names.end(), [](const auto& a, const auto& b) {
      return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
    });
  }
  std::map<std::string, int64_t> index;
  for (size_t k = 0; k < d->class_names.size(); ++k)
    index[d->class_names[k]] = static_cast<int64_t>(k);
  return index;
}

// Zero mean and unit variance per feature where `scale[j]`, with the training split's statistics.
// Records them in d->input (0 and 1 where not scaled), for an export to apply to raw samples.
void Standardize(const std::vector<bool>& scale, Dataset* d) {
  const auto f = static_cast<size_t>(d->feature_size());
  std::vector<double> mean(f, 0.0), var(f, 0.0);
  const auto n = static_cast<size_t>(d->train.size);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < f; ++j) mean[j] += d->train.x[i * f + j];
  }
  for (size_t j = 0; j < f; ++j) mean[j] /= static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < f; ++j) {
      const double e = d->train.x[i * f + j] - mean[j];
      var[j] += e * e;
    }
  }
  std::vector<double> sd(f, 1.0);
  for (size_t j = 0; j < f; ++j) {
    if (!scale[j]) {
      mean[j] = 0.0;
      continue;
    }
    const double s = std::sqrt(var[j] / static_cast<double>(n));
    if (s > 1e-12) sd[j] = s;
  }
  for (Split* s : {&d->train, &d->val, &d->test}) {
    for (size_t i = 0; i < static_cast<size_t>(s->size); ++i) {
      for (size_t j = 0; j < f; ++j) {
        float& v = s->x[i * f + j];
        if (scale[j]) v = static_cast<float>((v - mean[j]) / sd[j]);
      }
    }
  }
  d->input.mean = std::move(mean);
  d->input.std = std::move(sd);
}

// The training targets' mean and (population) deviation, in double: the same on every load.
void TargetScale(Dataset* d) {
  const std::vector<float>& y = d->train.targets;
  double mean = 0, var = 0;
  for (float v : y) mean += v;
  mean /= static_cast<double>(y.size());
  for (float v : y) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / static_cast<double>(y.size()));
  d->target_mean = mean;
  d->target_std = sd > 1e-12 ? sd : 1.0;
}

}  // namespace

int64_t Dataset::feature_size() const {
  int64_t n = 1;
  for (int64_t d : feature_shape) n *= d;
  return n;
}

int64_t Dataset::num_outputs() const {
  return task == "classification" ? static_cast<int64_t>(class_names.size()) : 1;
}

Dataset LoadDataset(const DataSpec& spec) {
  if (auto errors = CheckDataSpec(spec); !errors.empty()) Fail(errors.front());
  const std::string format = spec.ResolvedFormat();
  if (format == "idx") Fail("data: idx data is read by the worker's IDX reader, not LoadDataset");

  std::vector<std::string> features = spec.features;
  std::vector<Raw> raws;
  raws.reserve(3);
  Part train, val, test;
  Dataset d;
  d.input.format = format;
  if (!spec.file.empty()) {
    raws.push_back(ReadRaw(spec, format, spec.file, &features));
    const Part all = AllRows(raws[0]);
    d.task = spec.task.empty() ? InferTask({&all}) : spec.task;
    SplitRows(raws[0], spec.split, d.task == "classification", &train, &val, &test);
  } else {
    raws.push_back(ReadRaw(spec, format, spec.train, &features));
    raws.push_back(ReadRaw(spec, format, spec.val, &features));
    if (!spec.test.empty()) raws.push_back(ReadRaw(spec, format, spec.test, &features));
    train = AllRows(raws[0]);
    val = AllRows(raws[1]);
    if (raws.size() > 2) test = AllRows(raws[2]);
    d.task = spec.task.empty() ? InferTask({&train}) : spec.task;
  }

  std::map<std::string, int64_t> classes;
  if (d.task == "classification") classes = ClassIndex(train, &d);
  const bool impute = spec.missing == "mean";
  std::vector<bool> scale;  // which features standardisation touches
  if (format == "csv") {
    const std::vector<ColumnCode> codes = PlanColumns(train, features);
    for (const ColumnCode& c : codes) {
      d.input.columns.push_back({c.name, c.vocab});
      if (c.numeric) {
        d.feature_names.push_back(c.name);
        scale.push_back(true);
      }
      for (const auto& v : c.vocab) {
        d.feature_names.push_back(c.name + "=" + v);
        scale.push_back(false);
      }
    }
    d.feature_shape = {static_cast<int64_t>(d.feature_names.size())};
    for (auto [part, split] : {std::pair{&train, &d.train}, {&val, &d.val}, {&test, &d.test}}) {
      if (part->raw != nullptr) EncodeCsv(*part, codes, impute, split);
    }
  } else {
    d.feature_shape = raws[0].shape;
    for (const Raw& r : raws) {
      if (r.shape != d.feature_shape) {
        Fail(r.file + ": samples of shape " + ShapeText(r.shape) + ", but " + raws[0].file +
             " has " + ShapeText(d.feature_shape));
      }
    }
    const auto f = static_cast<size_t>(d.feature_size());
    std::vector<double> fill(f, 0.0), count(f, 0.0);
    for (int64_t i : train.rows) {
      for (size_t j = 0; j < f; ++j) {
        const float v = train.raw->x[static_cast<size_t>(i) * f + j];
        if (!std::isnan(v)) fill[j] += v, count[j] += 1;
      }
    }
    for (size_t j = 0; j < f; ++j) fill[j] = count[j] > 0 ? fill[j] / count[j] : 0.0;
    scale.assign(f, true);
    for (auto [part, split] : {std::pair{&train, &d.train}, {&val, &d.val}, {&test, &d.test}}) {
      if (part->raw != nullptr) EncodeArrays(*part, fill, impute, split);
    }
  }
  for (auto [part, split] : {std::pair{&train, &d.train}, {&val, &d.val}, {&test, &d.test}}) {
    if (part->raw == nullptr) continue;
    split->size = static_cast<int64_t>(part->rows.size());
    EncodeLabels(*part, d, classes, split);
  }
  if (spec.StandardizesFeatures(d.feature_shape.size() == 1)) Standardize(scale, &d);
  if (d.task == "regression" && spec.StandardizesTarget()) TargetScale(&d);
  return d;
}

}  // namespace sift::data
