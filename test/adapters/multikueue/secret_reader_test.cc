// kubeConfig Secrets read through the Kubernetes API (adapters/multikueue/secret_reader.h), and
// a worker resolved from one: against the in-memory API of test/adapters/fakes.
#include "adapters/multikueue/secret_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "services/manifest/kube_resource.h"
#include "test/adapters/fakes/fake_kube_client.h"

namespace tollgate::multikueue {
namespace {

using ::testing::HasSubstr;

constexpr char kKubeConfig[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: w\n"
    "contexts: [{name: w, context: {cluster: w, user: m}}]\n"
    "clusters: [{name: w, cluster: {server: \"https://w1.example.com:7443\"}}]\n"
    "users: [{name: m, user: {token: manager-token}}]\n";

class SecretReaderTest : public ::testing::Test {
 protected:
  void PutSecret(const std::string& ns, const std::string& name, const kubeapi::Json& data) {
    kube_.Put(manifest::SecretResource(), {{"apiVersion", "v1"},
                                           {"kind", "Secret"},
                                           {"metadata", {{"name", name}, {"namespace", ns}}},
                                           {"data", data}});
  }
  static v1::MultiKueueClusterSpec SecretSpec(const std::string& name) {
    v1::MultiKueueClusterSpec spec;
    spec.mutable_kube_config()->set_location(name);
    spec.mutable_kube_config()->set_location_type("Secret");
    return spec;
  }

  kube::FakeKubeClient kube_;
  SecretReader read_ = ApiSecretReader(kube_, "kueue-system");
};

TEST_F(SecretReaderTest, TheKeyIsDecodedFromTheControllersNamespace) {
  PutSecret("kueue-system", "w1", {{"kubeconfig", absl::Base64Escape(kKubeConfig)}});
  absl::StatusOr<std::string> text = read_("w1");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, kKubeConfig);
}

TEST_F(SecretReaderTest, WhatIsMissingIsNamed) {
  // A Secret of the same name in another namespace is not read.
  PutSecret("team", "w1", {{"kubeconfig", absl::Base64Escape(kKubeConfig)}});
  absl::StatusOr<std::string> absent = read_("w1");
  EXPECT_TRUE(absl::IsNotFound(absent.status()));
  EXPECT_THAT(absent.status().message(),
              HasSubstr("no Secret \"w1\" in namespace \"kueue-system\""));

  PutSecret("kueue-system", "no-key", {{"token", "dA=="}});
  EXPECT_THAT(read_("no-key").status().message(),
              HasSubstr("key \"kubeconfig\" not found in secret \"no-key\""));

  PutSecret("kueue-system", "not-base64", {{"kubeconfig", "%%%"}});
  EXPECT_THAT(read_("not-base64").status().message(), HasSubstr("data.kubeconfig is not base64"));
}

TEST_F(SecretReaderTest, AWorkerResolvesFromTheSecretByKueuesRules) {
  PutSecret("kueue-system", "w1", {{"kubeconfig", absl::Base64Escape(kKubeConfig)}});
  const ResolvedWorker resolved = ResolveWorker(SecretSpec("w1"), "/nowhere", "", read_);
  ASSERT_TRUE(resolved.source.has_value()) << resolved.reason << ": " << resolved.message;
  EXPECT_EQ(resolved.source->address, "w1.example.com:7443");
  EXPECT_EQ(resolved.source->credentials.bearer_token, "manager-token");

  // The Secret changed: a new fingerprint, so a new connection.
  PutSecret("kueue-system", "w1",
            {{"kubeconfig", absl::Base64Escape(absl::StrCat(kKubeConfig, "# rotated\n"))}});
  EXPECT_NE(ResolveWorker(SecretSpec("w1"), "/nowhere", "", read_).fingerprint,
            resolved.fingerprint);

  // Kueue's validation applies to a Secret's kubeconfig as to a file's.
  PutSecret("kueue-system", "w2",
            {{"kubeconfig",
              absl::Base64Escape("apiVersion: v1\nkind: Config\ncurrent-context: w\n"
                                 "contexts: [{name: w, context: {cluster: w, user: m}}]\n"
                                 "clusters: [{name: w, cluster: {server: \"https://w2:1\"}}]\n"
                                 "users: [{name: m, user: {tokenFile: /t}}]\n")}});
  const ResolvedWorker insecure = ResolveWorker(SecretSpec("w2"), "/nowhere", "", read_);
  EXPECT_EQ(insecure.reason, "InsecureKubeConfig");
  EXPECT_THAT(insecure.message, HasSubstr("tokenFile is not allowed"));

  const ResolvedWorker missing = ResolveWorker(SecretSpec("w3"), "/nowhere", "", read_);
  EXPECT_EQ(missing.reason, "BadKubeConfig");
  EXPECT_THAT(missing.message, HasSubstr("kubeConfig Secret \"w3\": no Secret \"w3\" in namespace "
                                         "\"kueue-system\""));

  // A name that is no Secret's is refused before any call.
  const ResolvedWorker walking = ResolveWorker(SecretSpec("../w1"), "/nowhere", "", read_);
  EXPECT_EQ(walking.reason, "BadKubeConfig");
  EXPECT_THAT(walking.message, HasSubstr("not a valid Secret name"));
}

}  // namespace
}  // namespace tollgate::multikueue
