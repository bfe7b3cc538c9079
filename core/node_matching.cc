#include "core/node_matching.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/names.h"

namespace tollgate::core {
namespace {

// Kubernetes parses Gt/Lt operands and label values as integers; a value that is not one does
// not match.
bool ParseInt(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  size_t i = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (i == text.size()) return false;
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    if (v > (INT64_MAX - (text[i] - '0')) / 10) return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = text[0] == '-' ? -v : v;
  return true;
}

bool RequirementMatches(const LabelSelectorRequirement& req, const Labels& labels) {
  auto it = labels.find(req.key);
  const bool has = it != labels.end();
  if (req.op == "Exists") return has;
  if (req.op == "DoesNotExist") return !has;
  const bool in_values =
      has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
  if (req.op == "In") return in_values;
  if (req.op == "NotIn") return !in_values;
  if (req.op == "Gt" || req.op == "Lt") {
    int64_t label = 0;
    int64_t operand = 0;
    if (!has || req.values.size() != 1 || !ParseInt(it->second, &label) ||
        !ParseInt(req.values[0], &operand)) {
      return false;
    }
    return req.op == "Gt" ? label > operand : label < operand;
  }
  return false;
}

// A node field selector requirement: Kubernetes allows only metadata.name with In or NotIn and
// one value (validation refuses anything else before it gets here).
bool FieldRequirementMatches(const LabelSelectorRequirement& req, absl::string_view node_name) {
  if (req.key != kNodeNameField) return false;
  const bool in_values =
      std::find(req.values.begin(), req.values.end(), node_name) != req.values.end();
  if (req.op == "In") return in_values;
  if (req.op == "NotIn") return !in_values;
  return false;
}

// Kubernetes' IsDecimalInteger followed by ParseInt: within int64.
bool ParseCanonicalDecimal(const std::string& text, int64_t* out) {
  return IsCanonicalDecimalInteger(text) && ParseInt(text, out);
}

bool ToleratesIgnoringOperator(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  return toleration.key.empty() || toleration.key == taint.key;
}

// A node selector term against a node: every expression and field matches; a term with neither
// matches nothing.
bool TermMatches(const NodeSelectorTerm& term, const Labels& labels, absl::string_view node_name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  auto expression_matches = [&labels](const LabelSelectorRequirement& req) {
    return RequirementMatches(req, labels);
  };
  auto field_matches = [node_name](const LabelSelectorRequirement& req) {
    return FieldRequirementMatches(req, node_name);
  };
  return std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                     expression_matches) &&
         std::all_of(term.match_fields.begin(), term.match_fields.end(), field_matches);
}

}  // namespace

bool NodeAffinityMatches(const std::vector<NodeSelectorTerm>& terms, const Labels& labels,
                         absl::string_view node_name) {
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& term) {
    return TermMatches(term, labels, node_name);
  });
}

int64_t PreferredAffinityScore(const std::vector<PreferredSchedulingTerm>& terms,
                               const Labels& labels, absl::string_view node_name) {
  int64_t score = 0;
  for (const PreferredSchedulingTerm& term : terms) {
    if (term.weight != 0 && TermMatches(term.preference, labels, node_name)) score += term.weight;
  }
  return score;
}

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (!ToleratesIgnoringOperator(toleration, taint)) return false;
  if (toleration.op == "Exists") return true;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == taint.value;
  return false;
}

bool ToleratesWhenScheduling(const Toleration& toleration, const Taint& taint) {
  if (toleration.op != "Lt" && toleration.op != "Gt") return Tolerates(toleration, taint);
  if (!ToleratesIgnoringOperator(toleration, taint)) return false;
  int64_t toleration_value = 0;
  int64_t taint_value = 0;
  if (!ParseCanonicalDecimal(toleration.value, &toleration_value) ||
      !ParseCanonicalDecimal(taint.value, &taint_value)) {
    return false;
  }
  return toleration.op == "Lt" ? taint_value < toleration_value : taint_value > toleration_value;
}

const Taint* FindUntoleratedTaint(const ResourceFlavorSpec& flavor,
                                  const std::vector<Toleration>& pod_tolerations) {
  for (const Taint& taint : flavor.node_taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    auto tolerated = [&taint](const Toleration& t) { return ToleratesWhenScheduling(t, taint); };
    if (std::any_of(pod_tolerations.begin(), pod_tolerations.end(), tolerated)) continue;
    if (std::any_of(flavor.tolerations.begin(), flavor.tolerations.end(), tolerated)) continue;
    return &taint;
  }
  return nullptr;
}

bool NodeSelectorMatchesFlavor(const Labels& node_selector, const ResourceFlavorSpec& flavor) {
  for (const auto& [key, value] : node_selector) {
    auto it = flavor.node_labels.find(key);
    if (it == flavor.node_labels.end()) continue;
    if (it->second != value) return false;
  }
  return true;
}

bool RequiredAffinityMatchesFlavor(const std::vector<NodeSelectorTerm>& terms,
                                   const ResourceFlavorSpec& flavor) {
  // Kueue's flavorSelector: only expressions on keys the flavor labels count, and a term left
  // with none matches every flavor (the terms are ORed).
  std::vector<NodeSelectorTerm> relevant;
  for (const NodeSelectorTerm& term : terms) {
    NodeSelectorTerm kept;
    for (const LabelSelectorRequirement& req : term.match_expressions) {
      if (flavor.node_labels.count(req.key) > 0) kept.match_expressions.push_back(req);
    }
    if (kept.match_expressions.empty()) return true;
    relevant.push_back(std::move(kept));
  }
  return NodeAffinityMatches(relevant, flavor.node_labels, /*node_name=*/"");
}

bool SelectorMatches(const LabelSelector& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelSelectorRequirement& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    const bool in_values =
        has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    if (req.op == "In" && !in_values) return false;
    if (req.op == "NotIn" && in_values) return false;
    if (req.op == "Exists" && !has) return false;
    if (req.op == "DoesNotExist" && has) return false;
  }
  return true;
}

}  // namespace tollgate::core
