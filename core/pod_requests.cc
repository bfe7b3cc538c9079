#include "core/pod_requests.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
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

}  // namespace tollgate::core
