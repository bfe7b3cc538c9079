#include "core/multikueue_dispatcher.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace tollgate::core {

DispatcherMode DispatcherModeOf(absl::string_view dispatcher_name) {
  if (dispatcher_name == kAllAtOnceDispatcherName) return DispatcherMode::kAllAtOnce;
  if (dispatcher_name == kIncrementalDispatcherName) return DispatcherMode::kIncremental;
  return DispatcherMode::kExternal;
}

bool MayNominate(const NominationGate& gate) {
  if (!gate.holds_quota || gate.finished) return false;
  return gate.check_state == CheckState::kPending && !gate.cluster_name.has_value();
}

std::optional<std::string> FirstOtherCheckNotReady(const std::vector<AdmissionCheckState>& checks,
                                                   absl::string_view multikueue_check) {
  for (const AdmissionCheckState& check : checks) {
    if (check.name != multikueue_check && check.state != CheckState::kReady) return check.name;
  }
  return std::nullopt;
}

bool NominatesBeforeOtherChecksReady(DispatcherMode mode, bool follows_component) {
  return mode != DispatcherMode::kAllAtOnce && !follows_component;
}

namespace {

bool SameSet(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return a == b;
}

}  // namespace

Nomination NominateAllAtOnce(const NominationInput& input) {
  Nomination out;
  for (const std::string& cluster : input.config_clusters) {
    if (input.connected.count(cluster) > 0) out.nominated.push_back(cluster);
  }
  // A stable stored order whatever the config's: Kueue sorts before writing.
  std::sort(out.nominated.begin(), out.nominated.end());
  out.nominated.erase(std::unique(out.nominated.begin(), out.nominated.end()), out.nominated.end());
  out.changed = !SameSet(out.nominated, input.nominated);
  if (!out.changed) out.nominated = input.nominated;
  return out;
}

Nomination NominateIncremental(const NominationInput& input, absl::Time now) {
  Nomination out;
  out.nominated = input.nominated;
  if (input.round.has_value()) {
    const absl::Time ends = input.round->started + kIncrementalRoundTimeout;
    // Kueue waits while now - start <= timeout: the next step comes strictly after it.
    if (now <= ends) {
      out.recheck_at = ends;
      return out;
    }
  }
  const std::set<std::string> already(input.nominated.begin(), input.nominated.end());
  std::vector<std::string> step;
  const size_t step_size = static_cast<size_t>(std::max(1, input.step_size));
  for (const std::string& cluster : input.config_clusters) {
    if (step.size() == step_size) break;
    if (already.count(cluster) > 0) continue;
    if (std::find(step.begin(), step.end(), cluster) != step.end()) continue;
    step.push_back(cluster);
  }
  if (step.empty()) {
    out.no_more_workers = true;
    return out;
  }
  out.nominated.insert(out.nominated.end(), step.begin(), step.end());
  out.changed = true;
  out.new_round = IncrementalRound{now};
  out.recheck_at = now + kIncrementalRoundTimeout;
  return out;
}

Nomination NominateExternal(const NominationInput& input) {
  Nomination out;
  out.nominated = input.nominated;
  return out;
}

Nomination Nominate(DispatcherMode mode, const NominationInput& input, absl::Time now) {
  if (input.only_on.has_value()) {
    Nomination out;
    out.nominated = {*input.only_on};
    out.changed = input.nominated != out.nominated;
    return out;
  }
  switch (mode) {
    case DispatcherMode::kAllAtOnce:
      return NominateAllAtOnce(input);
    case DispatcherMode::kIncremental:
      return NominateIncremental(input, now);
    case DispatcherMode::kExternal:
      return NominateExternal(input);
  }
  return NominateExternal(input);
}

CopySync SyncCopies(const std::vector<std::string>& nominated,
                    const std::set<std::string>& connected,
                    const std::set<std::string>& with_copy) {
  CopySync out;
  const std::set<std::string> wanted(nominated.begin(), nominated.end());
  for (const std::string& cluster : wanted) {
    if (connected.count(cluster) == 0) {
      out.unreachable_nominees.push_back(cluster);
    } else if (with_copy.count(cluster) == 0) {
      out.create.push_back(cluster);
    }
  }
  for (const std::string& cluster : with_copy) {
    if (wanted.count(cluster) == 0) out.remove.push_back(cluster);
  }
  return out;
}

namespace {
constexpr absl::string_view kNominatedPrefix = "nominated worker clusters: ";
}  // namespace

std::string NominatedEventMessage(const std::vector<std::string>& added) {
  return absl::StrCat(kNominatedPrefix, absl::StrJoin(added, ", "));
}

std::vector<std::string> NominatedClustersOf(absl::string_view message) {
  if (!absl::ConsumePrefix(&message, kNominatedPrefix)) return {};
  return absl::StrSplit(message, ", ", absl::SkipEmpty());
}

}  // namespace tollgate::core
