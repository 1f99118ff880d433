// The PostgreSQL store's schema, apart from pg_store.cc as SQLite's is from sqlite_store.cc.
#pragma once

namespace sift::coordinator {

// Idempotent DDL (CREATE ... IF NOT EXISTS, ADD COLUMN IF NOT EXISTS): run under the schema
// advisory lock when a coordinator opens the database for writing.
extern const char* const kPgSchema;

}  // namespace sift::coordinator
