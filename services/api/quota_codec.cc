#include "services/api/quota_codec.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "services/api/api_codec.h"

namespace tollgate::api::codec {
namespace {

using ::google::protobuf::RepeatedPtrField;

// (an integer mantissa and an SI, binary or exponent suffix) so that spellings of one value
// give one double; decimal scaling goes through the string so it rounds only once.
std::optional<double> QuantityAsDouble(const core::Quantity& q) {
  const std::string text = q.CanonicalString();
  size_t end = 0;
  while (end < text.size() && (absl::ascii_isdigit(text[end]) || text[end] == '+' ||
                               text[end] == '-' || text[end] == '.')) {
    ++end;
  }
  const absl::string_view mantissa = absl::string_view(text).substr(0, end);
  const absl::string_view suffix = absl::string_view(text).substr(end);
  static constexpr std::pair<absl::string_view, int> kDecimal[] = {
      {"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
      {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18},
  };
  static constexpr absl::string_view kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  double value = 0;
  for (const auto& [name, exponent] : kDecimal) {
    if (suffix == name) {
      if (!absl::SimpleAtod(absl::StrCat(mantissa, "e", exponent), &value)) return std::nullopt;
      return value;
    }
  }
  for (size_t i = 0; i < std::size(kBinary); ++i) {
    if (suffix == kBinary[i]) {
      if (!absl::SimpleAtod(mantissa, &value)) return std::nullopt;
      return std::ldexp(value, 10 * static_cast<int>(i + 1));
    }
  }
  // An exponent suffix ("e3", "E-2"): the whole text is a float literal.
  if (!absl::SimpleAtod(text, &value)) return std::nullopt;
  return value;
}

// Weights come from quantities, which sit on a nano grid, so nine decimals print them exactly.
std::string FormatWeight(double weight) {
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(absl::StrFormat("%.9f", weight));
  if (!q.ok()) return absl::StrCat(weight);  // only NaN or infinity, which validation rejects
  return q->CanonicalString();
}

// Kueue compares the quantities themselves: two amounts that both read as unlimited (INT64_MAX)
// still compare by their values.
bool LendingAboveNominal(const v1::ResourceQuota& rq, int64_t lending, int64_t nominal) {
  constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
  if (lending != kUnlimited || nominal != kUnlimited) return lending > nominal;
  absl::StatusOr<core::Quantity> lending_q = core::Quantity::Parse(rq.lending_limit());
  absl::StatusOr<core::Quantity> nominal_q = core::Quantity::Parse(rq.nominal_quota());
  if (!lending_q.ok() || !nominal_q.ok()) return false;  // both parsed before
  const std::optional<double> l = QuantityAsDouble(*lending_q);
  const std::optional<double> n = QuantityAsDouble(*nominal_q);
  return l.has_value() && n.has_value() && *l > *n;
}

absl::StatusOr<core::ResourceQuotaSpec> ResourceQuotaFromProto(const Reporter& r,
                                                               absl::string_view path,
                                                               const v1::ResourceQuota& rq,
                                                               const QuotaRules& rules) {
  core::ResourceQuotaSpec out;
  out.resource = rq.name();
  TOLLGATE_ASSIGN_OR_RETURN(
      out.nominal, ParseQuotaAmount(r, Child(path, "nominalQuota"), rq.name(), rq.nominal_quota()));
  auto limit = [&](absl::string_view field, const std::string& text) -> absl::StatusOr<int64_t> {
    const std::string lpath = Child(path, field);
    TOLLGATE_ASSIGN_OR_RETURN(int64_t v, ParseQuotaAmount(r, lpath, rq.name(), text));
    if (!rules.has_parent) {
      return r.Invalid(lpath, absl::StrCat("must not be set when ", rules.parent_field,
                                           " is empty, got ", Quote(text)));
    }
    return v;
  };
  if (rq.has_borrowing_limit()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.borrowing_limit, limit("borrowingLimit", rq.borrowing_limit()));
  }
  if (rq.has_lending_limit()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.lending_limit, limit("lendingLimit", rq.lending_limit()));
    if (rules.lending_within_nominal && LendingAboveNominal(rq, *out.lending_limit, out.nominal)) {
      return r.Invalid(
          Child(path, "lendingLimit"),
          absl::StrCat("must be less than or equal to nominalQuota ", Quote(rq.nominal_quota()),
                       ", got ", Quote(rq.lending_limit())));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<core::ResourceGroupSpec>> ResourceGroupsFromProto(
    const Reporter& r, const RepeatedPtrField<v1::ResourceGroup>& groups, const QuotaRules& rules) {
  const std::string path = "spec.resourceGroups";
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, path, groups.size(), kMaxResourceGroups));
  std::vector<core::ResourceGroupSpec> out;
  // Each resource and each flavor belongs to one group, so a (flavor, resource) pair names one
  // quota.
  std::set<std::string> seen_resources;
  std::set<std::string> seen_flavors;
  int total_flavors = 0;
  int total_covered = 0;
  for (int i = 0; i < groups.size(); ++i) {
    const v1::ResourceGroup& g = groups[i];
    const std::string gpath = Index(path, i);
    core::ResourceGroupSpec group;

    const std::string cpath = Child(gpath, "coveredResources");
    TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, cpath, g.covered_resources_size(), 1));
    TOLLGATE_RETURN_IF_ERROR(
        CheckMaxItems(r, cpath, g.covered_resources_size(), kMaxCoveredResourcesPerGroup));
    for (int j = 0; j < g.covered_resources_size(); ++j) {
      const std::string& name = g.covered_resources(j);
      const std::string rpath = Index(cpath, j);
      TOLLGATE_RETURN_IF_ERROR(r.At(rpath, core::ValidateQualifiedName(name)));
      if (!seen_resources.insert(name).second) {
        return r.Invalid(rpath, absl::StrCat("duplicate value ", Quote(name),
                                             ": a resource may be covered by only one "
                                             "resourceGroup, once"));
      }
      group.covered_resources.push_back(name);
    }
    total_covered += g.covered_resources_size();

    const std::string fpath = Child(gpath, "flavors");
    TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, fpath, g.flavors_size(), 1));
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, fpath, g.flavors_size(), kMaxFlavorsPerGroup));
    int combinations = 0;
    for (int j = 0; j < g.flavors_size(); ++j) {
      const v1::FlavorQuotas& f = g.flavors(j);
      const std::string flpath = Index(fpath, j);
      const std::string npath = Child(flpath, "name");
      TOLLGATE_RETURN_IF_ERROR(ValidateName(r, npath, f.name(), /*label=*/false));
      if (!seen_flavors.insert(f.name()).second) {
        return r.Invalid(npath, absl::StrCat("duplicate value ", Quote(f.name()),
                                             ": a flavor may appear in only one resourceGroup, "
                                             "once"));
      }
      const std::string qpath = Child(flpath, "resources");
      if (f.resources_size() != g.covered_resources_size()) {
        return r.Invalid(qpath, absl::StrCat("must list the ", g.covered_resources_size(),
                                             " coveredResources of its group, got ",
                                             f.resources_size(), " resources"));
      }
      combinations += f.resources_size();
      core::FlavorQuotasSpec flavor;
      flavor.flavor = f.name();
      for (int k = 0; k < f.resources_size(); ++k) {
        const v1::ResourceQuota& rq = f.resources(k);
        const std::string rqpath = Index(qpath, k);
        if (rq.name() != g.covered_resources(k)) {
          return r.Invalid(Child(rqpath, "name"),
                           absl::StrCat("must match coveredResources[", k, "] ",
                                        Quote(g.covered_resources(k)), ", got ", Quote(rq.name())));
        }
        TOLLGATE_ASSIGN_OR_RETURN(core::ResourceQuotaSpec quota,
                                  ResourceQuotaFromProto(r, rqpath, rq, rules));
        flavor.resources.push_back(std::move(quota));
      }
      group.flavors.push_back(std::move(flavor));
    }
    total_flavors += g.flavors_size();
    if (combinations > kMaxFlavorResourceCombinationsPerGroup) {
      return r.Invalid(
          gpath, absl::StrCat("number of flavor-resource combinations must be at "
                              "most ",
                              kMaxFlavorResourceCombinationsPerGroup, ", got ", combinations));
    }
    out.push_back(std::move(group));
  }
  if (total_flavors > kMaxTotalFlavors) {
    return r.Invalid(path, absl::StrCat("total number of flavors must be at most ",
                                        kMaxTotalFlavors, ", got ", total_flavors));
  }
  if (total_covered > kMaxTotalCoveredResources) {
    return r.Invalid(path, absl::StrCat("total number of covered resources must be at most ",
                                        kMaxTotalCoveredResources, ", got ", total_covered));
  }
  return out;
}

void ResourceGroupsToProto(const std::vector<core::ResourceGroupSpec>& groups,
                           RepeatedPtrField<v1::ResourceGroup>* out) {
  for (const core::ResourceGroupSpec& g : groups) {
    v1::ResourceGroup* pg = out->Add();
    for (const std::string& res : g.covered_resources) pg->add_covered_resources(res);
    for (const core::FlavorQuotasSpec& f : g.flavors) {
      v1::FlavorQuotas* pf = pg->add_flavors();
      pf->set_name(f.flavor);
      for (const core::ResourceQuotaSpec& q : f.resources) {
        v1::ResourceQuota* pq = pf->add_resources();
        pq->set_name(q.resource);
        pq->set_nominal_quota(core::FormatResourceScalar(q.resource, q.nominal));
        if (q.borrowing_limit.has_value()) {
          pq->set_borrowing_limit(core::FormatResourceScalar(q.resource, *q.borrowing_limit));
        }
        if (q.lending_limit.has_value()) {
          pq->set_lending_limit(core::FormatResourceScalar(q.resource, *q.lending_limit));
        }
      }
    }
  }
}

absl::StatusOr<double> FairWeightFromProto(const Reporter& r, absl::string_view path,
                                           const v1::FairSharing& fs) {
  if (!fs.has_weight()) return 1.0;  // Kueue's default
  const std::string wpath = Child(path, "weight");
  TOLLGATE_ASSIGN_OR_RETURN(core::Quantity q, ParseNonNegativeQuantity(r, wpath, fs.weight()));
  std::optional<double> weight = QuantityAsDouble(q);
  if (!weight.has_value() || !std::isfinite(*weight)) {
    return r.Invalid(wpath,
                     absl::StrCat("not representable as a number, got ", Quote(fs.weight())));
  }
  // Kueue's webhook: a weight this small collapses to zero in its share arithmetic.
  if (*weight > 0 && *weight <= 1e-9) {
    return r.Invalid(wpath,
                     absl::StrCat("when not 0, must be greater than 1n, got ", Quote(fs.weight())));
  }
  return *weight;
}

void FairSharingToProto(double weight, v1::FairSharing* out) {
  if (weight != 1.0) out->set_weight(FormatWeight(weight));
}

}  // namespace tollgate::api::codec
