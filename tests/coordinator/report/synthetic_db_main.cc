// sift_synthetic_db DB [TRIALS] [STUDIES] [CONFIG]: writes finished synthetic studies (see
// synthetic_study.h) into a new SQLite database, for measuring `sift report --html` at scale;
// CONFIG, a study config file, gives their name, space, objectives and constraints.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tests/coordinator/report/synthetic_study.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: sift_synthetic_db DB [TRIALS=10000] [STUDIES=1] [CONFIG]\n";
    return 2;
  }
  const std::string path = argv[1];
  if (std::filesystem::exists(path)) {
    std::cerr << path << ": already exists; give a new file\n";
    return 2;
  }
  sift::testing::SyntheticStudy options;
  if (argc > 2) options.trials = std::stoll(argv[2]);
  const int studies = argc > 3 ? std::stoi(argv[3]) : 1;
  if (argc > 4) {
    std::ifstream in(argv[4]);
    if (!in) {
      std::cerr << argv[4] << ": cannot read\n";
      return 2;
    }
    std::ostringstream text;
    text << in.rdbuf();
    options.config_text = text.str();
  }
  auto store = sift::coordinator::OpenSqliteStore(path);
  for (int i = 0; i < studies; ++i) {
    options.seed = static_cast<uint64_t>(i + 1);
    options.name = "synthetic-" + std::to_string(i + 1);
    sift::testing::WriteSyntheticStudy(*store, options);
  }
  std::cout << path << ": " << studies << " studies of " << options.trials << " trials\n";
  return 0;
}
