// The SQLite store's tables, and the upgrade of an older sift's database to them.
#pragma once

#include <SQLiteCpp/Database.h>

#include <string>

namespace sift::coordinator {

// Throws, naming `path`, unless `db` is a sift database of this sift's schema version: a
// read-only open upgrades nothing.
void CheckSqliteSchema(SQLite::Database& db, const std::string& path);

// Creates the tables in a new database, or upgrades an older sift's, in one transaction.
// Throws, naming `path`, for a database of a newer sift.
void CreateOrUpgradeSqliteSchema(SQLite::Database& db, const std::string& path);

}  // namespace sift::coordinator
