#include "core/pod_requests.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

// One resource amount while adding requests up. Whole units are summed apart from milli units,
// so memory-sized values (where value * 1000 overflows int64) stay exact.
struct Amount {
  int64_t value = 0;
  int64_t milli = 0;
  // Whether milli == value * 1000, i.e. whether the whole-unit sum is the exact one.
  bool integral = true;
  Quantity::Format format = Quantity::Format::kDecimalSI;
  // The term itself while nothing has been added to it: Kubernetes copies a quantity into a
  // list unchanged (keeping how it was written) and only re-formats a sum.
  std::optional<Quantity> verbatim;

  static Amount Of(const Quantity& q) {
    Amount a;
    a.value = q.Value();
    a.milli = q.MilliValue();
    a.integral = a.milli == SatMul(a.value, 1000);
    a.format = q.format();
    a.verbatim = q;
    return a;
  }

  bool IsZero() const { return value == 0 && milli == 0; }

  bool LessThan(const Amount& o) const {
    return integral && o.integral ? value < o.value : milli < o.milli;
  }

  // Quantity.Add: a sum takes the format of its first non-zero term.
  void Add(const Amount& o) {
    if (IsZero()) format = o.format;
    value = SatAdd(value, o.value);
    milli = SatAdd(milli, o.milli);
    integral = integral && o.integral;
    verbatim.reset();
  }

  Quantity ToQuantity() const {
    if (verbatim.has_value()) return *verbatim;
    return integral ? Quantity::FromValue(value, format) : Quantity::FromMilli(milli, format);
  }
};

using Amounts = std::map<std::string, Amount>;

// component-helpers' addResourceList.
void AddList(Amounts& into, const Amounts& add) {
  for (const auto& [name, amount] : add) {
    auto [it, inserted] = into.emplace(name, amount);
    if (!inserted) it->second.Add(amount);
  }
}

// component-helpers' maxResourceList.
void MaxList(Amounts& into, const Amounts& other) {
  for (const auto& [name, amount] : other) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, amount);
    } else if (it->second.LessThan(amount)) {
      it->second = amount;
    }
  }
}

// Requests, with a limit standing in for each request that is not given.
Amounts RequestsOrLimits(const ResourceList& requests, const ResourceList& limits) {
  Amounts out;
  for (const auto& [name, q] : requests) out.emplace(name, Amount::Of(q));
  for (const auto& [name, q] : limits) out.emplace(name, Amount::Of(q));  // keeps a request
  return out;
}

// Kueue's ResourceValue: cpu in milli-units, the rest in whole units (rounded up).
int64_t ComparableAmount(absl::string_view resource, const Quantity& q) {
  return resource == "cpu" ? q.MilliValue() : q.Value();
}

// Kueue's GreaterKeysRL, with a limit standing in for a missing request first (Kueue validates
// the template after the API server's defaulting): the names whose request is above the limit.
std::vector<std::string> NamesAboveLimit(const ResourceList& requests, const ResourceList& limits) {
  std::vector<std::string> names;  // sorted: ResourceList is ordered by name
  for (const auto& [name, request] : requests) {
    auto limit = limits.find(name);
    if (limit != limits.end() &&
        ComparableAmount(name, request) > ComparableAmount(name, limit->second)) {
      names.push_back(name);
    }
  }
  return names;
}

// A field.Invalid error as Kubernetes prints it, the value being a JSON list of names.
std::string AboveLimitError(absl::string_view field, const std::vector<std::string>& names) {
  return absl::StrCat(field, ": Invalid value: [\"", absl::StrJoin(names, "\",\""),
                      "\"]: requests must not exceed its limits");
}

}  // namespace

bool IsPodLevelResource(absl::string_view name) {
  return name == "cpu" || name == "memory" || absl::StartsWith(name, "hugepages-");
}

ResourceList EffectivePodRequests(const PodResources& pod) {
  Amounts reqs;
  for (const ContainerResources& c : pod.containers) {
    AddList(reqs, RequestsOrLimits(c.requests, c.limits));
  }
  Amounts sidecars;  // the restartable init containers started so far
  Amounts init_peak;
  for (const ContainerResources& c : pod.init_containers) {
    Amounts own = RequestsOrLimits(c.requests, c.limits);
    if (c.restartable) {
      AddList(reqs, own);
      AddList(sidecars, own);
      MaxList(init_peak, sidecars);
    } else {
      AddList(own, sidecars);
      MaxList(init_peak, own);
    }
  }
  MaxList(reqs, init_peak);
  for (auto& [name, amount] : RequestsOrLimits(pod.pod_requests, pod.pod_limits)) {
    if (IsPodLevelResource(name)) reqs.insert_or_assign(name, std::move(amount));
  }
  Amounts overhead;
  for (const auto& [name, q] : pod.overhead) overhead.emplace(name, Amount::Of(q));
  AddList(reqs, overhead);

  ResourceList out;
  for (const auto& [name, amount] : reqs) out.emplace(name, amount.ToQuantity());
  return out;
}

std::vector<std::string> RequestsAboveLimits(const PodResources& pod,
                                             absl::string_view pod_spec_path) {
  std::vector<std::string> errors;
  auto check = [&](const ResourceList& requests, const ResourceList& limits,
                   absl::string_view field) {
    if (requests.empty() || limits.empty()) return;
    std::vector<std::string> names = NamesAboveLimit(requests, limits);
    if (!names.empty()) errors.push_back(AboveLimitError(field, names));
  };
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    check(pod.init_containers[i].requests, pod.init_containers[i].limits,
          absl::StrCat(pod_spec_path, ".initContainers[", i, "]"));
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    check(pod.containers[i].requests, pod.containers[i].limits,
          absl::StrCat(pod_spec_path, ".containers[", i, "]"));
  }
  check(pod.pod_requests, pod.pod_limits, absl::StrCat(pod_spec_path, ".resources"));
  return errors;
}

std::vector<std::string> RefusedResourceFields(const PodResources& pod,
                                               absl::string_view pod_spec_path) {
  std::vector<std::string> errors;
  auto check = [&](const ResourceList& list, absl::string_view field) {
    for (const auto& [name, quantity] : list) {
      if (name == "pods") {
        errors.push_back(absl::StrCat(field,
                                      "[pods]: Invalid value: \"pods\": the key is reserved "
                                      "for internal kueue use"));
      }
      if (quantity.IsNegative()) {
        errors.push_back(absl::StrCat(field, "[", name, "]: Invalid value: \"", quantity.ToString(),
                                      "\": must be greater than or equal to 0"));
      }
    }
  };
  auto check_container = [&](const ContainerResources& c, absl::string_view path) {
    check(c.requests, absl::StrCat(path, ".resources.requests"));
    check(c.limits, absl::StrCat(path, ".resources.limits"));
  };
  for (size_t i = 0; i < pod.init_containers.size(); ++i) {
    check_container(pod.init_containers[i],
                    absl::StrCat(pod_spec_path, ".initContainers[", i, "]"));
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    check_container(pod.containers[i], absl::StrCat(pod_spec_path, ".containers[", i, "]"));
  }
  check(pod.pod_requests, absl::StrCat(pod_spec_path, ".resources.requests"));
  check(pod.pod_limits, absl::StrCat(pod_spec_path, ".resources.limits"));
  return errors;
}

std::string InvalidResourcesMessage(const WorkloadSpec& spec) {
  std::vector<absl::string_view> errors;
  for (const PodSetSpec& pod_set : spec.pod_sets) {
    const std::vector<std::string>* pod_set_errors = pod_set.resource_errors();
    if (pod_set_errors == nullptr) continue;
    for (const std::string& error : *pod_set_errors) {
      // Kubernetes' error aggregate prints each distinct message once.
      if (std::find(errors.begin(), errors.end(), error) == errors.end()) errors.push_back(error);
    }
  }
  if (errors.empty()) return "";
  if (errors.size() == 1) return absl::StrCat("resources validation failed: ", errors.front());
  return absl::StrCat("resources validation failed: [", absl::StrJoin(errors, ", "), "]");
}

}  // namespace tollgate::core
