// Small helpers for the SVG that the HTML report draws itself: scales, axes, colours, escaping.
// Numbers are written short (a few significant digits) because a 10,000-trial page holds many.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sift::coordinator::html {

// Maps [d0, d1] (data) onto [r0, r1] (pixels), linearly or by log10 (d0, d1 > 0).
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const;
};
// A scale over [lo, hi] padded so points do not sit on the frame; log when asked and possible.
Scale MakeScale(double lo, double hi, double r0, double r1, bool log);
// Log is the honest choice for dollars when they span more than `ratio` (all positive).
bool WantsLog(double lo, double hi, double ratio = 50);

// Plot area inside an SVG of w x h with margins for the axes.
struct Frame {
  double w = 460, h = 290, left = 62, right = 14, top = 24, bottom = 40;
  double x0() const { return left; }
  double x1() const { return w - right; }
  double y0() const { return h - bottom; }  // bottom edge (SVG y grows down)
  double y1() const { return top; }
};

std::string Px(double v);                  // a pixel coordinate, one decimal
std::string Num(double v);                 // a value for people: 4 significant digits
std::string Dollars(double v);             // $0.0123, $12.3
std::string Duration(double s);            // 45s, 12m, 3.4h
std::string Escape(const std::string& s);  // for HTML text and attribute values

// Opens an <svg> of the frame's size with a class naming the chart (tests count these).
std::string SvgOpen(const Frame& f, const std::string& chart);
// A whole chart that says why it has nothing to draw.
std::string EmptyChart(const Frame& f, const std::string& chart, const std::string& why);
// The data-t key of a trial's mark: "STUDY-NUMBER".
std::string TrialKey(int64_t study, int64_t number);
// Axes with ticks and labels; `fmt` formats tick values.
std::string AxisX(const Frame& f, const Scale& s, const std::string& label,
                  std::string (*fmt)(double) = Num);
std::string AxisY(const Frame& f, const Scale& s, const std::string& label,
                  std::string (*fmt)(double) = Num);
std::vector<double> Ticks(double lo, double hi, bool log, int count = 5);

std::string SeriesColor(size_t i);  // distinct colours for studies / workers
std::string RampColor(double t);    // t in [0, 1]: low (purple) to high (yellow), viridis-like
std::string StateColor(const std::string& state);  // trial states and segment endings
std::string Legend(const Frame& f, const std::vector<std::pair<std::string, std::string>>& items);

}  // namespace sift::coordinator::html
