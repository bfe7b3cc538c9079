// Admission checks on the wire: the AdmissionCheck kind, a ClusterQueue's admissionChecks and
// admissionChecksStrategy, a controller's update request, and workload check states, each
// refusal naming the field and the value.

#include "services/api/check_codec.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/api/api_validation.h"
#include "services/api/config_codec.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::UpdateAdmissionCheckStateRequest ValidUpdate() {
  v1::UpdateAdmissionCheckStateRequest request;
  request.mutable_workload()->set_namespace_("ns");
  request.mutable_workload()->set_name("w");
  request.set_check("prov");
  request.set_state("Ready");
  request.set_message("provisioned");
  request.set_expected_revision(7);
  v1::PodSetUpdate* u = request.add_pod_set_updates();
  u->set_name("main");
  (*u->mutable_labels())["team"] = "a";
  (*u->mutable_annotations())["autoscaling.x-k8s.io/consume-provisioning-request"] = "pr";
  (*u->mutable_node_selector())["pool"] = "gpu";
  v1::Toleration* t = u->add_tolerations();
  t->set_key("gpu");
  t->set_operator_("Exists");
  t->set_effect("NoSchedule");
  return request;
}

TEST(CheckStateUpdateFromProtoTest, ValidUpdateMapsOntoTheCore) {
  absl::StatusOr<core::CheckStateUpdate> u = CheckStateUpdateFromProto(ValidUpdate());
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->check, "prov");
  EXPECT_EQ(u->state, core::CheckState::kReady);
  EXPECT_EQ(u->message, "provisioned");
  EXPECT_FALSE(u->requeue_after_seconds.has_value());
  ASSERT_EQ(u->pod_set_updates.size(), 1u);
  EXPECT_EQ(u->pod_set_updates[0].name, "main");
  EXPECT_EQ(u->pod_set_updates[0].node_selector.at("pool"), "gpu");
  ASSERT_EQ(u->pod_set_updates[0].tolerations.size(), 1u);
}

TEST(CheckStateUpdateFromProtoTest, MultiKueueWinnerAndNomineesMapOntoTheCore) {
  v1::UpdateAdmissionCheckStateRequest request = ValidUpdate();
  absl::StatusOr<core::CheckStateUpdate> plain = CheckStateUpdateFromProto(request);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->cluster_name.has_value());
  EXPECT_FALSE(plain->nominated_cluster_names.has_value());

  request.set_cluster_name("w2");
  request.set_set_nominated_cluster_names(true);  // an empty list clears them
  absl::StatusOr<core::CheckStateUpdate> u = CheckStateUpdateFromProto(request);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->cluster_name, "w2");
  ASSERT_TRUE(u->nominated_cluster_names.has_value());
  EXPECT_TRUE(u->nominated_cluster_names->empty());
  request.add_nominated_cluster_names("w1");
  request.add_nominated_cluster_names("w3");
  u = CheckStateUpdateFromProto(request);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_THAT(*u->nominated_cluster_names, ElementsAre("w1", "w3"));
}

TEST(CheckStateUpdateFromProtoTest, MultiKueueRemoteStatesAreSortedByCluster) {
  v1::UpdateAdmissionCheckStateRequest request = ValidUpdate();
  EXPECT_FALSE(CheckStateUpdateFromProto(request)->multi_kueue_remotes.has_value());
  request.set_set_multi_kueue_remotes(true);
  for (const auto& [cluster, state] :
       {std::pair<std::string, std::string>{"w2", "Admitted"}, {"w1", "Unreachable"}}) {
    v1::MultiKueueRemoteState* remote = request.add_multi_kueue_remotes();
    remote->set_cluster(cluster);
    remote->set_state(state);
  }
  absl::StatusOr<core::CheckStateUpdate> u = CheckStateUpdateFromProto(request);
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_TRUE(u->multi_kueue_remotes.has_value());
  EXPECT_THAT(*u->multi_kueue_remotes, ElementsAre(core::MultiKueueRemoteState{"w1", "Unreachable"},
                                                   core::MultiKueueRemoteState{"w2", "Admitted"}));
}

TEST(CheckStateUpdateFromProtoTest, RefusalsNameTheFieldAndValue) {
  struct Case {
    std::string name;
    void (*mutate)(v1::UpdateAdmissionCheckStateRequest&);
    std::string want;
  };
  const Case cases[] = {
      {"NoCheck", [](v1::UpdateAdmissionCheckStateRequest& r) { r.clear_check(); }, "check"},
      {"NoState", [](v1::UpdateAdmissionCheckStateRequest& r) { r.clear_state(); },
       "state: is required"},
      {"UnknownState", [](v1::UpdateAdmissionCheckStateRequest& r) { r.set_state("ready"); },
       "state: unsupported value \"ready\""},
      {"NegativeDelay",
       [](v1::UpdateAdmissionCheckStateRequest& r) { r.set_requeue_after_seconds(-1); },
       "requeue_after_seconds: must be greater than or equal to 0, got -1"},
      {"PodSetTwice",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         *r.add_pod_set_updates() = r.pod_set_updates(0);
       },
       "\"main\" is named twice"},
      {"BadLabelKey",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         (*r.mutable_pod_set_updates(0)->mutable_labels())["bad key!"] = "x";
       },
       "bad key!"},
      {"BadTolerationOperator",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         r.mutable_pod_set_updates(0)->mutable_tolerations(0)->set_operator_("Sometimes");
       },
       "Sometimes"},
      {"BadClusterName",
       [](v1::UpdateAdmissionCheckStateRequest& r) { r.set_cluster_name("Bad_Name"); },
       "cluster_name"},
      {"NomineeTwice",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         r.set_set_nominated_cluster_names(true);
         r.add_nominated_cluster_names("w1");
         r.add_nominated_cluster_names("w1");
       },
       "nominated_cluster_names[1]: \"w1\" is named twice"},
      {"NomineesWithoutSet",
       [](v1::UpdateAdmissionCheckStateRequest& r) { r.add_nominated_cluster_names("w1"); },
       "nominated_cluster_names: is given without set_nominated_cluster_names"},
      {"RemotesWithoutSet",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         r.add_multi_kueue_remotes()->set_cluster("w1");
       },
       "multi_kueue_remotes: is given without set_multi_kueue_remotes"},
      {"RemoteStateUnknown",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         r.set_set_multi_kueue_remotes(true);
         v1::MultiKueueRemoteState* remote = r.add_multi_kueue_remotes();
         remote->set_cluster("w1");
         remote->set_state("Running");
       },
       "multi_kueue_remotes[0].state: unsupported value \"Running\""},
      {"RemoteClusterTwice",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         r.set_set_multi_kueue_remotes(true);
         for (int i = 0; i < 2; ++i) {
           v1::MultiKueueRemoteState* remote = r.add_multi_kueue_remotes();
           remote->set_cluster("w1");
           remote->set_state("Pending");
         }
       },
       "multi_kueue_remotes[1].cluster: \"w1\" is named twice"},
      {"RemoteClusterBadName",
       [](v1::UpdateAdmissionCheckStateRequest& r) {
         r.set_set_multi_kueue_remotes(true);
         v1::MultiKueueRemoteState* remote = r.add_multi_kueue_remotes();
         remote->set_cluster("Bad_Name");
         remote->set_state("Pending");
       },
       "multi_kueue_remotes[0].cluster"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::UpdateAdmissionCheckStateRequest request = ValidUpdate();
    c.mutate(request);
    absl::StatusOr<core::CheckStateUpdate> u = CheckStateUpdateFromProto(request);
    ASSERT_TRUE(absl::IsInvalidArgument(u.status())) << u.status();
    EXPECT_THAT(std::string(u.status().message()), HasSubstr("Workload ns/w: "));
    EXPECT_THAT(std::string(u.status().message()), HasSubstr(c.want));
  }
}

TEST(AdmissionCheckStatesTest, RoundTrip) {
  google::protobuf::RepeatedPtrField<v1::AdmissionCheckState> states;
  v1::AdmissionCheckState* a = states.Add();
  a->set_name("a");
  a->set_state("Retry");
  a->mutable_last_transition_time()->set_seconds(1767225600);
  a->set_message("no capacity");
  a->set_requeue_after_seconds(30);
  a->set_retry_count(2);
  v1::AdmissionCheckState* b = states.Add();
  b->set_name("b");
  b->set_state("Ready");
  b->mutable_last_transition_time()->set_seconds(1767225601);
  *b->add_pod_set_updates() = ValidUpdate().pod_set_updates(0);
  const codec::Reporter r("Workload", "ns", "w");
  absl::StatusOr<std::vector<core::AdmissionCheckState>> core_states =
      codec::AdmissionCheckStatesFromProto(r, states);
  ASSERT_TRUE(core_states.ok()) << core_states.status();
  google::protobuf::RepeatedPtrField<v1::AdmissionCheckState> back;
  codec::AdmissionCheckStatesToProto(*core_states, &back);
  ASSERT_EQ(back.size(), 2);
  EXPECT_EQ(back.Get(0).SerializeAsString(), a->SerializeAsString());
  EXPECT_EQ(back.Get(1).SerializeAsString(), b->SerializeAsString());
}

v1::ClusterQueue QueueWithFlavors() {
  v1::ClusterQueue cq;
  cq.mutable_metadata()->set_name("cq");
  v1::ResourceGroup* g = cq.mutable_spec()->add_resource_groups();
  g->add_covered_resources("cpu");
  for (const char* name : {"a", "b"}) {
    v1::FlavorQuotas* f = g->add_flavors();
    f->set_name(name);
    v1::ResourceQuota* q = f->add_resources();
    q->set_name("cpu");
    q->set_nominal_quota("1");
  }
  return cq;
}

TEST(ClusterQueueChecksTest, ListAndStrategyBothMap) {
  v1::ClusterQueue list = QueueWithFlavors();
  list.mutable_spec()->add_admission_checks("prov");
  absl::StatusOr<core::ClusterQueueSpec> spec = ClusterQueueFromProto(list);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->admission_checks.size(), 1u);
  EXPECT_EQ(spec->admission_checks[0].name, "prov");
  EXPECT_TRUE(spec->admission_checks[0].on_flavors.empty());

  v1::ClusterQueue strategy = QueueWithFlavors();
  v1::AdmissionCheckStrategyRule* rule =
      strategy.mutable_spec()->mutable_admission_checks_strategy()->add_admission_checks();
  rule->set_name("gpu");
  rule->add_on_flavors("b");
  spec = ClusterQueueFromProto(strategy);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->admission_checks.size(), 1u);
  EXPECT_THAT(spec->admission_checks[0].on_flavors, ElementsAre("b"));
  // And back: the strategy, as Kueue v1beta2 spells every ClusterQueue's checks.
  v1::ClusterQueue back = ClusterQueueToProto(*spec);
  ASSERT_EQ(back.spec().admission_checks_strategy().admission_checks_size(), 1);
  EXPECT_EQ(back.spec().admission_checks_strategy().admission_checks(0).on_flavors(0), "b");
}

TEST(ClusterQueueChecksTest, RefusalsNameTheFieldAndValue) {
  struct Case {
    std::string name;
    void (*mutate)(v1::ClusterQueue&);
    std::string want;
  };
  const Case cases[] = {
      {"Both",
       [](v1::ClusterQueue& cq) {
         cq.mutable_spec()->add_admission_checks("a");
         cq.mutable_spec()->mutable_admission_checks_strategy()->add_admission_checks()->set_name(
             "b");
       },
       "spec.admissionChecksStrategy"},
      {"Twice",
       [](v1::ClusterQueue& cq) {
         cq.mutable_spec()->add_admission_checks("a");
         cq.mutable_spec()->add_admission_checks("a");
       },
       "spec.admissionChecks[1]: \"a\" is named twice"},
      {"UnknownFlavor",
       [](v1::ClusterQueue& cq) {
         v1::AdmissionCheckStrategyRule* rule =
             cq.mutable_spec()->mutable_admission_checks_strategy()->add_admission_checks();
         rule->set_name("gpu");
         rule->add_on_flavors("gpu-flavor");
       },
       "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: unsupported value "
       "\"gpu-flavor\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::ClusterQueue cq = QueueWithFlavors();
    c.mutate(cq);
    absl::StatusOr<core::ClusterQueueSpec> spec = ClusterQueueFromProto(cq);
    ASSERT_TRUE(absl::IsInvalidArgument(spec.status())) << spec.status();
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr("ClusterQueue cq: "));
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(c.want));
  }
}

TEST(AdmissionCheckKindTest, SpecAndActiveCondition) {
  v1::AdmissionCheck ac;
  ac.mutable_metadata()->set_name("prov");
  ac.mutable_spec()->set_controller_name("kueue.x-k8s.io/provisioning-request");
  ac.mutable_spec()->mutable_parameters()->set_api_group("kueue.x-k8s.io");
  ac.mutable_spec()->mutable_parameters()->set_kind("ProvisioningRequestConfig");
  ac.mutable_spec()->mutable_parameters()->set_name("cfg");
  absl::StatusOr<core::AdmissionCheckSpec> spec = AdmissionCheckFromProto(ac);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "prov");
  EXPECT_EQ(spec->controller_name, "kueue.x-k8s.io/provisioning-request");

  absl::StatusOr<std::optional<core::Condition>> none = AdmissionCheckActiveFromProto(ac);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  v1::Condition* active = ac.mutable_status()->add_conditions();
  active->set_type("Active");
  active->set_status("True");
  active->set_reason("Active");
  absl::StatusOr<std::optional<core::Condition>> got = AdmissionCheckActiveFromProto(ac);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_TRUE((*got)->status);
  v1::AdmissionCheck back = AdmissionCheckToProto(*spec, *got);
  EXPECT_EQ(back.spec().SerializeAsString(), ac.spec().SerializeAsString());
  EXPECT_EQ(back.status().conditions(0).status(), "True");

  ac.mutable_spec()->clear_controller_name();
  absl::StatusOr<core::AdmissionCheckSpec> refused = AdmissionCheckFromProto(ac);
  ASSERT_TRUE(absl::IsInvalidArgument(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("AdmissionCheck prov: spec.controllerName: is required"));
}

}  // namespace
}  // namespace tollgate::api
