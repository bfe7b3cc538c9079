#include "services/rpc/grpc_metrics_interceptor.h"

#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/real_clock.h"
#include "grpcpp/support/status.h"

namespace tollgate::rpc {
namespace {

// gRPC's canonical code names, as grpc_code label values.
const char* CodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
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
  const int i = static_cast<int>(code);
  return i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i] : "UNKNOWN";
}

struct GrpcFamilies {
  metrics::Family& handled;
  metrics::Family& handling_seconds;
  metrics::Family::Series& watch_subscribers;
};

class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(GrpcFamilies& families, absl::string_view full_method)
      : families_(families), started_(core::RealClock().Now()) {
    // "/package.Service/Method".
    absl::string_view rest = full_method;
    if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
    const size_t slash = rest.find('/');
    service_ = std::string(rest.substr(0, slash));
    method_ = slash == absl::string_view::npos ? "" : std::string(rest.substr(slash + 1));
    watch_ = method_ == "Watch" && service_ == "tollgate.v1.AdmissionService";
    if (watch_) families_.watch_subscribers.Add(1);
  }
  ~MetricsInterceptor() override {
    if (watch_) families_.watch_subscribers.Add(-1);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      families_.handled.Add({service_, method_, CodeName(status.error_code())});
      families_.handling_seconds.Observe({service_, method_},
                                         absl::ToDoubleSeconds(core::RealClock().Now() - started_));
    }
    methods->Proceed();
  }

 private:
  GrpcFamilies& families_;
  const absl::Time started_;
  std::string service_;
  std::string method_;
  bool watch_ = false;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(metrics::Registry& registry)
      : families_{registry.AddCounter("tollgate_grpc_server_handled_total",
                                      "gRPC calls completed, by service, method and status code.",
                                      {"grpc_service", "grpc_method", "grpc_code"}),
                  registry.AddHistogram(
                      "tollgate_grpc_server_handling_seconds",
                      "Seconds from the start of a gRPC call to its status, by service and method.",
                      {"grpc_service", "grpc_method"}, metrics::DefaultLatencyBuckets()),
                  registry.AddGauge("tollgate_watch_subscribers", "Open gRPC Watch streams.", {})
                      .Labels({})} {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(families_, info->method());
  }

 private:
  GrpcFamilies families_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeGrpcMetricsInterceptor(
    metrics::Registry& registry) {
  return std::make_unique<MetricsInterceptorFactory>(registry);
}

}  // namespace tollgate::rpc
