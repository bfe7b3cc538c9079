#include "core/multikueue_remote_sync.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tollgate::core {
namespace {

using ConditionOf = const std::optional<RemoteCondition>& (*)(const RemoteCopy&);

// The connected copy whose condition turned True first; ties go to the smaller cluster name
// (the map's order and a strict comparison).
std::optional<std::string> Earliest(const std::map<std::string, WorkerView>& workers,
                                    const std::set<std::string>& removed, ConditionOf condition) {
  std::optional<std::string> best;
  absl::Time best_since = absl::InfiniteFuture();
  for (const auto& [cluster, worker] : workers) {
    if (!worker.connected || !worker.copy.has_value() || removed.count(cluster) > 0) continue;
    const std::optional<RemoteCondition>& c = condition(*worker.copy);
    if (c.has_value() && (!best.has_value() || c->since < best_since)) {
      best = cluster;
      best_since = c->since;
    }
  }
  return best;
}

const std::optional<RemoteCondition>& FinishedOf(const RemoteCopy& copy) { return copy.finished; }
const std::optional<RemoteCondition>& EvictedOf(const RemoteCopy& copy) { return copy.evicted; }

bool HasCopy(const WorkerView& worker) { return worker.connected && worker.copy.has_value(); }

}  // namespace

std::string TransitionMessage(absl::string_view message, CheckState previous) {
  return absl::StrCat(message, ", Previously: \"", CheckStateName(previous), "\"");
}

std::optional<std::string> FirstAdmitted(const std::map<std::string, WorkerView>& workers,
                                         const std::optional<std::string>& cluster_name) {
  if (cluster_name.has_value()) {
    auto it = workers.find(*cluster_name);
    if (it != workers.end() && HasCopy(it->second) && it->second.copy->admitted_since.has_value()) {
      return *cluster_name;
    }
    return std::nullopt;
  }
  std::optional<std::string> best;
  absl::Time best_since = absl::InfiniteFuture();
  for (const auto& [cluster, worker] : workers) {
    if (!HasCopy(worker) || !worker.copy->admitted_since.has_value()) continue;
    if (!best.has_value() || *worker.copy->admitted_since < best_since) {
      best = cluster;
      best_since = *worker.copy->admitted_since;
    }
  }
  return best;
}

RemoteSyncPlan PlanRemoteSync(const LocalView& local,
                              const std::map<std::string, WorkerView>& workers,
                              absl::Duration worker_lost_timeout, absl::Time now) {
  RemoteSyncPlan plan;
  // A rejected check ends MultiKueue's part: the workload is deactivated locally.
  if (local.check_state == CheckState::kRejected) return plan;

  // (1) Nothing may run remotely for a workload that finished or holds no quota here.
  if (local.finished || !local.holds_quota) {
    bool some_unreachable = false;
    for (const auto& [cluster, worker] : workers) {
      if (HasCopy(worker)) plan.remove_copies.push_back(cluster);
      if (!worker.connected) some_unreachable = true;
    }
    // Copies on unreachable workers go when they are back (or by garbage collection).
    if (some_unreachable) plan.recheck_at = now + worker_lost_timeout;
    return plan;
  }

  // (2) A finished copy finishes the workload, unless it is a sync failure.
  const std::set<std::string> none;
  if (std::optional<std::string> remote = Earliest(workers, none, &FinishedOf)) {
    const RemoteCondition& finished = *workers.at(*remote).copy->finished;
    if (finished.reason == kFinishedOutOfSync) {
      if (local.check_state == CheckState::kReady) {
        plan.check = CheckTransition{
            CheckState::kRetry,
            TransitionMessage(absl::StrCat("Remote workload on worker cluster \"", *remote,
                                           "\" is out of sync with its user job, resetting for "
                                           "re-dispatch"),
                              local.check_state)};
      }
      return plan;
    }
    plan.mirror_from = *remote;
    plan.finish_local = finished;
    return plan;
  }

  // (3) An evicted copy.
  std::set<std::string> removed;
  if (std::optional<std::string> remote = Earliest(workers, none, &EvictedOf)) {
    if (local.evicted_message.has_value()) {
      // Evicted here too: the worker's status is still mirrored (the job stops there).
      plan.mirror_from = *remote;
      return plan;
    }
    // Kueue removes the copies once the manager's workload has given up its quota (1); a copy
    // evicted on its worker goes now, with the Retry, so that it cannot be admitted again on
    // its worker (still marked the winner, its job still there) while the next round picks
    // another worker: the manager may give up and take quota again in one step, unseen.
    for (const auto& [cluster, worker] : workers) {
      if (HasCopy(worker) && worker.copy->evicted.has_value()) {
        plan.remove_copies.push_back(cluster);
        removed.insert(cluster);
      }
    }
    if (local.check_state == CheckState::kReady) {
      plan.check = CheckTransition{CheckState::kRetry,
                                   absl::StrCat("Workload evicted on worker cluster: \"",
                                                local.cluster_name.value_or(*remote),
                                                "\", resetting for re-admission. Previously: \"",
                                                CheckStateName(local.check_state), "\"")};
      return plan;
    }
  }

  // (4) Copies whose spec no longer matches are of no use.
  for (const auto& [cluster, worker] : workers) {
    if (HasCopy(worker) && !worker.copy->spec_in_sync && removed.count(cluster) == 0) {
      plan.remove_copies.push_back(cluster);
      removed.insert(cluster);
    }
  }
  std::map<std::string, WorkerView> remaining = workers;
  for (const std::string& cluster : removed) remaining[cluster].copy.reset();

  const std::optional<std::string> winner = FirstAdmitted(remaining, local.cluster_name);

  // (5) Ready, but no admitted copy to be seen.
  if (!winner.has_value() && local.check_state == CheckState::kReady) {
    if (!local.cluster_name.has_value()) {
      plan.check = CheckTransition{
          CheckState::kRetry,
          TransitionMessage("Admission check is Ready but no admitting cluster is recorded; this "
                            "is unexpected, please report it",
                            local.check_state)};
      return plan;
    }
    auto it = workers.find(*local.cluster_name);
    if (it != workers.end() && !it->second.connected) {
      // Probably still running: wait out the grace from the first loss of the connection.
      const absl::Time lost_since = it->second.lost_since.value_or(now);
      const absl::Time deadline = lost_since + worker_lost_timeout;
      if (now < deadline) {
        plan.recheck_at = deadline;
        return plan;
      }
      plan.check = CheckTransition{CheckState::kRetry,
                                   TransitionMessage("Admitting remote lost", local.check_state)};
      return plan;
    }
    plan.check =
        CheckTransition{CheckState::kRetry,
                        TransitionMessage("Admitting remote no longer exists", local.check_state)};
    return plan;
  }

  // (6) Converge on the winner.
  if (winner.has_value()) {
    for (const auto& [cluster, worker] : remaining) {
      if (cluster != *winner && HasCopy(worker)) plan.remove_copies.push_back(cluster);
    }
    std::sort(plan.remove_copies.begin(), plan.remove_copies.end());
    if (local.evicted_message.has_value()) {
      plan.deactivate_remote = *winner;
      plan.deactivate_reason = std::string(kEvictedOnManagerCluster);
      plan.deactivate_message = absl::StrCat("Evicted on manager: ", *local.evicted_message);
      // Kueue truncates a condition message to 32 KiB, ending it with " ..."; the worker
      // refuses a longer cause.
      constexpr size_t kMaxMessageBytes = 32 * 1024;
      if (plan.deactivate_message.size() > kMaxMessageBytes) {
        plan.deactivate_message.resize(kMaxMessageBytes - 4);
        plan.deactivate_message += " ...";
      }
      return plan;
    }
    plan.mirror_from = *winner;
    if (local.check_state != CheckState::kRetry && local.check_state != CheckState::kRejected &&
        local.check_state != CheckState::kReady) {
      plan.check = CheckTransition{CheckState::kReady,
                                   absl::StrCat("The workload was admitted on \"", *winner, "\"")};
      plan.clear_nominated = true;
    }
    if (!local.cluster_name.has_value()) {
      plan.set_cluster_name = *winner;
      plan.clear_nominated = true;
    }
    plan.recheck_at = now + worker_lost_timeout;
    return plan;
  }

  std::sort(plan.remove_copies.begin(), plan.remove_copies.end());
  // (7) Nobody admitted it yet. Not while the manager's workload is being evicted (it still
  // holds quota until its job stops; Kueue's ShouldSkipClusterNomination): its next
  // reservation is dispatched afresh.
  plan.nominate = !local.evicted_message.has_value();
  return plan;
}

std::vector<std::string> GarbageCopies(const std::vector<std::string>& copies_with_origin,
                                       const std::set<std::string>& live) {
  std::vector<std::string> out;
  for (const std::string& key : copies_with_origin) {
    if (live.count(key) == 0) out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace tollgate::core
