#include "web/dashboard_api.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_text.h"
#include "core/status_macros.h"
#include "google/protobuf/util/json_util.h"

namespace tollgate::web {
namespace {

std::string Param(const Params& params, const std::string& name) {
  auto it = params.find(name);
  return it == params.end() ? "" : it->second;
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  // Zero counts are numbers the dashboard shows, not absent fields.
  options.always_print_primitive_fields = true;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("cannot print JSON: ", status.ToString()));
  }
  return json;
}

absl::StatusOr<v1::ObjectKind> KindFromPath(absl::string_view kind) {
  static const auto* kKinds = new std::map<std::string, v1::ObjectKind, std::less<>>{
      {"clusterqueues", v1::CLUSTER_QUEUE},
      {"localqueues", v1::LOCAL_QUEUE},
      {"cohorts", v1::COHORT},
      {"resourceflavors", v1::RESOURCE_FLAVOR},
      {"workloadpriorityclasses", v1::WORKLOAD_PRIORITY_CLASS},
      {"priorityclasses", v1::PRIORITY_CLASS},
  };
  auto it = kKinds->find(kind);
  if (it == kKinds->end()) {
    std::vector<std::string> names;
    for (const auto& [name, value] : *kKinds) names.push_back(name);
    return absl::NotFoundError(
        absl::StrCat("kind \"", kind, "\" is not one of ", absl::StrJoin(names, ", ")));
  }
  return it->second;
}

// JSON string contents, without the quotes.
std::string EscapeJson(absl::string_view text) {
  std::string quoted = common::JsonQuote(text);
  return quoted.substr(1, quoted.size() - 2);
}

}  // namespace

absl::StatusOr<std::string> DashboardApi::ListObjects(absl::string_view kind,
                                                      const Params& params) {
  v1::ListObjectsRequest request;
  TOLLGATE_ASSIGN_OR_RETURN(v1::ObjectKind object_kind, KindFromPath(kind));
  request.set_kind(object_kind);
  request.set_namespace_(Param(params, "namespace"));
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse response, api_.ListObjects(request));
  return ToJson(response);
}

namespace {

// The workload as the visibility filter sees a pending item: its namespace, name and queues.
v1::Workload AsWorkload(const v1::PendingWorkload& item) {
  v1::Workload workload;
  workload.mutable_metadata()->set_namespace_(item.workload().namespace_());
  workload.mutable_metadata()->set_name(item.workload().name());
  workload.mutable_spec()->set_queue_name(item.local_queue());
  workload.mutable_status()->mutable_admission()->set_cluster_queue(item.cluster_queue());
  return workload;
}

void BlankInvisible(v1::ListPendingWorkloadsResponse& response, const Visible& visible) {
  if (visible == nullptr) return;
  for (v1::PendingWorkload& item : *response.mutable_items()) {
    if (visible(AsWorkload(item))) continue;
    item.clear_workload();
    item.clear_local_queue();
    item.clear_message();
  }
}

}  // namespace

absl::StatusOr<std::string> DashboardApi::ListWorkloads(const Params& params,
                                                        const Visible& visible) {
  v1::ListWorkloadsRequest request;
  request.set_namespace_(Param(params, "namespace"));
  request.set_queue_name(Param(params, "queue"));
  request.set_cluster_queue(Param(params, "clusterQueue"));
  const std::string state = absl::AsciiStrToUpper(Param(params, "state"));
  if (!state.empty()) {
    v1::WorkloadState value;
    if (!v1::WorkloadState_Parse(absl::StrCat("WORKLOAD_STATE_", state), &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("state: \"", Param(params, "state"),
                       "\" is not one of PENDING, QUOTA_RESERVED, ADMITTED, EVICTING, FINISHED"));
    }
    request.set_state(value);
  }
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse response, api_.ListWorkloads(request));
  if (visible != nullptr) {
    auto* workloads = response.mutable_workloads();
    int kept = 0;
    for (int i = 0; i < workloads->size(); ++i) {
      if (visible(workloads->Get(i))) workloads->SwapElements(kept++, i);
    }
    workloads->DeleteSubrange(kept, workloads->size() - kept);
  }
  return ToJson(response);
}

absl::StatusOr<std::string> DashboardApi::GetWorkload(absl::string_view namespace_name,
                                                      absl::string_view name,
                                                      const Visible& visible) {
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_(std::string(namespace_name));
  get.mutable_workload()->set_name(std::string(name));
  TOLLGATE_ASSIGN_OR_RETURN(v1::Workload workload, api_.GetWorkload(get));
  TOLLGATE_ASSIGN_OR_RETURN(std::string workload_json, ToJson(workload));
  std::string out = absl::StrCat("{\"workload\":", workload_json);
  if (workload.status().state() != v1::WORKLOAD_STATE_PENDING) return out + "}";

  // Its position, from Kueue's visibility list of its LocalQueue.
  v1::ListPendingWorkloadsRequest pending;
  pending.set_namespace_(std::string(namespace_name));
  pending.set_local_queue(workload.spec().queue_name());
  absl::StatusOr<v1::ListPendingWorkloadsResponse> positions = api_.ListPendingWorkloads(pending);
  std::string cluster_queue;
  if (positions.ok()) {
    for (const v1::PendingWorkload& item : positions->items()) {
      if (item.workload().name() != name) continue;
      TOLLGATE_ASSIGN_OR_RETURN(std::string item_json, ToJson(item));
      absl::StrAppend(&out, ",\"pending\":", item_json);
      cluster_queue = item.cluster_queue();
    }
  }
  if (cluster_queue.empty()) return out + "}";

  // Who holds the quota it waits for: every workload holding quota in a ClusterQueue of its
  // queue's cohort (or in its ClusterQueue alone when it has no cohort).
  v1::ListObjectsRequest list_cqs;
  list_cqs.set_kind(v1::CLUSTER_QUEUE);
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListObjectsResponse cqs, api_.ListObjects(list_cqs));
  std::string cohort;
  for (const v1::ConfigObject& object : cqs.objects()) {
    if (object.cluster_queue().metadata().name() == cluster_queue) {
      cohort = object.cluster_queue().spec().cohort();
    }
  }
  std::set<std::string> queues = {cluster_queue};
  if (!cohort.empty()) {
    for (const v1::ConfigObject& object : cqs.objects()) {
      if (object.cluster_queue().spec().cohort() == cohort) {
        queues.insert(object.cluster_queue().metadata().name());
      }
    }
  }
  std::vector<std::string> holders;
  for (v1::WorkloadState state : {v1::WORKLOAD_STATE_QUOTA_RESERVED, v1::WORKLOAD_STATE_ADMITTED,
                                  v1::WORKLOAD_STATE_EVICTING}) {
    v1::ListWorkloadsRequest list;
    list.set_state(state);
    TOLLGATE_ASSIGN_OR_RETURN(v1::ListWorkloadsResponse held, api_.ListWorkloads(list));
    for (const v1::Workload& wl : held.workloads()) {
      if (queues.count(wl.status().admission().cluster_queue()) == 0) continue;
      if (visible != nullptr && !visible(wl)) continue;
      TOLLGATE_ASSIGN_OR_RETURN(std::string json, ToJson(wl));
      holders.push_back(std::move(json));
    }
  }
  absl::StrAppend(&out, ",\"cohort\":\"", EscapeJson(cohort), "\",\"quotaHolders\":[",
                  absl::StrJoin(holders, ","), "]}");
  return out;
}

absl::StatusOr<std::string> DashboardApi::ListPending(const Params& params,
                                                      const Visible& visible) {
  v1::ListPendingWorkloadsRequest request;
  request.set_cluster_queue(Param(params, "clusterQueue"));
  request.set_namespace_(Param(params, "namespace"));
  request.set_local_queue(Param(params, "localQueue"));
  TOLLGATE_ASSIGN_OR_RETURN(v1::ListPendingWorkloadsResponse response,
                            api_.ListPendingWorkloads(request));
  BlankInvisible(response, visible);
  return ToJson(response);
}

absl::StatusOr<std::string> DashboardApi::TopologyUsage(const Params& params) {
  v1::GetTopologyUsageRequest request;
  request.set_flavor(Param(params, "flavor"));
  TOLLGATE_ASSIGN_OR_RETURN(v1::GetTopologyUsageResponse response, api_.GetTopologyUsage(request));
  return ToJson(response);
}

absl::Status DashboardApi::Stream(
    int64_t since_revision,
    const std::function<bool(int64_t revision, const std::string& json)>& send,
    const std::function<bool()>& cancelled, const Visible& visible) {
  v1::WatchRequest request;
  if (since_revision <= 0) {
    // Only what changes from now on: the page loads the current state through the list calls.
    since_revision = current_revision_();
  }
  request.set_since_revision(since_revision);
  return api_.Watch(
      request,
      [&](const v1::WatchEvent& event) {
        const v1::Workload& wl = event.workload();
        // Bookmarks carry no workload and always pass.
        if (visible != nullptr && event.type() != v1::WatchEvent::BOOKMARK && !visible(wl)) {
          return true;
        }
        const std::string json =
            absl::StrCat("{\"type\":\"", v1::WatchEvent::Type_Name(event.type()),
                         "\",\"revision\":", event.revision(), ",\"namespace\":\"",
                         EscapeJson(wl.metadata().namespace_()), "\",\"name\":\"",
                         EscapeJson(wl.metadata().name()), "\",\"state\":\"",
                         v1::WorkloadState_Name(wl.status().state()), "\",\"clusterQueue\":\"",
                         EscapeJson(wl.status().admission().cluster_queue()), "\"}");
        return send(event.revision(), json);
      },
      cancelled);
}

}  // namespace tollgate::web
