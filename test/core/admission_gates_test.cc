#include "core/admission_gates.h"

#include <optional>
#include <string>
#include <utility>

#include "core/cluster_state.h"
#include "core/visibility.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Kueue's AdmissionGatedBy: the annotation's format and update rules (its workload webhook) and
// a gated workload's place outside its queue (its workload controller and queue manager).

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);
constexpr char kGates[] = "example.com/gate1,example.com/gate2";

WorkloadSpec CpuJob(std::string name, int32_t cpus, std::optional<std::string> gates = {}) {
  WorkloadSpec spec;
  spec.name = std::move(name);
  spec.namespace_name = "ns";
  spec.queue_name = "q";
  spec.pod_sets = {PodSetSpec{"main", cpus, std::nullopt, {{"cpu", 1}}, {}, {}}};
  if (gates.has_value()) {
    spec.metadata.mutable_value().annotations[std::string(kAdmissionGatedByAnnotation)] = *gates;
  }
  return spec;
}

TEST(AdmissionGatesFormatTest, ParsesACommaSeparatedListTrimmingSpaces) {
  EXPECT_THAT(ParseAdmissionGates(" a.io/x , b.io/y"), ElementsAre("a.io/x", "b.io/y"));
  EXPECT_THAT(ParseAdmissionGates("  "), IsEmpty());
  EXPECT_THAT(ParseAdmissionGates("a.io/x,"), ElementsAre("a.io/x", ""));
}

TEST(AdmissionGatesFormatTest, AcceptsDistinctDomainPrefixedPaths) {
  EXPECT_TRUE(ValidateAdmissionGatesOnCreate("").ok());
  EXPECT_TRUE(ValidateAdmissionGatesOnCreate(kGates).ok());
  EXPECT_TRUE(ValidateAdmissionGatesOnCreate("example.com/a/b_c").ok());
}

TEST(AdmissionGatesFormatTest, RejectsEachMalformedGateNamingTheFieldAndTheValue) {
  struct Case {
    std::string value;
    std::string why;
  } cases[] = {
      {"example.com/a,,example.com/b", "cannot contain empty gate names"},
      {"example.com/a,example.com/a", "duplicate gate name: example.com/a"},
      {"gate1", "must be a domain-prefixed path"},
      {"example.com/", "must be a domain-prefixed path"},
      {"Example.com/a", "RFC 1123 subdomain"},
      {"example.com/a b", "must be a valid path"},
      {"example.com/" + std::string(60, 'a'), "Too long: may not be more than 63 bytes"},
  };
  for (const Case& c : cases) {
    absl::Status status = ValidateAdmissionGatesOnCreate(c.value);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.value;
    EXPECT_THAT(status.message(),
                HasSubstr("metadata.annotations[kueue.x-k8s.io/admission-gated-by]"));
    EXPECT_THAT(status.message(), HasSubstr(c.why)) << c.value;
  }
}

TEST(AdmissionGatesFormatTest, AnUpdateMayOnlyRemoveGates) {
  EXPECT_TRUE(ValidateAdmissionGatesOnUpdate(kGates, "example.com/gate2").ok());
  EXPECT_TRUE(ValidateAdmissionGatesOnUpdate(kGates, std::nullopt).ok());
  EXPECT_TRUE(ValidateAdmissionGatesOnUpdate(kGates, "").ok());
  EXPECT_TRUE(ValidateAdmissionGatesOnUpdate(std::nullopt, "").ok());

  absl::Status added = ValidateAdmissionGatesOnUpdate(std::nullopt, "example.com/gate1");
  EXPECT_EQ(added.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(added.message(), HasSubstr("cannot add admission gate after creation"));
  EXPECT_THAT(ValidateAdmissionGatesOnUpdate("", "example.com/gate1").message(),
              HasSubstr("cannot add admission gate after creation"));
  absl::Status swapped = ValidateAdmissionGatesOnUpdate(kGates, "example.com/gate1,example.com/x");
  EXPECT_THAT(swapped.message(), HasSubstr("can only remove gates, not add new ones"));
  EXPECT_THAT(swapped.message(), HasSubstr("\"example.com/x\""));
  // The new value is also checked as on create.
  EXPECT_THAT(ValidateAdmissionGatesOnUpdate("a.io/x,a.io/y", "a.io/x,a.io/x").message(),
              HasSubstr("duplicate gate name"));
}

class AdmissionGatesTest : public ::testing::Test {
 protected:
  AdmissionGatesTest() : AdmissionGatesTest(SchedulerConfig{}) {}
  explicit AdmissionGatesTest(const SchedulerConfig& config) : state_(config) {
    EXPECT_TRUE(state_.ApplyResourceFlavor({"default", {}, {}, {}}, now_).ok());
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.queueing_strategy = QueueingStrategy::kStrictFifo;
    cq.resource_groups = {{{"cpu"}, {{"default", {{"cpu", 5, std::nullopt, std::nullopt}}}}}};
    EXPECT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    EXPECT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  absl::Status Submit(WorkloadSpec spec) {
    now_ += absl::Milliseconds(1);
    return state_.Submit(std::move(spec), "", now_).status();
  }

  void Settle() {
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return;
    }
  }

  const Workload& Wl(const std::string& name) { return *state_.FindWorkload("ns/" + name); }

  const Condition& QuotaReserved(const std::string& name) {
    return *FindCondition(Wl(name).status, "QuotaReserved");
  }

  bool HasEvent(const std::string& name, absl::string_view reason) {
    for (const WorkloadEvent& e : Wl(name).status.events) {
      if (e.reason == reason) return true;
    }
    return false;
  }

  absl::Time now_ = kStart;
  ClusterState state_;
};

TEST_F(AdmissionGatesTest, AGatedWorkloadIsNotQueuedAndSaysWhy) {
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  Settle();
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kPending);
  EXPECT_EQ(state_.QueuedIn(Wl("gated").id), nullptr);
  EXPECT_THAT(PendingInClusterQueue(state_, "cq"), IsEmpty());
  EXPECT_EQ(QuotaReserved("gated").reason, "AdmissionGated");
  EXPECT_EQ(QuotaReserved("gated").message, std::string("Admission is gated by: ") + kGates);
  EXPECT_EQ(Wl("gated").status.pending_message, QuotaReserved("gated").message);
  EXPECT_TRUE(HasEvent("gated", "AdmissionGated"));
}

// StrictFIFO: a gated workload ahead of the others does not hold them back.
TEST_F(AdmissionGatesTest, AGatedWorkloadDoesNotBlockTheStrictFifoHead) {
  ASSERT_TRUE(Submit(CpuJob("gated", 5, kGates)).ok());
  ASSERT_TRUE(Submit(CpuJob("next", 5)).ok());
  Settle();
  EXPECT_EQ(Wl("next").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kPending);
}

TEST_F(AdmissionGatesTest, RemovingOneGateKeepsItGatedAndRemovingTheLastAdmitsIt) {
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  Settle();
  ASSERT_TRUE(state_.SetAdmissionGates("ns/gated", "example.com/gate2", now_).ok());
  Settle();
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kPending);
  EXPECT_EQ(QuotaReserved("gated").message, "Admission is gated by: example.com/gate2");
  EXPECT_FALSE(HasEvent("gated", "AdmissionGateCleared"));

  ASSERT_TRUE(state_.SetAdmissionGates("ns/gated", std::nullopt, now_).ok());
  EXPECT_EQ(QuotaReserved("gated").message,
            "AdmissionGatedBy cleared, waiting for quota reservation");
  EXPECT_TRUE(HasEvent("gated", "AdmissionGateCleared"));
  EXPECT_FALSE(Wl("gated").spec.metadata.has_value());
  Settle();
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kAdmitted);
}

TEST_F(AdmissionGatesTest, AnEmptyValueGatesNothing) {
  ASSERT_TRUE(Submit(CpuJob("open", 1, "")).ok());
  Settle();
  EXPECT_EQ(Wl("open").status.state, WorkloadState::kAdmitted);
}

TEST_F(AdmissionGatesTest, NoGateCanBeAddedAndNothingChangesOnError) {
  ASSERT_TRUE(Submit(CpuJob("admitted", 1)).ok());
  ASSERT_TRUE(Submit(CpuJob("gated", 1, "example.com/gate1")).ok());
  Settle();
  ASSERT_EQ(Wl("admitted").status.state, WorkloadState::kAdmitted);
  absl::Status added = state_.SetAdmissionGates("ns/admitted", "example.com/gate1", now_);
  EXPECT_EQ(added.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(added.message(), HasSubstr("cannot add admission gate after creation"));
  EXPECT_FALSE(Wl("admitted").spec.metadata.has_value());

  absl::Status other = state_.SetAdmissionGates("ns/gated", "example.com/gate9", now_);
  EXPECT_THAT(other.message(), HasSubstr("can only remove gates"));
  EXPECT_EQ(AdmissionGatedByOf(Wl("gated").spec), "example.com/gate1");
  EXPECT_EQ(state_.SetAdmissionGates("ns/missing", std::nullopt, now_).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AdmissionGatesTest, AMalformedGateIsRefusedOnSubmit) {
  absl::Status refused = Submit(CpuJob("bad", 1, "gate1"));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("\"gate1\""));
  EXPECT_EQ(state_.FindWorkload("ns/bad"), nullptr);
}

// An adapter that restarts resubmits its job's spec, gates and all: that is the same workload,
// and its gates change only through SetAdmissionGates.
TEST_F(AdmissionGatesTest, AResubmitWithOtherGatesIsTheSameWorkloadAndChangesNoGate) {
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  ASSERT_TRUE(state_.SetAdmissionGates("ns/gated", std::nullopt, now_).ok());
  Settle();
  ASSERT_EQ(Wl("gated").status.state, WorkloadState::kAdmitted);
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  EXPECT_FALSE(HasAdmissionGate(Wl("gated").spec, /*admission_gated_by=*/true));
  ASSERT_TRUE(Submit(CpuJob("gated", 1, "example.com/other")).ok());
  EXPECT_FALSE(HasAdmissionGate(Wl("gated").spec, /*admission_gated_by=*/true));
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kAdmitted);
  // Anything else that differs is still another workload.
  EXPECT_EQ(Submit(CpuJob("gated", 2, kGates)).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(AdmissionGatesTest, AdmissionOnRequestWaitsForTheGatesToo) {
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  absl::StatusOr<AdmitNowResult> result = state_.AdmitNow("ns/gated", /*dry_run=*/false, now_);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, AdmitNowResult::Outcome::kPending);
  EXPECT_THAT(result->message, HasSubstr("Admission is gated by"));
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kPending);
}

TEST_F(AdmissionGatesTest, ActivatingAGatedWorkloadLeavesItGated) {
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  ASSERT_TRUE(state_.SetActive("ns/gated", false, now_).ok());
  ASSERT_TRUE(state_.SetActive("ns/gated", true, now_).ok());
  Settle();
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kPending);
  EXPECT_EQ(QuotaReserved("gated").reason, "AdmissionGated");
  ASSERT_TRUE(state_.SetAdmissionGates("ns/gated", std::nullopt, now_).ok());
  Settle();
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kAdmitted);
}

class AdmissionGatesOffTest : public AdmissionGatesTest {
 protected:
  AdmissionGatesOffTest() : AdmissionGatesTest(GateOff()) {}
  static SchedulerConfig GateOff() {
    SchedulerConfig config;
    config.admission_gated_by = false;
    return config;
  }
};

// Kueue's AdmissionGatedBy gate off: HasAdmissionGate is false whatever the annotation says, and
// the webhook checks neither its format on create nor its changes on update. The annotation is
// kept as written.
TEST_F(AdmissionGatesOffTest, TheAnnotationIsKeptButNeitherCheckedNorObeyed) {
  ASSERT_TRUE(Submit(CpuJob("gated", 1, kGates)).ok());
  ASSERT_TRUE(Submit(CpuJob("malformed", 1, "gate1,gate1")).ok());
  EXPECT_FALSE(HasAdmissionGate(Wl("gated").spec, /*admission_gated_by=*/false));
  EXPECT_TRUE(HasAdmissionGate(Wl("gated").spec, /*admission_gated_by=*/true));
  Settle();
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Wl("malformed").status.state, WorkloadState::kAdmitted);
  EXPECT_FALSE(HasEvent("gated", "AdmissionGated"));
  // A gate added after creation, refused with the gate on, is taken as it is.
  ASSERT_TRUE(state_.SetAdmissionGates("ns/gated", "example.com/gate1,example.com/x", now_).ok());
  EXPECT_EQ(AdmissionGatedByOf(Wl("gated").spec), "example.com/gate1,example.com/x");
  EXPECT_EQ(Wl("gated").status.state, WorkloadState::kAdmitted);
}

}  // namespace
}  // namespace tollgate::core
