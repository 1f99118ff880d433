#include "common/data/csv.h"

#include <set>
#include <stdexcept>

#include "common/text.h"

namespace sift::data {
namespace {

[[noreturn]] void Fail(const std::string& file, int64_t line, const std::string& problem) {
  throw std::runtime_error(file + ": line " + std::to_string(line) + ": " + problem);
}

std::string Trim(const std::string& s) { return common::Trim(s, " \t"); }

// Splits the records of `text`, each with the line it starts on.
class Records {
 public:
  Records(const std::string& file, const std::string& text) : file_(file), text_(text) {
    // A UTF-8 byte order mark is not part of the first header name.
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) at_ = 3;
  }

  // The next non-blank record; false at the end of the text.
  bool Next(CsvRow* row) {
    while (at_ < text_.size()) {
      row->line = line_;
      row->cells.clear();
      const bool blank = ReadRecord(row);
      if (!blank) return true;
    }
    return false;
  }

 private:
  // Reads one record into row->cells; true when the line held nothing at all.
  bool ReadRecord(CsvRow* row) {
    std::string cell;
    bool quoted = false, saw_quote = false;
    auto end_cell = [&] {
      row->cells.push_back(quoted ? cell : Trim(cell));
      cell.clear();
      quoted = false;
    };
    for (;;) {
      if (at_ >= text_.size()) {
        end_cell();
        break;
      }
      const char c = text_[at_++];
      if (c == ',') {
        end_cell();
      } else if (c == '\n' || c == '\r') {
        if (c == '\r' && at_ < text_.size() && text_[at_] == '\n') ++at_;
        ++line_;
        end_cell();
        break;
      } else if (quoted) {
        if (c != ' ' && c != '\t') Fail(file_, line_, "text after a closing quote");
      } else if (c == '"' && Trim(cell).empty()) {
        cell = ReadQuoted();
        quoted = saw_quote = true;
      } else {
        cell += c;
      }
    }
    return row->cells.size() == 1 && row->cells[0].empty() && !saw_quote;
  }

  // The rest of a quoted field, its closing quote consumed; "" inside stands for one quote.
  std::string ReadQuoted() {
    std::string cell;
    const int64_t start = line_;
    for (;;) {
      if (at_ >= text_.size()) Fail(file_, start, "unterminated quoted field");
      const char q = text_[at_++];
      if (q == '\n') ++line_;
      if (q != '"') {
        cell += q;
      } else if (at_ < text_.size() && text_[at_] == '"') {
        cell += '"';
        ++at_;
      } else {
        return cell;
      }
    }
  }

  const std::string& file_;
  const std::string& text_;
  size_t at_ = 0;
  int64_t line_ = 1;
};

}  // namespace

int CsvTable::Column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvTable ParseCsv(const std::string& file, const std::string& text) {
  CsvTable t;
  t.file = file;
  Records records(file, text);
  CsvRow head;
  if (!records.Next(&head)) throw std::runtime_error(file + ": empty, expected a header row");
  std::set<std::string> seen;
  for (size_t i = 0; i < head.cells.size(); ++i) {
    const std::string& name = head.cells[i];
    if (name.empty()) Fail(file, head.line, "header column " + std::to_string(i + 1) + " is empty");
    if (!seen.insert(name).second) Fail(file, head.line, "header names '" + name + "' twice");
  }
  t.header = head.cells;
  CsvRow row;
  while (records.Next(&row)) {
    if (row.cells.size() != t.header.size()) {
      Fail(file, row.line,
           "has " + std::to_string(row.cells.size()) + " fields, the header has " +
               std::to_string(t.header.size()));
    }
    t.rows.push_back(row);
  }
  return t;
}

}  // namespace sift::data
