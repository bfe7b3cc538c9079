// End-to-end tests of identity, authorization and audit: the real tollgated with certificates
// made by openssl at test time, driven over TLS with client certificates and bearer tokens.
// Every wait is on a condition with a deadline.

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "test/e2e/cli_runner.h"
#include "test/e2e/tollgated_process.h"
#include "test/services/auth/test_issuer.h"
#include "tollgate/v1/auth.grpc.pb.h"
#include "tollgate/v1/inventory.grpc.pb.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(10);

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The port a server wrote to `port_file`, waited for up to 30 s; 0 when it never came.
int AwaitPortFile(const std::string& port_file) {
  int port = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline &&
         !(absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadAll(port_file)), &port) && port > 0)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  return port;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Runs a shell command (openssl); fails the test with its output when it fails.
void Shell(const std::string& command) {
  const std::string full = absl::StrCat(command, " >/dev/null 2>&1");
  ASSERT_EQ(std::system(full.c_str()), 0) << command;
}

// A CA and the certificates it signs, made with openssl in `dir`.
class Pki {
 public:
  explicit Pki(std::string dir) : dir_(std::move(dir)) {}

  void MakeCa(const std::string& name) {
    Shell(absl::StrCat("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=", name,
                       " -keyout ", Path(name + ".key"), " -out ", Path(name + ".pem")));
  }
  // Signs `name`.pem / `name`.key with `ca`; `subject` like "/CN=alice/O=team-a".
  void MakeCert(const std::string& ca, const std::string& name, const std::string& subject,
                bool server) {
    Shell(absl::StrCat("openssl req -newkey rsa:2048 -nodes -subj '", subject, "' -keyout ",
                       Path(name + ".key"), " -out ", Path(name + ".csr")));
    std::string ext;
    if (server) {
      WriteFile(Path(name + ".ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
      ext = absl::StrCat(" -extfile ", Path(name + ".ext"));
    }
    Shell(absl::StrCat("openssl x509 -req -days 1 -in ", Path(name + ".csr"), " -CA ",
                       Path(ca + ".pem"), " -CAkey ", Path(ca + ".key"), " -CAcreateserial -out ",
                       Path(name + ".pem"), ext));
  }
  std::string Path(const std::string& file) const { return absl::StrCat(dir_, "/", file); }
  std::string Read(const std::string& file) const { return ReadAll(Path(file)); }

 private:
  std::string dir_;
};

std::shared_ptr<grpc::ChannelCredentials> Tls(const Pki& pki, const std::string& ca,
                                              const std::string& client = "") {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = pki.Read(ca + ".pem");
  if (!client.empty()) {
    options.pem_cert_chain = pki.Read(client + ".pem");
    options.pem_private_key = pki.Read(client + ".key");
  }
  return grpc::SslCredentials(options);
}

std::unique_ptr<grpc::ClientContext> Context(const std::string& token = "") {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  return context;
}

std::string Describe(const grpc::Status& s) {
  return absl::StrCat("code ", s.error_code(), ": ", s.error_message());
}

constexpr char kTokens[] =
    "admin-token,root,0,\"tollgate:admins\"\n"
    "batch-admin-token,qadmin,1,queue-admins\n"
    "user-a-token,alice,2,team-a\n"
    "user-b-token,bob,3,team-b\n"
    "viewer-token,vera,4,auditors\n"
    "adapter-token,tollgate-kube,5,adapters\n"
    "nobody-token,nobody,6\n"
    "lead-a-token,lead,7,team-a\n"
    "prov-controller-token,prov-ctl,8,prov-controllers\n"
    "other-controller-token,other-ctl,9,other-controllers\n"
    "feeder-token,slurm-feeder,10,feeders\n";

constexpr char kPolicy[] = R"(
kind: RoleBinding
metadata: {name: queue-admins}
role: batch-admin
subjects: [{kind: Group, name: queue-admins}]
---
kind: RoleBinding
metadata: {name: team-a}
role: batch-user
subjects: [{kind: Group, name: team-a}]
namespaces: [team-a]
---
kind: RoleBinding
metadata: {name: team-b}
role: batch-user
subjects: [{kind: Group, name: team-b}]
namespaces: [team-b]
---
kind: RoleBinding
metadata: {name: viewers}
role: viewer
subjects: [{kind: Group, name: auditors}]
---
kind: RoleBinding
metadata: {name: adapters}
role: adapter
subjects: [{kind: Group, name: adapters}]
namespaces: [team-a]
---
kind: Role
metadata: {name: cq-reader}
rules: [{verbs: [get], kinds: [ClusterQueue]}]
---
kind: RoleBinding
metadata: {name: lead-reads-queues}
role: cq-reader
subjects: [{kind: User, name: lead}]
---
kind: RoleBinding
metadata: {name: prov-controllers}
role: check-controller
subjects: [{kind: Group, name: prov-controllers}]
controllerNames: [example.com/prov]
---
kind: RoleBinding
metadata: {name: other-controllers}
role: check-controller
subjects: [{kind: Group, name: other-controllers}]
controllerNames: [example.com/other]
---
kind: RoleBinding
metadata: {name: feeders}
role: inventory-feeder
subjects: [{kind: Group, name: feeders}]
)";

// A flavor, ClusterQueue "cq" shared by team-a and team-b (1 cpu), LocalQueues "q" in both, a
// spare LocalQueue "spare" in team-a, and a WorkloadPriorityClass "high" (1000).
v1::ApplyRequest Queues() {
  v1::ApplyRequest apply;
  apply.add_objects()->mutable_resource_flavor()->mutable_metadata()->set_name("default-flavor");
  v1::ClusterQueue* cq = apply.add_objects()->mutable_cluster_queue();
  cq->mutable_metadata()->set_name("cq");
  v1::ResourceGroup* group = cq->mutable_spec()->add_resource_groups();
  group->add_covered_resources("cpu");
  v1::FlavorQuotas* flavor = group->add_flavors();
  flavor->set_name("default-flavor");
  v1::ResourceQuota* quota = flavor->add_resources();
  quota->set_name("cpu");
  quota->set_nominal_quota("1");
  for (const char* ns : {"team-a", "team-b"}) {
    v1::LocalQueue* lq = apply.add_objects()->mutable_local_queue();
    lq->mutable_metadata()->set_namespace_(ns);
    lq->mutable_metadata()->set_name("q");
    lq->mutable_spec()->set_cluster_queue("cq");
  }
  v1::LocalQueue* spare = apply.add_objects()->mutable_local_queue();
  spare->mutable_metadata()->set_namespace_("team-a");
  spare->mutable_metadata()->set_name("spare");
  spare->mutable_spec()->set_cluster_queue("cq");
  v1::WorkloadPriorityClass* high = apply.add_objects()->mutable_workload_priority_class();
  high->mutable_metadata()->set_name("high");
  high->set_value(1000);
  return apply;
}

v1::Workload MakeWorkload(const std::string& ns, const std::string& name, const std::string& cpu) {
  v1::Workload w;
  w.mutable_metadata()->set_namespace_(ns);
  w.mutable_metadata()->set_name(name);
  w.mutable_spec()->set_queue_name("q");
  v1::PodSet* ps = w.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = cpu;
  return w;
}

v1::WorkloadRef Ref(const std::string& ns, const std::string& name) {
  v1::WorkloadRef ref;
  ref.set_namespace_(ns);
  ref.set_name(name);
  return ref;
}

class SecurityE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        absl::StrCat(std::filesystem::temp_directory_path().string(), "/security_e2e.", getpid()));
    std::filesystem::remove_all(*dir_);
    std::filesystem::create_directories(*dir_);
    pki_ = new Pki(*dir_);
    pki_->MakeCa("ca");
    pki_->MakeCert("ca", "server", "/CN=localhost", /*server=*/true);
    pki_->MakeCert("ca", "alice", "/CN=alice/O=team-a/O=devs", /*server=*/false);
    pki_->MakeCa("other-ca");
    pki_->MakeCert("other-ca", "mallory", "/CN=mallory/O=tollgate:admins", /*server=*/false);
    WriteFile(pki_->Path("tokens.csv"), kTokens);
    WriteFile(pki_->Path("policy.yaml"), kPolicy);
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete pki_;
    delete dir_;
  }

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    scratch_ = absl::StrCat(*dir_, "/", info->name());
    std::filesystem::create_directories(scratch_);
  }

  std::vector<std::string> SecureArgs(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {
        absl::StrCat("--tls-cert=", pki_->Path("server.pem")),
        absl::StrCat("--tls-key=", pki_->Path("server.key")),
        absl::StrCat("--client-ca=", pki_->Path("ca.pem")),
        absl::StrCat("--token-file=", pki_->Path("tokens.csv")),
        absl::StrCat("--authz-policy=", pki_->Path("policy.yaml")),
        absl::StrCat("--audit-log=", scratch_, "/audit.log"),
    };
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  void StartSecure(const std::vector<std::string>& extra = {}) {
    absl::StatusOr<std::unique_ptr<TollgatedProcess>> p = TollgatedProcess::Start(
        scratch_ + "/data", scratch_, SecureArgs(extra), absl::Seconds(30), Tls(*pki_, "ca"));
    ASSERT_TRUE(p.ok()) << p.status();
    server_ = *std::move(p);
    channel_ = server_->channel();
    admission_ = v1::AdmissionService::NewStub(channel_);
    config_ = v1::ConfigService::NewStub(channel_);
    visibility_ = v1::VisibilityService::NewStub(channel_);
    auth_ = v1::AuthService::NewStub(channel_);
    v1::ApplyResponse applied;
    const grpc::Status s = config_->Apply(Context("admin-token").get(), Queues(), &applied);
    ASSERT_TRUE(s.ok()) << Describe(s);
  }

  grpc::Status Submit(const std::string& token, const v1::Workload& w) {
    v1::SubmitRequest request;
    *request.mutable_workload() = w;
    v1::SubmitResponse response;
    return admission_->Submit(Context(token).get(), request, &response);
  }

  // The workload as the admin sees it, or NOT_FOUND.
  absl::StatusOr<v1::Workload> AdminGet(const std::string& ns, const std::string& name) {
    v1::GetWorkloadRequest request;
    *request.mutable_workload() = Ref(ns, name);
    v1::Workload w;
    const grpc::Status s = admission_->GetWorkload(Context("admin-token").get(), request, &w);
    if (!s.ok()) return absl::NotFoundError(s.error_message());
    return w;
  }

  // Waits until the admin sees `ns/name` in `state`.
  void AwaitState(const std::string& ns, const std::string& name, v1::WorkloadState state) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      absl::StatusOr<v1::Workload> w = AdminGet(ns, name);
      if (w.ok() && w->status().state() == state) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    FAIL() << ns << "/" << name << " never reached " << v1::WorkloadState_Name(state);
  }

  static std::string* dir_;
  static Pki* pki_;
  std::string scratch_;
  std::unique_ptr<TollgatedProcess> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AdmissionService::Stub> admission_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::VisibilityService::Stub> visibility_;
  std::unique_ptr<v1::AuthService::Stub> auth_;
};

std::string* SecurityE2eTest::dir_ = nullptr;
Pki* SecurityE2eTest::pki_ = nullptr;

TEST_F(SecurityE2eTest, RefusesToListenBeyondLoopbackWithoutTlsAndAuthentication) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"plaintext", {}, "without TLS (--tls-cert, --tls-key) and an authenticator"},
      {"tls-only",
       {absl::StrCat("--tls-cert=", pki_->Path("server.pem")),
        absl::StrCat("--tls-key=", pki_->Path("server.key"))},
       "without an authenticator"},
      {"token-only", {absl::StrCat("--token-file=", pki_->Path("tokens.csv"))}, "without TLS"},
  };
  for (const Case& c : cases) {
    const std::string port_file = absl::StrCat(scratch_, "/port.", c.name);
    std::vector<std::string> args = {"--listen=0.0.0.0:0",
                                     absl::StrCat("--data-dir=", scratch_, "/data.", c.name),
                                     absl::StrCat("--port-file=", port_file)};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const std::string log = absl::StrCat(scratch_, "/", c.name, ".log");
    absl::StatusOr<int> code = TollgatedProcess::RunToExit(args, log);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_EQ(*code, 1) << c.name << ReadAll(log);
    EXPECT_TRUE(absl::StrContains(ReadAll(log), "refusing to listen on 0.0.0.0:0")) << ReadAll(log);
    EXPECT_TRUE(absl::StrContains(ReadAll(log), c.want)) << c.name << ": " << ReadAll(log);
    // It never listened, and never created its state.
    EXPECT_FALSE(std::filesystem::exists(port_file)) << c.name;
    EXPECT_FALSE(std::filesystem::exists(absl::StrCat(scratch_, "/data.", c.name))) << c.name;
  }
}

TEST_F(SecurityE2eTest, ClientCertificateAndTokenIdentities) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  // mTLS: user from CN, groups from O.
  {
    auto channel = grpc::CreateChannel(server_->address(), Tls(*pki_, "ca", "alice"));
    auto stub = v1::AuthService::NewStub(channel);
    v1::WhoAmIResponse me;
    const grpc::Status s = stub->WhoAmI(Context().get(), v1::WhoAmIRequest(), &me);
    ASSERT_TRUE(s.ok()) << Describe(s);
    EXPECT_EQ(me.user(), "alice");
    EXPECT_EQ(absl::StrJoin(me.groups(), ","), "team-a,devs");
    EXPECT_EQ(me.method(), "x509");
    // And the certificate's groups authorize: alice is a batch-user in team-a.
    auto admission = v1::AdmissionService::NewStub(channel);
    v1::SubmitRequest submit;
    *submit.mutable_workload() = MakeWorkload("team-a", "by-cert", "100m");
    v1::SubmitResponse submitted;
    EXPECT_TRUE(admission->Submit(Context().get(), submit, &submitted).ok());
    *submit.mutable_workload() = MakeWorkload("team-b", "by-cert", "100m");
    const grpc::Status denied = admission->Submit(Context().get(), submit, &submitted);
    EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_TRUE(absl::StrContains(denied.error_message(), "user \"alice\"")) << Describe(denied);
    EXPECT_TRUE(absl::StrContains(denied.error_message(),
                                  "submit Workload \"by-cert\" in "
                                  "namespace \"team-b\""))
        << Describe(denied);
  }
  // A certificate from a CA the server does not trust never gets through the handshake.
  {
    auto channel = grpc::CreateChannel(server_->address(), Tls(*pki_, "ca", "mallory"));
    auto stub = v1::AuthService::NewStub(channel);
    v1::WhoAmIResponse me;
    EXPECT_FALSE(stub->WhoAmI(Context().get(), v1::WhoAmIRequest(), &me).ok());
  }
  // Bearer token.
  {
    v1::WhoAmIResponse me;
    const grpc::Status s = auth_->WhoAmI(Context("user-b-token").get(), v1::WhoAmIRequest(), &me);
    ASSERT_TRUE(s.ok()) << Describe(s);
    EXPECT_EQ(me.user(), "bob");
    EXPECT_EQ(me.uid(), "3");
    EXPECT_EQ(absl::StrJoin(me.groups(), ","), "team-b");
    EXPECT_EQ(me.method(), "token");
  }
  // Missing or bad credentials: UNAUTHENTICATED, on every service.
  v1::WhoAmIResponse me;
  EXPECT_EQ(auth_->WhoAmI(Context().get(), v1::WhoAmIRequest(), &me).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(auth_->WhoAmI(Context("forged").get(), v1::WhoAmIRequest(), &me).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::ListWorkloadsResponse list;
  EXPECT_EQ(
      admission_->ListWorkloads(Context().get(), v1::ListWorkloadsRequest(), &list).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
  v1::ApplyResponse applied;
  EXPECT_EQ(config_->Apply(Context("forged").get(), Queues(), &applied).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

// Every built-in role against every RPC. The adapter is bound in team-a only, so like any
// namespaced binding it reads nothing cluster-scoped (ClusterQueues). Allowed calls must get past
// authorization (they may still fail on the object's state, e.g. finishing a pending workload);
// denied calls must be PERMISSION_DENIED and change nothing.
TEST_F(SecurityE2eTest, BuiltInRoleMatrix) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  enum Role { kAdmin, kBatchAdmin, kBatchUser, kViewer, kAdapter, kNobody, kRoles };
  const char* kTokensByRole[kRoles] = {"admin-token",  "batch-admin-token", "user-a-token",
                                       "viewer-token", "adapter-token",     "nobody-token"};
  const char* kRoleNames[kRoles] = {"admin",  "batch-admin", "batch-user",
                                    "viewer", "adapter",     "nobody"};
  // The target of workload calls: an admitted workload in team-a.
  ASSERT_TRUE(Submit("admin-token", MakeWorkload("team-a", "target", "100m")).ok());
  ASSERT_NO_FATAL_FAILURE(AwaitState("team-a", "target", v1::WORKLOAD_STATE_ADMITTED));

  struct Rpc {
    const char* name;
    bool mutating;
    // Calls the RPC as `token`; `i` makes names unique per call.
    std::function<grpc::Status(const std::string& token, int i)> call;
    // What the call would change, read as the admin (compared before and after a denial).
    std::function<std::string()> observe;
    // allowed[role]
    std::vector<bool> allowed;
  };
  auto target_state = [&] {
    absl::StatusOr<v1::Workload> w = AdminGet("team-a", "target");
    return w.ok()
               ? absl::StrCat(v1::WorkloadState_Name(w->status().state()), "/",
                              w->status().preemption_count(), "/",
                              w->status().has_last_checkpoint_time(), "/", w->status().pods_ready())
               : std::string("gone");
  };
  auto object_exists = [&](v1::ObjectKind kind, const std::string& ns, const std::string& name) {
    return [this, kind, ns, name] {
      v1::GetObjectRequest get;
      get.mutable_ref()->set_kind(kind);
      get.mutable_ref()->set_namespace_(ns);
      get.mutable_ref()->set_name(name);
      v1::ConfigObject object;
      const grpc::Status s = config_->Get(Context("admin-token").get(), get, &object);
      return s.ok() ? object.SerializeAsString() : std::string("absent");
    };
  };
  int counter = 0;
  //                                        admin  b-adm  b-user viewer adapter nobody
  const std::vector<Rpc> rpcs = {
      {"Submit",
       true,
       [&](const std::string& t, int i) {
         return Submit(t, MakeWorkload("team-a", absl::StrCat("new-", i), "100m"));
       },
       [&] { return absl::StrCat(counter); },  // a denied submit creates nothing (checked below)
       {true, true, true, false, true, false}},
      {"Admit",
       true,
       [&](const std::string& t, int) {
         v1::AdmitRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::AdmitResponse out;
         return admission_->Admit(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, false, false, false}},
      {"ReportCheckpoint",
       true,
       [&](const std::string& t, int) {
         v1::ReportCheckpointRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::ReportCheckpointResponse out;
         return admission_->ReportCheckpoint(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, false, true, false}},
      {"ReportReclaimablePods",
       true,
       [&](const std::string& t, int) {
         v1::ReportReclaimablePodsRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::ReportReclaimablePodsResponse out;
         return admission_->ReportReclaimablePods(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, false, true, false}},
      {"SetAdmissionGates",  // a submitter's own annotation: `submit` of the workload
       true,
       [&](const std::string& t, int) {
         v1::SetAdmissionGatesRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::SetAdmissionGatesResponse out;
         return admission_->SetAdmissionGates(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, true, false, true, false}},
      {"ReportPodsReady",
       true,
       [&](const std::string& t, int) {
         v1::ReportPodsReadyRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::ReportPodsReadyResponse out;
         return admission_->ReportPodsReady(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, false, true, false}},
      {"ReportJobState",
       true,
       [&](const std::string& t, int) {
         v1::ReportJobStateRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         r.set_waiting_for_replacement_pods(true);
         v1::ReportJobStateResponse out;
         return admission_->ReportJobState(Context(t).get(), r, &out);
       },
       [&] {
         absl::StatusOr<v1::Workload> w = AdminGet("team-a", "target");
         return w.ok() ? absl::StrCat(w->status().waiting_for_replacement_pods())
                       : std::string("gone");
       },
       {true, true, false, false, true, false}},
      {"ReportStopped",
       true,
       [&](const std::string& t, int) {
         v1::ReportStoppedRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::ReportStoppedResponse out;
         return admission_->ReportStopped(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, false, true, false}},
      {"GetWorkload",
       false,
       [&](const std::string& t, int) {
         v1::GetWorkloadRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::Workload out;
         return admission_->GetWorkload(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, true, true, true, false}},
      {"ListWorkloads",
       false,
       [&](const std::string& t, int) {
         v1::ListWorkloadsRequest r;
         r.set_namespace_("team-a");
         v1::ListWorkloadsResponse out;
         return admission_->ListWorkloads(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, true, true, true, false}},
      {"Watch",
       false,
       [&](const std::string& t, int) {
         v1::WatchRequest r;
         r.set_namespace_("team-a");
         auto context = Context(t);
         auto reader = admission_->Watch(context.get(), r);
         v1::WatchEvent event;
         if (reader->Read(&event)) {
           context->TryCancel();
           reader->Finish().IgnoreError();
           return grpc::Status::OK;
         }
         return reader->Finish();
       },
       target_state,
       {true, true, true, true, true, false}},
      {"GetClusterQueue",
       false,
       [&](const std::string& t, int) {
         v1::GetObjectRequest r;
         r.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
         r.mutable_ref()->set_name("cq");
         v1::ConfigObject out;
         return config_->Get(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, true, false, false}},
      {"ListClusterQueues",
       false,
       [&](const std::string& t, int) {
         v1::ListObjectsRequest r;
         r.set_kind(v1::CLUSTER_QUEUE);
         v1::ListObjectsResponse out;
         return config_->List(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, true, false, false}},
      {"ListLocalQueues",
       false,
       [&](const std::string& t, int) {
         v1::ListObjectsRequest r;
         r.set_kind(v1::LOCAL_QUEUE);
         r.set_namespace_("team-a");
         v1::ListObjectsResponse out;
         return config_->List(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, true, true, true, false}},
      {"ListPendingInClusterQueue",
       false,
       [&](const std::string& t, int) {
         v1::ListPendingWorkloadsRequest r;
         r.set_cluster_queue("cq");
         v1::ListPendingWorkloadsResponse out;
         return visibility_->ListPendingWorkloads(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, true, false, false}},
      {"ApplyClusterQueue",
       true,
       [&](const std::string& t, int) {
         v1::ApplyRequest r;
         *r.add_objects() = Queues().objects(1);
         r.mutable_objects(0)->mutable_cluster_queue()->mutable_spec()->set_max_preempted_workloads(
             7);
         v1::ApplyResponse out;
         return config_->Apply(Context(t).get(), r, &out);
       },
       object_exists(v1::CLUSTER_QUEUE, "", "cq"),
       {true, true, false, false, false, false}},
      {"DeleteLocalQueue",
       true,
       [&](const std::string& t, int) {
         v1::DeleteObjectRequest r;
         r.mutable_ref()->set_kind(v1::LOCAL_QUEUE);
         r.mutable_ref()->set_namespace_("team-a");
         r.mutable_ref()->set_name("spare");
         v1::DeleteObjectResponse out;
         return config_->Delete(Context(t).get(), r, &out);
       },
       object_exists(v1::LOCAL_QUEUE, "team-a", "spare"),
       {true, true, false, false, false, false}},
      {"Preempt",
       true,
       [&](const std::string& t, int) {
         v1::PreemptRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::PreemptResponse out;
         return admission_->Preempt(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, false, false, false, false}},
      {"Finish",
       true,
       [&](const std::string& t, int) {
         v1::FinishRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::FinishResponse out;
         return admission_->Finish(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, true, false, true, false}},
      {"DeleteWorkload",
       true,
       [&](const std::string& t, int) {
         v1::DeleteWorkloadRequest r;
         *r.mutable_workload() = Ref("team-a", "target");
         v1::DeleteWorkloadResponse out;
         return admission_->DeleteWorkload(Context(t).get(), r, &out);
       },
       target_state,
       {true, true, true, false, true, false}},
  };
  // Denials first (they must leave the target as it is), then the allowed calls.
  for (bool allowed_pass : {false, true}) {
    for (const Rpc& rpc : rpcs) {
      for (int role = 0; role < kRoles; ++role) {
        if (rpc.allowed[role] != allowed_pass) continue;
        const std::string before = rpc.observe();
        const int i = ++counter;
        const grpc::Status s = rpc.call(kTokensByRole[role], i);
        const std::string what =
            absl::StrCat(rpc.name, " as ", kRoleNames[role], ": ", Describe(s));
        if (allowed_pass) {
          EXPECT_NE(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << what;
          EXPECT_NE(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << what;
        } else {
          EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << what;
          if (rpc.mutating && rpc.name != std::string("Submit")) {
            EXPECT_EQ(rpc.observe(), before) << what;
          }
          if (rpc.name == std::string("Submit")) {
            EXPECT_FALSE(AdminGet("team-a", absl::StrCat("new-", i)).ok()) << what;
          }
        }
      }
    }
  }
}

TEST_F(SecurityE2eTest, ListAndWatchShowOnlyTheCallersNamespaces) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  // 3 pending workloads of 1 cpu each in a 1-cpu ClusterQueue: the first is admitted.
  ASSERT_TRUE(Submit("user-a-token", MakeWorkload("team-a", "a1", "1")).ok());
  ASSERT_NO_FATAL_FAILURE(AwaitState("team-a", "a1", v1::WORKLOAD_STATE_ADMITTED));
  ASSERT_TRUE(Submit("user-b-token", MakeWorkload("team-b", "b1", "1")).ok());
  ASSERT_TRUE(Submit("user-a-token", MakeWorkload("team-a", "a2", "1")).ok());

  // bob lists every namespace: only team-b's workloads.
  v1::ListWorkloadsResponse list;
  ASSERT_TRUE(
      admission_->ListWorkloads(Context("user-b-token").get(), v1::ListWorkloadsRequest(), &list)
          .ok());
  ASSERT_EQ(list.workloads_size(), 1);
  EXPECT_EQ(list.workloads(0).metadata().name(), "b1");
  // ... and may not list team-a at all.
  v1::ListWorkloadsRequest team_a;
  team_a.set_namespace_("team-a");
  EXPECT_EQ(admission_->ListWorkloads(Context("user-b-token").get(), team_a, &list).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // The viewer sees all three.
  ASSERT_TRUE(
      admission_->ListWorkloads(Context("viewer-token").get(), v1::ListWorkloadsRequest(), &list)
          .ok());
  EXPECT_EQ(list.workloads_size(), 3);

  // bob watches every namespace: the snapshot and later changes carry only team-b.
  {
    auto context = Context("user-b-token");
    auto reader = admission_->Watch(context.get(), v1::WatchRequest());
    ASSERT_TRUE(Submit("user-a-token", MakeWorkload("team-a", "a3", "1")).ok());
    ASSERT_TRUE(Submit("user-b-token", MakeWorkload("team-b", "b2", "1")).ok());
    std::vector<std::string> seen;
    v1::WatchEvent event;
    while (reader->Read(&event)) {
      if (!event.has_workload()) continue;
      seen.push_back(absl::StrCat(event.workload().metadata().namespace_(), "/",
                                  event.workload().metadata().name()));
      if (event.workload().metadata().name() == "b2") break;
    }
    context->TryCancel();
    reader->Finish().IgnoreError();
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), "team-b/b2");
    for (const std::string& s : seen) EXPECT_TRUE(absl::StartsWith(s, "team-b/")) << s;
  }

  // The team-a lead reads the shared ClusterQueue's pending list: positions count every pending
  // workload, but team-b's names are blank.
  v1::ListPendingWorkloadsRequest pending;
  pending.set_cluster_queue("cq");
  v1::ListPendingWorkloadsResponse items;
  const grpc::Status s =
      visibility_->ListPendingWorkloads(Context("lead-a-token").get(), pending, &items);
  ASSERT_TRUE(s.ok()) << Describe(s);
  ASSERT_EQ(items.items_size(), 4);  // b1, a2, a3, b2
  int blank = 0;
  for (int i = 0; i < items.items_size(); ++i) {
    const v1::PendingWorkload& item = items.items(i);
    EXPECT_EQ(item.position_in_cluster_queue(), i);
    if (item.workload().name().empty()) {
      ++blank;
    } else {
      EXPECT_EQ(item.workload().namespace_(), "team-a");
    }
  }
  EXPECT_EQ(blank, 2);
}

TEST_F(SecurityE2eTest, PriorityCapsAndNonPreemptible) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  v1::Workload explicit_high = MakeWorkload("team-a", "explicit", "100m");
  explicit_high.mutable_spec()->set_priority(2147483647);
  v1::Workload class_high = MakeWorkload("team-a", "by-class", "100m");
  class_high.mutable_spec()->set_priority_class_name("high");
  v1::Workload np = MakeWorkload("team-a", "np", "100m");
  np.mutable_spec()->set_non_preemptible(true);
  for (const v1::Workload& w : {explicit_high, class_high, np}) {
    const grpc::Status s = Submit("user-a-token", w);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
    EXPECT_FALSE(AdminGet("team-a", w.metadata().name()).ok()) << w.metadata().name();
  }
  const grpc::Status capped = Submit("user-a-token", explicit_high);
  EXPECT_TRUE(absl::StrContains(capped.error_message(),
                                "priority 2147483647 is above the highest "
                                "it may use (0)"))
      << Describe(capped);
  EXPECT_TRUE(Submit("user-a-token", MakeWorkload("team-a", "ordinary", "100m")).ok());
  // The batch admin is not capped.
  EXPECT_TRUE(Submit("batch-admin-token", class_high).ok());
}

TEST_F(SecurityE2eTest, CertificateRotationWithoutRestart) {
  // The server starts with a certificate from "ca"; a client trusting only "ca2" fails until the
  // files are replaced with ones from "ca2", then succeeds without a restart.
  const std::string cert = scratch_ + "/live.pem";
  const std::string key = scratch_ + "/live.key";
  std::filesystem::copy_file(pki_->Path("server.pem"), cert);
  std::filesystem::copy_file(pki_->Path("server.key"), key);
  Pki pki2(scratch_);
  ASSERT_NO_FATAL_FAILURE(pki2.MakeCa("ca2"));
  ASSERT_NO_FATAL_FAILURE(pki2.MakeCert("ca2", "server2", "/CN=localhost", /*server=*/true));
  absl::StatusOr<std::unique_ptr<TollgatedProcess>> p = TollgatedProcess::Start(
      scratch_ + "/data", scratch_,
      {absl::StrCat("--tls-cert=", cert), absl::StrCat("--tls-key=", key),
       absl::StrCat("--token-file=", pki_->Path("tokens.csv")), "--tls-reload-interval=1s"},
      absl::Seconds(30), Tls(*pki_, "ca"));
  ASSERT_TRUE(p.ok()) << p.status();
  auto who = [&](const std::string& ca_dir_pki, bool second) {
    auto channel =
        grpc::CreateChannel((*p)->address(), second ? Tls(pki2, "ca2") : Tls(*pki_, "ca"));
    auto stub = v1::AuthService::NewStub(channel);
    v1::WhoAmIResponse me;
    auto context = Context("admin-token");
    context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
    return stub->WhoAmI(context.get(), v1::WhoAmIRequest(), &me);
  };
  EXPECT_TRUE(who("", false).ok());
  EXPECT_FALSE(who("", true).ok());
  // Replace key and certificate, each by an atomic rename.
  std::filesystem::copy_file(pki2.Path("server2.key"), key + ".new");
  std::filesystem::copy_file(pki2.Path("server2.pem"), cert + ".new");
  std::filesystem::rename(key + ".new", key);
  std::filesystem::rename(cert + ".new", cert);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  bool rotated = false;
  while (absl::Now() < deadline && !(rotated = who("", true).ok())) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(rotated) << "the server kept its old certificate";
  EXPECT_FALSE(who("", false).ok());
  EXPECT_TRUE((*p)->Logs().find("\"msg\":\"serving\"") != std::string::npos);
  // Same process all along: it logged "serving" once.
  EXPECT_EQ((*p)->Logs().find("\"msg\":\"serving\""), (*p)->Logs().rfind("\"msg\":\"serving\""));
}

TEST_F(SecurityE2eTest, AuditLogRecordsAllowedDeniedAndSchedulerDecisions) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  ASSERT_TRUE(Submit("user-a-token", MakeWorkload("team-a", "audited", "100m")).ok());
  ASSERT_NO_FATAL_FAILURE(AwaitState("team-a", "audited", v1::WORKLOAD_STATE_ADMITTED));
  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = Ref("team-a", "audited");
  v1::PreemptResponse preempted;
  auto context = Context("user-b-token");
  context->AddMetadata("x-request-id", "req-from-test");
  EXPECT_EQ(admission_->Preempt(context.get(), preempt, &preempted).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  const std::string path = scratch_ + "/audit.log";
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string audit;
  auto has_all = [&] {
    audit = ReadAll(path);
    return absl::StrContains(audit,
                             "\"user\":\"alice\",\"groups\":[\"team-a\"],\"method\":\"token\","
                             "\"verb\":\"submit\",\"kind\":\"Workload\",\"namespace\":\"team-a\","
                             "\"name\":\"audited\",\"result\":\"allowed\",\"code\":\"OK\"") &&
           absl::StrContains(audit,
                             "\"request_id\":\"req-from-test\",\"user\":\"bob\",\"groups\":[\"team-"
                             "b\"],\"method\":\"token\",\"verb\":\"preempt\",\"kind\":\"Workload\","
                             "\"namespace\":\"team-a\",\"name\":\"audited\",\"result\":\"denied\","
                             "\"code\":\"PERMISSION_DENIED\"") &&
           absl::StrContains(audit,
                             "\"user\":\"system:scheduler\",\"groups\":[],\"method\":\"scheduler\","
                             "\"verb\":\"admit\",\"kind\":\"Workload\",\"namespace\":\"team-a\","
                             "\"name\":\"audited\",\"result\":\"decided\"");
  };
  while (absl::Now() < deadline && !has_all()) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_TRUE(has_all()) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "admitted to ClusterQueue cq")) << audit;
  // Reads are not audited unless denied.
  EXPECT_FALSE(absl::StrContains(audit, "\"verb\":\"get\",\"kind\":\"Workload\"")) << audit;
}

TEST_F(SecurityE2eTest, ACheckControllerTouchesOnlyTheChecksOfItsControllerNames) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  // A check of example.com/prov on its own ClusterQueue, and a LocalQueue in team-a for it.
  v1::ApplyRequest apply;
  v1::AdmissionCheck* check = apply.add_objects()->mutable_admission_check();
  check->mutable_metadata()->set_name("prov");
  check->mutable_spec()->set_controller_name("example.com/prov");
  v1::ClusterQueue* cq = apply.add_objects()->mutable_cluster_queue();
  *cq = Queues().objects(1).cluster_queue();
  cq->mutable_metadata()->set_name("checked-cq");
  cq->mutable_spec()->add_admission_checks("prov");
  v1::LocalQueue* lq = apply.add_objects()->mutable_local_queue();
  lq->mutable_metadata()->set_namespace_("team-a");
  lq->mutable_metadata()->set_name("checked");
  lq->mutable_spec()->set_cluster_queue("checked-cq");
  v1::ApplyResponse applied;
  grpc::Status s = config_->Apply(Context("admin-token").get(), apply, &applied);
  ASSERT_TRUE(s.ok()) << Describe(s);
  auto checks = v1::AdmissionCheckService::NewStub(channel_);

  auto set_active = [&](const std::string& token) {
    v1::SetAdmissionCheckActiveRequest request;
    request.set_name("prov");
    request.set_active(true);
    v1::SetAdmissionCheckActiveResponse response;
    return checks->SetAdmissionCheckActive(Context(token).get(), request, &response);
  };
  s = set_active("other-controller-token");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  s = set_active("user-a-token");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  s = set_active("prov-controller-token");
  ASSERT_TRUE(s.ok()) << Describe(s);

  v1::Workload w = MakeWorkload("team-a", "checked", "100m");
  w.mutable_spec()->set_queue_name("checked");
  ASSERT_TRUE(Submit("user-a-token", w).ok());
  ASSERT_NO_FATAL_FAILURE(AwaitState("team-a", "checked", v1::WORKLOAD_STATE_QUOTA_RESERVED));
  absl::StatusOr<v1::Workload> seen = AdminGet("team-a", "checked");
  ASSERT_TRUE(seen.ok());

  auto update = [&](const std::string& token, v1::UpdateAdmissionCheckStateResponse* response) {
    v1::UpdateAdmissionCheckStateRequest request;
    *request.mutable_workload() = Ref("team-a", "checked");
    request.set_check("prov");
    request.set_state("Ready");
    request.set_message("capacity provisioned");
    request.set_expected_revision(seen->metadata().resource_version());
    return checks->UpdateAdmissionCheckState(Context(token).get(), request, response);
  };
  // Another controller's binding does not reach this check: refused, nothing changed.
  v1::UpdateAdmissionCheckStateResponse response;
  s = update("other-controller-token", &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  EXPECT_EQ(AdminGet("team-a", "checked")->status().state(), v1::WORKLOAD_STATE_QUOTA_RESERVED);
  // Nor may it watch the checks of example.com/prov.
  {
    v1::WatchAdmissionChecksRequest request;
    request.set_controller_name("example.com/prov");
    auto context = Context("other-controller-token");
    auto reader = checks->WatchAdmissionChecks(context.get(), request);
    v1::WatchEvent event;
    while (reader->Read(&event)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  s = update("prov-controller-token", &response);
  ASSERT_TRUE(s.ok()) << Describe(s);
  EXPECT_EQ(response.workload().status().state(), v1::WORKLOAD_STATE_ADMITTED);

  const std::string path = scratch_ + "/audit.log";
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string audit;
  auto has_all = [&] {
    audit = ReadAll(path);
    return absl::StrContains(audit,
                             "\"user\":\"prov-ctl\",\"groups\":[\"prov-controllers\"],"
                             "\"method\":\"token\",\"verb\":\"check\",\"kind\":"
                             "\"AdmissionCheck\",\"namespace\":\"team-a\",\"name\":\"prov\","
                             "\"result\":\"allowed\"") &&
           absl::StrContains(audit, "check prov Ready: capacity provisioned") &&
           absl::StrContains(audit,
                             "\"user\":\"other-ctl\",\"groups\":[\"other-controllers\"],"
                             "\"method\":\"token\",\"verb\":\"check\",\"kind\":"
                             "\"AdmissionCheck\",\"namespace\":\"team-a\",\"name\":\"prov\","
                             "\"result\":\"denied\"");
  };
  while (absl::Now() < deadline && !has_all()) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_TRUE(has_all()) << audit;
}

// The node inventory through the real binary with TLS and tokens: a cluster-wide
// inventory-feeder feeds it, viewers read it, users and a namespaced binding (the adapter's here)
// do not feed it, a topology workload is placed on the fed nodes, and writes are audited.
TEST_F(SecurityE2eTest, TheNodeInventoryIsFedByFeedersAndPlacesTopologyWorkloads) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  v1::ApplyRequest apply;
  v1::Topology* topology = apply.add_objects()->mutable_topology();
  topology->mutable_metadata()->set_name("racks");
  topology->mutable_spec()->add_levels()->set_node_label("rack");
  topology->mutable_spec()->add_levels()->set_node_label("kubernetes.io/hostname");
  v1::ResourceFlavor* flavor = apply.add_objects()->mutable_resource_flavor();
  flavor->mutable_metadata()->set_name("tas");
  flavor->mutable_spec()->set_topology_name("racks");
  v1::ClusterQueue* cq = apply.add_objects()->mutable_cluster_queue();
  cq->mutable_metadata()->set_name("tas-cq");
  v1::ResourceGroup* group = cq->mutable_spec()->add_resource_groups();
  group->add_covered_resources("cpu");
  v1::FlavorQuotas* quotas = group->add_flavors();
  quotas->set_name("tas");
  v1::ResourceQuota* cpu = quotas->add_resources();
  cpu->set_name("cpu");
  cpu->set_nominal_quota("16");
  v1::LocalQueue* lq = apply.add_objects()->mutable_local_queue();
  lq->mutable_metadata()->set_namespace_("team-a");
  lq->mutable_metadata()->set_name("racked");
  lq->mutable_spec()->set_cluster_queue("tas-cq");
  v1::ApplyResponse applied;
  grpc::Status s = config_->Apply(Context("admin-token").get(), apply, &applied);
  ASSERT_TRUE(s.ok()) << Describe(s);

  auto inventory = v1::InventoryService::NewStub(channel_);
  v1::UpsertNodesRequest upsert;
  for (const auto& [name, rack] : {std::pair{"n1", "r1"}, std::pair{"n2", "r2"}}) {
    v1::Node* node = upsert.add_nodes();
    node->mutable_metadata()->set_name(name);
    (*node->mutable_metadata()->mutable_labels())["rack"] = rack;
    (*node->mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = name;
    (*node->mutable_status()->mutable_allocatable())["cpu"] = "4";
    (*node->mutable_status()->mutable_allocatable())["pods"] = "10";
  }
  v1::UpsertNodesResponse upserted;
  for (const char* token : {"user-a-token", "viewer-token", "nobody-token", "adapter-token"}) {
    s = inventory->UpsertNodes(Context(token).get(), upsert, &upserted);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << token << ": " << Describe(s);
  }
  s = inventory->UpsertNodes(Context().get(), upsert, &upserted);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << Describe(s);
  v1::ListNodesResponse listed;
  s = inventory->ListNodes(Context("admin-token").get(), v1::ListNodesRequest(), &listed);
  ASSERT_TRUE(s.ok()) << Describe(s);
  EXPECT_EQ(listed.nodes_size(), 0) << "a refused upsert changed nothing";

  s = inventory->UpsertNodes(Context("feeder-token").get(), upsert, &upserted);
  ASSERT_TRUE(s.ok()) << Describe(s);
  s = inventory->ListNodes(Context("viewer-token").get(), v1::ListNodesRequest(), &listed);
  ASSERT_TRUE(s.ok()) << Describe(s);
  EXPECT_EQ(listed.nodes_size(), 2);
  s = inventory->ListNodes(Context("user-a-token").get(), v1::ListNodesRequest(), &listed);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  // Pods Tollgate does not place take capacity: 3 of n2's 4 cpus.
  v1::ReportPodsRequest report;
  v1::NodePod* pod = report.add_pods();
  pod->set_name("kube-system/daemon");
  pod->set_node_name("n2");
  (*pod->mutable_requests())["cpu"] = "3";
  v1::ReportPodsResponse reported;
  s = inventory->ReportPods(Context("viewer-token").get(), report, &reported);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  s = inventory->ReportPods(Context("feeder-token").get(), report, &reported);
  ASSERT_TRUE(s.ok()) << Describe(s);

  // Three one-cpu pods in one rack: only r1 has room for them.
  v1::Workload w = MakeWorkload("team-a", "racked", "1");
  w.mutable_spec()->set_queue_name("racked");
  w.mutable_spec()->mutable_pod_sets(0)->set_count(3);
  w.mutable_spec()->mutable_pod_sets(0)->mutable_topology_request()->set_required("rack");
  ASSERT_TRUE(Submit("user-a-token", w).ok());
  ASSERT_NO_FATAL_FAILURE(AwaitState("team-a", "racked", v1::WORKLOAD_STATE_ADMITTED));
  absl::StatusOr<v1::Workload> racked = AdminGet("team-a", "racked");
  ASSERT_TRUE(racked.ok()) << racked.status();
  const v1::TopologyAssignment& placed =
      racked->status().admission().pod_set_assignments(0).topology_assignment();
  ASSERT_EQ(placed.domains_size(), 1) << placed.DebugString();
  EXPECT_EQ(placed.domains(0).values(0), "n1");
  EXPECT_EQ(placed.domains(0).count(), 3);
  v1::GetNodeRequest get;
  get.set_name("n1");
  v1::NodeDetails details;
  s = inventory->GetNode(Context("viewer-token").get(), get, &details);
  ASSERT_TRUE(s.ok()) << Describe(s);
  ASSERT_EQ(details.placements_size(), 1);
  EXPECT_EQ(details.placements(0).workload().name(), "racked");
  EXPECT_EQ(details.placements(0).count(), 3);

  const std::string path = scratch_ + "/audit.log";
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string audit;
  auto has_all = [&] {
    audit = ReadAll(path);
    return absl::StrContains(audit,
                             "\"user\":\"slurm-feeder\",\"groups\":[\"feeders\"],"
                             "\"method\":\"token\",\"verb\":\"apply\",\"kind\":\"Node\"") &&
           absl::StrContains(audit,
                             "\"user\":\"alice\",\"groups\":[\"team-a\"],"
                             "\"method\":\"token\",\"verb\":\"apply\",\"kind\":\"Node\"");
  };
  while (absl::Now() < deadline && !has_all()) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_TRUE(has_all()) << audit;
}

// A RoleBinding applied through the API, as `tollgate apply -f` sends it.
v1::ApplyRequest BindCarolInTeamA() {
  v1::ApplyRequest apply;
  v1::RoleBinding* binding = apply.add_objects()->mutable_role_binding();
  binding->mutable_metadata()->set_name("carol-team-a");
  binding->set_role("batch-user");
  v1::PolicySubject* subject = binding->add_subjects();
  subject->set_kind("User");
  subject->set_name("nobody");
  binding->add_namespaces("team-a");
  return apply;
}

TEST_F(SecurityE2eTest, PolicyObjectsAppliedDeletedAndKeptAcrossRestart) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  // "nobody" authenticates but no binding names it.
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-a", "n1", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // A non-admin (batch-admin edits queues, not policy) cannot bind anyone; nothing changes.
  v1::ApplyResponse applied;
  grpc::Status s = config_->Apply(Context("batch-admin-token").get(), BindCarolInTeamA(), &applied);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "may not apply RoleBinding \"carol-team-a\""))
      << Describe(s);
  s = config_->Apply(Context("user-a-token").get(), BindCarolInTeamA(), &applied);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::ROLE_BINDING);
  get.mutable_ref()->set_name("carol-team-a");
  v1::ConfigObject object;
  s = config_->Get(Context("admin-token").get(), get, &object);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << Describe(s);
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-a", "n1", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // Bad input names the field and value and changes nothing.
  v1::ApplyRequest bad = BindCarolInTeamA();
  bad.mutable_objects(0)->mutable_role_binding()->set_role("no-such-role");
  s = config_->Apply(Context("admin-token").get(), bad, &applied);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(s);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "role: no role named \"no-such-role\""))
      << Describe(s);
  bad = BindCarolInTeamA();
  bad.mutable_objects(0)->mutable_role_binding()->mutable_subjects(0)->set_kind("Robot");
  s = config_->Apply(Context("admin-token").get(), bad, &applied);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(s);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "subjects[0].kind: want User or Group"))
      << Describe(s);
  s = config_->Get(Context("admin-token").get(), get, &object);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << Describe(s);

  // The admin binds; the user's very next call is allowed, in team-a only.
  s = config_->Apply(Context("admin-token").get(), BindCarolInTeamA(), &applied);
  ASSERT_TRUE(s.ok()) << Describe(s);
  s = Submit("nobody-token", MakeWorkload("team-a", "n1", "100m"));
  EXPECT_TRUE(s.ok()) << Describe(s);
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-b", "n2", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Viewers do not read policy; the admin lists it.
  v1::ListObjectsRequest list;
  list.set_kind(v1::ROLE_BINDING);
  v1::ListObjectsResponse listed;
  EXPECT_EQ(config_->List(Context("viewer-token").get(), list, &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  s = config_->List(Context("admin-token").get(), list, &listed);
  ASSERT_TRUE(s.ok()) << Describe(s);
  ASSERT_EQ(listed.objects_size(), 1);
  EXPECT_EQ(listed.objects(0).role_binding().role(), "batch-user");

  // Kept across a kill -9 and restart: the new process reads it from the store.
  ASSERT_TRUE(server_->Kill().ok());
  server_.reset();
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  s = Submit("nobody-token", MakeWorkload("team-a", "n3", "100m"));
  EXPECT_TRUE(s.ok()) << Describe(s);

  // A non-admin cannot delete it either.
  v1::DeleteObjectRequest del;
  *del.mutable_ref() = get.ref();
  v1::DeleteObjectResponse deleted;
  EXPECT_EQ(config_->Delete(Context("batch-admin-token").get(), del, &deleted).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(Submit("nobody-token", MakeWorkload("team-a", "n4", "100m")).ok());
  // Deleted by the admin: the next call is refused.
  s = config_->Delete(Context("admin-token").get(), del, &deleted);
  ASSERT_TRUE(s.ok()) << Describe(s);
  s = Submit("nobody-token", MakeWorkload("team-a", "n5", "100m"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);

  // Every policy change and refusal is in the audit log.
  const std::string path = scratch_ + "/audit.log";
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string audit;
  auto has_all = [&] {
    audit = ReadAll(path);
    return absl::StrContains(
               audit,
               "\"user\":\"root\",\"groups\":[\"tollgate:admins\"],\"method\":"
               "\"token\",\"verb\":\"apply\",\"kind\":\"RoleBinding\",\"namespace\":"
               "\"\",\"name\":\"carol-team-a\",\"result\":\"allowed\",\"code\":\"OK\"") &&
           absl::StrContains(audit,
                             "\"verb\":\"delete\",\"kind\":\"RoleBinding\",\"namespace\":\"\","
                             "\"name\":\"carol-team-a\",\"result\":\"allowed\",\"code\":\"OK\"") &&
           absl::StrContains(audit,
                             "\"user\":\"qadmin\",\"groups\":[\"queue-admins\"],\"method\":"
                             "\"token\",\"verb\":\"apply\",\"kind\":\"RoleBinding\",\"namespace\":"
                             "\"\",\"name\":\"carol-team-a\",\"result\":\"denied\"");
  };
  while (absl::Now() < deadline && !has_all()) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_TRUE(has_all()) << audit;
}

// Delegation: a namespace admin manages their namespace's RoleBindings, within what they hold
// themselves (Kubernetes RBAC's escalation check), and nothing beyond.
TEST_F(SecurityE2eTest, NamespaceAdminDelegatesWithoutEscalating) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  const std::string cli_prefix = absl::StrCat("--server=", server_->address(),
                                              " --certificate-authority=", pki_->Path("ca.pem"));
  const std::string admin = absl::StrCat(cli_prefix, " --token=admin-token");
  const std::string lead = absl::StrCat(cli_prefix, " --token=lead-a-token");
  auto apply = [&](const std::string& name, const std::string& yaml, const std::string& as,
                   std::string& out) {
    const std::string path = absl::StrCat(scratch_, "/", name, ".yaml");
    WriteFile(path, yaml);
    return RunCli(absl::StrCat("apply -f ", path, " ", as), out);
  };
  auto binding = [](const std::string& name, const std::string& role, const std::string& ns) {
    return absl::StrCat("kind: RoleBinding\nmetadata: {name: ", name, "}\nrole: ", role,
                        "\nsubjects: [{kind: User, name: nobody}]\nnamespaces: [", ns, "]\n");
  };
  auto exists = [&](const std::string& name) {
    v1::GetObjectRequest get;
    get.mutable_ref()->set_kind(v1::ROLE_BINDING);
    get.mutable_ref()->set_name(name);
    v1::ConfigObject object;
    const grpc::Status s = config_->Get(Context("admin-token").get(), get, &object);
    EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::NOT_FOUND) << Describe(s);
    return s.ok() ? absl::StrJoin(object.role_binding().namespaces(), ",") : std::string();
  };
  std::string out;
  // The operator makes "lead" the admin of namespace team-a.
  ASSERT_EQ(apply("namespace-admin", R"(kind: Role
metadata: {name: namespace-admin}
rules:
- {verbs: ["*"], kinds: [Workload, LocalQueue]}
- {verbs: [get, list, apply, delete], kinds: [RoleBinding]}
maxPriority: 1000
---
kind: RoleBinding
metadata: {name: team-a-admins}
role: namespace-admin
subjects: [{kind: User, name: lead}]
namespaces: [team-a]
---
kind: RoleBinding
metadata: {name: auditors-view}
role: viewer
subjects: [{kind: Group, name: auditors}]
)",
                  admin, out),
            0)
      << out;

  // can-i answers the verb half, per namespace.
  EXPECT_EQ(RunCli(absl::StrCat("auth can-i apply rolebindings -n team-a ", lead), out), 0) << out;
  EXPECT_EQ(RunCli(absl::StrCat("auth can-i apply RoleBinding -n team-b ", lead), out), 1) << out;
  EXPECT_EQ(RunCli(absl::StrCat("auth can-i bind Role admin -n team-a ", lead), out), 1) << out;

  // The lead binds batch-user in team-a: OK, and in force for nobody's next call.
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-a", "d1", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_EQ(apply("bind-user", binding("nobody-team-a", "batch-user", "team-a"), lead, out), 0)
      << out;
  grpc::Status s = Submit("nobody-token", MakeWorkload("team-a", "d1", "100m"));
  EXPECT_TRUE(s.ok()) << Describe(s);

  // Binding admin would give nobody more than the lead holds: denied, nothing changed.
  EXPECT_EQ(apply("bind-admin", binding("nobody-admin", "admin", "team-a"), lead, out), 1) << out;
  EXPECT_TRUE(absl::StrContains(
      out,
      R"(user "lead" (groups team-a) may not apply RoleBinding "nobody-admin" in namespace "team-a": it grants )"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, R"(needs bind on Role "admin")")) << out;
  EXPECT_EQ(exists("nobody-admin"), "");
  // nobody is still a batch-user: priority at most 0.
  v1::Workload high = MakeWorkload("team-a", "d2", "100m");
  high.mutable_spec()->set_priority(5);
  EXPECT_EQ(Submit("nobody-token", high).error_code(), grpc::StatusCode::PERMISSION_DENIED);

  // Binding in another namespace: denied, nothing changed.
  EXPECT_EQ(apply("bind-b", binding("nobody-team-b", "batch-user", "team-b"), lead, out), 1) << out;
  EXPECT_TRUE(absl::StrContains(
      out,
      R"(user "lead" (groups team-a) may not apply RoleBinding "nobody-team-b" in namespace "team-b")"))
      << out;
  EXPECT_EQ(exists("nobody-team-b"), "");
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-b", "d3", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // The lead reads their namespace's binding, not the operator's cluster-wide ones.
  EXPECT_EQ(RunCli(absl::StrCat("get rolebinding nobody-team-a ", lead), out), 0) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get rolebinding team-a-admins ", lead), out), 0) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get rolebinding auditors-view ", lead), out), 1) << out;
  EXPECT_TRUE(absl::StrContains(out, R"(may not get RoleBinding "auditors-view")")) << out;
  // Nor by moving the binding the lead made out of team-a.
  EXPECT_EQ(apply("move", binding("nobody-team-a", "batch-user", "team-b"), lead, out), 1) << out;
  EXPECT_EQ(exists("nobody-team-a"), "team-a");

  // The lead may delete their namespace's bindings.
  v1::DeleteObjectRequest del;
  del.mutable_ref()->set_kind(v1::ROLE_BINDING);
  del.mutable_ref()->set_name("nobody-team-a");
  v1::DeleteObjectResponse deleted;
  s = config_->Delete(Context("lead-a-token").get(), del, &deleted);
  EXPECT_TRUE(s.ok()) << Describe(s);
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-a", "d4", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A batch-admin (queues, not policy) still may not bind at all.
  EXPECT_EQ(apply("qadmin-binds", binding("by-qadmin", "batch-user", "team-a"),
                  absl::StrCat(cli_prefix, " --token=batch-admin-token"), out),
            1)
      << out;

  // Both outcomes are audited.
  const std::string audit = ReadAll(scratch_ + "/audit.log");
  EXPECT_TRUE(absl::StrContains(
      audit,
      R"("user":"lead","groups":["team-a"],"method":"token","verb":"apply","kind":"RoleBinding","namespace":"","name":"nobody-team-a","result":"allowed","code":"OK")"))
      << audit;
  EXPECT_TRUE(absl::StrContains(
      audit,
      R"("verb":"apply","kind":"RoleBinding","namespace":"","name":"nobody-admin","result":"denied","code":"PERMISSION_DENIED")"))
      << audit;
  EXPECT_TRUE(absl::StrContains(
      audit,
      R"("verb":"delete","kind":"RoleBinding","namespace":"","name":"nobody-team-a","result":"allowed","code":"OK")"))
      << audit;
}

TEST_F(SecurityE2eTest, CliUsesAConfigFileContextWithClientCertificate) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  const std::string config = scratch_ + "/tollgate-config.yaml";
  WriteFile(config,
            absl::StrCat(
                "current-context: alice\ncontexts:\n- name: alice\n  server: ", server_->address(),
                "\n  certificate-authority: ", pki_->Path("ca.pem"), "\n  client-certificate: ",
                pki_->Path("alice.pem"), "\n  client-key: ", pki_->Path("alice.key"),
                "\n- name: bob\n  server: ", server_->address(),
                "\n  certificate-authority: ", pki_->Path("ca.pem"), "\n  token: user-b-token\n"));
  std::string out;
  EXPECT_EQ(RunCli(absl::StrCat("auth whoami --config=", config), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "USER:   alice")) << out;
  EXPECT_TRUE(absl::StrContains(out, "METHOD: x509")) << out;
  EXPECT_EQ(RunCli(absl::StrCat("auth can-i submit workloads -n team-a --config=", config), out), 0)
      << out;
  EXPECT_EQ(out, "yes\n");
  EXPECT_EQ(RunCli(absl::StrCat("auth can-i preempt workloads -n team-b --config=", config), out),
            1)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "no - user \"alice\"")) << out;
  EXPECT_EQ(RunCli(absl::StrCat("auth whoami --context=bob --config=", config), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "USER:   bob")) << out;
  // A denied write through the CLI: the message names identity, verb, object and namespace.
  EXPECT_EQ(
      RunCli(absl::StrCat("delete localqueue q -n team-a --context=bob --config=", config), out), 1)
      << out;
  EXPECT_TRUE(absl::StrContains(
      out, "user \"bob\" (groups team-b) may not delete LocalQueue \"q\" in namespace \"team-a\""))
      << out;
}

TEST_F(SecurityE2eTest, CliAppliesAPolicyFileUnchangedAndShowsIt) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  // A policy file as --authz-policy takes it (no apiVersion), with a cohort grant.
  const std::string policy = scratch_ + "/more-policy.yaml";
  WriteFile(policy, R"(kind: Role
metadata: {name: queue-reader}
rules: [{verbs: [get, list], kinds: [ClusterQueue, Cohort]}]
---
kind: RoleBinding
metadata: {name: nobody-reads-queues}
role: queue-reader
subjects: [{kind: User, name: nobody}]
---
kind: QueueGrant
metadata: {name: nobody-submits-under-root}
cohort: root
verbs: [submit]
subjects: [{kind: User, name: nobody}]
)");
  const std::string admin =
      absl::StrCat("--server=", server_->address(),
                   " --certificate-authority=", pki_->Path("ca.pem"), " --token=admin-token");
  const std::string nobody =
      absl::StrCat("--server=", server_->address(),
                   " --certificate-authority=", pki_->Path("ca.pem"), " --token=nobody-token");
  std::string out;
  EXPECT_EQ(RunCli(absl::StrCat("apply -f ", policy, " ", nobody), out), 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "user \"nobody\" may not ")) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get clusterqueue cq ", nobody), out), 1) << out;
  EXPECT_EQ(RunCli(absl::StrCat("apply -f ", policy, " ", admin), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "rolebinding.tollgate.dev/nobody-reads-queues")) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get clusterqueue cq ", nobody), out), 0) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get rolebindings ", admin), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "nobody-reads-queues")) << out;
  EXPECT_TRUE(absl::StrContains(out, "User:nobody")) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get queuegrants ", admin), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "Cohort/root")) << out;
  EXPECT_EQ(RunCli(absl::StrCat("describe role queue-reader ", admin), out), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "ClusterQueue")) << out;
  // The cohort grant does not cover cq until cq joins cohort root; then nobody may submit.
  EXPECT_EQ(Submit("nobody-token", MakeWorkload("team-a", "c1", "100m")).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::ApplyRequest queues = Queues();
  queues.mutable_objects(1)->mutable_cluster_queue()->mutable_spec()->set_cohort("root");
  v1::ApplyResponse applied;
  ASSERT_TRUE(config_->Apply(Context("admin-token").get(), queues, &applied).ok());
  grpc::Status s = Submit("nobody-token", MakeWorkload("team-a", "c1", "100m"));
  EXPECT_TRUE(s.ok()) << Describe(s);
  // `get -o yaml` applies back unchanged, and delete removes it.
  EXPECT_EQ(RunCli(absl::StrCat("get rolebinding nobody-reads-queues -o yaml ", admin), out), 0)
      << out;
  EXPECT_TRUE(absl::StrContains(out, "apiVersion: tollgate.dev/v1alpha1")) << out;
  const std::string round_trip = scratch_ + "/round-trip.yaml";
  WriteFile(round_trip, out);
  EXPECT_EQ(RunCli(absl::StrCat("apply -f ", round_trip, " ", admin), out), 0) << out;
  EXPECT_EQ(RunCli(absl::StrCat("delete rolebinding nobody-reads-queues ", admin), out), 0) << out;
  EXPECT_EQ(RunCli(absl::StrCat("get clusterqueue cq ", nobody), out), 1) << out;
}

TEST_F(SecurityE2eTest, SighupReloadsTokensAndKeepsThemWhenTheFileIsBad) {
  const std::string tokens = scratch_ + "/tokens.csv";
  WriteFile(tokens, kTokens);
  ASSERT_NO_FATAL_FAILURE(
      StartSecure({absl::StrCat("--token-file=", tokens)}));  // the later flag wins
  auto whoami = [&](const std::string& token) {
    v1::WhoAmIResponse me;
    return auth_->WhoAmI(Context(token).get(), v1::WhoAmIRequest(), &me).error_code();
  };
  EXPECT_EQ(whoami("late-token"), grpc::StatusCode::UNAUTHENTICATED);
  WriteFile(tokens, absl::StrCat(kTokens, "late-token,late,9,team-a\n"));
  ASSERT_TRUE(server_->Signal(SIGHUP).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline && whoami("late-token") != grpc::StatusCode::OK) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(whoami("late-token"), grpc::StatusCode::OK);
  // A broken file is refused and the tokens in force stay.
  WriteFile(tokens, "broken-line-without-columns\n");
  ASSERT_TRUE(server_->Signal(SIGHUP).ok());
  const absl::Time logged = absl::Now() + absl::Seconds(30);
  while (absl::Now() < logged && !absl::StrContains(server_->Logs(), "reload failed")) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(absl::StrContains(server_->Logs(), "reload failed")) << server_->Logs();
  EXPECT_EQ(whoami("late-token"), grpc::StatusCode::OK);
}

TEST_F(SecurityE2eTest, PlaintextLoopbackWithoutAuthenticationIsTheAnonymousAdmin) {
  absl::StatusOr<std::unique_ptr<TollgatedProcess>> p =
      TollgatedProcess::Start(scratch_ + "/data", scratch_);
  ASSERT_TRUE(p.ok()) << p.status();
  auto stub = v1::AuthService::NewStub((*p)->channel());
  v1::WhoAmIResponse me;
  ASSERT_TRUE(stub->WhoAmI(Context().get(), v1::WhoAmIRequest(), &me).ok());
  EXPECT_EQ(me.user(), "system:anonymous");
  v1::CanIRequest can;
  can.set_verb("delete");
  can.set_kind("ClusterQueue");
  v1::CanIResponse answer;
  ASSERT_TRUE(stub->CanI(Context().get(), can, &answer).ok());
  EXPECT_TRUE(answer.allowed());
  can.set_verb("fly");
  EXPECT_EQ(stub->CanI(Context().get(), can, &answer).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// Tokens and bindings for the OIDC and HTTP tests, on top of kTokens and kPolicy.
constexpr char kMoreTokens[] = "prom-token,prometheus,10,monitoring\n";
constexpr char kMorePolicy[] = R"(
---
kind: RoleBinding
metadata: {name: prometheus}
role: metrics-reader
subjects: [{kind: Group, name: monitoring}]
)";
constexpr char kIssuerUrl[] = "https://issuer.example.com";

TEST_F(SecurityE2eTest, OidcTokensAuthenticateAndAreAuthorizedByTheirGroups) {
  testing::TestIssuer issuer;
  issuer.AddKey("rsa-1", testing::TestIssuer::KeyType::kRsa);
  issuer.AddKey("ec-2", testing::TestIssuer::KeyType::kEcP256);
  const std::string jwks = scratch_ + "/jwks.json";
  WriteFile(jwks, issuer.Jwks({"rsa-1"}));
  ASSERT_NO_FATAL_FAILURE(StartSecure({
      absl::StrCat("--oidc-issuer-url=", kIssuerUrl),
      "--oidc-client-id=tollgate",
      absl::StrCat("--oidc-jwks-file=", jwks),
      "--oidc-groups-claim=groups",
      "--oidc-username-prefix=oidc:",
  }));
  const absl::Time now = absl::Now();
  auto token = [&](const std::string& kid, const std::string& aud, absl::Time issued,
                   const std::string& iss = kIssuerUrl) {
    return issuer.Sign(
        kid, testing::TestIssuer::Claims(iss, aud, "carol", {"team-a"}, issued, absl::Minutes(5)));
  };
  const std::string good = token("rsa-1", "tollgate", now);
  v1::WhoAmIResponse me;
  grpc::Status s = auth_->WhoAmI(Context(good).get(), v1::WhoAmIRequest(), &me);
  ASSERT_TRUE(s.ok()) << Describe(s);
  EXPECT_EQ(me.user(), "oidc:carol");
  EXPECT_EQ(absl::StrJoin(me.groups(), ","), "team-a");
  EXPECT_EQ(me.method(), "oidc");
  // The token's group is a batch-user in team-a, and nothing in team-b.
  EXPECT_TRUE(Submit(good, MakeWorkload("team-a", "by-oidc", "100m")).ok());
  s = Submit(good, MakeWorkload("team-b", "by-oidc", "100m"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << Describe(s);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "user \"oidc:carol\"")) << Describe(s);

  struct Bad {
    const char* name;
    std::string token;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"expired", token("rsa-1", "tollgate", now - absl::Hours(1)), "expired"},
      {"wrong audience", token("rsa-1", "someone-else", now), "audience"},
      {"wrong issuer", token("rsa-1", "tollgate", now, "https://evil.example.com"), "issuer"},
      {"unpublished key", token("ec-2", "tollgate", now), "kid \"ec-2\""},
      {"alg none",
       absl::StrCat(testing::Base64Url(R"({"alg":"none","kid":"rsa-1"})"), ".",
                    good.substr(good.find('.') + 1, good.rfind('.') - good.find('.') - 1), "."),
       "alg \"none\""},
  };
  for (const Bad& b : bad) {
    s = auth_->WhoAmI(Context(b.token).get(), v1::WhoAmIRequest(), &me);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << b.name << ": " << Describe(s);
    EXPECT_TRUE(absl::StrContains(s.error_message(), b.says)) << b.name << ": " << Describe(s);
  }
  // The issuer publishes its next key: tollgated reads the changed file by itself.
  WriteFile(jwks + ".new", issuer.Jwks());
  std::filesystem::rename(jwks + ".new", jwks);
  const std::string rotated = token("ec-2", "tollgate", now);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline &&
         !auth_->WhoAmI(Context(rotated).get(), v1::WhoAmIRequest(), &me).ok()) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  s = auth_->WhoAmI(Context(rotated).get(), v1::WhoAmIRequest(), &me);
  EXPECT_TRUE(s.ok()) << Describe(s);
  // Static tokens still work next to OIDC.
  EXPECT_TRUE(auth_->WhoAmI(Context("user-b-token").get(), v1::WhoAmIRequest(), &me).ok());
}

TEST_F(SecurityE2eTest, OidcNeedsAKeySetFileAndAnHttpsIssuer) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"no-jwks",
       {"--oidc-issuer-url=https://a.example.com", "--oidc-client-id=x"},
       "--oidc-jwks-file"},
      {"http-issuer",
       {"--oidc-issuer-url=http://a.example.com", "--oidc-client-id=x",
        absl::StrCat("--oidc-jwks-file=", scratch_, "/none.json")},
       "https://"},
      {"missing-jwks",
       {"--oidc-issuer-url=https://a.example.com", "--oidc-client-id=x",
        absl::StrCat("--oidc-jwks-file=", scratch_, "/none.json")},
       "none.json"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"--listen=127.0.0.1:0",
                                     absl::StrCat("--data-dir=", scratch_, "/data.", c.name)};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const std::string log = absl::StrCat(scratch_, "/", c.name, ".log");
    absl::StatusOr<int> code = TollgatedProcess::RunToExit(args, log);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_NE(*code, 0) << c.name;
    EXPECT_TRUE(absl::StrContains(ReadAll(log), c.want)) << c.name << ": " << ReadAll(log);
  }
}

TEST_F(SecurityE2eTest, InfoServiceNeedsCredentials) {
  ASSERT_NO_FATAL_FAILURE(StartSecure());
  auto info = v1::InfoService::NewStub(channel_);
  v1::BuildInfo build;
  grpc::Status s = info->GetBuildInfo(Context().get(), v1::GetBuildInfoRequest(), &build);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << Describe(s);
  s = info->GetBuildInfo(Context("forged").get(), v1::GetBuildInfoRequest(), &build);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << Describe(s);
  // Any authenticated identity, even one without a single binding.
  s = info->GetBuildInfo(Context("nobody-token").get(), v1::GetBuildInfoRequest(), &build);
  ASSERT_TRUE(s.ok()) << Describe(s);
  EXPECT_FALSE(build.version().empty());
  EXPECT_TRUE(absl::StrContains(ReadAll(scratch_ + "/audit.log"),
                                R"("name":"BuildInfo","result":"unauthenticated")"))
      << ReadAll(scratch_ + "/audit.log");
}

// The HTTP port over TLS with the same certificate, authenticated and authorized like gRPC.
class HttpsClient {
 public:
  HttpsClient(const Pki& pki, int port, const std::string& client = "")
      : client_("127.0.0.1", port, client.empty() ? std::string() : pki.Path(client + ".pem"),
                client.empty() ? std::string() : pki.Path(client + ".key")) {
    client_.set_ca_cert_path(pki.Path("ca.pem").c_str());
    client_.enable_server_certificate_verification(true);
    client_.set_connection_timeout(5, 0);
    client_.set_read_timeout(10, 0);
  }
  // The status and body of GET `path` with `headers`; status -1 when the request failed.
  std::pair<int, std::string> Get(const std::string& path, httplib::Headers headers = {}) {
    httplib::Result r = client_.Get(path.c_str(), headers);
    if (!r) return {-1, httplib::to_string(r.error())};
    return {r->status, r->body};
  }
  httplib::SSLClient& raw() { return client_; }

 private:
  httplib::SSLClient client_;
};

httplib::Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// Every Set-Cookie header of a response, joined by "\n".
std::string SetCookies(const httplib::Response& response) {
  std::string out;
  for (size_t i = 0; i < response.get_header_value_count("Set-Cookie"); ++i) {
    absl::StrAppend(&out, response.get_header_value("Set-Cookie", i), "\n");
  }
  return out;
}

// What a browser gets from GET /login: its pre-session cookie ("NAME=VALUE") and the form's
// anti-forgery token.
struct SignInForm {
  std::string cookie;
  std::string csrf;
};

// The value of the attribute `value="..."` following `marker` in `html`, or "".
std::string ValueAfter(const std::string& html, const std::string& marker) {
  const size_t at = html.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = html.find("value=\"", at);
  if (start == std::string::npos) return "";
  const size_t end = html.find('"', start + 7);
  return html.substr(start + 7, end - start - 7);
}

SignInForm GetSignInForm(HttpsClient& https, httplib::Headers headers = {}) {
  httplib::Result page = https.raw().Get("/login", headers);
  SignInForm form;
  if (!page || page->status != 200) {
    ADD_FAILURE() << "GET /login failed";
    return form;
  }
  const std::string set_cookie = page->get_header_value("Set-Cookie");
  form.cookie = set_cookie.substr(0, set_cookie.find(';'));
  form.csrf = ValueAfter(page->body, "name=\"csrf\"");
  EXPECT_TRUE(absl::StartsWith(form.cookie, "__Host-tollgate_login=")) << set_cookie;
  EXPECT_FALSE(form.csrf.empty()) << page->body;
  return form;
}

TEST_F(SecurityE2eTest, HttpsDashboardAndMetricsAuthenticateAndFilterLikeGrpc) {
  WriteFile(scratch_ + "/tokens.csv", absl::StrCat(kTokens, kMoreTokens));
  WriteFile(scratch_ + "/policy.yaml", absl::StrCat(kPolicy, kMorePolicy));
  const std::string port_file = scratch_ + "/metrics_port";
  ASSERT_NO_FATAL_FAILURE(StartSecure({
      absl::StrCat("--token-file=", scratch_, "/tokens.csv"),
      absl::StrCat("--authz-policy=", scratch_, "/policy.yaml"),
      "--metrics-listen=127.0.0.1:0",
      absl::StrCat("--metrics-port-file=", port_file),
  }));
  const int port = AwaitPortFile(port_file);
  ASSERT_GT(port, 0) << server_->Logs();
  ASSERT_TRUE(Submit("user-a-token", MakeWorkload("team-a", "a-job", "100m")).ok());
  ASSERT_TRUE(Submit("user-b-token", MakeWorkload("team-b", "b-job", "100m")).ok());
  // Never fits next to the others (1 cpu in all): stays pending.
  ASSERT_TRUE(Submit("user-b-token", MakeWorkload("team-b", "b-big", "1")).ok());

  HttpsClient https(*pki_, port);
  // /metrics: 401 without credentials, 403 for a team member, 200 for the metrics reader and
  // the viewer.
  EXPECT_EQ(https.Get("/metrics").first, 401);
  EXPECT_EQ(https.Get("/metrics", Bearer("forged")).first, 401);
  EXPECT_EQ(https.Get("/metrics", Bearer("user-a-token")).first, 403);
  auto [code, body] = https.Get("/metrics", Bearer("prom-token"));
  EXPECT_EQ(code, 200);
  EXPECT_TRUE(absl::StrContains(body, "kueue_pending_workloads")) << body.substr(0, 200);
  EXPECT_EQ(https.Get("/metrics", Bearer("viewer-token")).first, 200);
  // The metrics reader reads nothing else.
  EXPECT_EQ(https.Get("/api/v1/workloads", Bearer("prom-token")).first, 403);

  // The dashboard API: the same filtering as ListWorkloads.
  EXPECT_EQ(https.Get("/api/v1/workloads").first, 401);
  std::tie(code, body) = https.Get("/api/v1/workloads", Bearer("user-a-token"));
  EXPECT_EQ(code, 200) << body;
  EXPECT_TRUE(absl::StrContains(body, "a-job")) << body;
  EXPECT_FALSE(absl::StrContains(body, "b-job")) << body;
  std::tie(code, body) = https.Get("/api/v1/workloads", Bearer("admin-token"));
  EXPECT_TRUE(absl::StrContains(body, "a-job") && absl::StrContains(body, "b-job")) << body;
  EXPECT_EQ(https.Get("/api/v1/workloads/team-b/b-job", Bearer("user-a-token")).first, 403);
  EXPECT_EQ(https.Get("/api/v1/workloads/team-a/a-job", Bearer("user-a-token")).first, 200);
  EXPECT_EQ(https.Get("/api/v1/objects/clusterqueues", Bearer("user-a-token")).first, 403);
  EXPECT_EQ(https.Get("/api/v1/objects/clusterqueues", Bearer("viewer-token")).first, 200);
  EXPECT_EQ(https.Get("/api/v1/objects/localqueues?namespace=team-a", Bearer("user-a-token")).first,
            200);
  // The visibility list of the shared ClusterQueue: positions for all, names only for the
  // caller's (lead may get the ClusterQueue, and list team-a's workloads).
  const absl::Time listed = absl::Now() + absl::Seconds(30);
  do {
    std::tie(code, body) = https.Get("/api/v1/pending?clusterQueue=cq", Bearer("lead-a-token"));
  } while (absl::Now() < listed && !absl::StrContains(body, "positionInClusterQueue") &&
           (absl::SleepFor(absl::Milliseconds(20)), true));
  EXPECT_EQ(code, 200) << body;
  EXPECT_TRUE(absl::StrContains(body, "positionInClusterQueue")) << body;
  EXPECT_FALSE(absl::StrContains(body, "b-big")) << body;
  std::tie(code, body) = https.Get("/api/v1/pending?clusterQueue=cq", Bearer("admin-token"));
  EXPECT_TRUE(absl::StrContains(body, "b-big")) << body;

  // The login cookie carries the same token (__Host- prefixed over TLS).
  std::tie(code, body) = https.Get("/api/v1/workloads",
                                   {{"Cookie", "theme=dark; __Host-tollgate_token=user-b-token"}});
  EXPECT_EQ(code, 200) << body;
  EXPECT_TRUE(absl::StrContains(body, "b-job") && !absl::StrContains(body, "a-job")) << body;
  // Without the prefix (a cookie a sibling subdomain could have planted) it is not taken.
  EXPECT_EQ(https.Get("/api/v1/workloads", {{"Cookie", "tollgate_token=user-b-token"}}).first, 401);
  // Signing in takes the form's anti-forgery token (tested at length in
  // SignInFormRefusesForgedAndCrossSitePosts).
  const SignInForm form = GetSignInForm(https);
  httplib::Result login = https.raw().Post("/login", {{"Cookie", form.cookie}},
                                           absl::StrCat("token=user-b-token&csrf=", form.csrf),
                                           "application/x-www-form-urlencoded");
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303) << login->body;
  EXPECT_EQ(login->get_header_value("Location"), "/");
  const std::string cookies = SetCookies(*login);
  EXPECT_TRUE(absl::StrContains(cookies, "__Host-tollgate_token=user-b-token")) << cookies;
  EXPECT_TRUE(absl::StrContains(cookies, "Secure")) << cookies;
  EXPECT_TRUE(absl::StrContains(cookies, "HttpOnly")) << cookies;
  EXPECT_TRUE(absl::StrContains(cookies, "SameSite=Strict")) << cookies;
  login = https.raw().Post("/login", {{"Cookie", form.cookie}},
                           absl::StrCat("token=forged&csrf=", form.csrf),
                           "application/x-www-form-urlencoded");
  ASSERT_TRUE(login);
  EXPECT_EQ(login->get_header_value("Location"), "/login?failed=1");
  // Static assets and the login page need no credentials.
  EXPECT_EQ(https.Get("/").first, 200);
  EXPECT_EQ(https.Get("/login").first, 200);

  // mTLS: alice's certificate (O=team-a) sees team-a only.
  HttpsClient alice(*pki_, port, "alice");
  std::tie(code, body) = alice.Get("/api/v1/workloads");
  EXPECT_EQ(code, 200) << body;
  EXPECT_TRUE(absl::StrContains(body, "a-job") && !absl::StrContains(body, "b-job")) << body;

  // Plain HTTP to the TLS port gets nothing.
  httplib::Client plain("127.0.0.1", port);
  plain.set_connection_timeout(5, 0);
  plain.set_read_timeout(5, 0);
  httplib::Result r = plain.Get("/metrics");
  EXPECT_TRUE(!r || r->status != 200);

  // Refusals are audited like gRPC's.
  const std::string audit = ReadAll(scratch_ + "/audit.log");
  EXPECT_TRUE(absl::StrContains(
      audit,
      R"("user":"alice","groups":["team-a"],"method":"token","verb":"get","kind":"Metrics")"))
      << audit;
}

// Login CSRF: a page elsewhere must not be able to sign the victim's browser in (as the
// attacker) or out. Forged posts get 403, set no cookie, and are audited.
TEST_F(SecurityE2eTest, SignInFormRefusesForgedAndCrossSitePosts) {
  // A refused POST is answered before its body is read, so tollgated closes the connection; the
  // client's TLS shutdown on it must not kill the test with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  const std::string port_file = scratch_ + "/metrics_port";
  ASSERT_NO_FATAL_FAILURE(StartSecure(
      {"--metrics-listen=127.0.0.1:0", absl::StrCat("--metrics-port-file=", port_file)}));
  const int port = AwaitPortFile(port_file);
  ASSERT_GT(port, 0) << server_->Logs();
  HttpsClient https(*pki_, port);
  const std::string self = absl::StrCat("https://127.0.0.1:", port);
  const SignInForm form = GetSignInForm(https);
  const SignInForm other_browser = GetSignInForm(https);
  ASSERT_NE(form.cookie, other_browser.cookie);
  // A reload keeps the browser's pre-session (two tabs both sign in).
  EXPECT_EQ(GetSignInForm(https, {{"Cookie", form.cookie}}).cookie, form.cookie);

  struct Case {
    const char* what;
    httplib::Headers headers;
    std::string body;
    const char* want;
  };
  const std::string good_body = absl::StrCat("token=user-a-token&csrf=", form.csrf);
  const std::vector<Case> cases = {
      {"no token",
       {{"Cookie", form.cookie}, {"Origin", self}},
       "token=user-a-token",
       "anti-forgery token missing"},
      {"a made-up token",
       {{"Cookie", form.cookie}, {"Origin", self}},
       "token=user-a-token&csrf=4102444800.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
       "does not match"},
      {"another browser's token",
       {{"Cookie", form.cookie}, {"Origin", self}},
       absl::StrCat("token=user-a-token&csrf=", other_browser.csrf),
       "does not match"},
      {"no pre-session cookie (SameSite kept it home)",
       {{"Origin", self}},
       good_body,
       "session cookie missing"},
      {"the cookie without its __Host- prefix",
       {{"Cookie", form.cookie.substr(std::string("__Host-").size())}, {"Origin", self}},
       good_body,
       "session cookie missing"},
      {"another origin",
       {{"Cookie", form.cookie}, {"Origin", "https://evil.example"}},
       good_body,
       "Origin \"https://evil.example\""},
      {"an opaque origin",
       {{"Cookie", form.cookie}, {"Origin", "null"}},
       good_body,
       "Origin \"null\""},
      {"another port of this host",
       {{"Cookie", form.cookie}, {"Origin", absl::StrCat("https://127.0.0.1:", port + 1)}},
       good_body,
       "Origin"},
      {"cross-site fetch metadata",
       {{"Cookie", form.cookie}, {"Sec-Fetch-Site", "cross-site"}},
       good_body,
       "Sec-Fetch-Site"},
      {"a referer elsewhere",
       {{"Cookie", form.cookie}, {"Referer", "https://evil.example/login-csrf.html"}},
       good_body,
       "Referer"},
  };
  for (const Case& c : cases) {
    httplib::Result r =
        https.raw().Post("/login", c.headers, c.body, "application/x-www-form-urlencoded");
    ASSERT_TRUE(r) << c.what;
    EXPECT_EQ(r->status, 403) << c.what << ": " << r->body;
    EXPECT_TRUE(absl::StrContains(r->body, c.want)) << c.what << ": " << r->body;
    // Nothing changed: no session cookie set (nor the pre-session cleared).
    EXPECT_EQ(SetCookies(*r), "") << c.what;
  }
  // The same form from this origin (and from a client that sends no Origin at all) signs in.
  for (const httplib::Headers& headers :
       {httplib::Headers{
            {"Cookie", form.cookie}, {"Origin", self}, {"Sec-Fetch-Site", "same-origin"}},
        httplib::Headers{{"Cookie", form.cookie}, {"Referer", self + "/login"}}}) {
    httplib::Result r =
        https.raw().Post("/login", headers, good_body, "application/x-www-form-urlencoded");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 303) << r->body;
    EXPECT_TRUE(absl::StrContains(SetCookies(*r), "__Host-tollgate_token=user-a-token;"))
        << SetCookies(*r);
  }

  // Sign-out is a state-changing POST too: its token comes from /api/v1/session, bound to the
  // session cookie.
  const httplib::Headers session = {{"Cookie", "__Host-tollgate_token=user-a-token"},
                                    {"Origin", self}};
  httplib::Result out =
      https.raw().Post("/logout", session, "", "application/x-www-form-urlencoded");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 403) << out->body;
  EXPECT_EQ(SetCookies(*out), "");
  auto [code, who] = https.Get("/api/v1/session", session);
  EXPECT_EQ(code, 200) << who;
  EXPECT_TRUE(absl::StrContains(who, R"("user":"alice")")) << who;
  const size_t at = who.find(R"("logoutToken":")");
  ASSERT_NE(at, std::string::npos) << who;
  const std::string logout_token = who.substr(at + 15, who.find('"', at + 15) - at - 15);
  // Not valid for another session, nor from another origin.
  out = https.raw().Post("/logout",
                         {{"Cookie", "__Host-tollgate_token=user-b-token"}, {"Origin", self}},
                         absl::StrCat("csrf=", logout_token), "application/x-www-form-urlencoded");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 403);
  out = https.raw().Post(
      "/logout",
      {{"Cookie", "__Host-tollgate_token=user-a-token"}, {"Origin", "https://evil.example"}},
      absl::StrCat("csrf=", logout_token), "application/x-www-form-urlencoded");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 403);
  out = https.raw().Post("/logout", session, absl::StrCat("csrf=", logout_token),
                         "application/x-www-form-urlencoded");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 303);
  EXPECT_TRUE(absl::StrContains(SetCookies(*out), "__Host-tollgate_token=; Path=/; Max-Age=0"))
      << SetCookies(*out);

  // The refusals are in the audit log.
  const std::string audit = ReadAll(scratch_ + "/audit.log");
  EXPECT_TRUE(absl::StrContains(
      audit,
      R"("verb":"post","kind":"","namespace":"","name":"/login","result":"denied","code":"PERMISSION_DENIED","reason":"cross-site request refused: Origin \"https://evil.example\" is not https://127.0.0.1:)"))
      << audit;
  EXPECT_TRUE(absl::StrContains(
      audit,
      R"("name":"/login","result":"denied","code":"PERMISSION_DENIED","reason":"anti-forgery token missing")"))
      << audit;
  EXPECT_TRUE(absl::StrContains(audit, R"("name":"/logout","result":"denied")")) << audit;
}

TEST_F(SecurityE2eTest, MetricsListenBeyondLoopbackNeedsTlsAndAnAuthenticator) {
  const std::vector<std::string> base = {"--listen=127.0.0.1:0", "--metrics-listen=0.0.0.0:0"};
  std::vector<std::string> args = base;
  args.push_back(absl::StrCat("--data-dir=", scratch_, "/data.plain"));
  absl::StatusOr<int> code = TollgatedProcess::RunToExit(args, scratch_ + "/plain.log");
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(absl::StrContains(ReadAll(scratch_ + "/plain.log"), "needs TLS"))
      << ReadAll(scratch_ + "/plain.log");
  // With TLS and tokens it serves on every address. The certificate files are copies, replaced
  // below to check the HTTP port's rotation.
  const std::string cert = scratch_ + "/server.pem";
  const std::string key = scratch_ + "/server.key";
  WriteFile(cert, pki_->Read("server.pem"));
  WriteFile(key, pki_->Read("server.key"));
  const std::string port_file = scratch_ + "/metrics_port";
  absl::StatusOr<std::unique_ptr<TollgatedProcess>> p = TollgatedProcess::Start(
      scratch_ + "/data", scratch_,
      {absl::StrCat("--tls-cert=", cert), absl::StrCat("--tls-key=", key),
       absl::StrCat("--token-file=", pki_->Path("tokens.csv")), "--metrics-listen=0.0.0.0:0",
       absl::StrCat("--metrics-port-file=", port_file)},
      absl::Seconds(30), Tls(*pki_, "ca"));
  ASSERT_TRUE(p.ok()) << p.status();
  const int port = AwaitPortFile(port_file);
  ASSERT_GT(port, 0);
  HttpsClient https(*pki_, port);
  EXPECT_EQ(https.Get("/metrics").first, 401);
  EXPECT_EQ(https.Get("/metrics", Bearer("admin-token")).first, 200);

  // Rotation: a new certificate (CN=rotated) moved into place is served by the next handshake.
  auto served_subject = [&] {
    const std::string out = scratch_ + "/s_client.txt";
    const std::string command =
        absl::StrCat("openssl s_client -connect 127.0.0.1:", port, " -CAfile ",
                     pki_->Path("ca.pem"), " </dev/null >", out, " 2>&1");
    if (std::system(command.c_str()) != 0) return std::string();
    return ReadAll(out);
  };
  EXPECT_TRUE(absl::StrContains(served_subject(), "CN = localhost"));
  pki_->MakeCert("ca", "rotated", "/CN=rotated", /*server=*/true);
  WriteFile(key + ".new", pki_->Read("rotated.key"));
  WriteFile(cert + ".new", pki_->Read("rotated.pem"));
  std::filesystem::rename(key + ".new", key);
  std::filesystem::rename(cert + ".new", cert);
  EXPECT_TRUE(absl::StrContains(served_subject(), "CN = rotated"));
  HttpsClient after(*pki_, port);
  EXPECT_EQ(after.Get("/metrics", Bearer("admin-token")).first, 200);
}

}  // namespace
}  // namespace tollgate::e2e
