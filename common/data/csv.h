// CSV text (RFC 4180: commas, double-quoted fields with "" escapes, CRLF or LF) with a header row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sift::data {

struct CsvRow {
  int64_t line = 0;  // 1-based line in the file where the row starts (the header is line 1)
  std::vector<std::string> cells;
};

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  // Index of `name` in the header; -1 when absent.
  int Column(const std::string& name) const;
};

// Parses `text`; `file` names it in errors. Blank lines are skipped. Throws std::runtime_error
// for an empty file, a duplicate or empty header name, an unterminated quote, or a ragged row
// ("<file>: line 7 has 3 fields, the header has 4").
CsvTable ParseCsv(const std::string& file, const std::string& text);

}  // namespace sift::data
