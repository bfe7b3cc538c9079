#include "services/engine/check_controllers.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"

namespace tollgate::engine {
namespace {

// Whether a workload in this state is the controller's concern. An evicting workload still holds
// its quota until its job stops, but most controllers have nothing to do for it (its checks
// start over; a provisioning controller would provision again). The MultiKueue controller does:
// Kueue's reconcileGroup deactivates the winner's copy while the manager's workload is evicted
// and removes its copies only once the quota is gone, so it keeps seeing the workload until then.
bool HoldsQuotaFor(bool reserved_or_admitted, bool evicting, absl::string_view controller) {
  return reserved_or_admitted || (evicting && controller == core::kMultiKueueControllerName);
}

bool HoldsQuotaFor(v1::WorkloadState state, absl::string_view controller) {
  return HoldsQuotaFor(
      state == v1::WORKLOAD_STATE_QUOTA_RESERVED || state == v1::WORKLOAD_STATE_ADMITTED,
      state == v1::WORKLOAD_STATE_EVICTING, controller);
}

}  // namespace

CheckControllerNames ControllerNamesOf(const core::ClusterState& state) {
  CheckControllerNames out;
  for (const auto& [name, check] : state.admission_checks()) {
    out.emplace(name, check.spec.controller_name);
  }
  return out;
}

std::vector<v1::CheckControllerRef> CheckControllersOf(const v1::Workload& wl,
                                                       const CheckControllerNames& controllers) {
  std::map<std::string, std::vector<std::string>> checks_by_controller;
  for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
    auto it = controllers.find(check.name());
    if (it == controllers.end()) continue;
    checks_by_controller[it->second].push_back(check.name());
  }
  std::vector<v1::CheckControllerRef> out;
  for (auto& [controller, checks] : checks_by_controller) {
    v1::CheckControllerRef& ref = out.emplace_back();
    ref.set_controller_name(controller);
    for (std::string& check : checks) ref.add_checks(std::move(check));
    ref.set_holds_quota(HoldsQuotaFor(wl.status().state(), controller));
  }
  return out;
}

void CheckControllerTracker::Reset(const core::ClusterState& state) {
  concerned_.clear();
  const CheckControllerNames controllers = ControllerNamesOf(state);
  for (const auto& slot : state.workload_table().slots()) {
    const core::Workload* wl = slot.get();
    if (wl == nullptr || wl->status.admission_checks().empty()) continue;
    const bool reserved_or_admitted = wl->status.state == core::WorkloadState::kQuotaReserved ||
                                      wl->status.state == core::WorkloadState::kAdmitted;
    const bool evicting = wl->status.state == core::WorkloadState::kEvicting;
    if (!reserved_or_admitted && !evicting) continue;
    std::vector<std::string> names;
    for (const core::AdmissionCheckState& check : wl->status.admission_checks()) {
      auto it = controllers.find(check.name);
      if (it != controllers.end() && HoldsQuotaFor(reserved_or_admitted, evicting, it->second)) {
        names.push_back(it->second);
      }
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (!names.empty()) concerned_[wl->Key()] = std::move(names);
  }
}

std::vector<v1::CheckControllerRef> CheckControllerTracker::Changed(
    const v1::Workload& wl, const CheckControllerNames& controllers) {
  const std::string key = absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name());
  std::vector<v1::CheckControllerRef> out = CheckControllersOf(wl, controllers);
  std::vector<std::string> now;
  for (const v1::CheckControllerRef& ref : out) {
    if (ref.holds_quota()) now.push_back(ref.controller_name());
  }
  auto it = concerned_.find(key);
  if (it != concerned_.end()) {
    for (const std::string& before : it->second) {
      const bool listed = std::any_of(out.begin(), out.end(), [&](const v1::CheckControllerRef& r) {
        return r.controller_name() == before;
      });
      if (listed) continue;
      // Its check was dropped: the controller still hears that it is no longer its concern.
      v1::CheckControllerRef& ref = out.emplace_back();
      ref.set_controller_name(before);
      ref.set_holds_quota(false);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return a.controller_name() < b.controller_name();
    });
  }
  // Workloads that concern nobody are only listed while they do (pending ones carry checks
  // too, and are many): leave them out of the record unless they just stopped.
  std::vector<v1::CheckControllerRef> kept;
  for (v1::CheckControllerRef& ref : out) {
    const bool was = it != concerned_.end() && std::find(it->second.begin(), it->second.end(),
                                                         ref.controller_name()) != it->second.end();
    ref.set_added(ref.holds_quota() && !was);
    if (ref.holds_quota() || was) kept.push_back(std::move(ref));
  }
  if (now.empty()) {
    if (it != concerned_.end()) concerned_.erase(it);
  } else {
    concerned_[key] = std::move(now);
  }
  return kept;
}

std::vector<v1::CheckControllerRef> CheckControllerTracker::Deleted(const std::string& key) {
  std::vector<v1::CheckControllerRef> out;
  auto it = concerned_.find(key);
  if (it == concerned_.end()) return out;
  for (const std::string& controller : it->second) {
    v1::CheckControllerRef& ref = out.emplace_back();
    ref.set_controller_name(controller);
    ref.set_holds_quota(false);
  }
  concerned_.erase(it);
  return out;
}

}  // namespace tollgate::engine
