#include "coordinator/cli/report_tags.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "coordinator/report/report_cost.h"
#include "coordinator/report/study_reports.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {

int TagReportCommand(const std::string& db, const std::string& by, const std::string& out_dir) {
  std::string key;
  if (std::string problem = ParseByTag(by, &key); !problem.empty()) {
    std::cerr << "sift report " << problem << "\n";
    return 2;
  }
  std::vector<StudySummary> studies;
  try {
    studies = LoadStudySummaries(db);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const std::string name = RedactDbUrl(db);
    std::cerr << (what.find(name) == std::string::npos ? name + ": " : "") << what << "\n";
    return 1;
  }
  const auto rows = RollUpByTag(studies, key);
  std::cout << FormatTagRollup(rows, studies);
  if (out_dir.empty()) return 0;
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  const std::string path = out_dir + "/by_tag.json";
  std::ofstream f(path, std::ios::trunc);
  f << TagRollupJson(rows);
  f.flush();
  if (ec || !f) {
    std::cerr << path << ": cannot write (no such folder, disk full or no permission?)\n";
    return 1;
  }
  std::cout << "wrote " << path << "\n";
  return 0;
}

}  // namespace sift::coordinator
