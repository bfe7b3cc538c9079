#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "core/workload.h"

namespace tollgate::core {

// Finds a workload by its "namespace/name" key. The set stores only ids and hashes the names
// the workloads already hold, so a million workloads cost 8-byte slots instead of a copy of
// every key (a flat_hash_map<std::string, WorkloadId> spent ~90 bytes per workload).
class WorkloadsByKey {
 public:
  using Table = std::vector<std::unique_ptr<Workload>>;

  // `table` (indexed by id) must outlive this index and hold every id inserted.
  explicit WorkloadsByKey(const Table* table)
      : ids_(0, KeyHash{table}, KeyEq{table}), table_(table) {}
  WorkloadsByKey(const WorkloadsByKey&) = delete;
  WorkloadsByKey& operator=(const WorkloadsByKey&) = delete;

  std::optional<WorkloadId> Find(absl::string_view key) const {
    auto it = ids_.find(SplitKey(key));
    if (it == ids_.end()) return std::nullopt;
    return *it;
  }
  bool Contains(absl::string_view key) const { return ids_.contains(SplitKey(key)); }
  // The workload must be in the table already. Returns false (and indexes nothing) when another
  // workload already has its key.
  bool Insert(WorkloadId id) { return ids_.insert(id).second; }
  void reserve(size_t n) { ids_.reserve(n); }
  void Erase(WorkloadId id) { ids_.erase(NameOf(*(*table_)[id])); }
  size_t size() const { return ids_.size(); }

 private:
  struct Name {
    absl::string_view namespace_name;
    absl::string_view name;
  };
  static Name NameOf(const Workload& wl) { return {wl.spec.namespace_name, wl.spec.name}; }
  // Namespaces and Kubernetes object names cannot contain '/'.
  static Name SplitKey(absl::string_view key) {
    const size_t slash = key.find('/');
    if (slash == absl::string_view::npos) return {absl::string_view(), key};
    return {key.substr(0, slash), key.substr(slash + 1)};
  }
  struct KeyHash {
    using is_transparent = void;
    const Table* table;
    size_t operator()(const Name& n) const { return absl::HashOf(n.namespace_name, n.name); }
    size_t operator()(WorkloadId id) const { return (*this)(NameOf(*(*table)[id])); }
  };
  struct KeyEq {
    using is_transparent = void;
    const Table* table;
    Name Of(const Name& n) const { return n; }
    Name Of(WorkloadId id) const { return NameOf(*(*table)[id]); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const Name x = Of(a);
      const Name y = Of(b);
      return x.namespace_name == y.namespace_name && x.name == y.name;
    }
  };

  absl::flat_hash_set<WorkloadId, KeyHash, KeyEq> ids_;
  const Table* table_;
};

}  // namespace tollgate::core
