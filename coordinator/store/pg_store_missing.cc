// Built instead of pg_store.cc when libpqxx was not found: a postgresql:// --db says so.
#include <stdexcept>

#include "coordinator/store/store.h"

namespace sift::coordinator {
namespace {

[[noreturn]] void Missing(const std::string& url) {
  throw std::runtime_error(RedactDbUrl(url) +
                           ": this sift was built without PostgreSQL support (libpqxx-dev was "
                           "not installed when it was built); install libpqxx-dev "
                           "(scripts/install-deps.sh does) and rebuild, or use a SQLite --db");
}

}  // namespace

std::unique_ptr<Store> OpenPostgresStore(const std::string& url) { Missing(url); }
std::unique_ptr<Store> OpenPostgresStoreReadOnly(const std::string& url) { Missing(url); }

}  // namespace sift::coordinator
