// CurlKubeClient against the fake API server over real HTTP (and HTTPS) on loopback.
#include "services/kubeapi/kube_client.h"

#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/file_util.h"
#include "services/manifest/kube_config.h"
#include "test/adapters/kube/test_processes.h"

namespace tollgate::kubeapi {
namespace {

using kube::testing::FakeApiServer;

constexpr char kToken[] = "test-token-1";

Json JobNamed(const std::string& name) {
  return Json::parse(absl::StrCat(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": ")",
                                  name, R"(", "labels": {"app": "x"}},
    "spec": {"suspend": true, "template": {"spec": {"containers": [{"name": "c"}]}}}})"));
}

class KubeClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  void SetUp() override {
    scratch_ = kube::testing::ScratchDir();
    // The fake's job simulator would add status changes of its own (e.g. a Suspended
    // condition) at any moment; the client tests expect exactly the changes they make.
    absl::StatusOr<FakeApiServer> server = kube::testing::StartFakeApiServer(
        scratch_, {"--token", kToken, "--namespaces", "default,team-a", "--tick", "3600"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    client_ = Client(kToken);
  }

  std::unique_ptr<CurlKubeClient> Client(const std::string& token) {
    manifest::KubeConfig config;
    config.server = server_.url();
    config.token = token;
    CurlKubeClient::Options options;
    options.watch_timeout = absl::Seconds(30);
    absl::StatusOr<std::unique_ptr<CurlKubeClient>> client =
        CurlKubeClient::Create(config, options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  std::string scratch_;
  FakeApiServer server_;
  std::unique_ptr<CurlKubeClient> client_;
};

TEST_F(KubeClientTest, CreateGetPatchDelete) {
  absl::StatusOr<Json> created = client_->Create(manifest::JobResource(), "team-a", JobNamed("a"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(manifest::GetString(*created, {"metadata", "uid"}).empty());
  EXPECT_EQ(client_->Create(manifest::JobResource(), "team-a", JobNamed("a")).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(client_->Create(manifest::JobResource(), "nowhere", JobNamed("a")).status().code(),
            absl::StatusCode::kNotFound);

  absl::StatusOr<Json> got = client_->Get(manifest::JobResource(), "team-a", "a");
  ASSERT_TRUE(got.ok());
  const std::string rv = manifest::GetString(*got, {"metadata", "resourceVersion"});

  Json patch = {{"metadata", {{"resourceVersion", rv}}}, {"spec", {{"suspend", false}}}};
  absl::StatusOr<Json> patched =
      client_->Patch(manifest::JobResource(), "team-a", "a", PatchType::kMerge, patch);
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ((*patched)["spec"]["suspend"], false);

  // The same precondition again is stale now.
  absl::Status stale =
      client_->Patch(manifest::JobResource(), "team-a", "a", PatchType::kMerge, patch).status();
  EXPECT_TRUE(IsConflict(stale)) << stale;

  const Json test_op = Json::parse(R"([
      {"op": "test", "path": "/spec/suspend", "value": true},
      {"op": "replace", "path": "/spec/suspend", "value": true}])");
  EXPECT_EQ(client_->Patch(manifest::JobResource(), "team-a", "a", PatchType::kJson, test_op)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(client_->Delete(manifest::JobResource(), "team-a", "a").ok());
  EXPECT_EQ(client_->Get(manifest::JobResource(), "team-a", "a").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(KubeClientTest, ListFollowsContinueTokens) {
  // More than one page of 500.
  for (int i = 0; i < 520; ++i) {
    Json cm = {{"metadata", {{"name", absl::StrCat("cm-", i)}}}, {"data", {{"i", "x"}}}};
    ASSERT_TRUE(client_
                    ->Create(manifest::ResourceKind{"", "v1", "configmaps", "ConfigMap", true},
                             "team-a", cm)
                    .ok());
  }
  absl::StatusOr<ListResult> list =
      client_->List(manifest::ResourceKind{"", "v1", "configmaps", "ConfigMap", true}, "");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->items.size(), 520u);
  EXPECT_FALSE(list->resource_version.empty());
  EXPECT_EQ(list->items[0]["kind"], "ConfigMap");
}

TEST_F(KubeClientTest, WatchStreamsChangesAfterTheListVersion) {
  ASSERT_TRUE(client_->Create(manifest::JobResource(), "team-a", JobNamed("before")).ok());
  absl::StatusOr<ListResult> list = client_->List(manifest::JobResource(), "");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);

  absl::Mutex mu;
  std::vector<std::string> seen;
  common::StopSignal stop;
  absl::Status watched;
  std::thread watcher([&] {
    watched = client_->Watch(
        manifest::JobResource(), "", list->resource_version,
        [&](const WatchEvent& e) {
          if (e.type == "BOOKMARK") return true;
          absl::MutexLock lock(&mu);
          seen.push_back(e.type + " " + manifest::GetString(e.object, {"metadata", "name"}));
          return seen.size() < 3;
        },
        stop);
  });
  ASSERT_TRUE(client_->Create(manifest::JobResource(), "team-a", JobNamed("after")).ok());
  ASSERT_TRUE(client_
                  ->Patch(manifest::JobResource(), "team-a", "after", PatchType::kMerge,
                          Json::parse(R"({"metadata": {"labels": {"b": "c"}}})"))
                  .ok());
  ASSERT_TRUE(client_->Delete(manifest::JobResource(), "team-a", "after").ok());
  const bool done = kube::testing::WaitFor(
      [&] {
        absl::MutexLock lock(&mu);
        return seen.size() >= 3;
      },
      absl::Seconds(20));
  stop.Stop();
  watcher.join();
  ASSERT_TRUE(done);
  EXPECT_TRUE(watched.ok()) << watched;
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED after", "MODIFIED after", "DELETED after"));
}

TEST_F(KubeClientTest, ExpiredVersionIsOutOfRange) {
  absl::StatusOr<ListResult> list = client_->List(manifest::JobResource(), "");
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(client_->Create(manifest::JobResource(), "team-a", JobNamed("x")).ok());
  ASSERT_TRUE(kube::testing::PostFake(server_, "/fake/compact").ok());
  common::StopSignal stop;
  absl::Status watched = client_->Watch(
      manifest::JobResource(), "", list->resource_version, [](const WatchEvent&) { return true; },
      stop);
  EXPECT_EQ(watched.code(), absl::StatusCode::kOutOfRange) << watched;
}

TEST_F(KubeClientTest, StopEndsAnIdleWatch) {
  absl::StatusOr<ListResult> list = client_->List(manifest::JobResource(), "");
  ASSERT_TRUE(list.ok());
  common::StopSignal stop;
  std::thread stopper([&] {
    absl::SleepFor(absl::Milliseconds(300));
    stop.Stop();
  });
  const absl::Time start = absl::Now();
  absl::Status watched = client_->Watch(
      manifest::JobResource(), "", list->resource_version, [](const WatchEvent&) { return true; },
      stop);
  stopper.join();
  EXPECT_TRUE(watched.ok()) << watched;
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(KubeClientTest, WrongTokenIsUnauthenticated) {
  EXPECT_EQ(Client("wrong")->Get(manifest::JobResource(), "team-a", "x").status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(KubeClientTlsTest, VerifiesTheServerCertificate) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "openssl is not installed";
  }
  const std::string dir = kube::testing::ScratchDir();
  // A CA, a server certificate for 127.0.0.1 signed by it, and an unrelated CA.
  const std::string script = absl::StrCat(
      "cd ", dir, " && ",
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca -keyout ca.key "
      "-out ca.crt && ",
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout other.key "
      "-out other.crt && ",
      "openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out "
      "server.csr && ",
      "printf 'subjectAltName=IP:127.0.0.1\\n' > ext.cnf && ",
      "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 "
      "-extfile ext.cnf -out server.crt",
      " >openssl.log 2>&1");
  ASSERT_EQ(std::system(script.c_str()), 0) << "openssl failed; see " << dir << "/openssl.log";
  curl_global_init(CURL_GLOBAL_DEFAULT);
  absl::StatusOr<FakeApiServer> server = kube::testing::StartFakeApiServer(
      dir, {"--tls-cert", dir + "/server.crt", "--tls-key", dir + "/server.key"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto client_with_ca = [&](const std::string& ca_file) {
    manifest::KubeConfig config;
    config.server = server->url();
    config.ca_pem = *common::ReadFileToString(ca_file);
    return *CurlKubeClient::Create(config, CurlKubeClient::Options());
  };
  absl::StatusOr<Json> ok =
      client_with_ca(dir + "/ca.crt")->Get(manifest::NamespaceResource(), "", "default");
  EXPECT_TRUE(ok.ok()) << ok.status();
  absl::Status bad = client_with_ca(dir + "/other.crt")
                         ->Get(manifest::NamespaceResource(), "", "default")
                         .status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kUnavailable) << bad;
}

}  // namespace
}  // namespace tollgate::kubeapi
