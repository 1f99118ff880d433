// --db: which Store a database name picks.
#include <regex>

#include "coordinator/store.h"

namespace sift::coordinator {

bool IsPostgresUrl(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
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
