#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/strings/string_view.h"
#include "core/workload.h"
#include "core/workloads_by_key.h"

namespace tollgate::core {

// Every live workload, indexed by id (ids start at 1 and are never reused) and by its
// "namespace/name" key, with the changes not yet persisted: the dirty set (changed workloads)
// and the keys of deleted ones. It owns the workloads; what a change means for queues and quota
// is ClusterState's to decide. Not thread-safe.
class WorkloadTable {
 public:
  // Indexed by id; null for id 0 and for deleted workloads.
  using Slots = std::vector<std::unique_ptr<Workload>>;

  WorkloadTable() : ids_by_key_(&slots_) { slots_.push_back(nullptr); }
  // The key index points into the slots.
  WorkloadTable(const WorkloadTable&) = delete;
  WorkloadTable& operator=(const WorkloadTable&) = delete;

  const Workload* Get(WorkloadId id) const {
    if (id <= 0 || id >= static_cast<WorkloadId>(slots_.size())) return nullptr;
    return slots_[id].get();
  }
  Workload* GetMutable(WorkloadId id) {
    if (id <= 0 || id >= static_cast<WorkloadId>(slots_.size())) return nullptr;
    return slots_[id].get();
  }
  std::optional<WorkloadId> FindId(absl::string_view key) const { return ids_by_key_.Find(key); }
  const Workload* Find(absl::string_view key) const {
    std::optional<WorkloadId> id = ids_by_key_.Find(key);
    return id.has_value() ? slots_[*id].get() : nullptr;
  }
  Workload* FindMutable(absl::string_view key) {
    std::optional<WorkloadId> id = ids_by_key_.Find(key);
    return id.has_value() ? slots_[*id].get() : nullptr;
  }

  // The id the next Append assigns.
  WorkloadId next_id() const { return static_cast<WorkloadId>(slots_.size()); }
  // Takes the workload under the next id, without indexing its key (see Index).
  Workload& Append(std::unique_ptr<Workload> wl) {
    wl->id = next_id();
    slots_.push_back(std::move(wl));
    return *slots_.back();
  }
  // Indexes an appended workload's key; false (and nothing indexed) when another workload
  // already has it. Reads only the workload's names and the slots, so a helper thread may index
  // while another appends nothing and touches no key.
  bool Index(WorkloadId id) { return ids_by_key_.Insert(id); }
  // Room for `n` more workloads.
  void Reserve(size_t n) {
    slots_.reserve(slots_.size() + n);
    ids_by_key_.reserve(ids_by_key_.size() + n);
  }
  // Drops the workload and records its key for TakeDeleted.
  void Erase(WorkloadId id);

  // The owner index: workloads by their owner's uid. A workload is indexed under the owner it
  // has when SetOwner (or IndexOwner, for one appended with its owner) is called.
  void SetOwner(WorkloadId id, WorkloadOwner owner);
  void IndexOwner(WorkloadId id);
  // The workloads whose owner has this uid, in id order.
  std::vector<WorkloadId> OwnedBy(absl::string_view owner_uid) const;

  // Every slot in id order, nulls included: the hot loops iterate it directly.
  const Slots& slots() const { return slots_; }
  // Every live workload, in id (submission) order.
  std::vector<const Workload*> All() const;

  void MarkDirty(WorkloadId id) { dirty_.insert(id); }
  bool IsDirty(WorkloadId id) const { return dirty_.contains(id); }
  bool HasUncommittedChanges() const { return !dirty_.empty() || !deleted_.empty(); }
  // Changed workloads in id order (deleted ones are reported by TakeDeleted instead).
  std::vector<WorkloadId> TakeDirty();
  std::vector<WorkloadKey> TakeDeleted();

 private:
  Slots slots_;
  WorkloadsByKey ids_by_key_;
  absl::btree_map<std::string, absl::btree_set<WorkloadId>, std::less<>> by_owner_;
  absl::btree_set<WorkloadId> dirty_;
  std::vector<WorkloadKey> deleted_;
};

}  // namespace tollgate::core
