#include "common/data/csv.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sift::data {
namespace csv_test {

TEST(CsvTest, ReadsHeaderRowsQuotesAndLineNumbers) {
  const CsvTable t = ParseCsv("a.csv",
                              "x, name ,y\r\n"
                              "1,\"Smith, J\",0\r\n"
                              "\n"
                              "2,\"say \"\"hi\"\"\",1\n"
                              "3,\"two\nlines\",2\n"
                              "4,,3");
  ASSERT_EQ(t.header, (std::vector<std::string>{"x", "name", "y"}));
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[0].cells[1], "Smith, J");
  EXPECT_EQ(t.rows[0].line, 2);
  EXPECT_EQ(t.rows[1].cells[1], "say \"hi\"");
  EXPECT_EQ(t.rows[1].line, 4);  // the blank line 3 is skipped but counted
  EXPECT_EQ(t.rows[2].cells[1], "two\nlines");
  EXPECT_EQ(t.rows[3].line, 7);  // the quoted newline counts as a line
  EXPECT_EQ(t.rows[3].cells[1], "");
  EXPECT_EQ(t.Column("y"), 2);
  EXPECT_EQ(t.Column("z"), -1);
}

void ExpectError(const std::string& text, const std::string& want) {
  try {
    ParseCsv("d.csv", text);
    FAIL() << "no error for: " << text;
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
}

TEST(CsvTest, RejectsRaggedRowsNamingTheLine) {
  ExpectError("a,b,c\n1,2,3\n4,5\n", "d.csv: line 3: has 2 fields, the header has 3");
  ExpectError("a,b\n1,2,3\n", "d.csv: line 2: has 3 fields, the header has 2");
}

TEST(CsvTest, RejectsBadHeadersAndQuotes) {
  ExpectError("", "d.csv: empty, expected a header row");
  ExpectError("a,,c\n", "d.csv: line 1: header column 2 is empty");
  ExpectError("a,b,a\n", "d.csv: line 1: header names 'a' twice");
  ExpectError("a,b\n1,\"open\n", "d.csv: line 2: unterminated quoted field");
  ExpectError("a,b\n1,\"x\"y\n", "d.csv: line 2: text after a closing quote");
}

}  // namespace csv_test
}  // namespace sift::data
