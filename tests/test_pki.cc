#include "tests/test_pki.h"

#include <cstdio>
#include <fstream>

namespace sift::testing {
namespace {

// Runs a shell command; "" or the command with its output.
std::string Sh(const std::string& cmd) {
  std::string output;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return cmd + ": cannot start";
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) output += buf;
  const int rc = pclose(p);
  return rc == 0 ? "" : cmd + " (exit " + std::to_string(rc) + "):\n" + output;
}

constexpr const char* kNewKey = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

std::string MakeCa(const std::string& base, const std::string& name) {
  return Sh("openssl req -x509 " + std::string(kNewKey) + " -keyout " + base + ".key -out " + base +
            ".pem -days 2 -subj '/CN=" + name +
            "' -addext basicConstraints=critical,CA:TRUE -addext "
            "keyUsage=critical,keyCertSign,cRLSign");
}

// A leaf certificate for `base` signed by the CA at `ca` (both without extension).
std::string MakeLeaf(const std::string& base, const std::string& ca, const std::string& cn,
                     const std::string& extensions) {
  std::ofstream(base + ".ext") << "basicConstraints=CA:FALSE\n" << extensions << "\n";
  if (std::string p = Sh("openssl req " + std::string(kNewKey) + " -keyout " + base + ".key -out " +
                         base + ".csr -subj '/CN=" + cn + "'");
      !p.empty()) {
    return p;
  }
  return Sh("openssl x509 -req -in " + base + ".csr -CA " + ca + ".pem -CAkey " + ca +
            ".key -CAcreateserial -days 2 -out " + base + ".pem -extfile " + base + ".ext");
}

}  // namespace

std::string MakeTestPki(const std::string& dir, TestPki* out) {
  if (!Sh("command -v openssl").empty()) {
    return "openssl is not installed: run scripts/install-deps.sh";
  }
  const std::string ca = dir + "/ca", rogue = dir + "/rogue-ca";
  for (const std::string& p :
       {MakeCa(ca, "sift test CA"), MakeCa(rogue, "rogue CA"),
        MakeLeaf(dir + "/server", ca, "localhost",
                 "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
        MakeLeaf(dir + "/worker", ca, "worker-1", "extendedKeyUsage=clientAuth"),
        MakeLeaf(dir + "/rogue", rogue, "worker-1", "extendedKeyUsage=clientAuth")}) {
    if (!p.empty()) return p;
  }
  *out = {ca + ".pem",         dir + "/server.pem", dir + "/server.key", dir + "/worker.pem",
          dir + "/worker.key", rogue + ".pem",      dir + "/rogue.pem",  dir + "/rogue.key"};
  return "";
}

}  // namespace sift::testing
