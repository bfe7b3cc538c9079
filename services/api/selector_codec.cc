#include "services/api/selector_codec.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/names.h"
#include "core/status_macros.h"

namespace tollgate::api::codec {
namespace {

using ::google::protobuf::RepeatedPtrField;

constexpr std::initializer_list<absl::string_view> kTaintEffects = {
    "NoSchedule", "PreferNoSchedule", "NoExecute"};
constexpr absl::string_view kNoExecute = "NoExecute";
constexpr absl::string_view kOpEqual = "Equal";
constexpr absl::string_view kOpExists = "Exists";
// Kubernetes' numeric toleration operators (TaintTolerationComparisonOperators): Kueue's
// scheduling compares them (core::ToleratesWhenScheduling).
constexpr absl::string_view kOpLt = "Lt";
constexpr absl::string_view kOpGt = "Gt";

}  // namespace

absl::StatusOr<std::vector<core::Taint>> TaintsFromProto(
    const Reporter& r, absl::string_view path, const RepeatedPtrField<v1::Taint>& taints) {
  std::vector<core::Taint> out;
  std::set<std::pair<std::string, std::string>> seen;  // (effect, key)
  for (int i = 0; i < taints.size(); ++i) {
    const v1::Taint& t = taints[i];
    const std::string tpath = Index(path, i);
    if (t.key().empty()) return r.Invalid(Child(tpath, "key"), "required value, got \"\"");
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "key"), core::ValidateQualifiedName(t.key())));
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "value"), core::ValidateLabelValue(t.value())));
    TOLLGATE_RETURN_IF_ERROR(
        CheckOneOf(r, Child(tpath, "effect"), t.effect(), kTaintEffects, /*allow_empty=*/false));
    if (!seen.emplace(t.effect(), t.key()).second) {
      return r.Invalid(
          tpath, absl::StrCat("duplicate taint with key ", Quote(t.key()), " and effect ",
                              Quote(t.effect()), ": taints must be unique by key and effect pair"));
    }
    out.push_back(core::Taint{t.key(), t.value(), t.effect()});
  }
  return out;
}

absl::StatusOr<std::vector<core::Toleration>> TolerationsFromProto(
    const Reporter& r, absl::string_view path, const RepeatedPtrField<v1::Toleration>& tols) {
  std::vector<core::Toleration> out;
  for (int i = 0; i < tols.size(); ++i) {
    const v1::Toleration& t = tols[i];
    const std::string tpath = Index(path, i);
    const std::string op_path = Child(tpath, "operator");
    TOLLGATE_RETURN_IF_ERROR(CheckOneOf(r, op_path, t.operator_(),
                                        {kOpEqual, kOpExists, kOpLt, kOpGt},
                                        /*allow_empty=*/true));
    const std::string op = t.operator_().empty() ? std::string(kOpEqual) : t.operator_();
    if (t.key().empty()) {
      // An empty key matches every taint, which only makes sense without a value to compare.
      if (op != kOpExists) {
        return r.Invalid(op_path, absl::StrCat("must be \"Exists\" when key is empty, got ",
                                               Quote(t.operator_())));
      }
    } else {
      TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "key"), core::ValidateQualifiedName(t.key())));
    }
    if (op == kOpExists) {
      if (!t.value().empty()) {
        return r.Invalid(Child(tpath, "value"), absl::StrCat("must be empty when operator is "
                                                             "\"Exists\", got ",
                                                             Quote(t.value())));
      }
    } else if (op == kOpLt || op == kOpGt) {
      if (!core::IsCanonicalDecimalInteger(t.value())) {
        return r.Invalid(Child(tpath, "value"), absl::StrCat(Quote(t.value()),
                                                             ": must be a valid decimal integer in "
                                                             "canonical form when operator is ",
                                                             Quote(op)));
      }
    } else {
      TOLLGATE_RETURN_IF_ERROR(r.At(Child(tpath, "value"), core::ValidateLabelValue(t.value())));
    }
    TOLLGATE_RETURN_IF_ERROR(
        CheckOneOf(r, Child(tpath, "effect"), t.effect(), kTaintEffects, /*allow_empty=*/true));
    if (t.has_toleration_seconds() && t.effect() != kNoExecute) {
      return r.Invalid(Child(tpath, "tolerationSeconds"),
                       absl::StrCat("may only be set when effect is \"NoExecute\", got ",
                                    t.toleration_seconds(), " with effect ", Quote(t.effect())));
    }
    core::Toleration tol{t.key(), op, t.value(), t.effect()};
    if (t.has_toleration_seconds()) tol.toleration_seconds = t.toleration_seconds();
    out.push_back(std::move(tol));
  }
  return out;
}

absl::StatusOr<core::LabelSelector> LabelSelectorFromProto(const Reporter& r,
                                                           absl::string_view path,
                                                           const v1::LabelSelector& sel) {
  core::LabelSelector out;
  TOLLGATE_RETURN_IF_ERROR(
      LabelsFromProto(r, Child(path, "matchLabels"), sel.match_labels(), &out.match_labels));
  const std::string exprs_path = Child(path, "matchExpressions");
  for (int i = 0; i < sel.match_expressions_size(); ++i) {
    const v1::LabelSelectorRequirement& req = sel.match_expressions(i);
    const std::string epath = Index(exprs_path, i);
    TOLLGATE_RETURN_IF_ERROR(r.At(Child(epath, "key"), core::ValidateQualifiedName(req.key())));
    TOLLGATE_RETURN_IF_ERROR(CheckOneOf(r, Child(epath, "operator"), req.operator_(),
                                        {"In", "NotIn", "Exists", "DoesNotExist"},
                                        /*allow_empty=*/false));
    const std::string vpath = Child(epath, "values");
    const bool wants_values = req.operator_() == "In" || req.operator_() == "NotIn";
    if (wants_values && req.values_size() == 0) {
      return r.Invalid(vpath, absl::StrCat("must be specified when operator is ",
                                           Quote(req.operator_()), ", got none"));
    }
    if (!wants_values && req.values_size() > 0) {
      return r.Invalid(vpath, absl::StrCat("may not be specified when operator is ",
                                           Quote(req.operator_()), ", got ", Quote(req.values(0))));
    }
    for (int j = 0; j < req.values_size(); ++j) {
      TOLLGATE_RETURN_IF_ERROR(r.At(Index(vpath, j), core::ValidateLabelValue(req.values(j))));
    }
    out.match_expressions.push_back(core::LabelSelectorRequirement{
        req.key(), req.operator_(), {req.values().begin(), req.values().end()}});
  }
  return out;
}

void TolerationsToProto(const std::vector<core::Toleration>& tols,
                        RepeatedPtrField<v1::Toleration>* out) {
  for (const core::Toleration& t : tols) {
    v1::Toleration* pt = out->Add();
    pt->set_key(t.key);
    pt->set_operator_(t.op);
    pt->set_value(t.value);
    pt->set_effect(t.effect);
    if (t.toleration_seconds.has_value()) pt->set_toleration_seconds(*t.toleration_seconds);
  }
}

void LabelsToProto(const core::Labels& labels, StringMap* out) {
  for (const auto& [k, v] : labels) (*out)[k] = v;
}

}  // namespace tollgate::api::codec
