#pragma once

// Helpers the end-to-end tests share: a gRPC status as text and an assertion on it, a fresh
// deadline-bound context per call, and the queues of test/e2e/testdata/queues.yaml (ClusterQueue
// crash-cq of 100 cpu, LocalQueue crash/crash-q) with a one-cpu workload for them. A target that
// includes this defines TOLLGATE_SOURCE_DIR (the repository root), as e2e_test and ha_e2e_test do.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::e2e {

// How long one unary call may take before a test gives up on it.
inline constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

inline std::string Describe(const grpc::Status& status) {
  return absl::StrCat("code ", status.error_code(), ": ", status.error_message());
}

#define ASSERT_GRPC_OK(expr)                                                   \
  do {                                                                         \
    const grpc::Status _grpc_status = (expr);                                  \
    ASSERT_TRUE(_grpc_status.ok()) << ::tollgate::e2e::Describe(_grpc_status); \
  } while (0)

// A fresh context per call (gRPC contexts are single-use), with a deadline of kRpcTimeout.
inline std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  return context;
}

// For tollgated's --manifests.
inline std::string QueuesManifest() {
  return absl::StrCat(TOLLGATE_SOURCE_DIR, "/test/e2e/testdata/queues.yaml");
}

// A one-pod workload asking for 1 cpu in LocalQueue crash/crash-q.
inline v1::Workload CrashQueueWorkload(const std::string& name) {
  v1::Workload workload;
  workload.mutable_metadata()->set_namespace_("crash");
  workload.mutable_metadata()->set_name(name);
  workload.mutable_spec()->set_queue_name("crash-q");
  v1::PodSet* pod_set = workload.mutable_spec()->add_pod_sets();
  pod_set->set_name("main");
  pod_set->set_count(1);
  (*pod_set->mutable_requests())["cpu"] = "1";
  return workload;
}

}  // namespace tollgate::e2e
