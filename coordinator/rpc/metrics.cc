#include "coordinator/rpc/metrics.h"

#include <fmt/format.h>

#include <chrono>

namespace sift::coordinator {
namespace {

using Clock = std::chrono::steady_clock;
namespace gx = grpc::experimental;

// Times one call from its first metadata to the status it sends.
class TimingInterceptor final : public gx::Interceptor {
 public:
  TimingInterceptor(RpcMetrics* metrics, const char* method)
      : metrics_(metrics), method_(method ? method : "unknown") {}

  void Intercept(gx::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            gx::InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      start_ = Clock::now();
    }
    if (methods->QueryInterceptionHookPoint(gx::InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->Observe(method_, methods->GetSendStatus().error_code(),
                        std::chrono::duration<double>(Clock::now() - start_).count());
    }
    methods->Proceed();
  }

 private:
  RpcMetrics* metrics_;
  std::string method_;
  Clock::time_point start_ = Clock::now();
};

class TimingFactory final : public gx::ServerInterceptorFactoryInterface {
 public:
  explicit TimingFactory(RpcMetrics* metrics) : metrics_(metrics) {}
  gx::Interceptor* CreateServerInterceptor(gx::ServerRpcInfo* info) override {
    return new TimingInterceptor(metrics_, info->method());
  }

 private:
  RpcMetrics* metrics_;
};

const char* CodeName(int code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
}

}  // namespace

void RpcMetrics::Observe(const std::string& method, int code, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  Method& m = methods_[method];
  ++m.by_code[code];
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  ++m.buckets[b];
  m.sum += seconds;
  ++m.count;
}

std::string RpcMetrics::PrometheusText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out =
      "# HELP sift_rpc_total gRPC calls answered, by method and status code.\n"
      "# TYPE sift_rpc_total counter\n";
  for (const auto& [method, m] : methods_) {
    for (const auto& [code, n] : m.by_code) {
      out += fmt::format("sift_rpc_total{{method=\"{}\",code=\"{}\"}} {}\n", method, CodeName(code),
                         n);
    }
  }
  out +=
      "# HELP sift_rpc_duration_seconds Time from a call's arrival to its answer.\n"
      "# TYPE sift_rpc_duration_seconds histogram\n";
  for (const auto& [method, m] : methods_) {
    int64_t cumulative = 0;
    for (size_t b = 0; b < kBuckets.size(); ++b) {
      cumulative += m.buckets[b];
      out += fmt::format("sift_rpc_duration_seconds_bucket{{method=\"{}\",le=\"{}\"}} {}\n", method,
                         kBuckets[b], cumulative);
    }
    out += fmt::format("sift_rpc_duration_seconds_bucket{{method=\"{}\",le=\"+Inf\"}} {}\n", method,
                       m.count);
    out += fmt::format("sift_rpc_duration_seconds_sum{{method=\"{}\"}} {}\n", method, m.sum);
    out += fmt::format("sift_rpc_duration_seconds_count{{method=\"{}\"}} {}\n", method, m.count);
  }
  return out;
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcMetrics::Factory() {
  return std::make_unique<TimingFactory>(this);
}

}  // namespace sift::coordinator
