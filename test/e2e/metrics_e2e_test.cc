// /metrics end to end: a real tollgated with --metrics-listen, its scrape checked by promtool,
// and a real Prometheus server scraping it and answering PromQL over its HTTP API.
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "test/e2e/child_process.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

constexpr char kPrometheus[] = "/usr/bin/prometheus";
constexpr char kPromtool[] = "/usr/bin/promtool";
// Paces polling only: every wait below ends on its condition or its deadline.
constexpr absl::Duration kPoll = absl::Milliseconds(100);

std::string Manifest(const char* name) {
  return absl::StrCat(TOLLGATE_SOURCE_DIR, "/deploy/evalhub/", name);
}

// Polls `condition` until it holds or `timeout` passes; returns whether it held.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (condition()) return true;
    if (absl::Now() > deadline) return false;
    absl::SleepFor(kPoll);
  }
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(10, 0);
  httplib::Result result = client.Get(path.c_str());
  if (!result) {
    return absl::UnavailableError(
        absl::StrCat("GET ", path, ": ", httplib::to_string(result.error())));
  }
  if (result->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET ", path, ": HTTP ", result->status, ": ", result->body));
  }
  return result->body;
}

// The value of the sample `series` (name and labels exactly as exposed) in a scrape.
std::optional<double> SampleValue(const std::string& scrape, const std::string& series) {
  const std::string prefix = series + " ";
  size_t at = scrape.find("\n" + prefix);
  if (at == std::string::npos) return std::nullopt;
  at += prefix.size() + 1;
  const size_t end = scrape.find('\n', at);
  double value = 0;
  if (!absl::SimpleAtod(scrape.substr(at, end - at), &value)) return std::nullopt;
  return value;
}

class MetricsE2eTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_metrics_e2e"));
  }

  void TearDown() override {
    if (HasFailure()) {
      if (server_ != nullptr) std::cerr << "tollgated log:\n" << server_->Logs();
      if (prometheus_ != nullptr) std::cerr << "prometheus log:\n" << prometheus_->Logs();
    }
    prometheus_.reset();
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  // tollgated with the EvalHub queues and jobs, and /metrics on a free loopback port.
  void StartServer(std::vector<std::string> extra_args = {},
                   std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr) {
    const std::string port_file = scratch_ + "/metrics_port";
    std::vector<std::string> args = {
        "--metrics-listen=127.0.0.1:0", "--metrics-port-file=" + port_file,
        "--manifests=" + Manifest("queues.yaml") + "," + Manifest("priorities.yaml") + "," +
            Manifest("workloads.yaml")};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    ASSERT_OK_AND_ASSIGN(server_, TollgatedProcess::Start(scratch_ + "/data", scratch_, args,
                                                          absl::Seconds(30), credentials));
    ASSERT_TRUE(WaitFor(
        [&] {
          return absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFileOrEmpty(port_file)),
                                  &metrics_port_) &&
                 metrics_port_ > 0;
        },
        absl::Seconds(30)))
        << "no metrics port file";
    admission_ = v1::AdmissionService::NewStub(server_->channel());
  }

  // Submits a one-cpu job to team-b's LocalQueue eval-queue.
  void SubmitTeamBJob(const std::string& name) {
    v1::SubmitRequest submit;
    v1::Workload* wl = submit.mutable_workload();
    wl->mutable_metadata()->set_namespace_("team-b");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name("eval-queue");
    v1::PodSet* pod_set = wl->mutable_spec()->add_pod_sets();
    pod_set->set_name("main");
    pod_set->set_count(1);
    (*pod_set->mutable_requests())["cpu"] = "1";
    v1::SubmitResponse submitted;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    const grpc::Status status = admission_->Submit(&context, submit, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // The API's count of workloads in `state`.
  int CountInState(v1::WorkloadState state) {
    v1::ListWorkloadsRequest request;
    request.set_state(state);
    v1::ListWorkloadsResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    const grpc::Status status = admission_->ListWorkloads(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.workloads_size();
  }

  // Starts Prometheus with `config` on a free port (retrying if another process takes it
  // first); returns the port, 0 on failure.
  int StartPrometheus(const std::string& config) {
    for (int attempt = 0; attempt < 3 && prometheus_ == nullptr; ++attempt) {
      absl::StatusOr<int> port = PickFreePort();
      if (!port.ok()) continue;
      absl::StatusOr<std::unique_ptr<ChildProcess>> started = ChildProcess::Start(
          {kPrometheus, "--config.file=" + config, "--storage.tsdb.path=" + scratch_ + "/tsdb",
           absl::StrCat("--web.listen-address=127.0.0.1:", *port), "--log.level=warn"},
          scratch_ + "/prometheus.log");
      if (!started.ok()) continue;
      prometheus_ = *std::move(started);
      const bool ready =
          WaitFor([&] { return !prometheus_->Running() || HttpGet(*port, "/-/ready").ok(); },
                  absl::Seconds(60));
      if (ready && prometheus_->Running()) return *port;
      std::cerr << "prometheus did not start on " << *port << ":\n" << prometheus_->Logs();
      prometheus_.reset();
    }
    return 0;
  }

  // The value of a PromQL query with one result from Prometheus on `port`, or nullopt.
  static std::optional<double> Query(int port, const std::string& promql) {
    absl::StatusOr<std::string> body =
        HttpGet(port, "/api/v1/query?query=" + httplib::detail::encode_query_param(promql));
    if (!body.ok()) return std::nullopt;
    nlohmann::json json = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || json["status"] != "success") return std::nullopt;
    const nlohmann::json& result = json["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    double value = 0;
    if (!absl::SimpleAtod(result[0]["value"][1].get<std::string>(), &value)) return std::nullopt;
    return value;
  }

  std::string scratch_;
  int metrics_port_ = 0;
  std::unique_ptr<TollgatedProcess> server_;
  std::unique_ptr<ChildProcess> prometheus_;
  std::unique_ptr<v1::AdmissionService::Stub> admission_;
};

TEST_F(MetricsE2eTest, ScrapeHasKueueFamiliesMatchesTheApiAndPassesPromtool) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // Admission settles in the background; wait until the scrape and the API agree.
  std::string scrape;
  int admitted = -1;
  int pending = -1;
  const bool agreed = WaitFor(
      [&] {
        absl::StatusOr<std::string> body = HttpGet(metrics_port_, "/metrics");
        if (!body.ok()) return false;
        scrape = *body;
        admitted = CountInState(v1::WORKLOAD_STATE_ADMITTED);
        pending = CountInState(v1::WORKLOAD_STATE_PENDING);
        const double active =
            SampleValue(
                scrape,
                R"(kueue_admitted_active_workloads{cluster_queue="team-a-cq",replica_role="standalone"})")
                .value_or(-1) +
            SampleValue(
                scrape,
                R"(kueue_admitted_active_workloads{cluster_queue="team-b-cq",replica_role="standalone"})")
                .value_or(-1);
        double queued = 0;
        for (const char* cq : {"team-a-cq", "team-b-cq"}) {
          for (const char* status : {"active", "inadmissible"}) {
            queued += SampleValue(scrape, absl::StrCat("kueue_pending_workloads{cluster_queue=\"",
                                                       cq, "\",status=\"", status,
                                                       "\",replica_role=\"standalone\"}"))
                          .value_or(-100);
          }
        }
        return admitted > 0 && active == admitted && queued == pending;
      },
      absl::Seconds(30));
  ASSERT_TRUE(agreed) << "admitted " << admitted << ", pending " << pending << "\n" << scrape;

  for (const char* family : {"kueue_pending_workloads",
                             "kueue_admitted_workloads_total",
                             "kueue_admission_wait_time_seconds",
                             "kueue_quota_reserved_workloads_total",
                             "kueue_quota_reserved_wait_time_seconds",
                             "kueue_admission_attempts_total",
                             "kueue_admission_attempt_duration_seconds",
                             "kueue_evicted_workloads_total",
                             "kueue_preempted_workloads_total",
                             "kueue_admitted_active_workloads",
                             "kueue_reserving_active_workloads",
                             "kueue_cluster_queue_status",
                             "kueue_cluster_queue_resource_usage",
                             "kueue_cluster_queue_resource_reservation",
                             "kueue_cluster_queue_nominal_quota",
                             "kueue_cluster_queue_borrowing_limit",
                             "kueue_cluster_queue_lending_limit",
                             "kueue_local_queue_pending_workloads",
                             "kueue_local_queue_admitted_workloads_total",
                             "kueue_finished_workloads_total",
                             "kueue_finished_workloads",
                             "kueue_local_queue_finished_workloads_total",
                             "kueue_local_queue_finished_workloads",
                             "kueue_cohort_subtree_quota",
                             "kueue_cohort_subtree_resource_reservations",
                             "kueue_cohort_subtree_admitted_active_workloads",
                             "kueue_cohort_subtree_admitted_workloads_total",
                             "kueue_cohort_info",
                             "kueue_cluster_queue_info",
                             "kueue_build_info",
                             "tollgate_grpc_server_handled_total",
                             "tollgate_store_commit_duration_seconds",
                             "tollgate_executor_cycle_duration_seconds",
                             "tollgate_executor_queue_depth",
                             "tollgate_watch_subscribers",
                             "tollgate_watch_dropped_total",
                             "tollgate_watch_events_sent_total",
                             "tollgate_watch_sent_bytes_total",
                             "tollgate_rocksdb_sst_bytes",
                             "process_resident_memory_bytes",
                             "process_open_fds",
                             "process_cpu_seconds_total"}) {
    EXPECT_TRUE(absl::StrContains(scrape, absl::StrCat("\n# TYPE ", family, " ")) ||
                absl::StartsWith(scrape, absl::StrCat("# HELP ", family, " ")))
        << family << " missing";
  }
  // Every admission so far counted once, with Kueue's labels.
  double admitted_total = 0;
  for (const char* cq : {"team-a-cq", "team-b-cq"}) {
    for (const char* pc : {"production", "routine", "experimental"}) {
      admitted_total +=
          SampleValue(scrape,
                      absl::StrCat("kueue_admitted_workloads_total{cluster_queue=\"", cq,
                                   "\",priority_class=\"", pc, "\",replica_role=\"standalone\"}"))
              .value_or(0);
    }
  }
  EXPECT_EQ(admitted_total, admitted);
  EXPECT_EQ(
      SampleValue(
          scrape,
          R"(kueue_cluster_queue_nominal_quota{cohort="evalhub",cluster_queue="team-a-cq",flavor="default-flavor",resource="cpu",replica_role="standalone"})"),
      32);
  EXPECT_EQ(
      SampleValue(
          scrape,
          R"(kueue_cluster_queue_nominal_quota{cohort="evalhub",cluster_queue="team-a-cq",flavor="default-flavor",resource="memory",replica_role="standalone"})"),
      128.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(
      SampleValue(
          scrape,
          R"(kueue_cluster_queue_status{cluster_queue="team-a-cq",status="active",replica_role="standalone"})"),
      1);

  // promtool parses and lints the whole exposition.
  const std::string scrape_file = scratch_ + "/scrape.txt";
  std::ofstream(scrape_file) << scrape;
  const std::string promtool_log = scratch_ + "/promtool.log";
  ASSERT_OK_AND_ASSIGN(
      int code, ChildProcess::Run({kPromtool, "check", "metrics"}, promtool_log, scrape_file));
  EXPECT_EQ(code, 0) << ReadFileOrEmpty(promtool_log);
}

TEST_F(MetricsE2eTest, PrometheusScrapesTollgatedAndAnswersQueries) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const std::string config = scratch_ + "/prometheus.yml";
  std::ofstream(config) << absl::StrCat(
      "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
      "scrape_configs:\n  - job_name: tollgated\n    static_configs:\n"
      "      - targets: ['127.0.0.1:",
      metrics_port_, "']\n");
  // Prometheus cannot listen on port 0 and report it: take a free port, retrying if another
  // process grabs it first.
  int port = 0;
  for (int attempt = 0; attempt < 3 && prometheus_ == nullptr; ++attempt) {
    ASSERT_OK_AND_ASSIGN(port, PickFreePort());
    ASSERT_OK_AND_ASSIGN(
        prometheus_,
        ChildProcess::Start(
            {kPrometheus, "--config.file=" + config, "--storage.tsdb.path=" + scratch_ + "/tsdb",
             absl::StrCat("--web.listen-address=127.0.0.1:", port), "--log.level=warn"},
            scratch_ + "/prometheus.log"));
    const bool ready =
        WaitFor([&] { return !prometheus_->Running() || HttpGet(port, "/-/ready").ok(); },
                absl::Seconds(60));
    if (!ready || !prometheus_->Running()) {
      std::cerr << "prometheus did not start on " << port << ":\n" << prometheus_->Logs();
      prometheus_.reset();
    }
  }
  ASSERT_NE(prometheus_, nullptr);

  // The value of a PromQL query with one result, or nullopt.
  auto query = [&](const std::string& promql) -> std::optional<double> {
    absl::StatusOr<std::string> body =
        HttpGet(port, "/api/v1/query?query=" + httplib::detail::encode_query_param(promql));
    if (!body.ok()) return std::nullopt;
    nlohmann::json json = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || json["status"] != "success") return std::nullopt;
    const nlohmann::json& result = json["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    double value = 0;
    if (!absl::SimpleAtod(result[0]["value"][1].get<std::string>(), &value)) return std::nullopt;
    return value;
  };
  auto eventually_equals = [&](const std::string& promql, double want) {
    std::optional<double> got;
    const bool held = WaitFor(
        [&] {
          got = query(promql);
          return got.has_value() && *got == want;
        },
        absl::Seconds(60));
    EXPECT_TRUE(held) << promql << " = " << (got ? absl::StrCat(*got) : "nothing") << ", want "
                      << want;
  };

  eventually_equals(R"(up{job="tollgated"})", 1);
  eventually_equals(
      R"(kueue_cluster_queue_nominal_quota{cluster_queue="team-b-cq",resource="nvidia.com/gpu"})",
      4);

  // A new job for team-b shows up in Prometheus as the API reports it.
  ASSERT_NO_FATAL_FAILURE(SubmitTeamBJob("prom-probe"));

  // Wait for admission to settle (API and scrape agree), then for Prometheus to catch up.
  int admitted = 0;
  int pending = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        const int a = CountInState(v1::WORKLOAD_STATE_ADMITTED);
        const int p = CountInState(v1::WORKLOAD_STATE_PENDING);
        const bool stable = a == admitted && p == pending && a > 0;
        admitted = a;
        pending = p;
        return stable;
      },
      absl::Seconds(30)));
  eventually_equals("sum(kueue_admitted_active_workloads)", admitted);
  eventually_equals("sum(kueue_pending_workloads)", pending);
  eventually_equals("sum(kueue_admitted_workloads_total)", admitted);
  eventually_equals(
      R"(sum(tollgate_grpc_server_handled_total{grpc_method="Submit",grpc_code="OK"}) >= 1)", 1);
  // Every query of the Grafana dashboard is valid PromQL over these metrics.
  const std::string dashboard_text =
      ReadFileOrEmpty(absl::StrCat(TOLLGATE_SOURCE_DIR, "/deploy/grafana/tollgate-dashboard.json"));
  nlohmann::json dashboard =
      nlohmann::json::parse(dashboard_text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(dashboard.is_discarded()) << "tollgate-dashboard.json is not JSON";
  int checked = 0;
  for (const nlohmann::json& panel : dashboard["panels"]) {
    if (!panel.contains("targets")) continue;
    for (const nlohmann::json& target : panel["targets"]) {
      std::string expr = target["expr"].get<std::string>();
      absl::StrReplaceAll({{"$cluster_queue", ".*"}, {"$__rate_interval", "1m"}}, &expr);
      absl::StatusOr<std::string> body =
          HttpGet(port, "/api/v1/query?query=" + httplib::detail::encode_query_param(expr));
      ASSERT_TRUE(body.ok()) << panel["title"] << ": " << expr << ": " << body.status();
      nlohmann::json json = nlohmann::json::parse(*body, nullptr, false);
      EXPECT_EQ(json["status"], "success") << expr;
      checked++;
    }
  }
  EXPECT_GE(checked, 20);
  // Utilization, the dashboard's first question: one series per queue and resource.
  eventually_equals(
      "count(sum by (cluster_queue, resource) (kueue_cluster_queue_resource_usage) / sum by "
      "(cluster_queue, resource) (kueue_cluster_queue_nominal_quota))",
      6);
}

// A Watch the server ends with OUT_OF_RANGE (its revision was compacted away) is counted by
// reason, so an alert can tell watchers that keep re-listing.
TEST_F(MetricsE2eTest, DroppedWatchIsCountedByReason) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--change-log-retention=2"}));
  for (int i = 0; i < 5; ++i) {
    ASSERT_NO_FATAL_FAILURE(SubmitTeamBJob(absl::StrCat("compaction-probe-", i)));
  }
  // Compaction runs after commits; watch from revision 1 until it is refused as compacted.
  grpc::Status ended;
  ASSERT_TRUE(WaitFor(
      [&] {
        v1::WatchRequest request;
        request.set_since_revision(1);
        grpc::ClientContext context;
        context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
        std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
            admission_->Watch(&context, request);
        v1::WatchEvent event;
        while (reader->Read(&event)) {
          if (event.type() == v1::WatchEvent::BOOKMARK) context.TryCancel();
        }
        ended = reader->Finish();
        return ended.error_code() == grpc::StatusCode::OUT_OF_RANGE;
      },
      absl::Seconds(30)))
      << "last Watch ended with " << ended.error_code() << " " << ended.error_message();
  std::string scrape;
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> body = HttpGet(metrics_port_, "/metrics");
        if (!body.ok()) return false;
        scrape = *body;
        return SampleValue(scrape, R"(tollgate_watch_dropped_total{reason="compacted"})")
                   .value_or(0) >= 1;
      },
      absl::Seconds(10)))
      << scrape;
  EXPECT_EQ(SampleValue(scrape, R"(tollgate_watch_dropped_total{reason="lagging"})"), 0);
}

// A listing read to its end is counted event by event in what the hub sent, with its bytes.
TEST_F(MetricsE2eTest, WatchEventsSentAreCounted) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  absl::StatusOr<std::string> before = HttpGet(metrics_port_, "/metrics");
  ASSERT_TRUE(before.ok()) << before.status();
  const double events_before =
      SampleValue(*before, "tollgate_watch_events_sent_total").value_or(-1);
  ASSERT_GE(events_before, 0) << *before;

  v1::ListWorkloadsRequest list_request;
  v1::ListWorkloadsResponse listed;
  grpc::ClientContext list_context;
  ASSERT_TRUE(admission_->ListWorkloads(&list_context, list_request, &listed).ok());
  ASSERT_GT(listed.workloads_size(), 0);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
      admission_->Watch(&context, v1::WatchRequest());
  v1::WatchEvent event;
  int received = 0;
  int64_t encoded = 0;
  while (received < listed.workloads_size() && reader->Read(&event)) {
    ++received;
    encoded += static_cast<int64_t>(event.ByteSizeLong());
  }
  ASSERT_EQ(received, listed.workloads_size());
  context.TryCancel();
  reader->Finish();

  // Bytes are counted as each write completes, which may follow the client's read by a moment.
  std::string after;
  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<std::string> body = HttpGet(metrics_port_, "/metrics");
        if (!body.ok()) return false;
        after = *body;
        return SampleValue(after, "tollgate_watch_events_sent_total").value_or(-1) >=
                   events_before + received &&
               SampleValue(after, "tollgate_watch_sent_bytes_total").value_or(-1) >=
                   static_cast<double>(encoded);
      },
      absl::Seconds(10)))
      << after;
}

// The authenticated variant: tollgated's HTTP port on TLS with its gRPC certificate, and
// Prometheus scraping it with a CA file and a bearer token file, as a production scrape config
// does. A scrape job whose token lacks the metrics-reader role is refused (up == 0).
TEST_F(MetricsE2eTest, PrometheusScrapesOverTlsWithABearerTokenFile) {
  auto shell = [&](const std::string& command) {
    const std::string full = absl::StrCat("cd ", scratch_, " && ", command, " >/dev/null 2>&1");
    return std::system(full.c_str()) == 0;
  };
  ASSERT_TRUE(
      shell("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=test-ca "
            "-keyout ca.key -out ca.pem"));
  ASSERT_TRUE(
      shell("openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key "
            "-out server.csr"));
  std::ofstream(scratch_ + "/san.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  ASSERT_TRUE(
      shell("openssl x509 -req -days 1 -in server.csr -CA ca.pem -CAkey ca.key "
            "-CAcreateserial -extfile san.ext -out server.pem"));
  std::ofstream(scratch_ + "/tokens.csv")
      << "prom-secret,prometheus,1,monitoring\nteam-secret,alice,2,team-a\n"
      << "admin-secret,root,3,\"tollgate:admins\"\n";
  std::ofstream(scratch_ + "/policy.yaml")
      << "kind: RoleBinding\nmetadata: {name: prometheus}\nrole: metrics-reader\n"
         "subjects: [{kind: Group, name: monitoring}]\n";
  std::ofstream(scratch_ + "/prom.token") << "prom-secret\n";
  std::ofstream(scratch_ + "/team.token") << "team-secret\n";
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = ReadFileOrEmpty(scratch_ + "/ca.pem");
  ASSERT_NO_FATAL_FAILURE(StartServer(
      {"--tls-cert=" + scratch_ + "/server.pem", "--tls-key=" + scratch_ + "/server.key",
       "--token-file=" + scratch_ + "/tokens.csv", "--authz-policy=" + scratch_ + "/policy.yaml"},
      grpc::SslCredentials(tls)));
  // Plain HTTP no longer works.
  EXPECT_FALSE(HttpGet(metrics_port_, "/metrics").ok());

  const std::string config = scratch_ + "/prometheus.yml";
  std::string jobs;
  for (const auto& [job, token] : {std::pair<std::string, std::string>{"tollgated", "prom.token"},
                                   {"team-member", "team.token"}}) {
    absl::StrAppend(&jobs, "  - job_name: ", job, "\n    scheme: https\n",
                    "    authorization:\n      credentials_file: ", scratch_, "/", token, "\n",
                    "    tls_config:\n      ca_file: ", scratch_, "/ca.pem\n",
                    "      server_name: localhost\n",
                    "    static_configs:\n      - targets: ['127.0.0.1:", metrics_port_, "']\n");
  }
  std::ofstream(config) << absl::StrCat(
      "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n", jobs);
  const int port = StartPrometheus(config);
  ASSERT_NE(port, 0);

  auto eventually_equals = [&](const std::string& promql, double want) {
    std::optional<double> got;
    const bool held = WaitFor(
        [&] {
          got = Query(port, promql);
          return got.has_value() && *got == want;
        },
        absl::Seconds(60));
    EXPECT_TRUE(held) << promql << " = " << (got ? absl::StrCat(*got) : "nothing") << ", want "
                      << want << "\n"
                      << prometheus_->Logs();
  };
  eventually_equals(R"(up{job="tollgated"})", 1);
  eventually_equals(
      R"(kueue_cluster_queue_nominal_quota{job="tollgated",cluster_queue="team-b-cq",resource="nvidia.com/gpu"})",
      4);
  eventually_equals(R"(up{job="team-member"})", 0);
  eventually_equals(R"(count(kueue_cluster_queue_nominal_quota{job="team-member"}) or vector(0))",
                    0);
}

TEST_F(MetricsE2eTest, NonLoopbackMetricsListenNeedsInsecure) {
  const std::string log = scratch_ + "/refused.log";
  ASSERT_OK_AND_ASSIGN(
      int code, TollgatedProcess::RunToExit({"--data-dir=" + scratch_ + "/data",
                                             "--listen=127.0.0.1:0", "--metrics-listen=0.0.0.0:0"},
                                            log));
  EXPECT_EQ(code, 2);
  EXPECT_TRUE(absl::StrContains(ReadFileOrEmpty(log), "--insecure")) << ReadFileOrEmpty(log);
}

}  // namespace
}  // namespace tollgate::e2e
