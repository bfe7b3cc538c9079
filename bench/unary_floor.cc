#include "bench/unary_floor.h"

#include <grpcpp/generic/generic_stub.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/bench_util.h"
#include "core/status_macros.h"

namespace tollgate::bench {
namespace {

// Counts outstanding calls; Acquire blocks while `limit` are out.
class InFlight {
 public:
  explicit InFlight(int limit) : limit_(limit) {}

  void Acquire() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](InFlight* self) { return self->out_ < self->limit_; }, this));
    ++out_;
  }
  void Release(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    --out_;
    if (!status.ok() && first_error_.ok()) {
      first_error_ = absl::UnavailableError(absl::StrCat("health Check: ", status.error_message()));
    }
  }
  absl::Status WaitForAll() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](InFlight* self) { return self->out_ == 0; }, this));
    return first_error_;
  }

 private:
  absl::Mutex mu_;
  const int limit_;
  int out_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
};

struct Call {
  grpc::ClientContext context;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
};

}  // namespace

absl::StatusOr<UnaryFloor> MeasureUnaryFloor(const TollgatedTarget& target, int64_t calls,
                                             int channels, int max_in_flight) {
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int i = 0; i < std::max(1, channels); ++i) {
    stubs.push_back(std::make_unique<grpc::GenericStub>(target.NewChannel()));
  }
  // Connect first, so the timing holds calls only.
  for (auto& stub : stubs) {
    grpc::Status s = HealthCheck(*stub, absl::Seconds(10));
    if (!s.ok()) return absl::UnavailableError(absl::StrCat("health Check: ", s.error_message()));
  }
  InFlight in_flight(std::max(1, max_in_flight));
  const double start = MonotonicSeconds();
  for (int64_t i = 0; i < calls; ++i) {
    in_flight.Acquire();
    auto* call = new Call();
    call->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Slice empty;  // an empty HealthCheckRequest: the whole server
    call->request = grpc::ByteBuffer(&empty, 1);
    stubs[i % stubs.size()]->UnaryCall(&call->context, "/grpc.health.v1.Health/Check",
                                       grpc::StubOptions(), &call->request, &call->response,
                                       [call, &in_flight](grpc::Status status) {
                                         delete call;
                                         in_flight.Release(status);
                                       });
  }
  TOLLGATE_RETURN_IF_ERROR(in_flight.WaitForAll());
  return UnaryFloor{calls, MonotonicSeconds() - start};
}

}  // namespace tollgate::bench
