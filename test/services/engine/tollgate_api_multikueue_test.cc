// MultiKueue's kinds through the real API and executor: applied, read back and deleted at once;
// bad input refused naming the field and value with nothing stored; a MultiKueueCluster's
// Active condition (the connection's) restored after a restart and kept by a re-apply.

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/engine/admission_executor.h"
#include "services/engine/config_objects.h"
#include "services/engine/tollgate_api.h"
#include "storage/memory_store.h"
#include "storage/store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kObjects[] = R"pb(
  objects {
    multi_kueue_config {
      metadata { name: "fleet" }
      spec { clusters: "worker1" clusters: "worker2" }
    }
  }
  objects {
    multi_kueue_cluster {
      metadata { name: "worker1" }
      spec { endpoint { address: "127.0.0.1:7001" insecure: true } }
    }
  }
  objects {
    admission_check {
      metadata { name: "multikueue" }
      spec {
        controller_name: "kueue.x-k8s.io/multikueue"
        parameters { api_group: "kueue.x-k8s.io" kind: "MultiKueueConfig" name: "fleet" }
      }
    }
  }
)pb";

class TollgateApiMultiKueueTest : public testing::Test {
 protected:
  void Open() {
    api_.reset();
    executor_.reset();
    absl::StatusOr<std::unique_ptr<AdmissionExecutor>> executor =
        AdmissionExecutor::Open(store_, clock_, core::SchedulerConfig{}, {});
    ASSERT_TRUE(executor.ok()) << executor.status();
    executor_ = *std::move(executor);
    api_ = std::make_unique<TollgateApi>(*executor_);
  }

  absl::Status Apply(const std::string& text) {
    v1::ApplyRequest request;
    if (!google::protobuf::TextFormat::ParseFromString(text, &request)) {
      return absl::InternalError("bad text proto");
    }
    return api_->Apply(request).status();
  }

  absl::StatusOr<v1::ConfigObject> Get(v1::ObjectKind kind, const std::string& name) {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(kind);
    request.mutable_ref()->set_name(name);
    return api_->GetObject(request);
  }

  core::SimulatedClock clock_{absl::FromUnixSeconds(1767225600)};
  storage::MemoryStore store_;
  std::unique_ptr<AdmissionExecutor> executor_;
  std::unique_ptr<TollgateApi> api_;
};

TEST_F(TollgateApiMultiKueueTest, AppliedReadBackAndDeletedAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_TRUE(Apply(kObjects).ok());
  absl::StatusOr<v1::ConfigObject> config = Get(v1::MULTI_KUEUE_CONFIG, "fleet");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->multi_kueue_config().spec().clusters(), ElementsAre("worker1", "worker2"));
  absl::StatusOr<v1::ConfigObject> cluster = Get(v1::MULTI_KUEUE_CLUSTER, "worker1");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->multi_kueue_cluster().spec().endpoint().address(), "127.0.0.1:7001");
  // Nothing reported on the worker yet: no condition.
  EXPECT_EQ(cluster->multi_kueue_cluster().status().conditions_size(), 0);

  // A config the check still names goes at once (Kueue keeps no finalizer on it).
  v1::DeleteObjectRequest del;
  del.mutable_ref()->set_kind(v1::MULTI_KUEUE_CONFIG);
  del.mutable_ref()->set_name("fleet");
  ASSERT_TRUE(api_->DeleteObject(del).ok());
  EXPECT_EQ(Get(v1::MULTI_KUEUE_CONFIG, "fleet").status().code(), absl::StatusCode::kNotFound);
  ASSERT_NO_FATAL_FAILURE(Open());
  EXPECT_EQ(Get(v1::MULTI_KUEUE_CONFIG, "fleet").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Get(v1::MULTI_KUEUE_CLUSTER, "worker1").ok());
}

TEST_F(TollgateApiMultiKueueTest, BadInputChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(Open());
  const absl::Status duplicate = Apply(R"pb(
    objects {
      multi_kueue_config {
        metadata { name: "fleet" }
        spec { clusters: "worker1" clusters: "worker1" }
      }
    }
  )pb");
  EXPECT_EQ(duplicate.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(duplicate.message(),
              HasSubstr("MultiKueueConfig fleet: spec.clusters[1]: \"worker1\" is named twice"));
  const absl::Status insecure = Apply(R"pb(
    objects {
      multi_kueue_cluster {
        metadata { name: "far" }
        spec { endpoint { address: "10.0.0.7:7001" insecure: true } }
      }
    }
  )pb");
  EXPECT_EQ(insecure.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(insecure.message(),
              HasSubstr("MultiKueueCluster far: spec.endpoint.insecure: is allowed only to a "
                        "loopback address, got \"10.0.0.7:7001\""));
  EXPECT_EQ(Get(v1::MULTI_KUEUE_CONFIG, "fleet").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Get(v1::MULTI_KUEUE_CLUSTER, "far").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(TollgateApiMultiKueueTest, ClusterActiveConditionSurvivesRestartAndReapply) {
  // A cluster as the connection left it in the store: Active since the clock's start.
  v1::ConfigObject stored;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        multi_kueue_cluster {
          metadata { name: "worker1" generation: 1 }
          spec { endpoint { address: "127.0.0.1:7001" insecure: true } }
          status {
            conditions {
              type: "Active"
              status: "True"
              reason: "Active"
              message: "Connected"
              last_transition_time { seconds: 1767225600 }
            }
          }
        }
      )pb",
      &stored));
  storage::WriteBatch batch;
  batch.Put(ConfigObjectKey(v1::MULTI_KUEUE_CLUSTER, "", "worker1"), stored.SerializeAsString());
  ASSERT_TRUE(store_.Commit(batch).ok());
  ASSERT_NO_FATAL_FAILURE(Open());

  auto active_of = [&]() -> v1::Condition {
    absl::StatusOr<v1::ConfigObject> got = Get(v1::MULTI_KUEUE_CLUSTER, "worker1");
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || got->multi_kueue_cluster().status().conditions_size() != 1) {
      return v1::Condition();
    }
    return got->multi_kueue_cluster().status().conditions(0);
  };
  EXPECT_EQ(active_of().reason(), "Active");
  EXPECT_EQ(active_of().status(), "True");

  // A re-apply (a new address) keeps what the connection reported, in the state and stored.
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(Apply(R"pb(
                objects {
                  multi_kueue_cluster {
                    metadata { name: "worker1" }
                    spec { endpoint { address: "127.0.0.1:7002" insecure: true } }
                  }
                }
              )pb")
                  .ok());
  EXPECT_EQ(active_of().message(), "Connected");
  ASSERT_NO_FATAL_FAILURE(Open());
  const v1::Condition after = active_of();
  EXPECT_EQ(after.status(), "True");
  EXPECT_EQ(after.last_transition_time().seconds(), 1767225600);
  absl::StatusOr<v1::ConfigObject> cluster = Get(v1::MULTI_KUEUE_CLUSTER, "worker1");
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(cluster->multi_kueue_cluster().spec().endpoint().address(), "127.0.0.1:7002");
}

TEST_F(TollgateApiMultiKueueTest, SetMultiKueueClusterActiveIsStoredAndSurvivesARestart) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_TRUE(Apply(kObjects).ok());
  v1::SetMultiKueueClusterActiveRequest request;
  request.set_name("worker1");
  request.set_active(false);
  request.set_reason("ClientConnectionFailed");
  request.set_message("cannot reach tollgated at 127.0.0.1:7001: connection refused");
  absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> set =
      api_->SetMultiKueueClusterActive(request);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->multi_kueue_cluster().status().conditions_size(), 1);
  EXPECT_EQ(set->multi_kueue_cluster().status().conditions(0).status(), "False");

  clock_.Advance(absl::Seconds(5));
  request.set_active(true);
  request.set_reason("Active");
  request.set_message("Connected");
  ASSERT_TRUE(api_->SetMultiKueueClusterActive(request).ok());
  ASSERT_NO_FATAL_FAILURE(Open());
  absl::StatusOr<v1::ConfigObject> got = Get(v1::MULTI_KUEUE_CLUSTER, "worker1");
  ASSERT_TRUE(got.ok()) << got.status();
  const v1::Condition& active = got->multi_kueue_cluster().status().conditions(0);
  EXPECT_EQ(active.status(), "True");
  EXPECT_EQ(active.reason(), "Active");
  EXPECT_EQ(active.last_transition_time().seconds(), 1767225605);

  // Bad input names the field and changes nothing.
  request.set_reason("");
  absl::Status no_reason = api_->SetMultiKueueClusterActive(request).status();
  EXPECT_TRUE(absl::IsInvalidArgument(no_reason)) << no_reason;
  EXPECT_THAT(std::string(no_reason.message()), HasSubstr("reason: must not be empty"));
  request.set_reason("Active");
  request.set_name("nowhere");
  absl::Status missing = api_->SetMultiKueueClusterActive(request).status();
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_THAT(std::string(missing.message()), HasSubstr("MultiKueueCluster nowhere not found"));
}

}  // namespace
}  // namespace tollgate::engine
