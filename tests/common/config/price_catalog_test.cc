#include "common/config/price_catalog.h"

#include <gtest/gtest.h>

#include <string>

namespace sift::common {
namespace price_catalog_test {

constexpr const char* kCatalog = R"({
  "as_of": "2026-11-01",
  "currency": "USD",
  "source": "test",
  "instances": {
    "c6i.large": {"on_demand": 0.085, "spot": 0.034, "note": "us-east-1"},
    "local-cpu": {"on_demand": 0.0416, "spot": 0}
  }
})";

// A catalog whose only instance is `entry`.
std::string WithEntry(const std::string& entry) {
  return R"({"as_of": "2026-11-01", "instances": {"g5.xlarge": )" + entry + "}}";
}

TEST(PriceCatalog, ParsesAndLooksUpByMarket) {
  common::PriceCatalog catalog;
  ASSERT_EQ(catalog.Parse(kCatalog), "");
  EXPECT_EQ(catalog.as_of(), "2026-11-01");
  EXPECT_EQ(catalog.Types(), (std::vector<std::string>{"c6i.large", "local-cpu"}));
  double price = -1;
  EXPECT_EQ(catalog.Lookup("c6i.large", "on-demand", &price), "");
  EXPECT_DOUBLE_EQ(price, 0.085);
  EXPECT_EQ(catalog.Lookup("c6i.large", "spot", &price), "");
  EXPECT_DOUBLE_EQ(price, 0.034);
  EXPECT_EQ(catalog.Lookup("local-cpu", "spot", &price), "");
  EXPECT_DOUBLE_EQ(price, 0.0);
}

TEST(PriceCatalog, LookupNamesWhatIsMissing) {
  common::PriceCatalog catalog;
  ASSERT_EQ(catalog.Parse(kCatalog), "");
  double price = 7;
  EXPECT_EQ(catalog.Lookup("p5.48xlarge", "spot", &price),
            "instance type 'p5.48xlarge' is not in the price catalog (as of 2026-11-01; known: "
            "c6i.large, local-cpu); add it or set worker.price_per_hour");
  EXPECT_EQ(catalog.Lookup("c6i.large", "reserved", &price),
            "market 'reserved' must be on-demand or spot");
  EXPECT_EQ(price, 7);
}

TEST(PriceCatalog, RejectsBadEntriesNamingThem) {
  common::PriceCatalog catalog;
  EXPECT_EQ(catalog.Parse(WithEntry(R"({"on_demand": 1.0, "spot": -0.3})")),
            "instances.g5.xlarge.spot: must be a number >= 0, got -0.3");
  EXPECT_EQ(catalog.Parse(WithEntry(R"({"on_demand": "1.0", "spot": 0.3})")),
            "instances.g5.xlarge.on_demand: must be a number >= 0, got \"1.0\"");
  EXPECT_EQ(catalog.Parse(WithEntry(R"({"on_demand": 1.0})")),
            "instances.g5.xlarge.spot: missing (dollars per hour)");
  EXPECT_EQ(catalog.Parse(WithEntry(R"({"on_demand": 1.0, "spot": 0.3, "ondemand": 1})")),
            "instances.g5.xlarge.ondemand: unknown key (expected on_demand, spot, note)");
  EXPECT_EQ(catalog.Parse(WithEntry("1.0")),
            "instances.g5.xlarge: must be an object {\"on_demand\": .., \"spot\": ..}");
  EXPECT_EQ(catalog.Parse(R"({"as_of": "2026-11-01", "instances": {"": {"on_demand": 1,
            "spot": 1}}})"),
            "instances: an instance type has an empty name");
}

TEST(PriceCatalog, RejectsBadDocumentsAndReportsEveryProblem) {
  common::PriceCatalog catalog;
  EXPECT_EQ(catalog.Parse(R"({"instances": {}})"),
            "as_of: must be the date the prices were read, e.g. \"2026-11-01\"; "
            "instances: must be a non-empty object of instance type -> prices");
  EXPECT_EQ(catalog.Parse(R"({"as_of": "2026-11-01", "currency": "EUR", "instances": {"a":
            {"on_demand": 1, "spot": 1}}})"),
            "currency: must be \"USD\" (the ledger counts dollars), got \"EUR\"");
  EXPECT_EQ(catalog.Parse("[]"), "the catalog must be a JSON object");
  const std::string syntax = catalog.Parse("{\"as_of\": \n");
  EXPECT_EQ(syntax.rfind("syntax error: ", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("line 2"), std::string::npos) << syntax;
  // Found by fuzz/price_catalog_fuzz: a number too large for a double threw out of Parse.
  const std::string huge = catalog.Parse(R"({"as_of": 1e999})");
  EXPECT_EQ(huge.rfind("syntax error: ", 0), 0u) << huge;
  EXPECT_NE(huge.find("1e999"), std::string::npos) << huge;
}

TEST(PriceCatalog, AFailedParseKeepsThePreviousCatalog) {
  common::PriceCatalog catalog;
  ASSERT_EQ(catalog.Parse(kCatalog), "");
  EXPECT_NE(catalog.Parse(WithEntry(R"({"on_demand": -1, "spot": 0})")), "");
  EXPECT_EQ(catalog.Types().size(), 2u);
  EXPECT_EQ(catalog.as_of(), "2026-11-01");
}

TEST(PriceCatalog, TheBuiltInCatalogIsTheDatedExampleFile) {
  const common::PriceCatalog built_in = common::PriceCatalog::BuiltIn();
  EXPECT_EQ(built_in.as_of(), "2026-11-01");
  double price = 0;
  EXPECT_EQ(built_in.Lookup("local-cpu", "spot", &price), "");
  EXPECT_GT(price, 0);
  EXPECT_EQ(built_in.Lookup("g5.xlarge", "on-demand", &price), "");
  // The lookup error lists what is known, so a typo is easy to fix.
  const std::string problem = built_in.Lookup("g5.xlarg", "spot", &price);
  EXPECT_NE(problem.find("as of 2026-11-01"), std::string::npos) << problem;
  EXPECT_NE(problem.find("g5.xlarge"), std::string::npos) << problem;
}

TEST(PriceCatalog, AnEmptyCatalogSaysSoInsteadOfListingNothing) {
  double price = 0;
  EXPECT_EQ(common::PriceCatalog().Lookup("local-cpu", "spot", &price),
            "instance type 'local-cpu' cannot be priced: the price catalog is empty");
}

TEST(PriceCatalog, LoadNamesTheFile) {
  common::PriceCatalog catalog;
  EXPECT_EQ(catalog.Load("/nonexistent/prices.json"),
            "/nonexistent/prices.json: cannot read (No such file or directory)");
}

}  // namespace price_catalog_test
}  // namespace sift::common
