#include "services/api/multikueue_codec.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/host_port.h"
#include "core/multikueue_checks.h"
#include "core/status_macros.h"
#include "services/api/api_validation.h"

namespace tollgate::api {
namespace {

using codec::CheckMaxItems;
using codec::CheckMinItems;
using codec::CheckObjectSize;
using codec::CheckOneOf;
using codec::Index;
using codec::NameRule;
using codec::Quote;
using codec::Reporter;
using codec::TimeFromProto;
using codec::TimeToProto;
using codec::ValidateMetadata;
using codec::ValidateName;

constexpr size_t kMaxPathBytes = 4096;

// A file the manager reads: an absolute path (the daemon's working directory is no contract).
absl::Status ValidateFile(const Reporter& r, absl::string_view path, absl::string_view file,
                          bool required) {
  if (file.empty()) {
    return required ? r.Invalid(path, "is required") : absl::OkStatus();
  }
  if (!absl::StartsWith(file, "/")) {
    return r.Invalid(path, absl::StrCat(Quote(file), " is not an absolute path"));
  }
  if (file.size() > kMaxPathBytes) {
    return r.Invalid(path, absl::StrCat(Quote(file), " is longer than ", kMaxPathBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<core::MultiKueueKubeConfig> KubeConfigFromProto(const Reporter& r,
                                                               const v1::MultiKueueKubeConfig& k) {
  core::MultiKueueKubeConfig out;
  TOLLGATE_RETURN_IF_ERROR(CheckOneOf(r, "spec.kubeConfig.locationType", k.location_type(),
                                      {"Secret", "Path"}, /*allow_empty=*/true));
  out.location_type = k.location_type() == "Path" ? core::KubeConfigLocationType::kPath
                                                  : core::KubeConfigLocationType::kSecret;
  if (out.location_type == core::KubeConfigLocationType::kPath) {
    TOLLGATE_RETURN_IF_ERROR(
        ValidateFile(r, "spec.kubeConfig.location", k.location(), /*required=*/true));
  } else {
    // A Secret in the namespace tollgate-kube runs in.
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, "spec.kubeConfig.location", k.location(), /*label=*/false));
  }
  out.location = k.location();
  return out;
}

absl::StatusOr<core::MultiKueueWorkerEndpoint> EndpointFromProto(
    const Reporter& r, const v1::MultiKueueWorkerEndpoint& e) {
  core::MultiKueueWorkerEndpoint out;
  if (e.address().empty()) return r.Invalid("spec.endpoint.address", "is required");
  absl::StatusOr<common::HostPort> host_port =
      common::ParseHostPort(e.address(), "address", /*allow_port_zero=*/false);
  if (!host_port.ok()) {
    return r.Invalid("spec.endpoint.address",
                     absl::StrCat(Quote(e.address()), " is not host:port with a port"));
  }
  out.address = e.address();
  out.insecure = e.insecure();
  if (out.insecure) {
    // As tollgated listens: plaintext only on loopback.
    if (!common::IsLoopbackHost(host_port->host)) {
      return r.Invalid(
          "spec.endpoint.insecure",
          absl::StrCat("is allowed only to a loopback address, got ", Quote(e.address())));
    }
    for (const auto& [field, value] :
         {std::pair{"caFile", &e.ca_file()}, std::pair{"certFile", &e.cert_file()},
          std::pair{"keyFile", &e.key_file()}}) {
      if (!value->empty()) {
        return r.Invalid(
            absl::StrCat("spec.endpoint.", field),
            absl::StrCat("must be empty with spec.endpoint.insecure, got ", Quote(*value)));
      }
    }
  } else {
    TOLLGATE_RETURN_IF_ERROR(ValidateFile(r, "spec.endpoint.caFile", e.ca_file(),
                                          /*required=*/true));
  }
  TOLLGATE_RETURN_IF_ERROR(ValidateFile(r, "spec.endpoint.certFile", e.cert_file(), false));
  TOLLGATE_RETURN_IF_ERROR(ValidateFile(r, "spec.endpoint.keyFile", e.key_file(), false));
  if (e.cert_file().empty() != e.key_file().empty()) {
    return r.Invalid(e.cert_file().empty() ? "spec.endpoint.certFile" : "spec.endpoint.keyFile",
                     "is required with the other of certFile and keyFile (mutual TLS needs both)");
  }
  TOLLGATE_RETURN_IF_ERROR(ValidateFile(r, "spec.endpoint.tokenFile", e.token_file(), false));
  out.ca_file = e.ca_file();
  out.cert_file = e.cert_file();
  out.key_file = e.key_file();
  out.token_file = e.token_file();
  return out;
}

}  // namespace

absl::StatusOr<core::MultiKueueConfigSpec> MultiKueueConfigFromProto(
    const v1::MultiKueueConfig& config) {
  const Reporter r("MultiKueueConfig", "", config.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, config.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, config.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  core::MultiKueueConfigSpec out;
  out.name = config.metadata().name();
  const auto& clusters = config.spec().clusters();
  TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, "spec.clusters", clusters.size(), 1));
  TOLLGATE_RETURN_IF_ERROR(
      CheckMaxItems(r, "spec.clusters", clusters.size(), core::kMaxMultiKueueConfigClusters));
  std::set<std::string> seen;
  for (int i = 0; i < clusters.size(); ++i) {
    const std::string path = Index("spec.clusters", static_cast<size_t>(i));
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, path, clusters[i], /*label=*/false));
    if (!seen.insert(clusters[i]).second) {
      return r.Invalid(path, absl::StrCat(Quote(clusters[i]), " is named twice"));
    }
    out.clusters.push_back(clusters[i]);
  }
  return out;
}

absl::StatusOr<core::MultiKueueClusterSpec> MultiKueueClusterFromProto(
    const v1::MultiKueueCluster& cluster) {
  const Reporter r("MultiKueueCluster", "", cluster.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckObjectSize(r, cluster.ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, cluster.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/false));
  core::MultiKueueClusterSpec out;
  out.name = cluster.metadata().name();
  const v1::MultiKueueClusterSpec& s = cluster.spec();
  if (s.has_kube_config() && s.has_endpoint()) {
    return r.Invalid("spec", "kubeConfig and endpoint are mutually exclusive, got both");
  }
  if (s.has_kube_config()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.kube_config, KubeConfigFromProto(r, s.kube_config()));
  } else if (s.has_endpoint()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.endpoint, EndpointFromProto(r, s.endpoint()));
  } else {
    return r.Invalid("spec.kubeConfig", "is required (or spec.endpoint)");
  }
  return out;
}

absl::StatusOr<std::optional<core::Condition>> MultiKueueClusterActiveFromProto(
    const v1::MultiKueueCluster& cluster) {
  return ActiveConditionFromProto(Reporter("MultiKueueCluster", "", cluster.metadata().name()),
                                  cluster.status().conditions());
}

v1::MultiKueueConfig MultiKueueConfigToProto(const core::MultiKueueConfigSpec& config) {
  v1::MultiKueueConfig out;
  out.mutable_metadata()->set_name(config.name);
  for (const std::string& cluster : config.clusters) out.mutable_spec()->add_clusters(cluster);
  return out;
}

v1::MultiKueueCluster MultiKueueClusterToProto(const core::MultiKueueClusterSpec& cluster,
                                               const std::optional<core::Condition>& active) {
  v1::MultiKueueCluster out;
  out.mutable_metadata()->set_name(cluster.name);
  if (cluster.kube_config.has_value()) {
    v1::MultiKueueKubeConfig* k = out.mutable_spec()->mutable_kube_config();
    k->set_location(cluster.kube_config->location);
    k->set_location_type(cluster.kube_config->location_type == core::KubeConfigLocationType::kPath
                             ? "Path"
                             : "Secret");
  }
  if (cluster.endpoint.has_value()) {
    v1::MultiKueueWorkerEndpoint* e = out.mutable_spec()->mutable_endpoint();
    e->set_address(cluster.endpoint->address);
    e->set_ca_file(cluster.endpoint->ca_file);
    e->set_cert_file(cluster.endpoint->cert_file);
    e->set_key_file(cluster.endpoint->key_file);
    e->set_token_file(cluster.endpoint->token_file);
    e->set_insecure(cluster.endpoint->insecure);
  }
  if (active.has_value()) {
    v1::Condition* c = out.mutable_status()->add_conditions();
    c->set_type("Active");
    c->set_status(active->status ? "True" : "False");
    c->set_reason(active->reason);
    c->set_message(active->message);
    TimeToProto(active->last_transition_time, c->mutable_last_transition_time());
  }
  return out;
}

}  // namespace tollgate::api
