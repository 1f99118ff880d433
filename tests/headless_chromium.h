// Opens a local HTML file in headless Chromium (Debian's `chromium`, installed by
// scripts/install-deps.sh) for tests of the HTML report: the DOM after its scripts ran, the
// browser's log (console messages and uncaught errors) and a screenshot.
#pragma once

#include <string>

namespace sift::testing {

// The chromium binary on PATH ("" when none).
std::string ChromiumPath();

struct PageLoad {
  int exit_code = -1;
  std::string dom;  // document.documentElement.outerHTML after the scripts ran
  std::string log;  // chromium's stderr with --enable-logging: console lines are "CONSOLE"
};
PageLoad LoadPage(const std::string& html_path);
// The same for a page served over HTTP (the live report of `sift coordinator --http`).
PageLoad LoadUrl(const std::string& url);

// Writes a PNG of the page (width x height); returns chromium's exit code.
int Screenshot(const std::string& html_path, const std::string& png_path, int width, int height);

}  // namespace sift::testing
