#pragma once

// kubectl's -l/--selector: Kubernetes label selector syntax, matched on the client.
//   a=b, a==b, a!=b, a in (x,y), a notin (x,y), a (exists), !a (does not exist)
// Requirements are separated by commas and must all hold. Pure.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"

namespace tollgate::cli {

class LabelSelector {
 public:
  // INVALID_ARGUMENT naming the selector and the part that does not parse.
  static absl::StatusOr<LabelSelector> Parse(absl::string_view text);

  bool Matches(const google::protobuf::Map<std::string, std::string>& labels) const;
  bool empty() const { return requirements_.empty(); }

 private:
  struct Requirement {
    enum class Op { kIn, kNotIn, kExists, kDoesNotExist } op;
    std::string key;
    std::vector<std::string> values;
  };
  std::vector<Requirement> requirements_;
};

}  // namespace tollgate::cli
