#include "core/workload_table.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

std::unique_ptr<Workload> Named(std::string ns, std::string name) {
  auto wl = std::make_unique<Workload>();
  wl->spec.namespace_name = std::move(ns);
  wl->spec.name = std::move(name);
  return wl;
}

TEST(WorkloadTableTest, AppendAssignsIdsFromOneAndIndexFindsByKey) {
  WorkloadTable table;
  EXPECT_EQ(table.next_id(), 1);
  Workload& a = table.Append(Named("ml", "a"));
  Workload& b = table.Append(Named("ml", "b"));
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(b.id, 2);
  // Appended but not indexed yet: not found by key.
  EXPECT_EQ(table.Find("ml/a"), nullptr);
  EXPECT_TRUE(table.Index(a.id));
  EXPECT_TRUE(table.Index(b.id));
  EXPECT_EQ(table.Find("ml/a"), &a);
  EXPECT_EQ(table.FindId("ml/b"), b.id);
  EXPECT_EQ(table.Get(2), &b);
  EXPECT_EQ(table.Get(0), nullptr);
  EXPECT_EQ(table.Get(3), nullptr);
}

TEST(WorkloadTableTest, IndexRefusesASecondWorkloadWithTheSameKey) {
  WorkloadTable table;
  Workload& first = table.Append(Named("ml", "a"));
  Workload& second = table.Append(Named("ml", "a"));
  EXPECT_TRUE(table.Index(first.id));
  EXPECT_FALSE(table.Index(second.id));
  EXPECT_EQ(table.FindId("ml/a"), first.id);
}

TEST(WorkloadTableTest, EraseReportsTheTypedKeyOnceAndDropsItsDirtyMark) {
  WorkloadTable table;
  Workload& a = table.Append(Named("ml", "a"));
  Workload& b = table.Append(Named("research", "b"));
  ASSERT_TRUE(table.Index(a.id));
  ASSERT_TRUE(table.Index(b.id));
  table.MarkDirty(b.id);
  table.MarkDirty(a.id);
  const WorkloadId b_id = b.id;
  table.Erase(b_id);
  EXPECT_EQ(table.Get(b_id), nullptr);
  EXPECT_EQ(table.Find("research/b"), nullptr);
  EXPECT_FALSE(table.IsDirty(b_id));
  EXPECT_TRUE(table.HasUncommittedChanges());
  EXPECT_EQ(table.TakeDirty(), std::vector<WorkloadId>{1});
  const std::vector<WorkloadKey> deleted = table.TakeDeleted();
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0], (WorkloadKey{"research", "b"}));
  EXPECT_EQ(deleted[0].ToString(), "research/b");
  EXPECT_FALSE(table.HasUncommittedChanges());
  EXPECT_TRUE(table.TakeDeleted().empty());
  EXPECT_EQ(table.All().size(), 1u);
}

TEST(WorkloadTableTest, TakeDirtyIsInIdOrder) {
  WorkloadTable table;
  for (const char* name : {"a", "b", "c"}) table.Append(Named("ml", name));
  table.MarkDirty(3);
  table.MarkDirty(1);
  table.MarkDirty(3);
  EXPECT_EQ(table.TakeDirty(), (std::vector<WorkloadId>{1, 3}));
  EXPECT_TRUE(table.TakeDirty().empty());
}

}  // namespace
}  // namespace tollgate::core
