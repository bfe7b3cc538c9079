#include "adapters/multikueue/worker_link.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cpp/connection.h"
#include "common/json_log.h"
#include "services/api/multikueue_views.h"

namespace tollgate::multikueue {

using api::HasOrigin;
using api::KeyOf;

namespace {

client::ClientOptions WorkerClientOptions(const std::string& cluster, absl::Duration timeout) {
  client::ClientOptions options = client::AdapterClientOptions(timeout);
  options.unreachable_hint =
      absl::StrCat("is the worker of MultiKueueCluster ", cluster, " running?");
  return options;
}

}  // namespace

WorkerLink::WorkerLink(std::string cluster, WorkerSource source, const core::Clock& clock,
                       Options options, Listener listener)
    : cluster_(std::move(cluster)),
      clock_(clock),
      options_(std::move(options)),
      listener_(std::move(listener)),
      client_(std::make_unique<client::TollgateClient>(
          source.address, std::move(source.credentials),
          WorkerClientOptions(cluster_, options_.call_timeout))),
      connection_(clock.Now()) {}

WorkerLink::~WorkerLink() {
  stop_.Stop();
  {
    // A session starting after this sees stop_ under the same lock and does not watch.
    absl::MutexLock lock(&mu_);
    if (session_watch_ != nullptr) session_watch_->Cancel();
  }
  if (thread_.joinable()) thread_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

void WorkerLink::Start() {
  thread_ = std::thread([this] { Loop(); });
  if (options_.idle_timeout > absl::ZeroDuration()) {
    watchdog_ = std::thread([this] { Watchdog(); });
  }
}

void WorkerLink::Watchdog() {
  const absl::Duration period = std::max(options_.idle_timeout / 4, absl::Milliseconds(10));
  while (!stop_.WaitFor(period)) {
    absl::MutexLock lock(&mu_);
    if (session_watch_ != nullptr && !went_silent_ &&
        clock_.Now() - last_heard_ > options_.idle_timeout) {
      went_silent_ = true;
      session_watch_->Cancel();
    }
  }
}

bool WorkerLink::connected() const {
  absl::MutexLock lock(&mu_);
  return connection_.connected();
}

std::optional<absl::Time> WorkerLink::lost_since() const {
  absl::MutexLock lock(&mu_);
  return connection_.lost_since();
}

bool WorkerLink::answering() const {
  absl::MutexLock lock(&mu_);
  return AnsweringLocked();
}

bool WorkerLink::AnsweringLocked() const {
  return !unanswered_call_mark_.has_value() || newest_news_ > *unanswered_call_mark_;
}

bool WorkerLink::HeardFromWorkerLocked(uint64_t news) {
  newest_news_ = std::max(newest_news_, news);
  if (!unanswered_call_mark_.has_value() || !AnsweringLocked()) return false;
  unanswered_call_mark_.reset();
  return true;
}

void WorkerLink::NotifyAnsweringAgain() {
  common::Log("info", "worker answers again", {{"cluster", cluster_}});
  if (listener_.on_answering_again) listener_.on_answering_again(cluster_);
}

absl::Status WorkerLink::CallWorker(absl::FunctionRef<absl::Status()> call) {
  {
    absl::MutexLock lock(&mu_);
    if (!AnsweringLocked()) {
      // The single reconcile thread would otherwise wait out the timeout again on every call
      // while the watchdog has not yet declared the worker lost, and dispatch to every other
      // worker would stall behind it.
      return absl::UnavailableError(absl::StrCat("the worker of MultiKueueCluster \"", cluster_,
                                                 "\" did not answer a call within ",
                                                 absl::FormatDuration(options_.call_timeout),
                                                 "; not called again until it is heard from"));
    }
  }
  absl::Status status = call();
  if (!absl::IsDeadlineExceeded(status)) return status;
  // Read before the lock: news that arrived while the call waited is numbered up to here and
  // does not count as the worker answering again.
  const uint64_t news_by_now = news_numbered_.load();
  bool marked = false;
  {
    absl::MutexLock lock(&mu_);
    if (newest_news_ <= news_by_now) {
      unanswered_call_mark_ = std::max(unanswered_call_mark_.value_or(0), news_by_now);
      marked = true;
    }
  }
  if (marked) {
    common::Log("warning", "worker left a call unanswered; calls fail fast until it is heard from",
                {{"cluster", cluster_}, {"error", status.ToString()}});
  }
  return status;
}

std::map<std::string, v1::Workload> WorkerLink::Copies() const {
  absl::MutexLock lock(&mu_);
  return copies_;
}

std::optional<v1::Workload> WorkerLink::Copy(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = copies_.find(key);
  if (it == copies_.end()) return std::nullopt;
  return it->second;
}

absl::Status WorkerLink::CreateCopy(const v1::Workload& copy) {
  v1::SubmitRequest request;
  *request.mutable_workload() = copy;
  absl::StatusOr<v1::SubmitResponse> created;
  absl::Status called = CallWorker([&] {
    created = client_->Submit(request);
    return created.status();
  });
  if (!called.ok()) return called;
  // Known from now on, not only once the watch brings it: a reconcile that records another
  // worker as the winner in between would otherwise leave this copy behind, free to be admitted
  // as well. Only while the watch has not passed the copy's revision (else the watch's view,
  // which may already hold its deletion, is the newer one).
  const v1::Workload& stored = created->workload();
  absl::MutexLock lock(&mu_);
  if (connection_.connected() && stored.metadata().resource_version() > watched_revision_) {
    copies_[KeyOf(stored)] = stored;
  }
  return absl::OkStatus();
}

absl::Status WorkerLink::DeleteCopy(const std::string& ns, const std::string& name) {
  v1::DeleteWorkloadRequest request;
  request.mutable_workload()->set_namespace_(ns);
  request.mutable_workload()->set_name(name);
  absl::Status status = CallWorker([&] { return client_->DeleteWorkload(request).status(); });
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

absl::Status WorkerLink::DeactivateCopy(const std::string& ns, const std::string& name,
                                        const std::string& reason, const std::string& message) {
  v1::SetWorkloadActiveRequest request;
  request.mutable_workload()->set_namespace_(ns);
  request.mutable_workload()->set_name(name);
  request.set_active(false);
  request.set_deactivation_reason(reason);
  request.set_deactivation_message(message);
  return CallWorker([&] { return client_->SetWorkloadActive(request).status(); });
}

absl::Status WorkerLink::MarkWinner(const std::string& ns, const std::string& name) {
  v1::MarkMultiKueueWinnerRequest request;
  request.mutable_workload()->set_namespace_(ns);
  request.mutable_workload()->set_name(name);
  request.set_origin(options_.origin);
  return CallWorker([&] { return client_->MarkMultiKueueWinner(request).status(); });
}

absl::Status WorkerLink::UpdateCopyPayload(const v1::Workload& copy,
                                           const v1::WorkloadPayload& payload) {
  v1::UpdateWorkloadPayloadRequest request;
  request.mutable_workload()->set_namespace_(copy.metadata().namespace_());
  request.mutable_workload()->set_name(copy.metadata().name());
  *request.mutable_payload() = payload;
  // Compare-and-swap: a copy replaced meanwhile (another of the same name) is not written; the
  // watch brings the new one and the next pass carries the payload to it.
  request.set_expected_revision(copy.metadata().resource_version());
  return CallWorker([&] { return client_->UpdateWorkloadPayload(request).status(); });
}

absl::Status WorkerLink::ReprioritizeCopy(const std::string& ns, const std::string& name,
                                          int32_t priority) {
  v1::ReprioritizeRequest request;
  request.mutable_workload()->set_namespace_(ns);
  request.mutable_workload()->set_name(name);
  request.set_priority(priority);
  return CallWorker([&] { return client_->Reprioritize(request).status(); });
}

void WorkerLink::SetConnected(bool connected, const std::string& message) {
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    if (connected) {
      changed = !connection_.connected();
      connection_.MarkConnected();
    } else {
      changed = connection_.MarkDisconnected(clock_.Now());
      // What a worker holds is known only while it answers (core::WorkerView).
      copies_.clear();
    }
  }
  if (changed || !connected) {
    if (listener_.on_connection) {
      listener_.on_connection(cluster_, connected, connected ? "Active" : "ClientConnectionFailed",
                              message);
    }
  }
}

absl::Status WorkerLink::Session() {
  v1::ListWorkloadsRequest list;
  absl::StatusOr<v1::ListWorkloadsResponse> listed = client_->ListWorkloads(list);
  if (!listed.ok()) return listed.status();
  const uint64_t list_news = NumberNews();
  std::set<std::string> touched;
  bool answering_again = false;
  {
    absl::MutexLock lock(&mu_);
    answering_again = HeardFromWorkerLocked(list_news);
    for (const auto& [key, unused] : copies_) touched.insert(key);
    copies_.clear();
    watched_revision_ = listed->revision();
    for (const v1::Workload& wl : listed->workloads()) {
      if (!HasOrigin(wl, options_.origin)) continue;
      copies_[KeyOf(wl)] = wl;
      touched.insert(KeyOf(wl));
    }
  }
  SetConnected(true, "Connected");
  session_connected_ = true;
  if (answering_again) NotifyAnsweringAgain();
  if (listener_.on_copy) {
    for (const std::string& key : touched) listener_.on_copy(cluster_, key);
  }
  v1::WatchRequest watch;
  watch.set_since_revision(listed->revision());
  client::WatchCanceller session_watch;
  {
    absl::MutexLock lock(&mu_);
    if (stop_.stopped()) return absl::CancelledError("stopping");
    session_watch_ = &session_watch;
    last_heard_ = clock_.Now();
    went_silent_ = false;
  }
  absl::Status ended = client_->Watch(
      watch,
      [&](const v1::WatchEvent& event) {
        const uint64_t news = NumberNews();
        const bool bookmark = event.type() == v1::WatchEvent::BOOKMARK || !event.has_workload();
        std::string key;
        bool ours = false;
        bool answering_again = false;
        {
          absl::MutexLock lock(&mu_);
          last_heard_ = clock_.Now();
          watched_revision_ = std::max(watched_revision_, event.revision());
          answering_again = HeardFromWorkerLocked(news);
          if (!bookmark) {
            const v1::Workload& wl = event.workload();
            key = KeyOf(wl);
            ours = HasOrigin(wl, options_.origin);
            if (event.type() == v1::WatchEvent::DELETED || !ours) {
              ours = copies_.erase(key) > 0 || ours;
            } else {
              copies_[key] = wl;
            }
          }
        }
        if (answering_again) NotifyAnsweringAgain();
        if (ours && listener_.on_copy) listener_.on_copy(cluster_, key);
        return !stop_.stopped();
      },
      &session_watch);
  absl::MutexLock lock(&mu_);
  session_watch_ = nullptr;
  if (went_silent_) {
    return absl::DeadlineExceededError(
        absl::StrCat("the worker sent nothing, not even a bookmark, for ",
                     absl::FormatDuration(options_.idle_timeout)));
  }
  return ended;
}

void WorkerLink::Loop() {
  int failures = 0;
  while (!stop_.stopped()) {
    session_connected_ = false;
    absl::Status ended = Session();
    // A session that worked starts the backoff over.
    if (session_connected_) failures = 0;
    if (stop_.stopped()) break;
    SetConnected(false, std::string(ended.message()));
    // Exponential backoff between reconnects, reset by nothing but a working session: a worker
    // that is down is asked at most every max_backoff.
    absl::Duration wait = options_.min_backoff;
    for (int i = 0; i < failures && wait < options_.max_backoff; ++i) wait *= 2;
    wait = std::min(wait, options_.max_backoff);
    ++failures;
    if (stop_.WaitFor(wait)) break;
  }
}

}  // namespace tollgate::multikueue
