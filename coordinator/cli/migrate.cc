#include "coordinator/cli/migrate.h"

#include <iostream>

#include "coordinator/store/migrate.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {
namespace {

struct MigrateOptions {
  std::string from, to;
  int64_t study_id = 0;
};

MigrateOptions& MigrateOpts() {
  static MigrateOptions o;
  return o;
}

}  // namespace

void AddMigrateCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "migrate", "copy studies from one database to another (SQLite to PostgreSQL)");
  cmd->add_option("--from", MigrateOpts().from,
                  "source database: a SQLite file or postgresql:// URL")
      ->required();
  cmd->add_option("--to", MigrateOpts().to, "destination database (created or upgraded as needed)")
      ->required();
  cmd->add_option("--study", MigrateOpts().study_id, "only this study (default: all)");
}

int RunMigrateCommand(const CLI::App& app) {
  if (!app.get_subcommand("migrate")->parsed()) return -1;
  const MigrateOptions& o = MigrateOpts();
  std::unique_ptr<Store> from, to;
  try {
    from = OpenStoreReadOnly(o.from);
  } catch (const std::exception& e) {
    std::cerr << "sift migrate --from: " << e.what() << "\n";
    return 1;
  }
  try {
    to = OpenStore(o.to);
  } catch (const std::exception& e) {
    std::cerr << "sift migrate --to: " << e.what() << "\n";
    return 1;
  }
  int64_t copied = 0;
  try {
    if (std::string p = CopyStudies(*from, *to, o.study_id, &copied); !p.empty()) {
      std::cerr << "sift migrate: " << p << "\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "sift migrate: copying to " << RedactDbUrl(o.to)
              << " failed, nothing was copied: " << e.what() << "\n";
    return 1;
  }
  std::cout << "copied " << copied << (copied == 1 ? " study" : " studies") << " from "
            << RedactDbUrl(o.from) << " to " << RedactDbUrl(o.to) << "\n";
  return 0;
}

}  // namespace sift::coordinator
