#include "services/manifest/kube_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tollgate::manifest {
namespace {

class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("kubeconfig-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(KubeConfigTest, CurrentContextWithInlineData) {
  const std::string yaml = absl::StrCat(R"(
apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: other
  context: {cluster: nowhere, user: nobody}
- name: dev
  context: {cluster: kind, user: admin, namespace: team-a}
clusters:
- name: kind
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: )",
                                        absl::Base64Escape("CA PEM"), R"(
users:
- name: admin
  user:
    client-certificate-data: )",
                                        absl::Base64Escape("CERT PEM"), R"(
    client-key-data: )",
                                        absl::Base64Escape("KEY PEM"), "\n");
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(yaml, dir_.string(), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, "CA PEM");
  EXPECT_EQ(config->client_cert_pem, "CERT PEM");
  EXPECT_EQ(config->client_key_pem, "KEY PEM");
  EXPECT_EQ(config->namespace_name, "team-a");
}

TEST_F(KubeConfigTest, FilesResolveAgainstTheKubeconfigDirectory) {
  Write("ca.crt", "FILE CA");
  Write("token", "secret-token\n");
  Write("config", R"(
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://k:443", certificate-authority: ca.crt}}]
users: [{name: u, user: {tokenFile: token}}]
)");
  absl::StatusOr<KubeConfig> config = LoadKubeConfigFile((dir_ / "config").string(), "");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ca_pem, "FILE CA");
  EXPECT_EQ(config->token_file, (dir_ / "token").string());
}

TEST_F(KubeConfigTest, ExplicitContextAndToken) {
  const std::string yaml = R"(
current-context: a
contexts:
- {name: a, context: {cluster: x, user: y}}
- {name: b, context: {cluster: x, user: z}}
clusters: [{name: x, cluster: {server: "http://127.0.0.1:8080"}}]
users: [{name: y, user: {token: aaa}}, {name: z, user: {token: bbb}}]
)";
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(yaml, "", "b");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->token, "bbb");
}

struct RefusedCase {
  std::string name;
  std::string yaml;
  std::string want;
};

class KubeConfigRefusedTest : public ::testing::TestWithParam<RefusedCase> {};

TEST_P(KubeConfigRefusedTest, SaysWhy) {
  absl::StatusOr<KubeConfig> config = ParseKubeConfig(GetParam().yaml, "", "");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()), ::testing::HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, KubeConfigRefusedTest,
    ::testing::Values(RefusedCase{"NoContext", "clusters: []\n", "current-context"},
                      RefusedCase{
                          "UnknownCluster",
                          "current-context: a\ncontexts: [{name: a, context: {cluster: x}}]\n",
                          "no clusters entry named \"x\""},
                      RefusedCase{"ExecPlugin", R"(
current-context: a
contexts: [{name: a, context: {cluster: x, user: u}}]
clusters: [{name: x, cluster: {server: "https://x"}}]
users: [{name: u, user: {exec: {command: gke-gcloud-auth-plugin}}}]
)",
                                  "exec"},
                      RefusedCase{"InsecureSkipVerify", R"(
current-context: a
contexts: [{name: a, context: {cluster: x}}]
clusters: [{name: x, cluster: {server: "https://x", insecure-skip-tls-verify: true}}]
)",
                                  "insecure-skip-tls-verify"},
                      RefusedCase{"BadBase64", R"(
current-context: a
contexts: [{name: a, context: {cluster: x}}]
clusters: [{name: x, cluster: {server: "https://x", certificate-authority-data: "!!!"}}]
)",
                                  "not base64"},
                      RefusedCase{"NotYaml", "{{{", "kubeconfig"}),
    [](const auto& info) { return info.param.name; });

TEST_F(KubeConfigTest, InClusterReadsTheServiceAccount) {
  Write("token", "tok");
  Write("ca.crt", "CA");
  Write("namespace", "tollgate-system\n");
  absl::StatusOr<KubeConfig> config = LoadInClusterConfig("10.0.0.1", "443", dir_.string());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.0.0.1:443");
  EXPECT_EQ(config->token_file, (dir_ / "token").string());
  EXPECT_EQ(config->ca_pem, "CA");
  EXPECT_EQ(config->namespace_name, "tollgate-system");
  config = LoadInClusterConfig("fd00::1", "443", dir_.string());
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
  EXPECT_EQ(LoadInClusterConfig("", "", dir_.string()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tollgate::manifest
