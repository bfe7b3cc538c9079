#include "services/engine/admission_executor.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/object_kind.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/time_util.h"
#include "google/protobuf/wire_format_lite.h"
#include "services/api/api_codec.h"
#include "services/api/check_codec.h"
#include "services/engine/config_objects.h"
#include "services/engine/state_keys.h"
#include "services/engine/stored_workloads.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

// Configuration kinds in the order a restart re-applies them (core/object_kind.h), so
// references resolve the way they did when the objects were written.
int ApplyOrder(v1::ObjectKind kind) {
  absl::StatusOr<core::ObjectKind> core_kind = ToCoreKind(kind);
  return core_kind.ok() ? core::TraitsOf(*core_kind).apply_order : std::numeric_limits<int>::max();
}

// A LocalQueue's admission-fair-sharing usage as stored: one "resource=value" line per resource,
// the value with every digit a double carries, so a restart orders queues as before it.
std::string EncodeFairUsage(const std::map<std::string, double>& consumed) {
  std::string out;
  for (const auto& [resource, value] : consumed) {
    absl::StrAppend(&out, resource, "=", absl::StrFormat("%.17g", value), "\n");
  }
  return out;
}

absl::StatusOr<std::map<std::string, double>> DecodeFairUsage(absl::string_view text) {
  std::map<std::string, double> consumed;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(line, '=');
    double value = 0;
    if (parts.first.empty() || !absl::SimpleAtod(parts.second, &value)) {
      return absl::DataLossError(absl::StrCat("not a resource=value line: \"", line, "\""));
    }
    consumed[std::string(parts.first)] = value;
  }
  return consumed;
}

}  // namespace

const core::Clock& AdmissionExecutor::RealWallClock() {
  static const core::RealClock* const kClock = new core::RealClock();
  return *kClock;
}

absl::StatusOr<core::SubmitOutcome> AdmissionExecutor::Txn::Submit(
    core::WorkloadSpec spec, std::string uid, std::optional<core::WorkloadOwner> owner) {
  return state_->Submit(std::move(spec), std::move(uid), now_, std::move(owner));
}

absl::Status AdmissionExecutor::Txn::BindOwner(absl::string_view key, core::WorkloadOwner owner) {
  return state_->BindOwner(key, std::move(owner), now_);
}

absl::Status AdmissionExecutor::Txn::MarkOutOfSync(absl::string_view key) {
  return state_->MarkOutOfSync(key, now_);
}

absl::Status AdmissionExecutor::Txn::SetOnHold(absl::string_view key, bool on_hold,
                                               absl::string_view message) {
  return state_->SetOnHold(key, on_hold, message, now_);
}

absl::Status AdmissionExecutor::Txn::SetJobStatus(absl::string_view key,
                                                  core::WorkloadPayload status) {
  return state_->SetJobStatus(key, std::move(status));
}

absl::Status AdmissionExecutor::Txn::MarkMultiKueueWinner(absl::string_view key,
                                                          absl::string_view origin) {
  return state_->MarkMultiKueueWinner(key, origin, now_);
}

absl::Status AdmissionExecutor::Txn::SetPayload(absl::string_view key,
                                                core::WorkloadPayload payload) {
  return state_->SetPayload(key, std::move(payload), now_);
}

absl::Status AdmissionExecutor::Txn::SetAdmissionGates(absl::string_view key,
                                                       const std::optional<std::string>& gates) {
  return state_->SetAdmissionGates(key, gates, now_);
}

absl::Status AdmissionExecutor::Txn::SetPriorityBoost(absl::string_view key,
                                                      const std::optional<std::string>& value) {
  return state_->SetPriorityBoost(key, value, now_);
}

absl::Status AdmissionExecutor::Txn::SetWaitingForReplacementPods(absl::string_view key,
                                                                  bool waiting) {
  return state_->SetWaitingForReplacementPods(key, waiting, now_);
}

absl::StatusOr<core::AdmitNowResult> AdmissionExecutor::Txn::AdmitNow(absl::string_view key,
                                                                      bool dry_run) {
  return state_->AdmitNow(key, dry_run, now_);
}

absl::Status AdmissionExecutor::Txn::Finish(absl::string_view key, absl::string_view message,
                                            absl::string_view reason) {
  return state_->Finish(key, message, now_, reason);
}

absl::Status AdmissionExecutor::Txn::Preempt(absl::string_view key, absl::string_view message) {
  return state_->Preempt(key, message, now_);
}

absl::Status AdmissionExecutor::Txn::ReleaseEvicted(absl::string_view key) {
  return state_->ReleaseEvicted(key, now_);
}

absl::Status AdmissionExecutor::Txn::SetPodsReady(absl::string_view key, bool ready) {
  return ready ? state_->SetPodsReady(key, now_) : state_->SetPodsNotReady(key, now_);
}

absl::Status AdmissionExecutor::Txn::RecordCheckpoint(absl::string_view key, absl::Time at) {
  return state_->RecordCheckpoint(key, at, now_);
}

absl::Status AdmissionExecutor::Txn::SetReclaimablePods(
    absl::string_view key, std::vector<std::pair<std::string, int32_t>> pods) {
  return state_->SetReclaimablePods(key, std::move(pods), now_);
}

absl::Status AdmissionExecutor::Txn::DeleteWorkload(absl::string_view key) {
  return state_->Delete(key, now_);
}

absl::Status AdmissionExecutor::Txn::SetAdmissionCheckState(absl::string_view key,
                                                            core::CheckStateUpdate update) {
  return state_->SetAdmissionCheckState(key, std::move(update), now_);
}

absl::Status AdmissionExecutor::Txn::SetAdmissionCheckActive(absl::string_view name, bool active,
                                                             absl::string_view reason,
                                                             absl::string_view message) {
  return state_->SetAdmissionCheckActive(name, active, reason, message, now_);
}

absl::Status AdmissionExecutor::Txn::SetMultiKueueClusterActive(absl::string_view name, bool active,
                                                                absl::string_view reason,
                                                                absl::string_view message) {
  return state_->SetMultiKueueClusterActive(name, active, reason, message, now_);
}

void AdmissionExecutor::Txn::StoreObject(std::string key, const v1::ConfigObject& object) {
  object_writes_.emplace_back(std::move(key), object.SerializeAsString());
}

void AdmissionExecutor::Txn::ApplyObject(const ValidatedObject& validated, std::string key,
                                         const v1::ConfigObject& object) {
  ApplyValidated(*state_, validated, now_);
  object_writes_.emplace_back(std::move(key), object.SerializeAsString());
}

absl::StatusOr<bool> AdmissionExecutor::Txn::DeleteObject(core::ObjectKind kind,
                                                          absl::string_view namespace_name,
                                                          absl::string_view name, std::string key) {
  if (core::IsPolicyKind(kind)) {
    // Not scheduling state: only the stored object goes, and nothing keeps it terminating.
    TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> stored, ReadObject(key));
    if (!stored.has_value()) {
      return absl::NotFoundError(absl::StrCat(core::ObjectKindName(kind), " ", name, " not found"));
    }
    object_writes_.emplace_back(std::move(key), std::nullopt);
    return false;
  }
  TOLLGATE_RETURN_IF_ERROR(state_->DeleteObject(kind, namespace_name, name, now_));
  if (state_->TerminatingSince(kind, namespace_name, name).has_value()) return true;
  object_writes_.emplace_back(std::move(key), std::nullopt);
  erased_.push_back(core::ObjectName{kind, std::string(namespace_name), std::string(name)});
  return false;
}

void AdmissionExecutor::Txn::StoreTerminatingObject(std::string key,
                                                    const v1::ConfigObject& object) {
  object_writes_.emplace_back(std::move(key), object.SerializeAsString());
}

absl::Status AdmissionExecutor::Txn::UpsertNode(core::NodeSpec node) {
  const std::string name = node.name;
  TOLLGATE_RETURN_IF_ERROR(state_->UpsertNode(std::move(node), now_));
  // The node as the state keeps it (its not-ready time filled in), so a reload reads it back.
  const core::NodeSpec* kept = state_->topology().FindNode(name);
  object_writes_.emplace_back(NodeStoreKey(name), api::NodeToProto(*kept).SerializeAsString());
  return absl::OkStatus();
}

absl::Status AdmissionExecutor::Txn::DeleteNode(absl::string_view name) {
  TOLLGATE_RETURN_IF_ERROR(state_->DeleteNode(name, now_));
  object_writes_.emplace_back(NodeStoreKey(name), std::nullopt);
  return absl::OkStatus();
}

absl::Status AdmissionExecutor::Txn::ReportPod(std::string name, std::string node,
                                               core::ResourceAmounts requests,
                                               const v1::NodePod& stored) {
  std::string key = NodePodStoreKey(name);
  TOLLGATE_RETURN_IF_ERROR(
      state_->ReportPod(std::move(name), std::move(node), std::move(requests), now_));
  object_writes_.emplace_back(std::move(key), stored.SerializeAsString());
  return absl::OkStatus();
}

absl::Status AdmissionExecutor::Txn::RemovePod(absl::string_view name) {
  TOLLGATE_RETURN_IF_ERROR(state_->RemovePod(name, now_));
  object_writes_.emplace_back(NodePodStoreKey(name), std::nullopt);
  return absl::OkStatus();
}

absl::Status AdmissionExecutor::Txn::SetActive(
    absl::string_view key, bool active, const std::optional<core::DeactivationCause>& cause) {
  return state_->SetActive(key, active, now_, cause);
}

absl::Status AdmissionExecutor::Txn::SetPriority(absl::string_view key, int32_t priority) {
  return state_->SetPriority(key, priority, now_);
}

absl::StatusOr<std::optional<std::string>> AdmissionExecutor::Txn::ReadObject(
    const std::string& key) const {
  // The latest write of this batch wins, as it will in the commit.
  for (auto it = object_writes_.rbegin(); it != object_writes_.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return store_->Get(key);
}

absl::Status AdmissionExecutor::Txn::ScanCommittedObjects(
    absl::string_view prefix,
    const std::function<bool(absl::string_view key, absl::string_view value)>& fn) const {
  return store_->Scan(prefix, fn);
}

AdmissionExecutor::AdmissionExecutor(storage::Store& store, const core::Clock& clock,
                                     core::SchedulerConfig config, Options options)
    : store_(store),
      clock_(clock),
      wall_clock_(options.wall_clock != nullptr ? *options.wall_clock : RealWallClock()),
      config_(std::move(config)),
      options_(options) {}

absl::StatusOr<std::unique_ptr<AdmissionExecutor>> AdmissionExecutor::Open(
    storage::Store& store, const core::Clock& clock, core::SchedulerConfig config,
    Options options) {
  std::unique_ptr<AdmissionExecutor> executor(
      new AdmissionExecutor(store, clock, std::move(config), options));
  TOLLGATE_RETURN_IF_ERROR(executor->LoadState());
  {
    absl::MutexLock lock(&executor->mu_);
    executor->revision_ = store.CurrentRevision();
  }
  if (options.run_on_caller) {
    if (options.schedule_continuously) {
      return absl::InvalidArgumentError("run_on_caller needs schedule_continuously off");
    }
    return executor;
  }
  executor->thread_ = std::thread([raw = executor.get()] {
    // Named so profilers and top -H show which thread is the scheduler.
    pthread_setname_np(pthread_self(), "tg-executor");
    raw->Loop();
  });
  return executor;
}

AdmissionExecutor::~AdmissionExecutor() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status AdmissionExecutor::LoadState() {
  LoadStats stats;
  TOLLGATE_ASSIGN_OR_RETURN(state_, BuildState(store_, stats));
  check_controllers_.Reset(*state_);
  absl::MutexLock lock(&mu_);
  load_stats_ = stats;
  // Objects an earlier version stored as terminating that no longer terminate (a Cohort, a
  // LocalQueue) left the state while it was built: one round commits their removal now. Not
  // for a reads-only executor, whose store refuses every write.
  if (options_.schedule_continuously && state_->HasObjectsErasedOnRestore()) more_cycles_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<core::ClusterState>> AdmissionExecutor::BuildState(
    const storage::Store& store, LoadStats& stats) const {
  auto state = std::make_unique<core::ClusterState>(config_);
  const absl::Time now = clock_.Now();
  // The phases are timed in wall time: the scheduler's clock may be simulated.
  const absl::Time load_start = wall_clock_.Now();

  std::vector<v1::ConfigObject> objects;
  absl::Status parse_error;
  TOLLGATE_RETURN_IF_ERROR(store.Scan(kObjectPrefix, [&](absl::string_view key,
                                                         absl::string_view value) {
    v1::ConfigObject object;
    if (!object.ParseFromString(std::string(value))) {
      parse_error = absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
      return false;
    }
    objects.push_back(std::move(object));
    return true;
  }));
  TOLLGATE_RETURN_IF_ERROR(parse_error);
  std::stable_sort(objects.begin(), objects.end(), [](const auto& a, const auto& b) {
    return ApplyOrder(KindOf(a)) < ApplyOrder(KindOf(b));
  });
  for (const v1::ConfigObject& object : objects) {
    absl::StatusOr<ValidatedObject> validated = ValidateConfigObject(object);
    if (!validated.ok()) {
      return absl::DataLossError(
          absl::StrCat("stored object fails validation: ", validated.status().message()));
    }
    ApplyValidated(*state, *validated, now);
    // An AdmissionCheck's Active condition, as its controller last reported it.
    if (object.has_admission_check()) {
      absl::StatusOr<std::optional<core::Condition>> active =
          api::AdmissionCheckActiveFromProto(object.admission_check());
      if (!active.ok()) {
        return absl::DataLossError(
            absl::StrCat("stored object fails validation: ", active.status().message()));
      }
      if (active->has_value()) {
        TOLLGATE_RETURN_IF_ERROR(
            state->RestoreAdmissionCheckActive(validated->name, **active, now));
      }
    }
    // A MultiKueueCluster's Active condition, as its connection last reported it.
    if (object.has_multi_kueue_cluster()) {
      absl::StatusOr<std::optional<core::Condition>> active =
          api::MultiKueueClusterActiveFromProto(object.multi_kueue_cluster());
      if (!active.ok()) {
        return absl::DataLossError(
            absl::StrCat("stored object fails validation: ", active.status().message()));
      }
      if (active->has_value()) {
        TOLLGATE_RETURN_IF_ERROR(state->RestoreMultiKueueClusterActive(validated->name, **active));
      }
    }
    // Deleted while in use before the restart: still terminating (and finalized at the first
    // commit if nothing holds quota through it any more). A kind that no longer terminates is
    // erased now, its stored copy with the first round.
    const v1::ObjectMeta& meta = MetadataOf(object);
    if (meta.has_deletion_timestamp()) {
      TOLLGATE_RETURN_IF_ERROR(state->RestoreTerminating(
          validated->kind, validated->namespace_name, validated->name,
          absl::FromUnixNanos(
              google::protobuf::util::TimeUtil::TimestampToNanoseconds(meta.deletion_timestamp())),
          now));
    }
  }

  // The topology inventory, before the workloads whose placements use it.
  TOLLGATE_RETURN_IF_ERROR(
      store.Scan(kNodePrefix, [&](absl::string_view key, absl::string_view value) {
        v1::Node node;
        absl::Status status = absl::DataLossError("not a Node");
        if (node.ParseFromString(std::string(value))) {
          absl::StatusOr<core::NodeSpec> spec = api::NodeFromProto(node);
          status = spec.status();
          if (spec.ok()) status = state->UpsertNode(*std::move(spec), now);
        }
        if (!status.ok()) {
          parse_error = absl::DataLossError(
              absl::StrCat("store key ", key, " is not a valid Node: ", status.message()));
          return false;
        }
        return true;
      }));
  TOLLGATE_RETURN_IF_ERROR(parse_error);
  TOLLGATE_RETURN_IF_ERROR(
      store.Scan(kNodePodPrefix, [&](absl::string_view key, absl::string_view value) {
        v1::NodePod pod;
        absl::Status status = absl::DataLossError("not a NodePod");
        if (pod.ParseFromString(std::string(value))) {
          absl::StatusOr<api::ReportedPod> reported = api::NodePodFromProto(pod, "pod");
          status = reported.status();
          if (reported.ok()) {
            status = state->ReportPod(reported->name, reported->node, reported->requests, now);
          }
        }
        if (!status.ok()) {
          parse_error = absl::DataLossError(
              absl::StrCat("store key ", key, " is not a valid NodePod: ", status.message()));
          return false;
        }
        return true;
      }));
  TOLLGATE_RETURN_IF_ERROR(parse_error);
  // Admission fair sharing's usage, into the ledgers of the LocalQueues just applied; without a
  // ledger (admission fair sharing off, or no such LocalQueue) a stored usage is ignored.
  TOLLGATE_RETURN_IF_ERROR(store.Scan(kFairUsagePrefix, [&](absl::string_view key,
                                                            absl::string_view value) {
    absl::StatusOr<std::map<std::string, double>> consumed = DecodeFairUsage(value);
    if (!consumed.ok()) {
      parse_error =
          absl::DataLossError(absl::StrCat("store key ", key, ": ", consumed.status().message()));
      return false;
    }
    state->fair_usage_ledger().Seed(std::string(key.substr(kFairUsagePrefix.size())),
                                    *std::move(consumed), now);
    return true;
  }));
  TOLLGATE_RETURN_IF_ERROR(parse_error);

  const absl::Time config_done = wall_clock_.Now();
  stats.config = config_done - load_start;

  // Restart time is dominated by parsing: the scan hands batches of raw records to helper
  // threads as it goes, and the rest is parsed on every core once it ends.
  StoredWorkloadParser parser;
  TOLLGATE_RETURN_IF_ERROR(
      store.Scan(kWorkloadPrefix, [&](absl::string_view key, absl::string_view value) {
        parser.Add(key, value);
        return true;
      }));
  const absl::Time scan_done = wall_clock_.Now();
  stats.scan = scan_done - config_done;
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<core::Workload>> workloads,
                            parser.Finish());
  const absl::Time parse_done = wall_clock_.Now();
  stats.parse_tail = parse_done - scan_done;
  stats.workloads = static_cast<int64_t>(workloads.size());

  // Restored in submission order, which decides ties in every queue: creation time, then key.
  // The workloads arrive in key order (the parser checked each key is "w/" + Key()), so the
  // position breaks ties; sorting (time, position) pairs keeps the comparisons in cache.
  std::vector<std::pair<absl::Time, size_t>> order;
  order.reserve(workloads.size());
  for (size_t i = 0; i < workloads.size(); ++i) order.emplace_back(workloads[i]->creation_time, i);
  std::sort(order.begin(), order.end());
  std::vector<std::unique_ptr<core::Workload>> sorted;
  sorted.reserve(workloads.size());
  for (const auto& [creation_time, i] : order) sorted.push_back(std::move(workloads[i]));
  workloads.clear();
  const absl::Time sort_done = wall_clock_.Now();
  stats.sort = sort_done - parse_done;

  TOLLGATE_RETURN_IF_ERROR(state->RestoreAll(std::move(sorted)));
  stats.restore = wall_clock_.Now() - sort_done;
  // Restoring re-derives messages; nothing of it needs writing back.
  state->TakeDirtyWorkloads();
  state->TakeDeletedWorkloads();
  return state;
}

absl::Status AdmissionExecutor::Reload(const storage::Store& from,
                                       const std::function<void()>& install) {
  // Built here, on the caller's thread: operations keep running on the old state meanwhile.
  LoadStats stats;
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<core::ClusterState> state, BuildState(from, stats));
  auto shared = std::make_shared<std::unique_ptr<core::ClusterState>>(std::move(state));
  return RunStatus([this, shared, &install, stats](Txn&) {
    install();
    state_ = std::move(*shared);
    check_controllers_.Reset(*state_);
    state_replaced_ = true;
    absl::MutexLock lock(&mu_);
    load_stats_ = stats;
    revision_ = store_.CurrentRevision();
    return absl::OkStatus();
  });
}

AdmissionExecutor::LoadStats AdmissionExecutor::load_stats() const {
  absl::MutexLock lock(&mu_);
  return load_stats_;
}

absl::Status AdmissionExecutor::RunErased(std::function<absl::Status(Txn&)> op) {
  Operation operation;
  operation.fn = std::move(op);
  if (options_.run_on_caller) {
    absl::MutexLock round(&caller_round_mu_);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return absl::UnavailableError("the admission executor is shutting down");
    }
    std::deque<Operation*> batch = {&operation};
    RunRound(batch, /*continuing=*/false);
    return operation.status;
  }
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("the admission executor is shutting down");
    queue_.push_back(&operation);
  }
  operation.done.WaitForNotification();
  return operation.status;
}

void AdmissionExecutor::EnqueueErased(std::function<absl::Status(Txn&)> op,
                                      std::function<void(const absl::Status&)> on_done) {
  auto operation = std::make_unique<Operation>();
  operation->fn = std::move(op);
  operation->on_done = std::move(on_done);
  if (options_.run_on_caller) {
    absl::MutexLock round(&caller_round_mu_);
    std::deque<Operation*> batch = {operation.release()};
    RunRound(batch, /*continuing=*/false);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      queue_.push_back(operation.release());
      return;
    }
  }
  operation->on_done(absl::UnavailableError("the admission executor is shutting down"));
}

void AdmissionExecutor::Complete(Operation* op) {
  if (op->on_done) {
    op->on_done(op->status);
    delete op;
  } else {
    op->done.Notify();
  }
}

absl::Status AdmissionExecutor::Settle() {
  return RunStatus([this](Txn& txn) {
    state_->FireTimers(txn.now());
    const CycleResult result = RunCycles(txn.now(), kMaxSettleCycles);
    if (!result.settled) {
      return absl::InternalError(
          absl::StrCat("admission did not settle after ", kMaxSettleCycles, " cycles"));
    }
    return absl::OkStatus();
  });
}

int64_t AdmissionExecutor::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

int64_t AdmissionExecutor::queue_depth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

int64_t AdmissionExecutor::WaitForRevision(int64_t after, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto advanced = [this, after]()
                      ABSL_SHARED_LOCKS_REQUIRED(mu_) { return revision_ > after || stopping_; };
  mu_.AwaitWithDeadline(absl::Condition(&advanced), deadline);
  return revision_;
}

AdmissionExecutor::CycleResult AdmissionExecutor::RunCycles(absl::Time now, int max_cycles,
                                                            absl::Time stop_after) {
  CycleResult result;
  for (int i = 0; i < max_cycles && (i == 0 || wall_clock_.Now() < stop_after); ++i) {
    const absl::Time started =
        options_.observer != nullptr ? wall_clock_.Now() : absl::InfinitePast();
    core::CyclePlan plan = state_->PlanCycle(now);
    if (options_.observer != nullptr) options_.observer->OnPlan(plan, *state_, now);
    // The observer has seen the admissions; the workloads take them (preemptions stay).
    state_->ApplyCycleTakingAdmissions(plan, now);
    if (collect_round_preemptions_) {
      round_preemptions_.insert(round_preemptions_.end(), plan.preemptions.begin(),
                                plan.preemptions.end());
    }
    if (options_.observer != nullptr) options_.observer->OnCycle(plan, wall_clock_.Now() - started);
    if (!plan.MadeProgress()) {
      result.settled = true;
      return result;
    }
    result.cycles++;
  }
  return result;
}

void AdmissionExecutor::ReloadOrDie() {
  absl::Status reloaded = LoadState();
  if (!reloaded.ok() && options_.on_state_lost) {
    {
      absl::MutexLock lock(&mu_);
      state_lost_ = reloaded;
    }
    options_.on_state_lost(reloaded);
    return;
  }
  if (!reloaded.ok()) {
    // Neither memory nor disk can be trusted; a restart recovers from the last commit.
    std::fprintf(stderr, "tollgate: cannot reload state after a failed commit: %s\n",
                 std::string(reloaded.message()).c_str());
    std::abort();
  }
}

namespace {

// The serialized WatchEvent{type, workload} for an already serialized workload: the stored
// value and the change record carry the same bytes, so each changed workload is serialized
// once per commit. A message field is encoded exactly like a bytes field.
std::string WatchEventBytes(v1::WatchEvent::Type type, const std::string& workload_bytes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    google::protobuf::internal::WireFormatLite::WriteEnum(v1::WatchEvent::kTypeFieldNumber, type,
                                                          &coded);
    google::protobuf::internal::WireFormatLite::WriteBytes(v1::WatchEvent::kWorkloadFieldNumber,
                                                           workload_bytes, &coded);
  }
  return out;
}

// Appends WatchEvent.check_controllers to a serialized WatchEvent (a message's fields may come
// in any order and repeated ones concatenate, so appending their encoding adds them).
void AppendCheckControllers(const std::vector<v1::CheckControllerRef>& refs, std::string& record) {
  if (refs.empty()) return;
  v1::WatchEvent extra;
  for (const v1::CheckControllerRef& ref : refs) *extra.add_check_controllers() = ref;
  record += extra.SerializeAsString();
}

}  // namespace

storage::WriteBatch AdmissionExecutor::TakeChanges(Txn& txn, int64_t revision, bool& changed) {
  storage::WriteBatch batch;
  bool workloads_changed = false;
  for (auto& [key, value] : txn.object_writes_) {
    if (value.has_value()) {
      batch.Put(key, *value);
    } else {
      batch.Delete(key);
    }
  }
  // Terminating objects whose last workload ended in these changes go with them, atomically;
  // first, so the workloads their removal re-routes are persisted in this batch too.
  std::vector<core::ObjectName> finalized = state_->TakeFinalizedObjects(txn.now_);
  for (const core::ObjectName& object : finalized) {
    batch.Delete(ConfigObjectKey(ToProtoKind(object.kind), object.namespace_name, object.name));
  }
  if (options_.observer != nullptr) {
    for (const core::ObjectName& object : txn.erased_) options_.observer->OnObjectErased(object);
    for (const core::ObjectName& object : finalized) options_.observer->OnObjectErased(object);
  }
  txn.erased_.clear();
  for (const auto& [local_queue_key, consumed] : state_->fair_usage_ledger().TakeChanged()) {
    if (consumed.has_value()) {
      batch.Put(FairUsageStoreKey(local_queue_key), EncodeFairUsage(*consumed));
    } else {
      batch.Delete(FairUsageStoreKey(local_queue_key));
    }
  }
  // AdmissionCheck name -> controller, read once per batch and only when a workload with
  // checks changed.
  std::optional<CheckControllerNames> controllers;
  for (core::WorkloadId id : state_->TakeDirtyWorkloads()) {
    core::Workload* wl = state_->mutable_workload(id);
    if (wl == nullptr) continue;
    if (options_.observer != nullptr)
      options_.observer->OnWorkloadCommitted(*wl, *state_, txn.now_);
    wl->resource_version = revision;
    workloads_changed = true;
    if (!options_.record_workload_changes) continue;
    v1::Workload proto;
    api::WorkloadToProto(*wl, &proto);
    proto.mutable_metadata()->set_resource_version(revision);
    const std::string workload_bytes = proto.SerializeAsString();
    std::string record = WatchEventBytes(
        txn.created_.count(id) > 0 ? v1::WatchEvent::ADDED : v1::WatchEvent::MODIFIED,
        workload_bytes);
    if (check_controllers_.MayConcern(proto)) {
      if (!controllers.has_value()) controllers = ControllerNamesOf(*state_);
      AppendCheckControllers(check_controllers_.Changed(proto, *controllers), record);
    }
    batch.AppendChange(std::move(record));
    batch.Put(WorkloadStoreKey(wl->spec.namespace_name, wl->spec.name), workload_bytes);
  }
  for (const core::WorkloadKey& key : state_->TakeDeletedWorkloads()) {
    if (options_.observer != nullptr) options_.observer->OnWorkloadDeleted(key);
    workloads_changed = true;
    if (!options_.record_workload_changes) continue;
    v1::WatchEvent event;
    event.set_type(v1::WatchEvent::DELETED);
    event.mutable_workload()->mutable_metadata()->set_namespace_(key.namespace_name);
    event.mutable_workload()->mutable_metadata()->set_name(key.name);
    for (v1::CheckControllerRef& ref : check_controllers_.Deleted(key.ToString())) {
      *event.add_check_controllers() = std::move(ref);
    }
    batch.Delete(WorkloadStoreKey(key.namespace_name, key.name));
    batch.AppendChange(event.SerializeAsString());
  }
  txn.object_writes_.clear();
  txn.created_.clear();
  changed = workloads_changed || !batch.empty();
  return batch;
}

absl::Status AdmissionExecutor::Commit(const std::vector<const storage::WriteBatch*>& batches) {
  if (batches.empty()) return absl::OkStatus();
  const absl::Time started = wall_clock_.Now();
  absl::StatusOr<int64_t> revision = store_.CommitSequence(batches);
  if (options_.observer != nullptr) {
    options_.observer->OnCommit(static_cast<int64_t>(batches.size()), wall_clock_.Now() - started,
                                revision.status());
  }
  if (!revision.ok()) return revision.status();
  {
    absl::MutexLock lock(&mu_);
    revision_ = *revision;
  }
  // Retention: keep the last change_log_retention revisions. Compacting only once a tenth more
  // has piled up turns it into one range delete (and fsync) per that many commits.
  int64_t compact_to = 0;
  const int64_t keep = options_.change_log_retention;
  if (keep > 0 && *revision - store_.CompactedRevision() > keep + std::max<int64_t>(keep / 10, 1)) {
    compact_to = *revision - keep;
  }
  // And nothing older than change_log_retention_age: the newest sampled revision committed
  // before the cut-off, and everything before it, is old enough to go.
  const absl::Duration max_age = options_.change_log_retention_age;
  if (max_age > absl::ZeroDuration()) {
    const absl::Time now = wall_clock_.Now();
    if (commit_samples_.empty() || now - sample_slice_start_ >= max_age / 100) {
      commit_samples_.emplace_back(*revision, now);
      sample_slice_start_ = now;
    } else {
      commit_samples_.back() = {*revision, now};
    }
    int64_t old_enough = 0;
    while (!commit_samples_.empty() && commit_samples_.front().second <= now - max_age) {
      old_enough = commit_samples_.front().first;
      commit_samples_.pop_front();
    }
    compact_to = std::max(compact_to, old_enough);
  }
  if (compact_to > store_.CompactedRevision()) {
    // A failed compaction is a failed store write: the store refuses the next commit, which
    // then reports it (and reloads), so nothing is hidden by not returning it here.
    store_.CompactChanges(compact_to).IgnoreError();
  }
  return absl::OkStatus();
}

void AdmissionExecutor::Loop() {
  while (true) {
    std::deque<Operation*> batch;
    bool continuing = false;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty() || more_cycles_;
      };
      // Wake for requests, or for the next timer (grace periods, pods-ready timeouts).
      std::optional<absl::Time> next_timer =
          options_.schedule_continuously ? state_->NextTimer() : std::nullopt;
      if (next_timer.has_value()) {
        // Timers are in the scheduler's clock; a simulated clock never reaches them by waiting,
        // so cap the wait and re-check.
        mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(100));
      } else {
        mu_.Await(absl::Condition(&ready));
      }
      if (stopping_ && queue_.empty()) return;
      batch.swap(queue_);
      continuing = more_cycles_;
      more_cycles_ = false;
    }
    RunRound(batch, continuing);
  }
}

void AdmissionExecutor::RunRound(std::deque<Operation*>& batch, bool continuing) {
  bool lost = false;
  {
    absl::MutexLock lock(&mu_);
    lost = !state_lost_.ok();
    if (lost) {
      // Memory is ahead of a store that cannot be read back: run nothing more on it.
      for (Operation* op : batch) {
        op->status = absl::UnavailableError(
            absl::StrCat("the admission service lost its store: ", state_lost_.message()));
      }
    }
  }
  if (lost) {
    for (Operation* op : batch) Complete(op);
    return;
  }
  if (options_.observer != nullptr) {
    options_.observer->OnRound(static_cast<int64_t>(batch.size()));
  }

  Txn txn;
  txn.state_ = state_.get();
  txn.store_ = &store_;
  txn.now_ = clock_.Now();
  txn.revision_ = store_.CurrentRevision();
  int succeeded = 0;
  for (Operation* op : batch) {
    const size_t writes_before = txn.object_writes_.size();
    const size_t hooks_before = txn.after_cycles_.size();
    const size_t erased_before = txn.erased_.size();
    op->status = op->fn(txn);
    if (state_replaced_) {
      // Reload swapped the state and the store's content: later operations read the new ones.
      state_replaced_ = false;
      txn.state_ = state_.get();
      txn.revision_ = store_.CurrentRevision();
    }
    if (!op->status.ok()) {
      // A failed operation changed no state; drop whatever it staged.
      txn.object_writes_.resize(writes_before);
      txn.after_cycles_.resize(hooks_before);
      txn.erased_.resize(erased_before);
    } else {
      ++succeeded;
    }
  }
  // The requests' changes and the cycles they trigger are committed together, as two
  // revisions (so responses and Watch still see the requests' effect on its own) under one
  // fsync: a request never waits behind a second commit.
  const int64_t base_revision = store_.CurrentRevision();
  std::vector<storage::WriteBatch> changes;
  bool changed = false;
  changes.push_back(TakeChanges(txn, base_revision + 1, changed));
  if (!changed) changes.pop_back();
  CycleResult cycles;
  cycles.settled = true;
  collect_round_preemptions_ = !txn.after_cycles_.empty();
  round_preemptions_.clear();
  if (options_.schedule_continuously) {
    const bool fired = state_->FireTimers(txn.now_);
    if (succeeded > 0 || fired || continuing) {
      // One cycle more per operation than max_cycles_per_round: a cycle admits at most one
      // workload per ClusterQueue, so a round of N submissions to one queue needs N cycles, and
      // admitting them under this round's commit saves a cycles-only round and its own fsync (at
      // 64 concurrent Submits the executor committed twice per round without it; performance.md
      // section 2). cycle_time_per_round still bounds the round.
      cycles = RunCycles(txn.now_, options_.max_cycles_per_round + succeeded,
                         wall_clock_.Now() + options_.cycle_time_per_round);
    }
    const int64_t next = base_revision + 1 + static_cast<int64_t>(changes.size());
    changes.push_back(TakeChanges(txn, next, changed));
    if (!changed) changes.pop_back();
  }
  for (const Txn::AfterCyclesFn& fn : txn.after_cycles_) fn(*state_, round_preemptions_);
  txn.after_cycles_.clear();
  collect_round_preemptions_ = false;
  std::vector<const storage::WriteBatch*> to_commit;
  for (const storage::WriteBatch& batch : changes) to_commit.push_back(&batch);
  absl::Status committed = Commit(to_commit);
  if (!committed.ok()) {
    for (Operation* op : batch) {
      if (op->status.ok()) {
        op->status = absl::UnavailableError(
            absl::StrCat("the write could not be made durable: ", committed.message()));
      }
    }
    // Memory is now ahead of the store: start again from what is durable.
    ReloadOrDie();
  }
  for (Operation* op : batch) Complete(op);
  absl::MutexLock lock(&mu_);
  // After a failed commit the reloaded state has not been scheduled yet.
  more_cycles_ = (!cycles.settled || !committed.ok()) && state_lost_.ok();
}

}  // namespace tollgate::engine
