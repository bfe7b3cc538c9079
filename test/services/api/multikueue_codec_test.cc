// MultiKueue's codec: every rule rejects with the field path and the value in the message,
// valid objects convert, and core -> proto -> core is the identity.
#include "services/api/multikueue_codec.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/services/api/codec_test_support.h"

namespace tollgate::api {
namespace {

using namespace ::tollgate::api::codec_test;  // NOLINT: the shared builders

v1::MultiKueueConfig ValidConfig() {
  v1::MultiKueueConfig c;
  c.mutable_metadata()->set_name("multikueue");
  c.mutable_spec()->add_clusters("worker-h100");
  c.mutable_spec()->add_clusters("worker-a100");
  return c;
}

v1::MultiKueueCluster EndpointCluster() {
  v1::MultiKueueCluster c;
  c.mutable_metadata()->set_name("worker-h100");
  v1::MultiKueueWorkerEndpoint* e = c.mutable_spec()->mutable_endpoint();
  e->set_address("h100.example.com:7443");
  e->set_ca_file("/etc/tollgate/ca.pem");
  e->set_cert_file("/etc/tollgate/manager.pem");
  e->set_key_file("/etc/tollgate/manager-key.pem");
  return c;
}

TEST(MultiKueueConfigFromProtoTest, RejectsEveryInvalidField) {
  using P = v1::MultiKueueConfig;
  std::vector<InvalidCase<P>> cases = {
      {"no clusters",
       [](P& p) { p.mutable_spec()->clear_clusters(); },
       {"spec.clusters:", "at least 1", "got 0"}},
      {"too many clusters",
       [](P& p) {
         p.mutable_spec()->clear_clusters();
         for (int i = 0; i < 21; ++i) p.mutable_spec()->add_clusters(absl::StrCat("w", i));
       },
       {"spec.clusters:", "at most 20", "got 21"}},
      {"duplicate cluster",
       [](P& p) { p.mutable_spec()->add_clusters("worker-h100"); },
       {"spec.clusters[2]:", "\"worker-h100\" is named twice"}},
      {"cluster name",
       [](P& p) { p.mutable_spec()->set_clusters(1, "Worker_A"); },
       {"spec.clusters[1]:", "\"Worker_A\""}},
  };
  Append(cases, MetadataCases<P>());
  ExpectAllRejected(ValidConfig(), MultiKueueConfigFromProto, "MultiKueueConfig", cases);
}

TEST(MultiKueueClusterFromProtoTest, RejectsEveryInvalidField) {
  using P = v1::MultiKueueCluster;
  auto endpoint = [](P& p) { return p.mutable_spec()->mutable_endpoint(); };
  std::vector<InvalidCase<P>> cases = {
      {"no source",
       [](P& p) { p.mutable_spec()->Clear(); },
       {"spec.kubeConfig: is required (or spec.endpoint)"}},
      {"both sources",
       [](P& p) { p.mutable_spec()->mutable_kube_config()->set_location("s"); },
       {"spec: kubeConfig and endpoint are mutually exclusive"}},
      {"no address",
       [&](P& p) { endpoint(p)->clear_address(); },
       {"spec.endpoint.address: is required"}},
      {"address without port",
       [&](P& p) { endpoint(p)->set_address("h100.example.com"); },
       {"spec.endpoint.address:", "\"h100.example.com\" is not host:port"}},
      {"address with port zero",
       [&](P& p) { endpoint(p)->set_address("h100.example.com:0"); },
       {"spec.endpoint.address:", "\"h100.example.com:0\""}},
      {"no CA", [&](P& p) { endpoint(p)->clear_ca_file(); }, {"spec.endpoint.caFile: is required"}},
      {"relative CA",
       [&](P& p) { endpoint(p)->set_ca_file("ca.pem"); },
       {"spec.endpoint.caFile:", "\"ca.pem\" is not an absolute path"}},
      {"cert without key",
       [&](P& p) { endpoint(p)->clear_key_file(); },
       {"spec.endpoint.keyFile:", "mutual TLS needs both"}},
      {"relative token file",
       [&](P& p) { endpoint(p)->set_token_file("token"); },
       {"spec.endpoint.tokenFile:", "\"token\""}},
      {"insecure beyond loopback",
       [&](P& p) {
         endpoint(p)->clear_ca_file();
         endpoint(p)->clear_cert_file();
         endpoint(p)->clear_key_file();
         endpoint(p)->set_insecure(true);
       },
       {"spec.endpoint.insecure:", "only to a loopback address", "\"h100.example.com:7443\""}},
      {"insecure with TLS files",
       [&](P& p) {
         endpoint(p)->set_address("127.0.0.1:7443");
         endpoint(p)->set_insecure(true);
       },
       {"spec.endpoint.caFile:", "must be empty with spec.endpoint.insecure"}},
      {"bad location type",
       [](P& p) {
         p.mutable_spec()->clear_endpoint();
         p.mutable_spec()->mutable_kube_config()->set_location("s");
         p.mutable_spec()->mutable_kube_config()->set_location_type("File");
       },
       {"spec.kubeConfig.locationType:", "\"File\""}},
      {"secret name",
       [](P& p) {
         p.mutable_spec()->clear_endpoint();
         p.mutable_spec()->mutable_kube_config()->set_location("Bad_Secret");
       },
       {"spec.kubeConfig.location:", "\"Bad_Secret\""}},
      {"relative path",
       [](P& p) {
         p.mutable_spec()->clear_endpoint();
         p.mutable_spec()->mutable_kube_config()->set_location("kubeconfig");
         p.mutable_spec()->mutable_kube_config()->set_location_type("Path");
       },
       {"spec.kubeConfig.location:", "\"kubeconfig\" is not an absolute path"}},
  };
  Append(cases, MetadataCases<P>());
  ExpectAllRejected(EndpointCluster(), MultiKueueClusterFromProto, "MultiKueueCluster", cases);
}

TEST(MultiKueueCodecTest, RoundTrips) {
  absl::StatusOr<core::MultiKueueConfigSpec> config = MultiKueueConfigFromProto(ValidConfig());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->clusters, (std::vector<std::string>{"worker-h100", "worker-a100"}));
  EXPECT_EQ(*MultiKueueConfigFromProto(MultiKueueConfigToProto(*config)), *config);

  absl::StatusOr<core::MultiKueueClusterSpec> endpoint =
      MultiKueueClusterFromProto(EndpointCluster());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(*MultiKueueClusterFromProto(MultiKueueClusterToProto(*endpoint, std::nullopt)),
            *endpoint);

  v1::MultiKueueCluster loopback;
  loopback.mutable_metadata()->set_name("local");
  loopback.mutable_spec()->mutable_endpoint()->set_address("[::1]:7000");
  loopback.mutable_spec()->mutable_endpoint()->set_insecure(true);
  ASSERT_TRUE(MultiKueueClusterFromProto(loopback).ok());

  // Kueue's default locationType is Secret, spelled out on the way back.
  v1::MultiKueueCluster secret;
  secret.mutable_metadata()->set_name("worker1");
  secret.mutable_spec()->mutable_kube_config()->set_location("worker1-secret");
  absl::StatusOr<core::MultiKueueClusterSpec> from_secret = MultiKueueClusterFromProto(secret);
  ASSERT_TRUE(from_secret.ok()) << from_secret.status();
  EXPECT_EQ(from_secret->kube_config->location_type, core::KubeConfigLocationType::kSecret);
  const core::Condition active{"Active", true, "Active", "Connected",
                               absl::FromUnixSeconds(1767225600)};
  const v1::MultiKueueCluster back = MultiKueueClusterToProto(*from_secret, active);
  EXPECT_EQ(back.spec().kube_config().location_type(), "Secret");
  EXPECT_EQ(*MultiKueueClusterActiveFromProto(back), active);
}

TEST(MultiKueueCodecTest, StoredActiveConditionIsChecked) {
  v1::MultiKueueCluster c = EndpointCluster();
  v1::Condition* cond = c.mutable_status()->add_conditions();
  cond->set_type("Active");
  cond->set_status("Maybe");
  absl::StatusOr<std::optional<core::Condition>> active = MultiKueueClusterActiveFromProto(c);
  ASSERT_FALSE(active.ok());
  EXPECT_THAT(active.status().message(), HasSubstr("status.conditions[0].status"));
  c.mutable_status()->Clear();
  EXPECT_EQ(*MultiKueueClusterActiveFromProto(c), std::nullopt);
}

}  // namespace
}  // namespace tollgate::api
