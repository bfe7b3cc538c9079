#include "core/config_registry.h"

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

TEST(ConfigRegistryTest, PriorityResolvesExplicitThenWorkloadClassThenPodClass) {
  ConfigRegistry registry;
  registry.PutPriorityClass({"high", 100, /*is_pod_priority_class=*/false});
  registry.PutPriorityClass({"high", 5, /*is_pod_priority_class=*/true});
  registry.PutPriorityClass({"pods-only", 7, /*is_pod_priority_class=*/true});
  WorkloadSpec spec;
  EXPECT_EQ(*registry.ResolvePriority(spec), 0);
  spec.priority_class_name = "high";
  EXPECT_EQ(*registry.ResolvePriority(spec), 100);
  spec.priority_class_name = "pods-only";
  EXPECT_EQ(*registry.ResolvePriority(spec), 7);
  spec.priority = 3;
  EXPECT_EQ(*registry.ResolvePriority(spec), 3);
  spec.priority.reset();
  spec.priority_class_name = "missing";
  absl::StatusOr<int32_t> missing = registry.ResolvePriority(spec);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("spec.priorityClassName"), std::string::npos);
  EXPECT_NE(missing.status().message().find("\"missing\""), std::string::npos);
  EXPECT_TRUE(registry.ErasePodPriorityClass("pods-only"));
  EXPECT_FALSE(registry.ErasePodPriorityClass("pods-only"));
}

TEST(ConfigRegistryTest, NamespaceSelectorSeesLabelsAndTheImplicitNameLabel) {
  ConfigRegistry registry;
  registry.PutNamespace({"ml", {{"team", "research"}}});
  ClusterQueueSpec cq;
  EXPECT_TRUE(registry.NamespaceMatches(cq, "anything"));
  cq.namespace_selector = LabelSelector{{{"team", "research"}}, {}};
  EXPECT_TRUE(registry.NamespaceMatches(cq, "ml"));
  EXPECT_FALSE(registry.NamespaceMatches(cq, "web"));
  cq.namespace_selector = LabelSelector{{{"kubernetes.io/metadata.name", "web"}}, {}};
  // Kubernetes labels every namespace with its name, also one never applied here.
  EXPECT_TRUE(registry.NamespaceMatches(cq, "web"));
}

TEST(ConfigRegistryTest, LocalQueuesAreKeyedByNamespaceAndName) {
  ConfigRegistry registry;
  registry.PutLocalQueue({"ml", "q", "cq", StopPolicy::kNone, 1.0});
  ASSERT_NE(registry.FindLocalQueue("ml", "q"), nullptr);
  EXPECT_EQ(registry.FindLocalQueue("ml", "q")->spec.cluster_queue, "cq");
  EXPECT_EQ(registry.FindLocalQueue("web", "q"), nullptr);
  EXPECT_EQ(registry.local_queues().begin()->first, LocalQueueKey("ml", "q"));
  EXPECT_TRUE(registry.EraseLocalQueue("ml", "q"));
  EXPECT_EQ(registry.FindLocalQueue("ml", "q"), nullptr);
}

}  // namespace
}  // namespace tollgate::core
