// The torch-free parts of command trials: the stdout report-line parser and the archive that
// carries SIFT_CHECKPOINT_DIR as one checkpoint file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "worker/dir_archive.h"
#include "worker/report_line.h"

namespace sift::worker {
namespace command_parts_test {

namespace fs = std::filesystem;

TEST(ReportLine, ReadsAnEpochAndItsMetrics) {
  std::string error;
  const auto r = ParseReportLine(
      R"(  {"sift": {"epoch": 3, "val_accuracy": 0.91, "train_loss": 2e-1, "steps": 40}})", &error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->epoch, 3);
  EXPECT_EQ(r->metrics.size(), 3u);
  EXPECT_DOUBLE_EQ(r->metrics.at("val_accuracy"), 0.91);
  EXPECT_DOUBLE_EQ(r->metrics.at("train_loss"), 0.2);
  EXPECT_DOUBLE_EQ(r->metrics.at("steps"), 40);
  ASSERT_TRUE(ParseReportLine(R"({"sift": {"epoch": 2.0}})", &error)) << error;
}

TEST(ReportLine, OtherLinesAreTheProgramsOwnOutput) {
  for (const char* line : {"", "epoch 3: loss 0.2", "{\"loss\": 0.2}", "[\"sift\"]",
                           "{\"step\": 1, \"note\": \"not sift\"}", "{\"other\": {\"sift\": 1}}"}) {
    std::string error = "stale";
    EXPECT_FALSE(ParseReportLine(line, &error)) << line;
    EXPECT_EQ(error, "") << line;
  }
}

TEST(ReportLine, AMalformedReportSaysWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"sift": {"epoch": 3, "val_accuracy": 0.9)", "not valid JSON"},
      {R"({"sift": 3})", "\"sift\" must be an object"},
      {R"({"sift": {"val_accuracy": 0.9}})", "no \"epoch\""},
      {R"({"sift": {"epoch": 0}})", "\"epoch\" must be a whole number >= 1, got 0"},
      {R"({"sift": {"epoch": 1.5}})", "\"epoch\" must be a whole number >= 1, got 1.5"},
      {R"({"sift": {"epoch": "2"}})", "\"epoch\" must be a whole number"},
      {R"({"sift": {"epoch": 2, "acc": "high"}})", "metric \"acc\" must be a number, got \"high\""},
      {R"({"sift": {"epoch": 2, "acc": true}})", "metric \"acc\" must be a number, got true"},
      {R"({"sift": {"epoch": 2, "acc": null}})", "metric \"acc\" must be a number, got null"},
  };
  for (const auto& [line, expected] : cases) {
    std::string error;
    EXPECT_FALSE(ParseReportLine(line, &error)) << line;
    EXPECT_NE(error.find(expected), std::string::npos) << line << " gave: " << error;
  }
}

TEST(DirArchive, AFolderRoundTripsAndReplacesWhatWasThere) {
  const fs::path root = fs::temp_directory_path() / "sift-dir-archive-test";
  fs::remove_all(root);
  fs::create_directories(root / "a" / "nested");
  std::ofstream(root / "a" / "state.pt", std::ios::binary) << std::string("\0\1binary\xff", 9);
  std::ofstream(root / "a" / "nested" / "epoch.txt") << "3\n";
  std::ofstream(root / "a" / "empty");
  const std::string archive = PackDirectory((root / "a").string());
  EXPECT_EQ(archive, PackDirectory((root / "a").string()));  // the same folder, the same bytes

  fs::create_directories(root / "b");
  std::ofstream(root / "b" / "stale") << "from an older lease";
  UnpackDirectory(archive, (root / "b").string());
  auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  EXPECT_EQ(read(root / "b" / "state.pt"), std::string("\0\1binary\xff", 9));
  EXPECT_EQ(read(root / "b" / "nested" / "epoch.txt"), "3\n");
  EXPECT_TRUE(fs::exists(root / "b" / "empty"));
  EXPECT_FALSE(fs::exists(root / "b" / "stale"));
  fs::remove_all(root);
}

TEST(DirArchive, ABadArchiveIsRefusedNotWrittenOutside) {
  const fs::path dir = fs::temp_directory_path() / "sift-dir-archive-bad";
  EXPECT_THROW(UnpackDirectory("PK\3\4 a zip", dir.string()), std::runtime_error);
  std::string escape = "SIFTDIR1";
  const std::string name = "../evil";
  escape += std::string{static_cast<char>(name.size()), 0, 0, 0} + name;
  escape += std::string(8, '\0');
  EXPECT_THROW(UnpackDirectory(escape, dir.string()), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir.parent_path() / "evil"));
  EXPECT_THROW(UnpackDirectory("SIFTDIR1\5\0\0\0ab", dir.string()), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace command_parts_test
}  // namespace sift::worker
