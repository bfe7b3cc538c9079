// Where a MultiKueueCluster's worker is (adapters/multikueue/worker_source.h): the kubeconfig
// rules Kueue applies to MultiKueue clusters (validateKubeconfig, validateKubeConfigPath), the
// server URL as a gRPC target, and the reasons an unusable cluster is reported with.

#include "adapters/multikueue/worker_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "test/support/scratch_dir.h"

namespace tollgate::multikueue {
namespace {

using ::testing::HasSubstr;

// A kubeconfig with one context; `cluster` and `user` are the YAML of their maps.
std::string KubeConfigYaml(const std::string& cluster, const std::string& user) {
  return absl::StrCat("apiVersion: v1\nkind: Config\ncurrent-context: w\n",
                      "contexts: [{name: w, context: {cluster: w, user: m}}]\n",
                      "clusters: [{name: w, cluster: ", cluster, "}]\n",
                      "users: [{name: m, user: ", user, "}]\n");
}

TEST(WorkerSourceTest, ServerUrlsBecomeGrpcTargets) {
  EXPECT_EQ(TargetOfServer("https://w1.example.com:7443")->address, "w1.example.com:7443");
  EXPECT_TRUE(TargetOfServer("https://w1.example.com:7443")->tls);
  EXPECT_EQ(TargetOfServer("https://w1.example.com")->address, "w1.example.com:443");
  EXPECT_EQ(TargetOfServer("https://w1.example.com:7443/prefix")->address, "w1.example.com:7443");
  EXPECT_EQ(TargetOfServer("https://[fd00::1]:7443")->address, "[fd00::1]:7443");
  EXPECT_FALSE(TargetOfServer("http://127.0.0.1:5000")->tls);
  EXPECT_FALSE(TargetOfServer("w1.example.com:7443").has_value());
  EXPECT_FALSE(TargetOfServer("https://").has_value());
  EXPECT_FALSE(TargetOfServer("http://w1.example.com").has_value());
}

struct InsecureCase {
  std::string name;
  std::string cluster;
  std::string user;
  std::string reason;
};

class InsecureKubeConfigTest : public ::testing::TestWithParam<InsecureCase> {};

TEST_P(InsecureKubeConfigTest, IsRefusedWithKueuesMessage) {
  EXPECT_EQ(InsecureKubeConfigReason(KubeConfigYaml(GetParam().cluster, GetParam().user)),
            GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, InsecureKubeConfigTest,
    ::testing::Values(
        InsecureCase{"Allowed", "{server: \"https://w1.example.com:7443\"}", "{token: t}", ""},
        InsecureCase{"TokenFile", "{server: \"https://w1:1\"}", "{tokenFile: /t}",
                     "tokenFile is not allowed"},
        InsecureCase{"SkipTlsVerify", "{server: \"https://w1:1\", insecure-skip-tls-verify: true}",
                     "{}", "insecure TLS verification is not allowed for cluster w"},
        InsecureCase{"CaFile", "{server: \"https://w1:1\", certificate-authority: /ca.pem}", "{}",
                     "certificate-authority file paths are not allowed, use "
                     "certificate-authority-data for cluster w"},
        InsecureCase{"NoServer", "{}", "{}", "server URL is required for cluster w"},
        InsecureCase{"BasicAuth", "{server: \"https://w1:1\"}", "{username: u, password: p}",
                     "basic auth is not allowed"},
        InsecureCase{"Exec", "{server: \"https://w1:1\"}", "{exec: {command: x}}",
                     "exec plugins are not allowed"},
        InsecureCase{"AuthProvider", "{server: \"https://w1:1\"}", "{auth-provider: {name: x}}",
                     "auth providers are not allowed"},
        InsecureCase{"UntrustedHost", "{server: \"https://Not_A_Host:1\"}", "{}",
                     "untrusted server endpoint"}),
    [](const auto& info) { return info.param.name; });

class ResolveWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> dir = test_support::MakeScratchDir("worker-source");
    ASSERT_TRUE(dir.ok()) << dir.status();
    root_ = *dir;
    allowed_ = root_ + "/kubeconfigs";
    std::filesystem::create_directories(allowed_);
  }
  void TearDown() override { test_support::RemoveScratchDir(root_); }

  // Writes `text` to `path` and returns a spec naming it.
  v1::MultiKueueClusterSpec PathSpec(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    v1::MultiKueueClusterSpec spec;
    spec.mutable_kube_config()->set_location(path);
    spec.mutable_kube_config()->set_location_type("Path");
    return spec;
  }

  std::string root_;
  std::string allowed_;
};

TEST_F(ResolveWorkerTest, AKubeConfigUnderTheDirectoryGivesTheWorkersAddressAndToken) {
  const std::string ca = absl::Base64Escape("not a real CA, read by gRPC at connect time");
  const v1::MultiKueueClusterSpec spec =
      PathSpec(allowed_ + "/w1.yaml",
               KubeConfigYaml(absl::StrCat("{server: \"https://w1.example.com:7443\", "
                                           "certificate-authority-data: ",
                                           ca, "}"),
                              "{token: manager-token}"));
  const ResolvedWorker resolved = ResolveWorker(spec, allowed_);
  ASSERT_TRUE(resolved.source.has_value()) << resolved.reason << ": " << resolved.message;
  EXPECT_EQ(resolved.source->address, "w1.example.com:7443");
  EXPECT_EQ(resolved.source->credentials.bearer_token, "manager-token");
  EXPECT_EQ(resolved.source->address_field, "kubeconfig server");

  // A rewritten file is a new fingerprint (the connection is made again); the same is not.
  EXPECT_EQ(ResolveWorker(spec, allowed_).fingerprint, resolved.fingerprint);
  PathSpec(allowed_ + "/w1.yaml",
           KubeConfigYaml("{server: \"https://w1.example.com:7444\"}", "{token: manager-token}"));
  EXPECT_NE(ResolveWorker(spec, allowed_).fingerprint, resolved.fingerprint);
}

TEST_F(ResolveWorkerTest, PlaintextIsOnlyForLoopback) {
  const ResolvedWorker loopback =
      ResolveWorker(PathSpec(allowed_ + "/local.yaml",
                             KubeConfigYaml("{server: \"http://127.0.0.1:5000\"}", "{}")),
                    allowed_);
  ASSERT_TRUE(loopback.source.has_value()) << loopback.message;
  EXPECT_EQ(loopback.source->address, "127.0.0.1:5000");

  const ResolvedWorker remote = ResolveWorker(
      PathSpec(allowed_ + "/far.yaml", KubeConfigYaml("{server: \"http://10.1.2.3:5000\"}", "{}")),
      allowed_);
  EXPECT_FALSE(remote.source.has_value());
  EXPECT_EQ(remote.reason, "InsecureKubeConfig");
  EXPECT_THAT(remote.message, HasSubstr("allowed only to a loopback address"));
}

TEST_F(ResolveWorkerTest, PathsOutsideTheDirectoryAreRefused) {
  const std::string text = KubeConfigYaml("{server: \"https://w1:1\"}", "{}");
  const ResolvedWorker outside = ResolveWorker(PathSpec(root_ + "/w1.yaml", text), allowed_);
  EXPECT_EQ(outside.reason, "BadKubeConfig");
  EXPECT_THAT(outside.message, HasSubstr("is not under"));

  // A symlink inside that points outside is followed, then refused.
  std::filesystem::create_symlink(root_ + "/w1.yaml", allowed_ + "/link.yaml");
  v1::MultiKueueClusterSpec link;
  link.mutable_kube_config()->set_location(allowed_ + "/link.yaml");
  link.mutable_kube_config()->set_location_type("Path");
  EXPECT_THAT(ResolveWorker(link, allowed_).message, HasSubstr("is not under"));

  // ".." is resolved lexically first (Go's filepath.Clean), so only a leading one is left.
  link.mutable_kube_config()->set_location(allowed_ + "/../w1.yaml");
  EXPECT_THAT(ResolveWorker(link, allowed_).message, HasSubstr("is not under"));
  link.mutable_kube_config()->set_location("../w1.yaml");
  EXPECT_THAT(ResolveWorker(link, allowed_).message, HasSubstr("path contains \"..\""));
  link.mutable_kube_config()->set_location("kubeconfigs/w1.yaml");
  EXPECT_THAT(ResolveWorker(link, allowed_).message, HasSubstr("path must be absolute"));
  link.mutable_kube_config()->set_location(allowed_ + "/missing.yaml");
  EXPECT_EQ(ResolveWorker(link, allowed_).reason, "BadKubeConfig");
}

TEST_F(ResolveWorkerTest, UnusableSourcesSayWhy) {
  const ResolvedWorker insecure =
      ResolveWorker(PathSpec(allowed_ + "/w.yaml",
                             KubeConfigYaml("{server: \"https://w1:1\"}", "{tokenFile: /t}")),
                    allowed_);
  EXPECT_EQ(insecure.reason, "InsecureKubeConfig");
  EXPECT_EQ(insecure.message, "tokenFile is not allowed");

  const ResolvedWorker unparsable =
      ResolveWorker(PathSpec(allowed_ + "/bad.yaml", "current-context: nowhere\n"), allowed_);
  EXPECT_EQ(unparsable.reason, "BadKubeConfig");
  EXPECT_THAT(unparsable.message, HasSubstr("kubeconfig"));

  v1::MultiKueueClusterSpec secret;
  secret.mutable_kube_config()->set_location("w1-secret");
  secret.mutable_kube_config()->set_location_type("Secret");
  // Without --kubeconfig-secrets-dir a Secret is not read, and the message says how it would be.
  const ResolvedWorker from_secret = ResolveWorker(secret, allowed_);
  EXPECT_EQ(from_secret.reason, "BadKubeConfig");
  EXPECT_THAT(from_secret.message, HasSubstr("kubeConfig Secret \"w1-secret\""));
  EXPECT_THAT(from_secret.message, HasSubstr("--kubeconfig-secrets-dir"));

  v1::MultiKueueClusterSpec endpoint;
  endpoint.mutable_endpoint()->set_address("w1.example.com:7443");
  endpoint.mutable_endpoint()->set_ca_file(root_ + "/missing-ca.pem");
  const ResolvedWorker no_ca = ResolveWorker(endpoint, allowed_);
  EXPECT_EQ(no_ca.reason, "BadKubeConfig");
  EXPECT_THAT(no_ca.message, HasSubstr("missing-ca.pem"));
}

// A Secret mounted as Kubernetes mounts one: DIR/<secret>/kubeconfig, a symlink into the
// `..data` symlink to the timestamped directory holding the keys.
class KubeConfigSecretTest : public ResolveWorkerTest {
 protected:
  void SetUp() override {
    ResolveWorkerTest::SetUp();
    secrets_ = root_ + "/secrets";
    std::filesystem::create_directories(secrets_);
  }

  // Mounts `text` as key kubeconfig of Secret `name` and returns a spec naming the Secret.
  v1::MultiKueueClusterSpec Mount(const std::string& name, const std::string& text) {
    const std::string dir = secrets_ + "/" + name;
    std::filesystem::create_directories(dir + "/..2026_11_30_00_00_00.1");
    std::ofstream(dir + "/..2026_11_30_00_00_00.1/kubeconfig") << text;
    std::error_code ignored;
    std::filesystem::create_symlink("..2026_11_30_00_00_00.1", dir + "/..data", ignored);
    std::filesystem::create_symlink("..data/kubeconfig", dir + "/kubeconfig", ignored);
    return SecretSpec(name);
  }
  static v1::MultiKueueClusterSpec SecretSpec(const std::string& name) {
    v1::MultiKueueClusterSpec spec;
    spec.mutable_kube_config()->set_location(name);
    spec.mutable_kube_config()->set_location_type("Secret");
    return spec;
  }

  std::string secrets_;
};

TEST_F(KubeConfigSecretTest, AMountedSecretGivesTheWorkersAddressAndToken) {
  const v1::MultiKueueClusterSpec spec =
      Mount("w1-secret",
            KubeConfigYaml("{server: \"https://w1.example.com:7443\"}", "{token: manager-token}"));
  const ResolvedWorker resolved = ResolveWorker(spec, allowed_, secrets_);
  ASSERT_TRUE(resolved.source.has_value()) << resolved.reason << ": " << resolved.message;
  EXPECT_EQ(resolved.source->address, "w1.example.com:7443");
  EXPECT_EQ(resolved.source->credentials.bearer_token, "manager-token");
  // The Secret changed (the kubelet rewrites the file): a new fingerprint, a new connection.
  std::ofstream(secrets_ + "/w1-secret/..2026_11_30_00_00_00.1/kubeconfig")
      << KubeConfigYaml("{server: \"https://w1.example.com:7444\"}", "{token: manager-token}");
  EXPECT_NE(ResolveWorker(spec, allowed_, secrets_).fingerprint, resolved.fingerprint);
}

TEST_F(KubeConfigSecretTest, KueuesRulesHoldAndMistakesNameTheSecret) {
  const ResolvedWorker insecure = ResolveWorker(
      Mount("w2",
            KubeConfigYaml("{server: \"https://w2:1\", insecure-skip-tls-verify: true}", "{}")),
      allowed_, secrets_);
  EXPECT_EQ(insecure.reason, "InsecureKubeConfig");
  EXPECT_THAT(insecure.message, HasSubstr("kubeConfig Secret \"w2\": "));

  const ResolvedWorker missing = ResolveWorker(SecretSpec("not-mounted"), allowed_, secrets_);
  EXPECT_EQ(missing.reason, "BadKubeConfig");
  EXPECT_EQ(missing.message,
            absl::StrCat("kubeConfig Secret \"not-mounted\": no key kubeconfig mounted at ",
                         secrets_, "/not-mounted/kubeconfig"));

  // A name that is not a Secret's cannot reach outside the directory.
  const ResolvedWorker walking = ResolveWorker(SecretSpec("../kubeconfigs"), allowed_, secrets_);
  EXPECT_EQ(walking.reason, "BadKubeConfig");
  EXPECT_THAT(walking.message, HasSubstr("not a valid Secret name"));

  // Nor can a symlink in the mount.
  std::filesystem::create_directories(secrets_ + "/escape");
  std::ofstream(root_ + "/outside.yaml") << KubeConfigYaml("{server: \"https://w3:1\"}", "{}");
  std::filesystem::create_symlink(root_ + "/outside.yaml", secrets_ + "/escape/kubeconfig");
  const ResolvedWorker escaped = ResolveWorker(SecretSpec("escape"), allowed_, secrets_);
  EXPECT_EQ(escaped.reason, "BadKubeConfig");
  EXPECT_THAT(escaped.message, HasSubstr("is not under"));

  const ResolvedWorker unparsable =
      ResolveWorker(Mount("bad", "current-context: nowhere\n"), allowed_, secrets_);
  EXPECT_EQ(unparsable.reason, "BadKubeConfig");
  EXPECT_THAT(unparsable.message, HasSubstr("kubeConfig Secret \"bad\": "));
}

}  // namespace
}  // namespace tollgate::multikueue
