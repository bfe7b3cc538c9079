#include "cmd/tollgate/start_estimate_view.h"

#include "absl/strings/str_cat.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/table_printer.h"

namespace tollgate::cli {
namespace {

std::string Short(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return "now";
  if (d < absl::Minutes(1)) return absl::StrCat(absl::ToInt64Seconds(d), "s");
  if (d < absl::Hours(1)) return absl::StrCat(absl::ToInt64Minutes(d), "m");
  if (d < absl::Hours(48)) {
    const int64_t minutes = absl::ToInt64Minutes(d);
    return minutes % 60 == 0 ? absl::StrCat(minutes / 60, "h")
                             : absl::StrCat(minutes / 60, "h", minutes % 60, "m");
  }
  const int64_t hours = absl::ToInt64Hours(d);
  return hours % 24 == 0 ? absl::StrCat(hours / 24, "d")
                         : absl::StrCat(hours / 24, "d", hours % 24, "h");
}

std::string In(absl::Duration d) { return d <= absl::ZeroDuration() ? "now" : "in " + Short(d); }

}  // namespace

std::string StartEstimateCell(const v1::StartEstimate& e, absl::Time now) {
  switch (e.kind()) {
    case v1::StartEstimate::ESTIMATED: {
      const absl::Time likely = ToAbslTime(e.likely());
      std::string cell = Short(likely - now);
      if (e.has_late() && ToAbslTime(e.late()) > likely) {
        absl::StrAppend(&cell, "..", Short(ToAbslTime(e.late()) - now));
      }
      return cell;
    }
    case v1::StartEstimate::NOT_BEFORE:
      return absl::StrCat(">", Short(ToAbslTime(e.likely()) - now));
    default:
      return "unknown";
  }
}

std::string StartEstimateText(const v1::StartEstimate& e, absl::Time now) {
  switch (e.kind()) {
    case v1::StartEstimate::ESTIMATED: {
      std::string text =
          absl::StrCat(In(ToAbslTime(e.likely()) - now), " (", FormatTimestamp(e.likely()), ")");
      if (e.has_late()) absl::StrAppend(&text, ", p90 ", In(ToAbslTime(e.late()) - now));
      if (!e.basis().empty()) absl::StrAppend(&text, "; ", e.basis());
      return text;
    }
    case v1::StartEstimate::NOT_BEFORE:
      return absl::StrCat("not before ", In(ToAbslTime(e.likely()) - now), " (",
                          FormatTimestamp(e.likely()), "): ", e.reason());
    default:
      return absl::StrCat("unknown: ", e.reason().empty() ? "no estimate" : e.reason());
  }
}

absl::StatusOr<std::string> DescribeStartEstimate(Session& s, const v1::Workload& wl) {
  v1::ListPendingWorkloadsRequest request;
  request.set_namespace_(wl.metadata().namespace_());
  request.set_local_queue(QueueOf(wl));
  request.set_workload_name(wl.metadata().name());
  request.set_include_start_estimates(true);
  absl::StatusOr<v1::ListPendingWorkloadsResponse> response =
      s.client().ListPendingWorkloads(request);
  if (absl::IsNotFound(response.status())) return std::string();
  if (!response.ok()) return response.status();
  if (response->items_size() == 0 || !response->items(0).has_start_estimate()) {
    return std::string();
  }
  return StartEstimateText(response->items(0).start_estimate(), s.now());
}

}  // namespace tollgate::cli
