// The live page's sessions: a token given once in the URL (?token=T) is exchanged for a random
// session id in an HttpOnly, SameSite=Strict cookie, so the token leaves the address bar,
// history and referrers after the first request.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace sift::coordinator {

class HttpSessions {
 public:
  static constexpr const char* kCookie = "sift_session";

  explicit HttpSessions(std::chrono::seconds ttl = std::chrono::hours(12), size_t max = 1024)
      : ttl_(ttl), max_(max) {}
  // A new session carrying `authorization` ("Bearer T"); returns its id. At the cap the session
  // closest to expiry goes.
  std::string Open(const std::string& authorization);
  // The authorization of session `id`, or "" when unknown or expired.
  std::string Find(const std::string& id);
  // The Set-Cookie value for `id`; `secure` under TLS.
  std::string Cookie(const std::string& id, bool secure) const;

 private:
  struct Session {
    std::string authorization;
    std::chrono::steady_clock::time_point expires;
  };
  std::chrono::seconds ttl_;
  size_t max_;
  std::mutex mu_;
  std::map<std::string, Session> sessions_;
};

}  // namespace sift::coordinator
