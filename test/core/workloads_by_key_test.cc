#include "core/workloads_by_key.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

class WorkloadsByKeyTest : public ::testing::Test {
 protected:
  WorkloadId Add(std::string namespace_name, std::string name) {
    auto wl = std::make_unique<Workload>();
    wl->id = static_cast<WorkloadId>(table_.size());
    wl->spec.namespace_name = std::move(namespace_name);
    wl->spec.name = std::move(name);
    table_.push_back(std::move(wl));
    index_.Insert(table_.back()->id);
    return table_.back()->id;
  }

  WorkloadsByKey::Table table_;
  WorkloadsByKey index_{&table_};
};

TEST_F(WorkloadsByKeyTest, FindsByNamespaceSlashName) {
  const WorkloadId a = Add("team-a", "train");
  const WorkloadId b = Add("team-b", "train");
  EXPECT_EQ(index_.Find("team-a/train"), a);
  EXPECT_EQ(index_.Find("team-b/train"), b);
  EXPECT_TRUE(index_.Contains("team-b/train"));
  EXPECT_EQ(index_.Find("team-c/train"), std::nullopt);
  // The split is at the first slash; a key with none never matches a namespaced workload.
  EXPECT_EQ(index_.Find("team-atrain"), std::nullopt);
  EXPECT_EQ(index_.Find("team-a/train/x"), std::nullopt);
  EXPECT_EQ(index_.Find(""), std::nullopt);
}

TEST_F(WorkloadsByKeyTest, NamespaceAndNameBoundaryMatters) {
  const WorkloadId ab = Add("a", "b-c");
  const WorkloadId a_b = Add("a-b", "c");
  EXPECT_EQ(index_.Find("a/b-c"), ab);
  EXPECT_EQ(index_.Find("a-b/c"), a_b);
}

TEST_F(WorkloadsByKeyTest, EraseRemovesOnlyThatWorkload) {
  const WorkloadId a = Add("ns", "a");
  const WorkloadId b = Add("ns", "b");
  index_.Erase(a);
  EXPECT_EQ(index_.Find("ns/a"), std::nullopt);
  EXPECT_EQ(index_.Find("ns/b"), b);
  EXPECT_EQ(index_.size(), 1u);
}

TEST_F(WorkloadsByKeyTest, SurvivesGrowth) {
  std::vector<WorkloadId> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(Add("ns", "wl-" + std::to_string(i)));
  for (int i = 0; i < 5000; i += 7) EXPECT_EQ(index_.Find("ns/wl-" + std::to_string(i)), ids[i]);
  EXPECT_EQ(index_.size(), 5000u);
}

}  // namespace
}  // namespace tollgate::core
