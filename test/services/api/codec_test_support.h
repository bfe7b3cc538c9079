#pragma once

// Builders of valid API objects and the table-driven rejection check shared by the codec tests
// (config_codec_test.cc, workload_codec_test.cc).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_text.h"
#include "core/types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api::codec_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using ::testing::HasSubstr;
using ::testing::StartsWith;

inline constexpr int64_t kGi = int64_t{1} << 30;

// --- Builders --------------------------------------------------------------------------------

inline v1::ResourceQuota Quota(const std::string& name, const std::string& nominal,
                               std::optional<std::string> borrowing = std::nullopt,
                               std::optional<std::string> lending = std::nullopt) {
  v1::ResourceQuota q;
  q.set_name(name);
  q.set_nominal_quota(nominal);
  if (borrowing.has_value()) q.set_borrowing_limit(*borrowing);
  if (lending.has_value()) q.set_lending_limit(*lending);
  return q;
}

inline core::ResourceQuotaSpec Quota(const std::string& resource, int64_t nominal,
                                     std::optional<int64_t> borrowing = std::nullopt,
                                     std::optional<int64_t> lending = std::nullopt) {
  return core::ResourceQuotaSpec{resource, nominal, borrowing, lending};
}

inline v1::FlavorQuotas Flavor(const std::string& name,
                               const std::vector<v1::ResourceQuota>& quotas) {
  v1::FlavorQuotas f;
  f.set_name(name);
  for (const v1::ResourceQuota& q : quotas) *f.add_resources() = q;
  return f;
}

inline v1::ResourceGroup Group(const std::vector<std::string>& covered,
                               const std::vector<v1::FlavorQuotas>& flavors) {
  v1::ResourceGroup g;
  for (const std::string& c : covered) g.add_covered_resources(c);
  for (const v1::FlavorQuotas& f : flavors) *g.add_flavors() = f;
  return g;
}

// A group covering `n` resources r<offset>..r<offset+n-1> with `flavors` flavors named
// f<flavor_offset>...
inline v1::ResourceGroup WideGroup(int n, int offset, int flavors, int flavor_offset) {
  v1::ResourceGroup g;
  for (int i = 0; i < n; ++i) g.add_covered_resources(absl::StrCat("r", offset + i));
  for (int j = 0; j < flavors; ++j) {
    v1::FlavorQuotas* f = g.add_flavors();
    f->set_name(absl::StrCat("f", flavor_offset + j));
    for (int i = 0; i < n; ++i) *f->add_resources() = Quota(absl::StrCat("r", offset + i), "1");
  }
  return g;
}

inline v1::ClusterQueue ValidClusterQueue() {
  v1::ClusterQueue cq;
  cq.mutable_metadata()->set_name("team-a");
  v1::ClusterQueueSpec* s = cq.mutable_spec();
  s->set_cohort("org");
  *s->add_resource_groups() =
      Group({"cpu", "memory"},
            {Flavor("on-demand", {Quota("cpu", "10", "5", "4"), Quota("memory", "64Gi")}),
             Flavor("spot", {Quota("cpu", "1.5"), Quota("memory", "32Gi")})});
  *s->add_resource_groups() =
      Group({"nvidia.com/gpu"}, {Flavor("a100", {Quota("nvidia.com/gpu", "8")})});
  return cq;
}

inline v1::Cohort ValidCohort() {
  v1::Cohort c;
  c.mutable_metadata()->set_name("org");
  c.mutable_spec()->set_parent("company");
  *c.mutable_spec()->add_resource_groups() =
      Group({"cpu"}, {Flavor("on-demand", {Quota("cpu", "4", "2", "8")})});
  return c;
}

inline v1::LocalQueue ValidLocalQueue() {
  v1::LocalQueue lq;
  lq.mutable_metadata()->set_namespace_("team-a");
  lq.mutable_metadata()->set_name("main.queue");
  lq.mutable_spec()->set_cluster_queue("team-a");
  return lq;
}

inline v1::ResourceFlavor ValidResourceFlavor() {
  v1::ResourceFlavor rf;
  rf.mutable_metadata()->set_name("spot");
  (*rf.mutable_spec()->mutable_node_labels())["cloud.example.com/spot"] = "true";
  v1::Taint* t = rf.mutable_spec()->add_node_taints();
  t->set_key("spot");
  t->set_value("true");
  t->set_effect("NoSchedule");
  v1::Toleration* tol = rf.mutable_spec()->add_tolerations();
  tol->set_key("spot");
  tol->set_operator_("Exists");
  tol->set_effect("NoSchedule");
  return rf;
}

inline v1::Namespace ValidNamespace() {
  v1::Namespace ns;
  ns.mutable_metadata()->set_name("team-a");
  (*ns.mutable_metadata()->mutable_labels())["kubernetes.io/metadata.name"] = "team-a";
  return ns;
}

inline v1::WorkloadPriorityClass ValidWorkloadPriorityClass() {
  v1::WorkloadPriorityClass pc;
  pc.mutable_metadata()->set_name("high");
  pc.set_value(1000);
  return pc;
}

inline v1::PriorityClass ValidPodPriorityClass() {
  v1::PriorityClass pc;
  pc.mutable_metadata()->set_name("system-critical");
  pc.set_value(2000);
  return pc;
}

inline v1::Workload ValidWorkload() {
  v1::Workload wl;
  wl.mutable_metadata()->set_namespace_("ns");
  wl.mutable_metadata()->set_name("x");
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("driver");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "500m";
  (*ps->mutable_requests())["memory"] = "1Gi";
  ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("workers");
  ps->set_count(4);
  ps->set_min_count(2);
  (*ps->mutable_requests())["nvidia.com/gpu"] = "1";
  (*ps->mutable_requests())["cpu"] = "2";
  (*ps->mutable_node_selector())["gpu"] = "a100";
  v1::Toleration* t = ps->add_tolerations();
  t->set_key("gpu");
  t->set_value("true");
  t->set_effect("NoSchedule");
  return wl;
}

// --- Table-driven rejection ------------------------------------------------------------------

template <typename P>
struct InvalidCase {
  std::string name;
  std::function<void(P&)> mutate;
  // Every one must appear in the message: the field path and the offending value at least.
  std::vector<std::string> want;
};

// "KIND NAME" or "KIND NAMESPACE/NAME", as the object (possibly renamed by the case) reads.
template <typename P>
std::string ObjectLabel(const std::string& kind, const P& proto) {
  const v1::ObjectMeta& m = proto.metadata();
  // Long names are cut in messages (core/error_text.h).
  return absl::StrCat(
      kind, " ", m.namespace_().empty() ? "" : absl::StrCat(core::EchoedText(m.namespace_()), "/"),
      m.name().empty() ? "<unnamed>" : core::EchoedText(m.name()));
}

template <typename P, typename Convert>
void ExpectAllRejected(const P& base, Convert convert, const std::string& kind,
                       const std::vector<InvalidCase<P>>& cases) {
  ASSERT_TRUE(convert(base).ok()) << "the base object must be valid: " << convert(base).status();
  for (const InvalidCase<P>& c : cases) {
    SCOPED_TRACE(c.name);
    P proto = base;
    c.mutate(proto);
    const auto result = convert(proto);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(result.status().message());
    EXPECT_THAT(message, StartsWith(ObjectLabel(kind, proto) + ": ")) << message;
    for (const std::string& want : c.want) EXPECT_THAT(message, HasSubstr(want));
  }
}

inline std::string Repeat(char c, size_t n) { return std::string(n, c); }

// Rules shared by every object with ObjectMeta.
template <typename P>
std::vector<InvalidCase<P>> MetadataCases() {
  return {
      {"label key",
       [](P& p) { (*p.mutable_metadata()->mutable_labels())["bad key"] = "v"; },
       {"metadata.labels[bad key]", "\"bad key\""}},
      {"label value",
       [](P& p) { (*p.mutable_metadata()->mutable_labels())["k"] = "bad value"; },
       {"metadata.labels[k]", "\"bad value\""}},
      {"annotation key",
       [](P& p) { (*p.mutable_metadata()->mutable_annotations())["a/b/c"] = "v"; },
       {"metadata.annotations[a/b/c]", "\"a/b/c\""}},
      {"annotations too large",
       [](P& p) {
         (*p.mutable_metadata()->mutable_annotations())["big"] = Repeat('x', 256 * 1024);
       },
       {"metadata.annotations", "262147"}},
  };
}

template <typename P>
void Append(std::vector<InvalidCase<P>>& to, std::vector<InvalidCase<P>> more) {
  for (auto& c : more) to.push_back(std::move(c));
}

}  // namespace tollgate::api::codec_test
