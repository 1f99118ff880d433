// --db: which Store a database name picks.
#include <filesystem>
#include <regex>

#include "coordinator/store/store.h"

namespace sift::coordinator {

bool IsPostgresUrl(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

std::string CheckpointDirBeside(const std::string& db, int64_t study_id) {
  if (IsPostgresUrl(db)) return "";
  const std::string study_dir = "/study-" + std::to_string(study_id);
  for (const auto& dir :
       {(std::filesystem::path(db).parent_path() / "checkpoints").string(), db + ".checkpoints"}) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir + study_dir, ec)) return dir + study_dir;
  }
  return "";
}

std::string RedactDbUrl(const std::string& db) {
  if (!IsPostgresUrl(db)) return db;
  // scheme://user:password@host -> scheme://user:***@host; a password=... parameter likewise.
  static const std::regex userinfo(R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)");
  static const std::regex param(R"(([?&]password=)[^&]*)");
  return std::regex_replace(std::regex_replace(db, userinfo, "$1:***@"), param, "$1***");
}

std::unique_ptr<Store> OpenStore(const std::string& db) {
  return IsPostgresUrl(db) ? OpenPostgresStore(db) : OpenSqliteStore(db);
}

std::unique_ptr<Store> OpenStoreReadOnly(const std::string& db) {
  return IsPostgresUrl(db) ? OpenPostgresStoreReadOnly(db) : OpenSqliteStoreReadOnly(db);
}

}  // namespace sift::coordinator
