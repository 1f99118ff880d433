#include "tests/headless_chromium.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sift::testing {
namespace {

// Flags for a container without a desktop: no sandbox (root), no GPU, a private profile, and
// virtual time so timers that the page sets run before the DOM is dumped.
std::string Flags(const std::string& profile) {
  return "--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions "
         "--user-data-dir='" +
         profile +
         "' --virtual-time-budget=10000 "
         "--enable-logging=stderr --v=0 ";
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int Run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Scratch(const std::string& what) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("sift-chromium-" + what + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace

std::string ChromiumPath() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

PageLoad LoadPage(const std::string& html_path) {
  return LoadUrl("file://" + std::filesystem::absolute(html_path).string());
}

PageLoad LoadUrl(const std::string& url) {
  PageLoad out;
  const std::string dir = Scratch("load");
  out.exit_code = Run(ChromiumPath() + " " + Flags(dir + "/profile") + "--dump-dom '" + url +
                      "' > '" + dir + "/dom.html' 2> '" + dir + "/log.txt'");
  out.dom = ReadAll(dir + "/dom.html");
  out.log = ReadAll(dir + "/log.txt");
  std::filesystem::remove_all(dir);
  return out;
}

int Screenshot(const std::string& html_path, const std::string& png_path, int width, int height) {
  const std::string dir = Scratch("shot");
  const std::string url = "file://" + std::filesystem::absolute(html_path).string();
  const int code = Run(ChromiumPath() + " " + Flags(dir + "/profile") + "--hide-scrollbars " +
                       "--window-size=" + std::to_string(width) + "," + std::to_string(height) +
                       " --screenshot='" + std::filesystem::absolute(png_path).string() + "' '" +
                       url + "' > '" + dir + "/log.txt' 2>&1");
  std::filesystem::remove_all(dir);
  return code;
}

}  // namespace sift::testing
