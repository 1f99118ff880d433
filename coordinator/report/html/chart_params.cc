// Parameters: parallel coordinates coloured by the objective, and each parameter's importance.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "coordinator/report/html/chart_data.h"
#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/svg.h"

namespace sift::coordinator::html {
namespace {

double Number(const search::ParamValue& v) {
  return std::holds_alternative<int64_t>(v) ? static_cast<double>(std::get<int64_t>(v))
                                            : std::get<double>(v);
}

// One vertical axis: a number (linear or log) or a categorical's values spread evenly.
struct ParamAxis {
  std::string name;
  bool categorical = false;
  bool log = false;
  double lo = 0, hi = 1;            // a number's range (the search space's where known)
  std::vector<std::string> values;  // categorical: the choices in the config's order
  Scale scale;
  double Position(const search::ParamValue& v) const {
    if (categorical) {
      const auto s = search::ToString(v);
      const auto it = std::find(values.begin(), values.end(), s);
      const double i = static_cast<double>(it - values.begin());
      return scale(values.size() < 2 ? 0.5 : i / static_cast<double>(values.size() - 1));
    }
    return scale(Number(v));
  }
};

constexpr double kLabelCharPx = 6.2;  // an average character of the 11px axis names

std::string AxisName(const ParamAxis& a) {
  return a.name + (a.log && !a.categorical ? " (log)" : "");
}

}  // namespace

std::string ParallelChart(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  Frame f;
  f.w = 560;
  f.left = 40, f.right = 40, f.bottom = 30, f.top = 40;
  std::set<std::string> names;
  double ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  for (const auto& t : r.trials) {
    if (!Ranked(t)) continue;
    for (const auto& [k, v] : t.record.params) names.insert(k);
    ylo = std::min(ylo, *t.objective), yhi = std::max(yhi, *t.objective);
  }
  if (names.empty()) {
    return SvgOpen(f, "parallel empty") + R"(<text x="280" y="140" text-anchor="middle">)"
                                          "no scored trial with parameters</text></svg>";
  }
  // Axes in the search space's order, over its ranges and scales; a parameter the config does not
  // name (an older study's) gets an axis over the values seen.
  std::vector<std::string> order;
  for (const auto& spec : s.space.params()) {
    if (names.count(spec.name)) order.push_back(spec.name);
  }
  for (const auto& name : names) {
    if (!s.space.Find(name)) order.push_back(name);
  }
  std::vector<ParamAxis> axes;
  for (const auto& name : order) {
    ParamAxis a;
    a.name = name;
    if (const search::ParamSpec* spec = s.space.Find(name)) {
      a.categorical = !spec->numeric();
      for (const auto& c : spec->choices) a.values.push_back(search::ToString(c));
      a.lo = spec->low, a.hi = spec->high;
      a.log = spec->scale == search::Scale::kLog;
    } else {
      a.lo = std::numeric_limits<double>::infinity(), a.hi = -a.lo;
      std::set<std::string> values;
      for (const auto& t : r.trials) {
        auto it = t.record.params.find(name);
        if (it == t.record.params.end() || !Ranked(t)) continue;
        if (std::holds_alternative<std::string>(it->second)) {
          a.categorical = true;
        } else {
          const double v = Number(it->second);
          a.lo = std::min(a.lo, v), a.hi = std::max(a.hi, v);
        }
        values.insert(search::ToString(it->second));
      }
      if (a.categorical) a.values.assign(values.begin(), values.end());
      a.log = WantsLog(a.lo, a.hi, 100);
    }
    a.scale = a.categorical ? MakeScale(0, 1, f.y0(), f.y1(), false)
                            : MakeScale(a.lo, a.hi, f.y0(), f.y1(), a.log);
    axes.push_back(a);
  }
  const Scale objective = MakeScale(ylo, yhi, f.y0(), f.y1(), false);
  const double gap = (f.x1() - f.x0()) / static_cast<double>(axes.size());
  auto axis_x = [&](size_t i) { return f.x0() + gap * static_cast<double>(i); };
  std::string out = SvgOpen(f, "parallel");
  std::vector<size_t> drawn = TrialsToDraw(r, kMaxParallelLines);
  // The best lines last, so they are drawn on top.
  std::sort(drawn.begin(), drawn.end(), [&](size_t a, size_t b) {
    const auto& ta = r.trials[a];
    const auto& tb = r.trials[b];
    if (!Ranked(ta) || !Ranked(tb)) return Ranked(tb) && !Ranked(ta);
    return r.study.maximize ? *ta.objective < *tb.objective : *ta.objective > *tb.objective;
  });
  for (size_t i : drawn) {
    const auto& t = r.trials[i];
    if (!Ranked(t)) continue;
    std::string pts;
    for (size_t k = 0; k < axes.size(); ++k) {
      auto it = t.record.params.find(axes[k].name);
      if (it == t.record.params.end()) continue;  // a conditional parameter it does not have
      pts += Px(axis_x(k)) + "," + Px(axes[k].Position(it->second)) + " ";
    }
    pts += Px(f.x1()) + "," + Px(objective(*t.objective));
    double shade = yhi > ylo ? (*t.objective - ylo) / (yhi - ylo) : 1;
    if (!r.study.maximize) shade = 1 - shade;
    out += fmt::format(R"(<polyline class="pline" data-t="{}-{}" points="{}" fill="none" )"
                       R"(stroke="{}" stroke-opacity="0.6"/>)",
                       r.study.record.id, t.record.number, pts, RampColor(shade));
  }
  // Names wider than the gap between axes would overlap: they alternate between two rows
  // (the frame's top has room for both), and one still wider than two gaps is cut with an
  // ellipsis in the middle, the whole name in its tooltip.
  size_t longest = r.study.metric.size();
  for (const auto& a : axes) longest = std::max(longest, AxisName(a).size());
  const bool stagger = static_cast<double>(longest) * kLabelCharPx > gap;
  const size_t fits =
      std::max<size_t>(4, static_cast<size_t>((stagger ? 2 * gap : gap) / kLabelCharPx) - 1);
  auto draw_axis = [&](double ax, int row, const std::string& name, const std::string& top,
                       const std::string& bottom) {
    // Cut in the middle: names often share a prefix and differ at the end (layer_1, layer_2).
    const size_t head = (fits - 1) / 2, tail = fits - 1 - head;
    const std::string shown =
        name.size() <= fits ? name
                            : name.substr(0, head) + "\u2026" + name.substr(name.size() - tail);
    out += fmt::format(R"(<g class="axis"><line x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>)"
                       R"(<text x="{0}" y="{3}" text-anchor="middle" class="label">{4})"
                       R"(<title>{10}</title></text>)"
                       R"(<text x="{5}" y="{6}">{7}</text><text x="{5}" y="{8}">{9}</text></g>)",
                       Px(ax), Px(f.y0()), Px(f.y1()), Px(f.y1() - 10 - 12 * row), Escape(shown),
                       Px(ax + 3), Px(f.y1() + 8), Escape(top), Px(f.y0()), Escape(bottom),
                       Escape(name));
  };
  for (size_t k = 0; k < axes.size(); ++k) {
    const auto& a = axes[k];
    const std::string top = a.categorical ? (a.values.empty() ? "" : a.values.back()) : Num(a.hi);
    const std::string bottom =
        a.categorical ? (a.values.empty() ? "" : a.values.front()) : Num(a.lo);
    draw_axis(axis_x(k), stagger ? static_cast<int>(k % 2) : 0, AxisName(a), top, bottom);
    if (a.categorical) {
      for (size_t c = 1; c + 1 < a.values.size(); ++c) {
        const double cy =
            a.scale(static_cast<double>(c) / static_cast<double>(a.values.size() - 1));
        out += fmt::format(R"(<text x="{}" y="{}">{}</text>)", Px(axis_x(k) + 3), Px(cy + 3),
                           Escape(a.values[c]));
      }
    }
  }
  draw_axis(f.x1(), stagger ? static_cast<int>(axes.size() % 2) : 0, r.study.metric, Num(yhi),
            Num(ylo));
  out += "</svg>";
  if (drawn.size() < r.trials.size()) {
    out += fmt::format(R"(<p class="note">{} of {} trials drawn (the frontier, the best quarter )"
                       R"(and an even sample).</p>)",
                       drawn.size(), r.trials.size());
  }
  return out;
}

std::string ImportanceChart(const HtmlStudy& s) {
  const int64_t epoch = ImportanceEpoch(s.report);
  const auto importance = ParamImportance(s.report, epoch);
  Frame f;
  f.left = 110;
  f.h = f.top + 8 + 24.0 * static_cast<double>(std::max<size_t>(importance.size(), 1)) + f.bottom;
  std::string out = SvgOpen(f, "importance");
  const Scale x = MakeScale(0, 1, f.x0(), f.x1(), false);
  double yy = f.y1() + 4;
  for (const auto& imp : importance) {
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)"
                       R"(<rect class="bar" x="{}" y="{}" width="{}" height="16" fill="#1f77b4">)"
                       R"(<title>{} bins over {} trials</title></rect>)"
                       R"(<text x="{}" y="{}">{:.0f}%</text>)",
                       Px(f.x0() - 6), Px(yy + 12), Escape(imp.param), Px(x(0)), Px(yy),
                       Px(std::max(1.0, x(imp.share) - x(0))), imp.bins, imp.trials,
                       Px(x(imp.share) + 4), Px(yy + 12), imp.share * 100);
    yy += 24;
  }
  out += fmt::format(R"(<text x="{}" y="11">{}</text>)", Px(f.x0()),
                     epoch > 0 ? fmt::format("compared at epoch {}", epoch)
                               : std::string("compared at each trial's last value"));
  out += AxisX(f, x, "share of the objective's variance explained alone (epsilon-squared)",
               [](double v) { return fmt::format("{:.0f}%", v * 100); });
  return out + "</svg>";
}

}  // namespace sift::coordinator::html
