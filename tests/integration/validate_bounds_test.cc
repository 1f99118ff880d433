// `sift validate` of any input finishes in under a second and 100 MB (issue 11, section 3): the
// real binary, measured by the kernel (CPU time and peak RSS of waited-for children), on config
// bombs built to be slow or huge, each at or past the limits that bound it.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tests/integration/process.h"

namespace sift::testing {
namespace validate_bounds_test {

struct Measured {
  int code = -1;
  double cpu_seconds = 0;  // user + system: what the input costs, whatever else loads the machine
  long max_rss_mb = 0;
  std::string output;
};

double CpuSeconds(const rusage& ru) {
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec / 1e6;
}

// The kernel's count for the children this process has waited for: CPU time is their sum (so
// the difference is this child's), peak RSS their largest (so a child past the bound shows,
// here and in every later measure). Until it execs, a spawned child shares this process's
// memory, whose peak counts too: the test keeps its own small.
Measured RunMeasured(const std::vector<std::string>& argv, const std::string& log) {
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  Process p(argv, log);
  Measured m;
  m.code = p.Wait(60);  // the old validator ran for minutes on these
  getrusage(RUSAGE_CHILDREN, &after);
  m.cpu_seconds = CpuSeconds(after) - CpuSeconds(before);
  m.max_rss_mb = after.ru_maxrss / 1024;
  m.output = p.Log();
  return m;
}

std::string Repeat(const std::string& item, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + item;
  return out;
}

const std::string kLr = "  lr: {type: float, low: 0.001, high: 0.1}\n";

// name -> config text: each is refused (exit 2) with an error naming what is wrong.
std::vector<std::pair<std::string, std::string>> Bombs() {
  std::vector<std::pair<std::string, std::string>> out;
  // The issue's: 8,000 copies of one choice (20 s and 5.9 GB, then std::bad_alloc, before).
  out.emplace_back("8000 copies", "name: b\nsearch_space:\n  opt: {type: categorical, choices: [" +
                                      Repeat("adam", 8000) + "]}\n");
  // Just under the choice limit, all duplicates: the duplicate check itself must be linear.
  out.emplace_back("999 copies", "name: b\nsearch_space:\n  opt: {type: categorical, choices: [" +
                                     Repeat("adam", 999) + "]}\n");
  // A chain of 64 conditions (each parameter depends on the one before).
  {
    std::string space = "  c0: {type: categorical, choices: [a, b]}\n";
    for (int p = 1; p < 64; ++p) {
      space += "  c" + std::to_string(p) + ": {type: categorical, choices: [a, b], condition: {c" +
               std::to_string(p - 1) + ": a}}\n";
    }
    out.emplace_back("condition chain", "name: b\nsearch_space:\n" + space);
  }
  // Aliases of aliases: 10^6 nodes once expanded.
  {
    std::string text =
        "name: b\nsearch_space:\n" + kLr + "searcher:\n  type: random\n  m0: &m0 {a: 1}\n";
    for (int level = 1; level <= 6; ++level) {
      std::string body;
      for (int k = 0; k < 10; ++k) {
        body += (k ? ", " : "") + std::string("k") + std::to_string(k) + ": *m" +
                std::to_string(level - 1);
      }
      text += "  m" + std::to_string(level) + ": &m" + std::to_string(level) + " {" + body + "}\n";
    }
    out.emplace_back("alias bomb", text);
  }
  // Deep nesting, as deep as the byte limit allows.
  out.emplace_back("nesting", "name: b\nsearch_space:\n" + kLr + "x: " + std::string(60000, '[') +
                                  std::string(60000, ']') + "\n");
  // Thousands of errors.
  {
    std::string text = "name: b\nsearch_space:\n" + kLr;
    for (int i = 0; i < 8000; ++i) text += "k" + std::to_string(i) + ": 1\n";
    out.emplace_back("8000 unknown keys", text);
  }
  return out;
}

TEST(ValidateBounds, EveryBombIsRefusedInUnderASecondOfCpuAnd100MB) {
  const std::string dir = TempDir("validate-bounds");
  // What validating a small valid config costs: the binary's own start-up, for the record.
  std::ofstream(dir + "/ok.yaml") << "name: ok\nsearch_space:\n" << kLr;
  const Measured base = RunMeasured(
      {BinDir() + "/sift", "validate", dir + "/ok.yaml", "--no-data-check"}, dir + "/ok.log");
  ASSERT_EQ(base.code, 0) << base.output;
  std::vector<std::pair<std::string, std::string>> files;
  int i = 0;
  for (const auto& [name, text] : Bombs()) {
    files.emplace_back(name, dir + "/bomb-" + std::to_string(i++) + ".yaml");
    std::ofstream(files.back().second) << text;
  }
  // A big file, refused after reading no more than the limit. Written in pieces: a child's peak
  // RSS counts this process's own until the child execs, so this process stays small.
  files.emplace_back("64 MB", dir + "/big.yaml");
  {
    std::ofstream big(files.back().second);
    big << "name: b\n#";
    const std::string mb(1 << 20, 'x');
    for (int k = 0; k < 64; ++k) big << mb;
  }
  for (const auto& [name, path] : files) {
    SCOPED_TRACE(name);
    const Measured m =
        RunMeasured({BinDir() + "/sift", "validate", path, "--no-data-check"}, path + ".log");
    EXPECT_EQ(m.code, 2) << m.output.substr(0, 2000);
    EXPECT_LT(m.cpu_seconds, 1.0);
    EXPECT_LT(m.max_rss_mb, 100);
    // Errors a person can read: a bounded number of lines, none of them a bare exception.
    EXPECT_LT(std::count(m.output.begin(), m.output.end(), '\n'), 110) << m.output.substr(0, 2000);
    EXPECT_EQ(m.output.find("exception"), std::string::npos) << m.output.substr(0, 2000);
    EXPECT_EQ(m.output.find("bad file"), std::string::npos) << m.output.substr(0, 2000);
    std::cerr << name << ": exit " << m.code << ", " << m.cpu_seconds << " s CPU, " << m.max_rss_mb
              << " MB (a valid config: " << base.cpu_seconds << " s, " << base.max_rss_mb
              << " MB); first line: " << m.output.substr(0, m.output.find('\n')).substr(0, 160)
              << "\n";
  }
}

// A grid searcher once made every point (a map per point) before it checked kMaxGridSize: 16
// binary parameters (65,536 points, a 1 KB config) took 186 MB to validate and 17 took 318 MB to
// be refused; a coordinator's CreateStudy builds the same searcher.
TEST(ValidateBounds, AGridOfSixteenBinaryParametersStaysUnder100MB) {
  const std::string dir = TempDir("validate-grid");
  for (int n : {16, 17}) {
    std::string space;
    for (int p = 0; p < n; ++p) {
      space += "  parameter_" + std::to_string(p) + ": {type: categorical, choices: [a" +
               std::to_string(p) + ", b" + std::to_string(p) + "]}\n";
    }
    const std::string path = dir + "/grid-" + std::to_string(n) + ".yaml";
    std::ofstream(path) << "name: g\ntrial: {command: [\"true\"]}\n"
                           "objective: {metric: score, direction: maximize}\n"
                           "searcher: {type: grid}\nsearch_space:\n"
                        << space;
    const Measured m =
        RunMeasured({BinDir() + "/sift", "validate", path, "--no-data-check"}, path + ".log");
    EXPECT_EQ(m.code, n == 16 ? 0 : 2) << m.output;
    EXPECT_LT(m.cpu_seconds, 1.0) << n;
    EXPECT_LT(m.max_rss_mb, 100) << n;
  }
}

}  // namespace validate_bounds_test
}  // namespace sift::testing
