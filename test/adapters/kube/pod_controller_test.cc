#include "adapters/kube/pod_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/time.h"
#include "core/clock.h"
#include "test/adapters/fakes/fake_admission_client.h"
#include "test/adapters/fakes/fake_kube_client.h"

// The pod controller's rules that the end-to-end tests' simulated StatefulSet controller cannot
// reach (it never shows a rollout in progress). The rest is covered by pod_kinds_e2e_test.

namespace tollgate::kube {
namespace {

constexpr char kStsUid[] = "5e1f0000-aaaa-bbbb-cccc-000000000007";

Json StatefulSet(const std::string& current, const std::string& update) {
  Json sts = Json::parse(R"({"apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "team-a",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {"replicas": 2, "template": {"spec": {
      "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
      "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}})");
  sts["metadata"]["uid"] = kStsUid;
  sts["status"] = {{"currentRevision", current}, {"updateRevision", update}};
  return sts;
}

Json GatedPod(const std::string& name, const std::string& revision) {
  Json pod = Json::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "team-a",
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                      "name": "db", "controller": true}]},
    "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"},
                                 {"name": "kueue.x-k8s.io/topology"},
                                 {"name": "example.com/other"}],
             "containers": [{"name": "c"}]}})");
  pod["metadata"]["name"] = name;
  pod["metadata"]["labels"]["controller-revision-hash"] = revision;
  pod["metadata"]["ownerReferences"][0]["uid"] = kStsUid;
  return pod;
}

class PodControllerTest : public ::testing::Test {
 protected:
  PodControllerTest() : clock_(absl::FromUnixSeconds(1700000000)) {}

  absl::Status ReconcileStatefulSet() {
    PodController::Options options;
    options.statefulsets = true;
    PodController controller(kube_, admission_, clock_, options);
    return controller.Reconcile(ObjectKey{"statefulsets", "team-a", "db"});
  }
  Json Gates(const std::string& pod) const {
    return kube_.Object(PodResource(), "team-a", pod)["spec"].value("schedulingGates", Json());
  }

  core::SimulatedClock clock_;
  FakeKubeClient kube_;
  client::FakeAdmissionClient admission_;
};

TEST_F(PodControllerTest, DuringARolloutPodsOfTheCurrentRevisionAreReleasedAtOnce) {
  kube_.Put(StatefulSetResource(), StatefulSet("db-old", "db-new"));
  kube_.Put(PodResource(), GatedPod("db-0", "db-old"));
  kube_.Put(PodResource(), GatedPod("db-1", "db-new"));
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  // Kueue's ShouldUngatePod: the old revision's pod replaces one that ran; only Kueue's gates go.
  EXPECT_EQ(Gates("db-0"), Json::parse(R"([{"name": "example.com/other"}])"));
  // The new revision's pod waits for the admission.
  EXPECT_EQ(Gates("db-1").size(), 3u);
}

TEST_F(PodControllerTest, OutsideARolloutNothingIsReleased) {
  kube_.Put(StatefulSetResource(), StatefulSet("db-new", "db-new"));
  kube_.Put(PodResource(), GatedPod("db-0", "db-new"));
  ASSERT_TRUE(ReconcileStatefulSet().ok());
  EXPECT_EQ(Gates("db-0").size(), 3u);
}

}  // namespace
}  // namespace tollgate::kube
