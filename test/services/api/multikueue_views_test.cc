// What tollgate-multikueue reads from a workload and a worker's copy, and the copy it submits.

#include "services/api/multikueue_views.h"

#include <map>
#include <string>
#include <vector>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tollgate::api {
namespace {

v1::Workload Parse(const std::string& text) {
  v1::Workload wl;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &wl)) << text;
  return wl;
}

const char kManager[] = R"pb(
  metadata {
    namespace: "team"
    name: "train"
    labels { key: "app" value: "llm" }
    resource_version: 12
  }
  spec {
    queue_name: "q"
    priority_class_name: "high"
    pod_sets {
      name: "main"
      count: 2
      requests { key: "cpu" value: "2" }
    }
  }
  status {
    state: WORKLOAD_STATE_QUOTA_RESERVED
    priority: 100
    admission_checks { name: "mk" state: "Pending" }
    nominated_cluster_names: "w1"
  }
)pb";

std::string StatesText(const std::vector<v1::MultiKueueRemoteState>& states) {
  std::string out;
  for (const v1::MultiKueueRemoteState& s : states) {
    out += (out.empty() ? "" : ",") + s.cluster() + "=" + s.state();
  }
  return out;
}

TEST(RemoteViewsTest, RemoteStatesListNomineesWinnerAndCopiesByCluster) {
  v1::Workload manager = Parse(kManager);
  manager.mutable_status()->add_nominated_cluster_names("w3");
  std::map<std::string, WorkerObservation> workers;
  workers["w1"].connected = true;
  workers["w1"].copy = Parse(R"pb(status { state: WORKLOAD_STATE_PENDING })pb");
  workers["w2"].connected = true;
  workers["w2"].copy = Parse(R"pb(status { state: WORKLOAD_STATE_ADMITTED })pb");
  workers["w3"].connected = false;
  workers["w4"].connected = true;  // not nominated, no copy: not listed
  std::vector<v1::MultiKueueRemoteState> states = RemoteStatesOf(manager, workers);
  // w2 holds a copy though not nominated (a copy left from an earlier plan): listed too.
  EXPECT_EQ(StatesText(states), "w1=Pending,w2=Admitted,w3=Unreachable");
  EXPECT_FALSE(SameRemoteStates(manager, states));
  *manager.mutable_status()->mutable_multi_kueue_remotes() = {states.begin(), states.end()};
  EXPECT_TRUE(SameRemoteStates(manager, states));

  // The winner without a copy; evicted and finished copies.
  v1::Workload won = Parse(kManager);
  won.mutable_status()->clear_nominated_cluster_names();
  won.mutable_status()->set_cluster_name("w5");
  workers["w1"].copy = Parse(R"pb(status {
                                    state: WORKLOAD_STATE_PENDING
                                    conditions { type: "Evicted" status: "True" }
                                  })pb");
  workers["w2"].copy = Parse(R"pb(status { state: WORKLOAD_STATE_FINISHED })pb");
  workers["w5"].connected = true;
  EXPECT_EQ(StatesText(RemoteStatesOf(won, workers)), "w1=Evicted,w2=Finished,w5=NoCopy");
  workers.erase("w5");  // no link at all (a missing cluster)
  EXPECT_EQ(StatesText(RemoteStatesOf(won, workers)), "w1=Evicted,w2=Finished,w5=Unreachable");
  EXPECT_EQ(RemoteStateOf(Parse(R"pb(status { state: WORKLOAD_STATE_EVICTING })pb")), "Evicted");
  EXPECT_EQ(RemoteStateOf(Parse(R"pb(status { state: WORKLOAD_STATE_QUOTA_RESERVED })pb")),
            "Pending");
}

TEST(RemoteViewsTest, TheCopyKeepsWhatNamesTheWorkAndCarriesTheOrigin) {
  const v1::Workload copy = CopyOf(Parse(kManager), "east");
  EXPECT_EQ(copy.metadata().namespace_(), "team");
  EXPECT_EQ(copy.metadata().name(), "train");
  EXPECT_EQ(copy.metadata().labels().at("app"), "llm");
  EXPECT_EQ(copy.metadata().labels().at(std::string(kOriginLabel)), "east");
  EXPECT_EQ(copy.metadata().resource_version(), 0);
  EXPECT_EQ(copy.spec().queue_name(), "q");
  // The effective priority travels, not the class the worker may not have.
  EXPECT_EQ(copy.spec().priority(), 100);
  EXPECT_TRUE(copy.spec().priority_class_name().empty());
  ASSERT_EQ(copy.spec().pod_sets_size(), 1);
  EXPECT_EQ(copy.spec().pod_sets(0).requests().at("cpu"), "2");
  EXPECT_FALSE(copy.has_status());
  EXPECT_TRUE(HasOrigin(copy, "east"));
  EXPECT_FALSE(HasOrigin(copy, "west"));
  EXPECT_FALSE(HasOrigin(Parse(kManager), "east"));
}

TEST(RemoteViewsTest, LocalViewReadsQuotaCheckAndWinner) {
  v1::Workload wl = Parse(kManager);
  core::LocalView local = LocalViewOf(wl, "mk");
  EXPECT_TRUE(local.holds_quota);
  EXPECT_FALSE(local.finished);
  EXPECT_EQ(local.check_state, core::CheckState::kPending);
  EXPECT_FALSE(local.cluster_name.has_value());
  EXPECT_FALSE(local.evicted_message.has_value());

  wl.mutable_status()->set_cluster_name("w1");
  wl.mutable_status()->mutable_admission_checks(0)->set_state("Ready");
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_EVICTING);
  v1::Condition* evicted = wl.mutable_status()->add_conditions();
  evicted->set_type("Evicted");
  evicted->set_status("True");
  evicted->set_message("Preempted to accommodate a higher priority workload");
  local = LocalViewOf(wl, "mk");
  EXPECT_EQ(local.cluster_name, "w1");
  EXPECT_EQ(local.check_state, core::CheckState::kReady);
  EXPECT_EQ(local.evicted_message, "Preempted to accommodate a higher priority workload");

  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  local = LocalViewOf(wl, "mk");
  EXPECT_FALSE(local.holds_quota);
  EXPECT_TRUE(local.finished);
}

TEST(RemoteViewsTest, RemoteCopyReadsTheWorkersConditionsAndSpecSync) {
  const v1::Workload manager = Parse(kManager);
  v1::Workload copy = CopyOf(manager, "multikueue");
  core::RemoteCopy remote = RemoteCopyOf(copy, manager);
  EXPECT_FALSE(remote.admitted_since.has_value());
  EXPECT_TRUE(remote.spec_in_sync);

  copy.mutable_status()->set_state(v1::WORKLOAD_STATE_ADMITTED);
  v1::Condition* admitted = copy.mutable_status()->add_conditions();
  admitted->set_type("Admitted");
  admitted->set_status("True");
  admitted->mutable_last_transition_time()->set_seconds(1767225600);
  remote = RemoteCopyOf(copy, manager);
  EXPECT_EQ(remote.admitted_since, absl::FromUnixSeconds(1767225600));

  copy.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  v1::Condition* finished = copy.mutable_status()->add_conditions();
  finished->set_type("Finished");
  finished->set_status("True");
  finished->set_reason("Failed");
  finished->set_message("Job failed: BackoffLimitExceeded");
  remote = RemoteCopyOf(copy, manager);
  EXPECT_FALSE(remote.admitted_since.has_value());
  ASSERT_TRUE(remote.finished.has_value());
  EXPECT_EQ(remote.finished->reason, "Failed");
  EXPECT_EQ(remote.finished->message, "Job failed: BackoffLimitExceeded");

  // Another count is another job: out of sync.
  copy.mutable_spec()->mutable_pod_sets(0)->set_count(3);
  EXPECT_FALSE(RemoteCopyOf(copy, manager).spec_in_sync);
}

// A copy evicted and admitted again in one step on its worker shows only Requeued=True (its
// Evicted condition is False again): it counts as evicted, as Kueue's manager sees its eviction.
TEST(RemoteViewsTest, ACopyRequeuedAndAdmittedAgainCountsAsEvicted) {
  const v1::Workload manager = Parse(kManager);
  v1::Workload copy = CopyOf(manager, "multikueue");
  copy.mutable_status()->set_state(v1::WORKLOAD_STATE_ADMITTED);
  v1::Condition* evicted = copy.mutable_status()->add_conditions();
  evicted->set_type("Evicted");
  evicted->set_status("False");
  evicted->set_reason("Admitted");
  EXPECT_FALSE(RemoteCopyOf(copy, manager).evicted.has_value());

  v1::Condition* requeued = copy.mutable_status()->add_conditions();
  requeued->set_type("Requeued");
  requeued->set_status("True");
  requeued->set_reason("Evicted");
  requeued->mutable_last_transition_time()->set_seconds(1767225600);
  const core::RemoteCopy remote = RemoteCopyOf(copy, manager);
  ASSERT_TRUE(remote.evicted.has_value());
  EXPECT_EQ(remote.evicted->since, absl::FromUnixSeconds(1767225600));
}

// spec.active is compared as Kueue compares the whole spec: a copy deactivated on its worker
// (an eviction there with hold) no longer matches an active workload, and an active copy no
// longer matches a deactivated one.
TEST(RemoteViewsTest, ACopyWhoseActiveDiffersIsOutOfSync) {
  v1::Workload manager = Parse(kManager);
  v1::Workload copy = CopyOf(manager, "multikueue");
  copy.mutable_spec()->set_active(true);
  EXPECT_TRUE(RemoteCopyOf(copy, manager).spec_in_sync);
  copy.mutable_spec()->set_active(false);
  EXPECT_FALSE(RemoteCopyOf(copy, manager).spec_in_sync);
  manager.mutable_spec()->set_active(false);
  EXPECT_TRUE(RemoteCopyOf(copy, manager).spec_in_sync);
  copy.mutable_spec()->clear_active();
  EXPECT_FALSE(RemoteCopyOf(copy, manager).spec_in_sync);
}

}  // namespace
}  // namespace tollgate::api

namespace tollgate::api {
namespace {

TEST(RemoteViewsTest, TheCopyCarriesThePayload) {
  v1::Workload manager = Parse(kManager);
  EXPECT_FALSE(CopyOf(manager, "east").spec().has_payload());
  v1::WorkloadPayload* payload = manager.mutable_spec()->mutable_payload();
  payload->set_content_type("application/json");
  payload->set_api_version("batch/v1");
  payload->set_kind("Job");
  payload->set_data(R"({"kind":"Job"})");
  const v1::Workload copy = CopyOf(manager, "east");
  EXPECT_EQ(copy.spec().payload().kind(), "Job");
  EXPECT_EQ(copy.spec().payload().data(), R"({"kind":"Job"})");
}

// The manager recorded `cluster_name`; the copy is in `state`, marked or not.
bool NeedsMark(const std::string& cluster_name, const std::string& on, v1::WorkloadState state,
               bool marked) {
  v1::Workload manager = Parse(kManager);
  manager.mutable_status()->set_cluster_name(cluster_name);
  v1::Workload copy = CopyOf(manager, "east");
  copy.mutable_status()->set_state(state);
  copy.mutable_status()->set_multi_kueue_winner(marked);
  return NeedsWinnerMark(manager, on, copy);
}

TEST(RemoteViewsTest, OnlyTheRecordedWinnersAdmittedCopyIsMarkedOnce) {
  EXPECT_TRUE(NeedsMark("w1", "w1", v1::WORKLOAD_STATE_ADMITTED, false));
  // Not before the manager recorded it, never on another worker.
  EXPECT_FALSE(NeedsMark("", "w1", v1::WORKLOAD_STATE_ADMITTED, false));
  EXPECT_FALSE(NeedsMark("w1", "w2", v1::WORKLOAD_STATE_ADMITTED, false));
  EXPECT_FALSE(NeedsMark("w1", "", v1::WORKLOAD_STATE_ADMITTED, false));
  // Once.
  EXPECT_FALSE(NeedsMark("w1", "w1", v1::WORKLOAD_STATE_ADMITTED, true));
  // Not a copy that lost its quota there (evicted and released, or finished).
  EXPECT_FALSE(NeedsMark("w1", "w1", v1::WORKLOAD_STATE_PENDING, false));
  EXPECT_FALSE(NeedsMark("w1", "w1", v1::WORKLOAD_STATE_FINISHED, false));
}

TEST(RemoteViewsTest, TheWinnersJobStatusIsMirroredWhenItDiffers) {
  v1::Workload manager = Parse(kManager);
  v1::Workload copy = CopyOf(manager, "east");
  EXPECT_FALSE(JobStatusToMirror(manager, copy).has_value());
  v1::WorkloadPayload* reported = copy.mutable_status()->mutable_job_status();
  reported->set_content_type("application/json");
  reported->set_data(R"({"status":{"active":1}})");
  std::optional<v1::WorkloadPayload> mirror = JobStatusToMirror(manager, copy);
  ASSERT_TRUE(mirror.has_value());
  EXPECT_EQ(mirror->data(), R"({"status":{"active":1}})");
  *manager.mutable_status()->mutable_job_status() = *mirror;
  EXPECT_FALSE(JobStatusToMirror(manager, copy).has_value());
  reported->set_data(R"({"status":{"succeeded":1}})");
  EXPECT_TRUE(JobStatusToMirror(manager, copy).has_value());
}

TEST(RemoteViewsTest, AManagersNewPayloadIsCarriedToEveryUnfinishedCopyOfTheSameKind) {
  v1::Workload manager = Parse(kManager);
  v1::WorkloadPayload* payload = manager.mutable_spec()->mutable_payload();
  payload->set_content_type("application/json");
  payload->set_api_version("v1");
  payload->set_kind("PodList");
  payload->set_data(R"({"items":[{"metadata":{"name":"a"}}]})");
  v1::Workload copy = CopyOf(manager, "east");
  EXPECT_FALSE(PayloadToCarry(manager, copy).has_value());

  // The group gained a pod on the manager.
  payload->set_data(R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
  std::optional<v1::WorkloadPayload> carried = PayloadToCarry(manager, copy);
  ASSERT_TRUE(carried.has_value());
  EXPECT_EQ(carried->data(), payload->data());
  EXPECT_EQ(carried->kind(), "PodList");

  // A finished copy keeps what it ran; another kind is not this payload's copy; a copy without
  // a payload (made before its queue carried objects) gets none.
  v1::Workload finished = copy;
  finished.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  EXPECT_FALSE(PayloadToCarry(manager, finished).has_value());
  v1::Workload other_kind = copy;
  other_kind.mutable_spec()->mutable_payload()->set_kind("Pod");
  EXPECT_FALSE(PayloadToCarry(manager, other_kind).has_value());
  v1::Workload bare = copy;
  bare.mutable_spec()->clear_payload();
  EXPECT_FALSE(PayloadToCarry(manager, bare).has_value());
}

TEST(RemoteViewsTest, AManagersNewPriorityIsCarriedToEveryUnfinishedCopy) {
  v1::Workload manager = Parse(kManager);
  manager.mutable_status()->set_priority(10);
  v1::Workload copy = CopyOf(manager, "east");
  EXPECT_FALSE(PriorityToCarry(manager, copy).has_value());

  // Reprioritized on the manager (its effective priority is what the copy carries).
  manager.mutable_status()->set_priority(-5);
  EXPECT_EQ(PriorityToCarry(manager, copy), -5);
  copy.mutable_spec()->set_priority(-5);
  EXPECT_FALSE(PriorityToCarry(manager, copy).has_value());

  // A finished copy keeps what it ran with; a copy without an explicit priority gets one.
  manager.mutable_status()->set_priority(0);
  v1::Workload finished = copy;
  finished.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  EXPECT_FALSE(PriorityToCarry(manager, finished).has_value());
  v1::Workload without = copy;
  without.mutable_spec()->clear_priority();
  EXPECT_EQ(PriorityToCarry(manager, without), 0);
}

TEST(RemoteViewsTest, TheFinishReasonPassesThroughWithSucceededForNone) {
  EXPECT_EQ(FinishReasonOf(core::RemoteCondition{absl::UnixEpoch(), "Failed", "Job failed"}),
            "Failed");
  EXPECT_EQ(FinishReasonOf(core::RemoteCondition{}), "Succeeded");
}

// A workload of the LeaderWorkerSet with uid `owner` in `ns`, group `index` of `count`.
v1::Workload Component(const std::string& ns, const std::string& name, const std::string& owner,
                       const std::string& index, const std::string& count,
                       const std::string& cluster = "") {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_(ns);
  wl.mutable_metadata()->set_name(name);
  wl.mutable_metadata()->add_owner_references()->set_uid(owner);
  (*wl.mutable_metadata()->mutable_annotations())["kueue.x-k8s.io/component-workload-index"] =
      index;
  (*wl.mutable_metadata()->mutable_annotations())["tollgate.dev/component-workload-count"] = count;
  wl.mutable_status()->set_cluster_name(cluster);
  return wl;
}

TEST(RemoteViewsTest, ComponentsAreTheOwnersWorkloadsInItsNamespace) {
  const v1::Workload g0 = Component("team", "g0", "lws", "0", "2", "w2");
  const v1::Workload g1 = Component("team", "g1", "lws", "1", "2");
  // Same owner uid, another namespace; another owner in the same namespace.
  const v1::Workload elsewhere = Component("other", "g0", "lws", "0", "2", "w1");
  const v1::Workload stranger = Component("team", "s0", "other-lws", "0", "2", "w1");
  std::optional<core::ComponentDecision> d =
      ComponentDecisionFor(g1, {&elsewhere, &stranger, &g1, &g0});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->step, core::ComponentStep::kFollow);
  EXPECT_EQ(d->cluster, "w2");
  // Without its primary, group 1 waits for it to exist.
  d = ComponentDecisionFor(g1, {&elsewhere, &stranger, &g1});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->step, core::ComponentStep::kWaitForComponents);
}

TEST(RemoteViewsTest, AWorkloadWithoutIndexOrSingleOwnerIsNoComponent) {
  v1::Workload plain = Parse(kManager);
  EXPECT_EQ(ComponentOwnerOf(plain), "");
  EXPECT_FALSE(ComponentDecisionFor(plain, {&plain}).has_value());
  v1::Workload two_owners = Component("team", "g0", "lws", "0", "2");
  two_owners.mutable_metadata()->add_owner_references()->set_uid("another");
  EXPECT_EQ(ComponentOwnerOf(two_owners), "");
  EXPECT_EQ(ComponentOwnerOf(Component("team", "g0", "lws", "0", "2")), "lws");
}

}  // namespace
}  // namespace tollgate::api
