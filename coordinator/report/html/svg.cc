#include "coordinator/report/html/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sift::coordinator::html {

double Scale::operator()(double v) const {
  double a = d0, b = d1;
  if (log) {
    v = std::log10(std::max(v, d0 * 1e-3));
    a = std::log10(d0);
    b = std::log10(d1);
  }
  if (b == a) return (r0 + r1) / 2;
  return r0 + (v - a) / (b - a) * (r1 - r0);
}

bool WantsLog(double lo, double hi, double ratio) { return lo > 0 && hi / lo > ratio; }

Scale MakeScale(double lo, double hi, double r0, double r1, bool log) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (log && lo > 0 && hi > lo) {
    const double pad = std::pow(hi / lo, 0.04);
    return {lo / pad, hi * pad, r0, r1, true};
  }
  if (hi == lo) {
    const double d = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= d, hi += d;
  }
  const double pad = (hi - lo) * 0.04;
  return {lo - pad, hi + pad, r0, r1, false};
}

std::string Px(double v) {
  if (!std::isfinite(v)) v = 0;
  return fmt::format("{:.1f}", v);
}

std::string Num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.4g}", v);
}

std::string Dollars(double v) {
  if (std::abs(v) >= 100) return fmt::format("${:.0f}", v);
  if (std::abs(v) >= 1) return fmt::format("${:.2f}", v);
  return fmt::format("${:.3g}", v);
}

std::string Duration(double s) {
  if (s < 120) return fmt::format("{:.0f}s", s);
  if (s < 7200) return fmt::format("{:.0f}m", s / 60);
  return fmt::format("{:.1f}h", s / 3600);
}

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string SvgOpen(const Frame& f, const std::string& chart) {
  return fmt::format(R"(<svg class="chart {}" width="{}" height="{}" viewBox="0 0 {} {}">)", chart,
                     f.w, f.h, f.w, f.h);
}

std::string EmptyChart(const Frame& f, const std::string& chart, const std::string& why) {
  return SvgOpen(f, chart + " empty") +
         fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text></svg>)", Px(f.w / 2),
                     Px(f.h / 2), Escape(why));
}

std::string TrialKey(int64_t study, int64_t number) { return fmt::format("{}-{}", study, number); }

std::vector<double> Ticks(double lo, double hi, bool log, int count) {
  std::vector<double> out;
  if (!(hi > lo)) return {lo};
  if (log && lo > 0) {
    for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p) {
      const double v = std::pow(10.0, p);
      if (v >= lo && v <= hi) out.push_back(v);
    }
    if (out.size() >= 2) return out;
    out.clear();
  }
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (mag * m >= raw) {
      step = mag * m;
      break;
    }
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return out;
}

std::string AxisX(const Frame& f, const Scale& s, const std::string& label,
                  std::string (*fmt)(double)) {
  std::string out = fmt::format(R"(<g class="axis"><line x1="{}" y1="{}" x2="{}" y2="{}"/>)",
                                Px(f.x0()), Px(f.y0()), Px(f.x1()), Px(f.y0()));
  for (double v : Ticks(std::min(s.d0, s.d1), std::max(s.d0, s.d1), s.log)) {
    const double x = s(v);
    out += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}"/><text x="{0}" y="{3}" )"
                       R"(text-anchor="middle">{4}</text>)",
                       Px(x), Px(f.y0()), Px(f.y0() + 4), Px(f.y0() + 15), Escape(fmt(v)));
  }
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" class="label">{}</text></g>)",
                     Px((f.x0() + f.x1()) / 2), Px(f.h - 6), Escape(label));
  return out;
}

std::string AxisY(const Frame& f, const Scale& s, const std::string& label,
                  std::string (*fmt)(double)) {
  std::string out = fmt::format(R"(<g class="axis"><line x1="{}" y1="{}" x2="{}" y2="{}"/>)",
                                Px(f.x0()), Px(f.y0()), Px(f.x0()), Px(f.y1()));
  for (double v : Ticks(std::min(s.d0, s.d1), std::max(s.d0, s.d1), s.log)) {
    const double y = s(v);
    out +=
        fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}"/><text x="{3}" y="{4}" )"
                    R"(text-anchor="end">{5}</text>)",
                    Px(f.x0() - 4), Px(y), Px(f.x0()), Px(f.x0() - 6), Px(y + 3), Escape(fmt(v)));
  }
  out += fmt::format(R"x(<text transform="translate(12,{}) rotate(-90)" text-anchor="middle" )x"
                     R"(class="label">{}</text></g>)",
                     Px((f.y0() + f.y1()) / 2), Escape(label));
  return out;
}

std::string SeriesColor(size_t i) {
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
}

std::string RampColor(double t) {
  // Five stops of viridis, linearly interpolated: readable on white and for most colour vision.
  static const int kStops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double u = t - i;
  int c[3];
  for (int k = 0; k < 3; ++k) {
    c[k] = static_cast<int>(std::lround(kStops[i][k] + u * (kStops[i + 1][k] - kStops[i][k])));
  }
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

std::string StateColor(const std::string& state) {
  if (state == "COMPLETED" || state == "completed") return "#2ca02c";
  if (state == "STOPPED" || state == "stopped" || state == "stop") return "#ff7f0e";
  if (state == "PAUSED" || state == "paused" || state == "pause") return "#9467bd";
  if (state == "promote") return "#17becf";
  if (state == "DIVERGED") return "#8c564b";
  if (state == "FAILED" || state == "failed") return "#d62728";
  if (state == "preempted" || state == "preempt") return "#d62728";
  if (state == "expired" || state == "lost") return "#e377c2";
  if (state == "resume") return "#1f77b4";
  if (state == "RUNNING" || state == "open") return "#1f77b4";
  return "#7f7f7f";
}

std::string Legend(const Frame& f, const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = R"(<g class="legend">)";
  double x = f.x0() + 6;
  for (const auto& [label, color] : items) {
    out += fmt::format(R"(<rect x="{}" y="{}" width="9" height="9" fill="{}"/><text x="{}" )"
                       R"(y="{}">{}</text>)",
                       Px(x), Px(3), color, Px(x + 12), Px(11), Escape(label));
    x += 20 + 6.2 * static_cast<double>(label.size());
  }
  return out + "</g>";
}

}  // namespace sift::coordinator::html
