// Which controllers a workload concerns on the admission-check watch: a reserved or admitted
// workload concerns every controller of its checks; an evicting one (it still holds quota until
// its job stops) concerns the MultiKueue controller alone, which must see the eviction to
// deactivate the remote copy and keep its copies until the quota is gone (Kueue's
// reconcileGroup), and the change that releases the quota still reaches it.

#include "services/engine/check_controllers.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::engine {
namespace {

constexpr char kMultiKueue[] = "kueue.x-k8s.io/multikueue";
constexpr char kProvisioning[] = "kueue.x-k8s.io/provisioning-request";

const CheckControllerNames kControllers = {{"mk", kMultiKueue}, {"prov", kProvisioning}};

v1::Workload WorkloadIn(v1::WorkloadState state, const std::vector<std::string>& checks) {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_("team");
  wl.mutable_metadata()->set_name("train");
  wl.mutable_status()->set_state(state);
  for (const std::string& check : checks) {
    v1::AdmissionCheckState* s = wl.mutable_status()->add_admission_checks();
    s->set_name(check);
    s->set_state("Pending");
  }
  return wl;
}

bool HoldsQuotaFor(const std::vector<v1::CheckControllerRef>& refs, const std::string& name) {
  for (const v1::CheckControllerRef& ref : refs) {
    if (ref.controller_name() == name) return ref.holds_quota();
  }
  ADD_FAILURE() << "no entry for " << name;
  return false;
}

TEST(CheckControllersOfTest, AReservedWorkloadConcernsEveryControllerOfItsChecks) {
  const auto refs = CheckControllersOf(
      WorkloadIn(v1::WORKLOAD_STATE_QUOTA_RESERVED, {"mk", "prov"}), kControllers);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_TRUE(HoldsQuotaFor(refs, kMultiKueue));
  EXPECT_TRUE(HoldsQuotaFor(refs, kProvisioning));
}

TEST(CheckControllersOfTest, AnEvictingWorkloadConcernsTheMultiKueueControllerAlone) {
  const auto refs =
      CheckControllersOf(WorkloadIn(v1::WORKLOAD_STATE_EVICTING, {"mk", "prov"}), kControllers);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_TRUE(HoldsQuotaFor(refs, kMultiKueue));
  EXPECT_FALSE(HoldsQuotaFor(refs, kProvisioning));
}

TEST(CheckControllersOfTest, APendingWorkloadConcernsNobody) {
  const auto refs =
      CheckControllersOf(WorkloadIn(v1::WORKLOAD_STATE_PENDING, {"mk", "prov"}), kControllers);
  EXPECT_FALSE(HoldsQuotaFor(refs, kMultiKueue));
  EXPECT_FALSE(HoldsQuotaFor(refs, kProvisioning));
}

TEST(CheckControllerTrackerTest, TheMultiKueueControllerHearsTheEvictionAndThenTheRelease) {
  CheckControllerTracker tracker;
  auto changed =
      tracker.Changed(WorkloadIn(v1::WORKLOAD_STATE_ADMITTED, {"mk", "prov"}), kControllers);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_TRUE(changed[0].added());
  EXPECT_TRUE(changed[1].added());

  // Evicting: still the MultiKueue controller's (not added again); the provisioning controller
  // hears that it is no longer its concern.
  changed = tracker.Changed(WorkloadIn(v1::WORKLOAD_STATE_EVICTING, {"mk", "prov"}), kControllers);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].controller_name(), kMultiKueue);
  EXPECT_TRUE(changed[0].holds_quota());
  EXPECT_FALSE(changed[0].added());
  EXPECT_EQ(changed[1].controller_name(), kProvisioning);
  EXPECT_FALSE(changed[1].holds_quota());

  // The job stopped and the quota is released: the MultiKueue controller hears it, once.
  changed = tracker.Changed(WorkloadIn(v1::WORKLOAD_STATE_PENDING, {"mk", "prov"}), kControllers);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].controller_name(), kMultiKueue);
  EXPECT_FALSE(changed[0].holds_quota());
  EXPECT_TRUE(tracker.Changed(WorkloadIn(v1::WORKLOAD_STATE_PENDING, {"mk", "prov"}), kControllers)
                  .empty());
}

TEST(CheckControllerTrackerTest, AnEvictingWorkloadDeletedStillReachesTheMultiKueueController) {
  CheckControllerTracker tracker;
  tracker.Changed(WorkloadIn(v1::WORKLOAD_STATE_EVICTING, {"mk"}), kControllers);
  const auto deleted = tracker.Deleted("team/train");
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].controller_name(), kMultiKueue);
  EXPECT_FALSE(deleted[0].holds_quota());
}

}  // namespace
}  // namespace tollgate::engine
