// The workload codec: every validation rule rejects with the field path and the offending value
// in the message, a submitted spec takes Kueue's defaults, and core -> proto -> core is the
// identity (including a workload's full status).

#include "services/api/workload_codec.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/types.h"
#include "core/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/services/api/codec_test_support.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {
namespace {

using namespace ::tollgate::api::codec_test;  // NOLINT: the shared builders
using ::testing::HasSubstr;
using ::testing::StartsWith;

// --- Workload spec -------------------------------------------------------------------------------

TEST(WorkloadSpecFromProtoTest, RejectsEveryInvalidField) {
  using WL = v1::Workload;
  auto ps = [](WL& p, int i) { return p.mutable_spec()->mutable_pod_sets(i); };
  std::vector<InvalidCase<WL>> cases = {
      {"namespace",
       [](WL& p) { p.mutable_metadata()->set_namespace_("Team.NS"); },
       {"metadata.namespace:", "\"Team.NS\""}},
      {"missing namespace",
       [](WL& p) { p.mutable_metadata()->clear_namespace_(); },
       {"metadata.namespace: required value"}},
      {"no pod sets",
       [](WL& p) { p.mutable_spec()->clear_pod_sets(); },
       {"spec.podSets:", "at least 1", "got 0"}},
      {"too many pod sets",
       [](WL& p) {
         for (int i = 2; i < 19; ++i) {
           v1::PodSet* s = p.mutable_spec()->add_pod_sets();
           s->set_name(absl::StrCat("set-", i));
           s->set_count(1);
         }
       },
       {"spec.podSets:", "at most 18", "got 19"}},
      {"pod set name",
       [&](WL& p) { ps(p, 1)->set_name("Workers"); },
       {"spec.podSets[1].name:", "\"Workers\""}},
      {"pod set name too long",
       [&](WL& p) { ps(p, 1)->set_name(Repeat('w', 64)); },
       {"spec.podSets[1].name:", "no more than 63"}},
      {"duplicate pod set names",
       [&](WL& p) { ps(p, 1)->set_name("driver"); },
       {"spec.podSets[1].name:", "duplicate", "\"driver\""}},
      {"duplicate defaulted pod set names",
       [&](WL& p) {
         ps(p, 0)->clear_name();
         ps(p, 1)->set_name("main");
       },
       {"spec.podSets[1].name:", "duplicate", "\"main\""}},
      {"min count below 1",
       [&](WL& p) { ps(p, 1)->set_min_count(0); },
       {"spec.podSets[1].minCount:", "got 0"}},
      {"min count above count",
       [&](WL& p) { ps(p, 1)->set_min_count(5); },
       {"spec.podSets[1].minCount:", "count (4)", "got 5"}},
      {"two pod sets with min count",
       [&](WL& p) { ps(p, 0)->set_min_count(1); },
       {"spec.podSets:", "at most one podSet can use minCount", "got 2"}},
      {"request key",
       [&](WL& p) { (*ps(p, 0)->mutable_requests())["bad key!"] = "1"; },
       {"spec.podSets[0].requests[bad key!]:", "\"bad key!\""}},
      {"request for pods",
       [&](WL& p) { (*ps(p, 0)->mutable_requests())["pods"] = "1"; },
       {"spec.podSets[0].requests[pods]:", "reserved"}},
      {"negative request",
       [&](WL& p) { (*ps(p, 1)->mutable_requests())["cpu"] = "-1"; },
       {"spec.podSets[1].requests[cpu]:", "\"-1\""}},
      {"empty request",
       [&](WL& p) { (*ps(p, 1)->mutable_requests())["memory"] = ""; },
       {"spec.podSets[1].requests[memory]:", "\"\""}},
      {"node selector key",
       [&](WL& p) { (*ps(p, 1)->mutable_node_selector())["-gpu"] = "a100"; },
       {"spec.podSets[1].nodeSelector[-gpu]:", "\"-gpu\""}},
      {"node selector value",
       [&](WL& p) { (*ps(p, 1)->mutable_node_selector())["gpu"] = "a100!"; },
       {"spec.podSets[1].nodeSelector[gpu]:", "\"a100!\""}},
      {"toleration operator",
       [&](WL& p) { ps(p, 1)->mutable_tolerations(0)->set_operator_("equal"); },
       {"spec.podSets[1].tolerations[0].operator:", "\"equal\""}},
      {"toleration Exists with value",
       [&](WL& p) { ps(p, 1)->mutable_tolerations(0)->set_operator_("Exists"); },
       {"spec.podSets[1].tolerations[0].value:", "\"true\""}},
      {"toleration Gt with a value that is no integer",
       [&](WL& p) { ps(p, 1)->mutable_tolerations(0)->set_operator_("Gt"); },
       {"spec.podSets[1].tolerations[0].value:", "\"true\"", "decimal integer"}},
      {"toleration Lt with a leading zero",
       [&](WL& p) {
         ps(p, 1)->mutable_tolerations(0)->set_operator_("Lt");
         ps(p, 1)->mutable_tolerations(0)->set_value("03");
       },
       {"spec.podSets[1].tolerations[0].value:", "\"03\""}},
      {"toleration effect",
       [&](WL& p) { ps(p, 1)->mutable_tolerations(0)->set_effect("NoScheduling"); },
       {"spec.podSets[1].tolerations[0].effect:", "\"NoScheduling\""}},
      {"node affinity field other than the node's name",
       [&](WL& p) {
         v1::NodeSelectorRequirement* f =
             ps(p, 1)->add_required_node_affinity()->add_match_fields();
         f->set_key("metadata.namespace");
         f->set_operator_("In");
         f->add_values("x");
       },
       {"spec.podSets[1].requiredNodeAffinity[0].matchFields[0].key:", "\"metadata.namespace\"",
        "supported values: \"metadata.name\""}},
      {"node affinity field with Exists",
       [&](WL& p) {
         v1::NodeSelectorRequirement* f =
             ps(p, 1)->add_required_node_affinity()->add_match_fields();
         f->set_key("metadata.name");
         f->set_operator_("Exists");
       },
       {"spec.podSets[1].requiredNodeAffinity[0].matchFields[0].operator:", "\"Exists\""}},
      {"node affinity field with two names",
       [&](WL& p) {
         v1::NodeSelectorRequirement* f =
             ps(p, 1)->add_required_node_affinity()->add_match_fields();
         f->set_key("metadata.name");
         f->set_operator_("In");
         f->add_values("n1");
         f->add_values("n2");
       },
       {"spec.podSets[1].requiredNodeAffinity[0].matchFields[0].values:", "only one value"}},
      {"preferred node affinity weight 0",
       [&](WL& p) { ps(p, 1)->add_preferred_node_affinity(); },
       {"spec.podSets[1].preferredNodeAffinity[0].weight:", "0: must be in the range 1-100"}},
      {"preferred node affinity weight above 100",
       [&](WL& p) {
         ps(p, 1)->add_preferred_node_affinity()->set_weight(1);
         ps(p, 1)->add_preferred_node_affinity()->set_weight(101);
       },
       {"spec.podSets[1].preferredNodeAffinity[1].weight:", "101: must be in the range 1-100"}},
      {"preferred node affinity operator",
       [&](WL& p) {
         v1::PreferredSchedulingTerm* t = ps(p, 1)->add_preferred_node_affinity();
         t->set_weight(5);
         v1::NodeSelectorRequirement* e = t->mutable_preference()->add_match_expressions();
         e->set_key("zone");
         e->set_operator_("in");
         e->add_values("a");
       },
       {"spec.podSets[1].preferredNodeAffinity[0].preference.matchExpressions[0].operator:",
        "\"in\""}},
      {"queue name",
       [](WL& p) { p.mutable_spec()->set_queue_name("Queue_A"); },
       {"spec.queueName:", "\"Queue_A\""}},
      {"priority class name",
       [](WL& p) { p.mutable_spec()->set_priority_class_name("High"); },
       {"spec.priorityClassName:", "\"High\""}},
      {"checkpoint grace",
       [](WL& p) { p.mutable_spec()->set_checkpoint_grace_seconds(-5); },
       {"spec.checkpointGraceSeconds:", "got -5"}},
  };
  Append(cases, MetadataCases<WL>());
  ExpectAllRejected(ValidWorkload(), WorkloadSpecFromProto, "Workload", cases);
}

TEST(WorkloadSpecFromProtoTest, MessagesNameObjectPathAndValue) {
  v1::Workload wl = ValidWorkload();
  wl.mutable_metadata()->set_name("Bad_Name!");
  absl::Status status = WorkloadSpecFromProto(wl).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(status.message()),
      StartsWith("Workload ns/Bad_Name!: metadata.name: \"Bad_Name!\" is not a valid name: "));

  wl = ValidWorkload();
  wl.mutable_metadata()->set_name("bad-count");
  wl.mutable_spec()->mutable_pod_sets(0)->set_count(-3);
  status = WorkloadSpecFromProto(wl).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "Workload ns/bad-count: spec.podSets[0].count: must be greater than or equal to 0, "
            "got -3");

  wl = ValidWorkload();
  (*wl.mutable_spec()->mutable_pod_sets(0)->mutable_requests())["cpu"] = "12 cores";
  status = WorkloadSpecFromProto(wl).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("Workload ns/x: spec.podSets[0].requests[cpu]: invalid quantity "
                         "\"12 cores\": "));
}

TEST(WorkloadSpecFromProtoTest, AppliesDefaultsAndSortsRequests) {
  absl::StatusOr<core::WorkloadSpec> got = WorkloadSpecFromProto(ValidWorkload());
  ASSERT_TRUE(got.ok()) << got.status();
  core::WorkloadSpec want;
  want.namespace_name = "ns";
  want.name = "x";
  want.queue_name = "";  // resolved to the namespace's default LocalQueue by the core
  core::PodSetSpec driver;
  driver.name = "driver";
  driver.count = 1;
  driver.requests = {{"cpu", 500}, {"memory", kGi}};
  core::PodSetSpec workers;
  workers.name = "workers";
  workers.count = 4;
  workers.min_count = 2;
  workers.requests = {{"cpu", 2000}, {"nvidia.com/gpu", 1}};
  workers.node_selector = {{"gpu", "a100"}};
  workers.tolerations = {{"gpu", "Equal", "true", "NoSchedule"}};
  want.pod_sets = {driver, workers};
  want.active = true;
  EXPECT_EQ(*got, want);

  v1::Workload wl = ValidWorkload();
  wl.mutable_spec()->mutable_pod_sets(0)->clear_name();
  wl.mutable_spec()->mutable_pod_sets(1)->set_count(0);  // asks for nothing; minCount must go
  wl.mutable_spec()->mutable_pod_sets(1)->clear_min_count();
  wl.mutable_spec()->set_queue_name("team.queue");
  wl.mutable_spec()->set_priority_class_name("high.priority");
  wl.mutable_spec()->set_priority(-7);
  wl.mutable_spec()->set_active(false);
  wl.mutable_spec()->set_non_preemptible(true);
  wl.mutable_spec()->set_checkpoint_grace_seconds(90);
  got = WorkloadSpecFromProto(wl);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->pod_sets[0].name, "main");
  EXPECT_EQ(got->pod_sets[1].count, 0);
  EXPECT_EQ(got->queue_name, "team.queue");
  EXPECT_EQ(got->priority_class_name, "high.priority");
  EXPECT_EQ(got->priority, -7);
  EXPECT_FALSE(got->active);
  EXPECT_TRUE(got->non_preemptible);
  EXPECT_EQ(got->checkpoint_grace_seconds, 90);

  // minCount == count is allowed (Kueue: minCount <= count).
  wl = ValidWorkload();
  wl.mutable_spec()->mutable_pod_sets(1)->set_min_count(4);
  EXPECT_TRUE(WorkloadSpecFromProto(wl).ok());
}

// Kueue's Workload webhook checks only a toleration's key, and its scheduling compares Lt / Gt
// (core::ToleratesWhenScheduling), so they are accepted with an integer value.
TEST(WorkloadSpecFromProtoTest, AcceptsNumericTolerationOperators) {
  v1::Workload proto = ValidWorkload();
  v1::Toleration* toleration = proto.mutable_spec()->mutable_pod_sets(1)->mutable_tolerations(0);
  toleration->set_operator_("Gt");
  toleration->set_value("-3");
  absl::StatusOr<core::WorkloadSpec> got = WorkloadSpecFromProto(proto);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->pod_sets[1].tolerations.size(), 1u);
  EXPECT_EQ(got->pod_sets[1].tolerations[0].op, "Gt");
  EXPECT_EQ(got->pod_sets[1].tolerations[0].value, "-3");
}

TEST(WorkloadSpecFromProtoTest, EmptyObjectsAreRejectedNotFatal) {
  // Whatever arrives, conversion answers with a status.
  EXPECT_EQ(WorkloadSpecFromProto(v1::Workload()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(WorkloadFromStoredProto(v1::Workload()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Workload round trip
// ---------------------------------------------------------------------------

core::Workload FullWorkload() {
  absl::StatusOr<core::WorkloadSpec> spec = WorkloadSpecFromProto(ValidWorkload());
  EXPECT_TRUE(spec.ok()) << spec.status();
  core::Workload wl;
  wl.id = 42;
  wl.uid = "3f1c-uid";
  wl.creation_time = absl::FromUnixNanos(1700000000123456789);
  wl.spec = *spec;
  wl.spec.queue_name = "default";
  wl.spec.priority_class_name = "high";
  wl.spec.priority = 50;
  wl.spec.checkpoint_grace_seconds = 30;
  core::NodeSelectorTerm by_zone;
  by_zone.match_expressions = {{"zone", "In", {"a", "b"}}};
  core::NodeSelectorTerm not_node_7;
  not_node_7.match_fields = {{"metadata.name", "NotIn", {"node-7"}}};
  wl.spec.pod_sets.back().set_required_node_affinity({by_zone, not_node_7});
  wl.spec.pod_sets.back().set_preferred_node_affinity({{30, by_zone}, {1, not_node_7}});
  wl.spec.pod_sets.back().set_resource_errors(
      {"spec.podSets[1].template.spec.containers[0]: Invalid value: "
       "[\"cpu\"]: requests must not exceed its limits"});
  wl.priority = 50;
  core::WorkloadStatus& st = wl.status;
  st.state = core::WorkloadState::kEvicting;
  st.admission =
      core::Admission{"team-a",
                      {core::PodSetAssignment{"driver",
                                              1,
                                              {{"cpu", "on-demand"}, {"memory", "on-demand"}},
                                              {{"cpu", 500}, {"memory", kGi}}},
                       core::PodSetAssignment{"workers",
                                              3,
                                              {{"cpu", "spot"}, {"nvidia.com/gpu", "a100"}},
                                              {{"cpu", 6000}, {"nvidia.com/gpu", 3}}}}};
  st.admission_time = absl::FromUnixSeconds(1700000100);
  st.pending_message = "";
  st.mutable_history().preemption_count = 2;
  st.mutable_history().last_preemption_reason = "InCohortReclamation";
  st.mutable_history().requeue_count = 1;
  st.mutable_history().requeue_at = absl::FromUnixMillis(1700000200500);
  st.mutable_history().pods_ready_eviction_time = absl::FromUnixSeconds(1700000150);
  st.mutable_history().evicted_at = absl::FromUnixSeconds(1700000300);
  st.mutable_history().eviction_deadline = absl::FromUnixSeconds(1700000330);
  st.mutable_history().submitted_controls = core::SubmittedControls{true, std::nullopt};
  st.mutable_history().past_execution = absl::Seconds(240);
  st.pods_ready = true;
  st.deactivated = true;
  st.conditions = {
      core::Condition{"QuotaReserved", true, "QuotaReserved", "Quota reserved in team-a",
                      absl::FromUnixSeconds(1700000100)},
      core::Condition{"Evicted", false, "Preempted", "", absl::InfinitePast()},
  };
  st.events = {
      core::WorkloadEvent{absl::FromUnixSeconds(1700000100), "QuotaReserved", "in team-a"},
      core::WorkloadEvent{absl::FromUnixSeconds(1700000300), "Preempted", "by ns/other"},
  };
  return wl;
}

TEST(WorkloadRoundTripTest, CoreToProtoToCoreIsIdentity) {
  const core::Workload wl = FullWorkload();
  v1::Workload proto;
  WorkloadToProto(wl, &proto);
  absl::StatusOr<core::Workload> back = WorkloadFromStoredProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->id, 0);  // assigned by the core on restore
  EXPECT_TRUE(back->quota_usage.empty());
  EXPECT_EQ(back->uid, wl.uid);
  EXPECT_EQ(back->creation_time, wl.creation_time);
  EXPECT_EQ(back->spec, wl.spec);
  EXPECT_EQ(back->priority, wl.priority);
  EXPECT_EQ(back->status, wl.status);

  // Every state survives.
  for (core::WorkloadState state :
       {core::WorkloadState::kPending, core::WorkloadState::kAdmitted,
        core::WorkloadState::kEvicting, core::WorkloadState::kFinished}) {
    SCOPED_TRACE(core::WorkloadStateName(state));
    core::Workload w = FullWorkload();
    w.status.state = state;
    v1::Workload p;
    WorkloadToProto(w, &p);
    absl::StatusOr<core::Workload> b = WorkloadFromStoredProto(p);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->status.state, state);
  }
}

TEST(WorkloadRoundTripTest, ProtoCarriesCanonicalStatus) {
  const core::Workload wl = FullWorkload();
  v1::Workload proto;
  WorkloadToProto(wl, &proto);
  EXPECT_EQ(proto.metadata().name(), "x");
  EXPECT_EQ(proto.metadata().namespace_(), "ns");
  EXPECT_EQ(proto.metadata().uid(), "3f1c-uid");
  EXPECT_EQ(proto.metadata().creation_timestamp().seconds(), 1700000000);
  EXPECT_EQ(proto.metadata().creation_timestamp().nanos(), 123456789);

  EXPECT_EQ(proto.spec().queue_name(), "default");
  EXPECT_EQ(proto.spec().priority(), 50);
  EXPECT_TRUE(proto.spec().has_active());
  EXPECT_TRUE(proto.spec().active());
  EXPECT_EQ(proto.spec().pod_sets(0).requests().at("cpu"), "500m");
  EXPECT_EQ(proto.spec().pod_sets(0).requests().at("memory"), "1Gi");
  EXPECT_EQ(proto.spec().pod_sets(1).requests().at("cpu"), "2");
  EXPECT_EQ(proto.spec().pod_sets(1).min_count(), 2);
  EXPECT_EQ(proto.spec().pod_sets(1).tolerations(0).operator_(), "Equal");

  const v1::WorkloadStatus& s = proto.status();
  EXPECT_EQ(s.state(), v1::WORKLOAD_STATE_EVICTING);
  EXPECT_EQ(s.priority(), 50);
  EXPECT_EQ(s.admission().cluster_queue(), "team-a");
  const v1::PodSetAssignment& workers = s.admission().pod_set_assignments(1);
  EXPECT_EQ(workers.name(), "workers");
  EXPECT_EQ(workers.count(), 3);
  EXPECT_EQ(workers.flavors().at("nvidia.com/gpu"), "a100");
  EXPECT_EQ(workers.resource_usage().at("cpu"), "6");
  EXPECT_EQ(workers.resource_usage().at("nvidia.com/gpu"), "3");
  EXPECT_EQ(s.admission().pod_set_assignments(0).resource_usage().at("cpu"), "500m");
  EXPECT_EQ(s.admission().pod_set_assignments(0).resource_usage().at("memory"), "1Gi");
  EXPECT_EQ(s.conditions(0).status(), "True");
  EXPECT_EQ(s.conditions(1).status(), "False");
  EXPECT_TRUE(s.conditions(0).has_last_transition_time());
  EXPECT_FALSE(s.conditions(1).has_last_transition_time());
  EXPECT_EQ(s.preemption_count(), 2);
  EXPECT_EQ(s.last_preemption_reason(), "InCohortReclamation");
  EXPECT_EQ(s.requeue_state().count(), 1);
  EXPECT_EQ(s.requeue_state().requeue_at().seconds(), 1700000200);
  EXPECT_EQ(s.requeue_state().requeue_at().nanos(), 500000000);
  EXPECT_EQ(s.admission_time().seconds(), 1700000100);
  EXPECT_EQ(s.evicted_at().seconds(), 1700000300);
  EXPECT_EQ(s.eviction_deadline().seconds(), 1700000330);
  EXPECT_EQ(s.pods_ready_eviction_time().seconds(), 1700000150);
  EXPECT_TRUE(s.pods_ready());
  EXPECT_TRUE(s.deactivated());
  EXPECT_EQ(s.accumulated_past_execution_time_seconds(), 240);
  ASSERT_EQ(s.events_size(), 2);
  EXPECT_EQ(s.events(1).reason(), "Preempted");
}

TEST(WorkloadRoundTripTest, NeverTimesAreUnsetTimestamps) {
  core::Workload wl = FullWorkload();
  wl.creation_time = absl::InfinitePast();
  wl.status = core::WorkloadStatus{};  // pending, no admission, every time InfinitePast
  v1::Workload proto;
  WorkloadToProto(wl, &proto);
  EXPECT_FALSE(proto.metadata().has_creation_timestamp());
  EXPECT_FALSE(proto.status().has_admission());
  EXPECT_FALSE(proto.status().has_admission_time());
  EXPECT_FALSE(proto.status().has_evicted_at());
  EXPECT_FALSE(proto.status().has_eviction_deadline());
  EXPECT_FALSE(proto.status().has_pods_ready_eviction_time());
  EXPECT_FALSE(proto.status().has_requeue_state());
  EXPECT_FALSE(proto.status().has_accumulated_past_execution_time_seconds());
  EXPECT_EQ(proto.status().state(), v1::WORKLOAD_STATE_PENDING);

  absl::StatusOr<core::Workload> back = WorkloadFromStoredProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->creation_time, absl::InfinitePast());
  EXPECT_EQ(back->status, core::WorkloadStatus{});
}

TEST(WorkloadRoundTripTest, KeepsMetadataTheServiceOwns) {
  v1::Workload proto;
  proto.mutable_metadata()->set_resource_version(17);
  proto.mutable_metadata()->set_generation(3);
  // Stale labels, spec and status from an earlier version must not survive: the core owns them.
  (*proto.mutable_metadata()->mutable_labels())["app"] = "stale";
  proto.mutable_spec()->add_pod_sets()->set_name("stale");
  proto.mutable_status()->set_pending_message("stale");
  WorkloadToProto(FullWorkload(), &proto);
  EXPECT_EQ(proto.metadata().resource_version(), 17);
  EXPECT_EQ(proto.metadata().generation(), 3);
  EXPECT_TRUE(proto.metadata().labels().empty());
  EXPECT_EQ(proto.spec().pod_sets_size(), 2);
  EXPECT_EQ(proto.spec().pod_sets(0).name(), "driver");
  EXPECT_EQ(proto.status().pending_message(), "");
}

TEST(WorkloadFromStoredProtoTest, RejectsCorruptStatus) {
  v1::Workload good;
  WorkloadToProto(FullWorkload(), &good);
  using WL = v1::Workload;
  std::vector<InvalidCase<WL>> cases = {
      {"spec still validated",
       [](WL& p) { p.mutable_spec()->mutable_pod_sets(0)->set_count(-1); },
       {"spec.podSets[0].count:", "got -1"}},
      {"state",
       [](WL& p) { p.mutable_status()->set_state(static_cast<v1::WorkloadState>(42)); },
       {"status.state:", "42"}},
      {"condition status",
       [](WL& p) { p.mutable_status()->mutable_conditions(0)->set_status("Maybe"); },
       {"status.conditions[0].status:", "\"Maybe\""}},
      {"timestamp seconds",
       [](WL& p) { p.mutable_status()->mutable_evicted_at()->set_seconds(int64_t{1} << 60); },
       {"status.evictedAt:", "seconds=1152921504606846976"}},
      {"eviction deadline",
       [](WL& p) {
         p.mutable_status()->mutable_eviction_deadline()->set_seconds(-(int64_t{1} << 40));
       },
       {"status.evictionDeadline:", "seconds=-1099511627776"}},
      {"timestamp nanos",
       [](WL& p) { p.mutable_metadata()->mutable_creation_timestamp()->set_nanos(-1); },
       {"metadata.creationTimestamp:", "nanos=-1"}},
      {"condition time",
       [](WL& p) {
         p.mutable_status()->mutable_conditions(0)->mutable_last_transition_time()->set_nanos(
             1000000000);
       },
       {"status.conditions[0].lastTransitionTime:", "nanos=1000000000"}},
      {"resource usage",
       [](WL& p) {
         (*p.mutable_status()
               ->mutable_admission()
               ->mutable_pod_set_assignments(1)
               ->mutable_resource_usage())["cpu"] = "six";
       },
       {"status.admission.podSetAssignments[1].resourceUsage[cpu]:", "\"six\""}},
      {"admission cluster queue",
       [](WL& p) { p.mutable_status()->mutable_admission()->set_cluster_queue("Team A"); },
       {"status.admission.clusterQueue:", "\"Team A\""}},
      {"assignment count",
       [](WL& p) {
         p.mutable_status()->mutable_admission()->mutable_pod_set_assignments(0)->set_count(-2);
       },
       {"status.admission.podSetAssignments[0].count:", "got -2"}},
      {"accumulated execution time",
       [](WL& p) { p.mutable_status()->set_accumulated_past_execution_time_seconds(-5); },
       {"status.accumulatedPastExexcutionTimeSeconds:", "got -5"}},
  };
  ExpectAllRejected(good, WorkloadFromStoredProto, "Workload", cases);
}

TEST(WorkloadFromStoredProtoTest, ReadsLenientStoredForms) {
  v1::Workload proto;
  WorkloadToProto(FullWorkload(), &proto);
  proto.mutable_status()->set_state(v1::WORKLOAD_STATE_UNSPECIFIED);
  proto.mutable_status()->mutable_conditions(0)->set_status("Unknown");
  // An older build may have kept more events than the core's bound.
  proto.mutable_status()->clear_events();
  for (int i = 0; i < 40; ++i) {
    v1::WorkloadEvent* e = proto.mutable_status()->add_events();
    e->set_reason(absl::StrCat("e", i));
    e->mutable_time()->set_seconds(1700000000 + i);
  }
  absl::StatusOr<core::Workload> back = WorkloadFromStoredProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->status.state, core::WorkloadState::kPending);
  EXPECT_FALSE(back->status.conditions[0].status);
  ASSERT_EQ(back->status.events.size(), core::kMaxWorkloadEvents);
  EXPECT_EQ(back->status.events.front().reason, "e8");
  EXPECT_EQ(back->status.events.back().reason, "e39");
}

struct CanonicalQuantityCase {
  std::string resource;
  std::string input;
  int64_t scalar;
  std::string canonical;
};

TEST(WorkloadRoundTripTest, RequestsPrintCanonically) {
  const std::vector<CanonicalQuantityCase> cases = {
      {"cpu", "0.5", 500, "500m"},
      {"cpu", "2000m", 2000, "2"},
      {"cpu", "1e3", 1000000, "1k"},
      {"cpu", "+1", 1000, "1"},
      {"memory", "1.5Gi", 1536 * (int64_t{1} << 20), "1536Mi"},
      {"memory", "1073741824", kGi, "1Gi"},
      {"memory", "1G", 1000000000, "1G"},  // no binary suffix fits: DecimalSI, as Kueue prints it
      {"ephemeral-storage", "2Ki", 2048, "2Ki"},
      {"nvidia.com/gpu", "2", 2, "2"},
      {"example.com/widgets", "1500m", 2, "2"},  // whole units, rounded up as Kueue does
      {"cpu", "0", 0, "0"},
      // Whole numbers are read without a Quantity up to 15 digits; the same values either side.
      {"cpu", "8", 8000, "8"},
      {"cpu", "999999999999999", 999999999999999000, "999999999999999"},
      {"nvidia.com/gpu", "1000000000000001", 1000000000000001, "1000000000000001"},
  };
  for (const CanonicalQuantityCase& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.resource, "=", c.input));
    v1::Workload wl = ValidWorkload();
    v1::PodSet* ps = wl.mutable_spec()->mutable_pod_sets(0);
    ps->clear_requests();
    (*ps->mutable_requests())[c.resource] = c.input;
    absl::StatusOr<core::WorkloadSpec> spec = WorkloadSpecFromProto(wl);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_EQ(spec->pod_sets[0].requests.size(), 1u);
    EXPECT_EQ(spec->pod_sets[0].requests[0].second, c.scalar);
    core::Workload w;
    w.spec = *spec;
    v1::Workload out;
    WorkloadToProto(w, &out);
    EXPECT_EQ(out.spec().pod_sets(0).requests().at(c.resource), c.canonical);
  }
}

// --- Limits, kept metadata, quantities out of range ---------------------------------------------

TEST(WorkloadSpecFromProtoTest, KeepsLabelsAndAnnotationsThroughTheRoundTrip) {
  v1::Workload wl = ValidWorkload();
  (*wl.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/job-uid"] = "abc";
  (*wl.mutable_metadata()->mutable_labels())["team"] = "ml";
  (*wl.mutable_metadata()->mutable_annotations())["example.com/Note"] = "free text, any value";
  absl::StatusOr<core::WorkloadSpec> spec = WorkloadSpecFromProto(wl);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->metadata.has_value());
  EXPECT_EQ(spec->metadata->labels.at("team"), "ml");
  EXPECT_EQ(spec->metadata->annotations.at("example.com/Note"), "free text, any value");
  core::Workload core_wl;
  core_wl.spec = *spec;
  v1::Workload out;
  WorkloadToProto(core_wl, &out);
  EXPECT_EQ(out.metadata().labels().size(), 2u);
  EXPECT_EQ(out.metadata().annotations().at("example.com/Note"), "free text, any value");
  absl::StatusOr<core::Workload> stored = WorkloadFromStoredProto(out);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->spec, *spec);

  // None at all costs nothing: the box stays empty.
  absl::StatusOr<core::WorkloadSpec> bare = WorkloadSpecFromProto(ValidWorkload());
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->metadata.has_value());
}

TEST(WorkloadSpecFromProtoTest, RejectsBeyondEachLimitNamingTheField) {
  using WL = v1::Workload;
  auto ps = [](WL& p) { return p.mutable_spec()->mutable_pod_sets(1); };
  std::vector<InvalidCase<WL>> cases = {
      {"too many resource names",
       [&](WL& p) {
         for (int i = 0; i < 257; ++i) (*ps(p)->mutable_requests())[absl::StrCat("r", i)] = "1";
       },
       {"spec.podSets[1].requests", "at most 256 entries", "got 259"}},
      {"too many nodeSelector entries",
       [&](WL& p) {
         for (int i = 0; i < 65; ++i) {
           (*ps(p)->mutable_node_selector())[absl::StrCat("k", i)] = "v";
         }
       },
       {"spec.podSets[1].nodeSelector", "at most 64 entries", "got 66"}},
      {"too many tolerations",
       [&](WL& p) {
         for (int i = 0; i < 65; ++i) ps(p)->add_tolerations()->set_operator_("Exists");
       },
       {"spec.podSets[1].tolerations", "at most 64 items", "got 66"}},
      {"too many resource errors",
       [&](WL& p) {
         for (int i = 0; i < 65; ++i) ps(p)->add_resource_errors("e");
       },
       {"spec.podSets[1].resourceErrors", "at most 64 items", "got 65"}},
      {"an empty resource error",
       [&](WL& p) { ps(p)->add_resource_errors(""); },
       {"spec.podSets[1].resourceErrors[0]", "must be 1 to 4096 bytes, got 0"}},
      {"too many labels",
       [](WL& p) {
         for (int i = 0; i < 65; ++i) {
           (*p.mutable_metadata()->mutable_labels())[absl::StrCat("k", i)] = "v";
         }
       },
       {"metadata.labels", "at most 64 entries", "got 65"}},
      {"too many annotations",
       [](WL& p) {
         for (int i = 0; i < 65; ++i) {
           (*p.mutable_metadata()->mutable_annotations())[absl::StrCat("k", i)] = "v";
         }
       },
       {"metadata.annotations", "at most 64 entries", "got 65"}},
      {"uid too long",
       [](WL& p) { p.mutable_metadata()->set_uid(std::string(129, 'u')); },
       {"metadata.uid", "no more than 128 bytes"}},
      {"object too large",
       [](WL& p) {
         // Within the annotation budget per entry, over the object's size in total.
         for (int i = 0; i < 7; ++i) {
           (*p.mutable_metadata()->mutable_annotations())[absl::StrCat("k", i)] =
               std::string(250 * 1024, 'x');
         }
       },
       {"object: must be at most 1572864 bytes serialized"}},
  };
  ExpectAllRejected(ValidWorkload(), WorkloadSpecFromProto, "Workload", cases);
}

// Kueue's ResourceValue clamps a request beyond int64 (SafeMilliValue, SafeValue) rather than
// refusing it: the workload is accepted and fits no finite quota.
TEST(WorkloadSpecFromProtoTest, RequestsBeyondInt64AreClampedAsKueueDoes) {
  struct Case {
    std::string resource;
    std::string quantity;
  };
  for (const Case& c : std::vector<Case>{{"memory", "1e400"},
                                         {"memory", "9223372036854775808"},
                                         {"memory", "9Ei"},
                                         {"cpu", "9223372036854776"},
                                         {"nvidia.com/gpu", "10E"},
                                         // The largest amounts that fit are kept exactly.
                                         {"memory", "9223372036854775807"},
                                         {"cpu", "9223372036854775807m"}}) {
    SCOPED_TRACE(c.quantity);
    v1::Workload wl = ValidWorkload();
    wl.mutable_spec()->mutable_pod_sets(0)->mutable_requests()->clear();
    (*wl.mutable_spec()->mutable_pod_sets(0)->mutable_requests())[c.resource] = c.quantity;
    absl::StatusOr<core::WorkloadSpec> got = WorkloadSpecFromProto(wl);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->pod_sets[0].requests,
              (core::ResourceAmounts{{c.resource, std::numeric_limits<int64_t>::max()}}));
  }
  // A malformed or negative request is still refused.
  for (const char* quantity : {"12 cores", "-1e400"}) {
    SCOPED_TRACE(quantity);
    v1::Workload wl = ValidWorkload();
    (*wl.mutable_spec()->mutable_pod_sets(0)->mutable_requests())["memory"] = quantity;
    absl::StatusOr<core::WorkloadSpec> got = WorkloadSpecFromProto(wl);
    ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr("spec.podSets[0].requests[memory]"));
  }
}

TEST(WorkloadSpecFromProtoTest, EchoedValuesAreCutSoTheErrorStaysSmall) {
  v1::Workload wl = ValidWorkload();
  wl.mutable_metadata()->set_name(std::string(5000, 'n'));
  absl::StatusOr<core::WorkloadSpec> got = WorkloadSpecFromProto(wl);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("metadata.name"));
  EXPECT_THAT(got.status().message(), HasSubstr("(5000 bytes)"));
  EXPECT_LT(got.status().message().size(), 1024u);

  wl = ValidWorkload();
  (*wl.mutable_metadata()->mutable_labels())["big"] = std::string(100 * 1024, 'v');
  got = WorkloadSpecFromProto(wl);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("metadata.labels[big]"));
  EXPECT_THAT(got.status().message(), HasSubstr("(102400 bytes)"));
  EXPECT_LT(got.status().message().size(), 1024u);
}

}  // namespace
}  // namespace tollgate::api
