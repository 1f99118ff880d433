// Per-RPC counts and latency histograms, filled by a gRPC server interceptor, printed in the
// Prometheus text format on /metrics.
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace sift::coordinator {

class RpcMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02,
                                                      0.05,   0.1,   0.2,   0.5,   1,    5};

  // `method` as gRPC names it ("/sift.v1.Workers/ReportProgress"); `code` its status code.
  void Observe(const std::string& method, int code, double seconds);

  // sift_rpc_total{method,code}, sift_rpc_duration_seconds{method} (a histogram).
  std::string PrometheusText() const;

  // An interceptor factory recording into this object, for ServerBuilder.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> Factory();

 private:
  struct Method {
    std::map<int, int64_t> by_code;
    std::array<int64_t, kBuckets.size() + 1> buckets{};
    double sum = 0;
    int64_t count = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Method> methods_;
};

}  // namespace sift::coordinator
