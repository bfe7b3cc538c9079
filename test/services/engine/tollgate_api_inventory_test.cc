// TollgateApi's node inventory (Topology Aware Scheduling, docs/topology.md) through the real
// executor: bad input names the field and changes nothing, nodes and reported pods survive a
// restart, the views count what is placed where, and a Topology a flavor names stays terminating.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "services/engine/tollgate_api.h"
#include "test/services/engine/executor_fixture.h"
#include "tollgate/v1/inventory.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

// A topology of racks and hosts, a topology flavor on it and a ClusterQueue of 8 GPUs.
constexpr char kObjects[] = R"pb(
  objects {
    topology {
      metadata { name: "default" }
      spec {
        levels { node_label: "rack" }
        levels { node_label: "kubernetes.io/hostname" }
      }
    }
  }
  objects {
    resource_flavor {
      metadata { name: "tas" }
      spec { topology_name: "default" }
    }
  }
  objects {
    cluster_queue {
      metadata { name: "cq" }
      spec {
        resource_groups {
          covered_resources: "gpu"
          flavors {
            name: "tas"
            resources { name: "gpu" nominal_quota: "8" }
          }
        }
      }
    }
  }
  objects {
    local_queue {
      metadata { name: "q" namespace: "team" }
      spec { cluster_queue: "cq" }
    }
  }
)pb";

v1::Node MakeNode(const std::string& name, const std::string& rack, const std::string& gpus) {
  v1::Node node;
  node.mutable_metadata()->set_name(name);
  (*node.mutable_metadata()->mutable_labels())["rack"] = rack;
  (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = name;
  (*node.mutable_status()->mutable_allocatable())["gpu"] = gpus;
  (*node.mutable_status()->mutable_allocatable())["pods"] = "10";
  return node;
}

class InventoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fixture_.Open(SettleByHand()).ok());
    v1::ApplyRequest apply;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kObjects, &apply));
    ASSERT_TRUE(api().Apply(apply).ok());
  }

  TollgateApi& api() { return *fixture_.api; }

  absl::Status Upsert(std::initializer_list<v1::Node> nodes) {
    v1::UpsertNodesRequest request;
    for (const v1::Node& n : nodes) *request.add_nodes() = n;
    return api().UpsertNodes(request).status();
  }

  int NodeCount() {
    absl::StatusOr<v1::ListNodesResponse> list = api().ListNodes(v1::ListNodesRequest());
    EXPECT_TRUE(list.ok()) << list.status();
    return list.ok() ? list->nodes_size() : -1;
  }

  ExecutorFixture fixture_;
};

TEST_F(InventoryTest, BadNodeNamesTheFieldAndChangesNothing) {
  v1::Node bad = MakeNode("x2", "r1", "four");
  absl::Status status = Upsert({MakeNode("x1", "r1", "4"), bad});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("nodes[1]: "));
  EXPECT_THAT(status.message(), HasSubstr("status.allocatable"));
  EXPECT_THAT(status.message(), HasSubstr("four"));
  EXPECT_EQ(NodeCount(), 0);

  status = Upsert({MakeNode("x1", "r1", "4"), MakeNode("x1", "r2", "4")});
  EXPECT_THAT(status.message(), HasSubstr("nodes[1].metadata.name: duplicate value"));
  EXPECT_EQ(NodeCount(), 0);

  v1::Node running = MakeNode("x1", "r1", "4");
  running.mutable_status()->set_ready(false);
  running.mutable_status()->add_running_workloads("no-namespace");
  status = Upsert({running});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("status.runningWorkloads[0]"));
  EXPECT_THAT(status.message(), HasSubstr("no-namespace"));
  EXPECT_EQ(NodeCount(), 0);

  v1::DeleteNodeRequest del;
  del.set_name("nowhere");
  EXPECT_EQ(api().DeleteNode(del).status().code(), absl::StatusCode::kNotFound);

  v1::ReportPodsRequest report;
  v1::NodePod* pod = report.add_pods();
  pod->set_name("ns/p");
  pod->set_node_name("x1");
  (*pod->mutable_requests())["gpu"] = "-1";
  status = api().ReportPods(report).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("pods[0].requests"));
}

// For Kueue's fixed node-failure delay: since when a node is not ready, as the feeder says or,
// when it does not, from the update that reported it; stored, so a restart keeps the count.
TEST_F(InventoryTest, ANotReadyNodesTimeIsTheFeedersOrTheServersAndSurvivesARestart) {
  v1::Node told = MakeNode("x1", "r1", "4");
  told.mutable_status()->set_ready(false);
  told.mutable_status()->mutable_not_ready_since()->set_seconds(1767225000);
  v1::Node untold = MakeNode("x2", "r1", "4");
  untold.mutable_status()->set_ready(false);
  ASSERT_TRUE(Upsert({told, untold}).ok());
  const int64_t first = absl::ToUnixSeconds(fixture_.clock.Now());
  // Sent again without a time 10 s later: still not ready since the first update.
  fixture_.clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(Upsert({untold}).ok());

  fixture_.Close();
  ASSERT_TRUE(fixture_.Open(SettleByHand()).ok());
  absl::StatusOr<v1::ListNodesResponse> list = api().ListNodes(v1::ListNodesRequest());
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_THAT(list->nodes(), SizeIs(2));
  EXPECT_EQ(list->nodes(0).node().status().not_ready_since().seconds(), 1767225000);
  EXPECT_EQ(list->nodes(1).node().status().not_ready_since().seconds(), first);

  // Ready again: the time is gone. A time on a ready node is refused, naming the field.
  ASSERT_TRUE(Upsert({MakeNode("x2", "r1", "4")}).ok());
  list = api().ListNodes(v1::ListNodesRequest());
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_FALSE(list->nodes(1).node().status().has_not_ready_since());
  v1::Node ready = MakeNode("x3", "r1", "4");
  ready.mutable_status()->mutable_not_ready_since()->set_seconds(1767225000);
  const absl::Status status = Upsert({ready});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("status.notReadySince"));
  EXPECT_EQ(NodeCount(), 2);
}

TEST_F(InventoryTest, NodesAndReportedPodsSurviveARestartAndTheViewsCountThem) {
  v1::Node not_ready = MakeNode("x3", "r2", "4");
  not_ready.mutable_status()->set_ready(false);
  not_ready.mutable_status()->add_running_workloads("team/b");
  not_ready.mutable_status()->add_running_workloads("team/a");
  ASSERT_TRUE(Upsert({MakeNode("x1", "r1", "4"), MakeNode("x2", "r2", "4"), not_ready}).ok());
  v1::ReportPodsRequest report;
  v1::NodePod* pod = report.add_pods();
  pod->set_name("kube-system/daemon");
  pod->set_node_name("x1");
  (*pod->mutable_requests())["gpu"] = "1";
  ASSERT_TRUE(api().ReportPods(report).ok());

  fixture_.Close();
  ASSERT_TRUE(fixture_.Open(SettleByHand()).ok());

  absl::StatusOr<v1::ListNodesResponse> list = api().ListNodes(v1::ListNodesRequest());
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_THAT(list->nodes(), SizeIs(3));
  EXPECT_EQ(list->nodes(0).node().metadata().name(), "x1");
  EXPECT_EQ(list->nodes(0).reported_pods(), 1);
  // Sorted, as the feeder compares what it sent.
  EXPECT_THAT(list->nodes(2).node().status().running_workloads(),
              ::testing::ElementsAre("team/a", "team/b"));
  EXPECT_EQ(list->nodes(0).free().at("gpu"), "3");
  ASSERT_THAT(list->nodes(0).flavors(), SizeIs(1));
  EXPECT_EQ(list->nodes(0).flavors(0), "tas");

  v1::GetNodeRequest get;
  get.set_name("x1");
  absl::StatusOr<v1::NodeDetails> details = api().GetNode(get);
  ASSERT_TRUE(details.ok()) << details.status();
  ASSERT_THAT(details->reported_pods(), SizeIs(1));
  EXPECT_EQ(details->reported_pods(0).name(), "kube-system/daemon");

  v1::GetTopologyUsageRequest usage;
  usage.set_flavor("tas");
  absl::StatusOr<v1::GetTopologyUsageResponse> tree = api().GetTopologyUsage(usage);
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_THAT(tree->flavors(), SizeIs(1));
  EXPECT_EQ(tree->flavors(0).topology(), "default");
  // Two racks and two hosts (x3 is not ready).
  EXPECT_THAT(tree->flavors(0).domains(), SizeIs(4));

  usage.set_flavor("missing");
  EXPECT_EQ(api().GetTopologyUsage(usage).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(InventoryTest, ATopologyAFlavorNamesTerminatesUntilNoFlavorNamesIt) {
  auto get = [&] {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(v1::TOPOLOGY);
    request.mutable_ref()->set_name("default");
    return api().GetObject(request);
  };
  auto del = [&](v1::ObjectKind kind, const std::string& name) {
    v1::DeleteObjectRequest request;
    request.mutable_ref()->set_kind(kind);
    request.mutable_ref()->set_name(name);
    return api().DeleteObject(request).status();
  };
  ASSERT_TRUE(del(v1::TOPOLOGY, "default").ok());
  absl::StatusOr<v1::ConfigObject> terminating = get();
  ASSERT_TRUE(terminating.ok()) << terminating.status();
  EXPECT_TRUE(terminating->topology().metadata().has_deletion_timestamp());
  // It still places pods while terminating.
  v1::UpsertNodesRequest nodes;
  *nodes.add_nodes() = MakeNode("x1", "r1", "4");
  ASSERT_TRUE(api().UpsertNodes(nodes).ok());
  v1::GetTopologyUsageRequest usage;
  usage.set_flavor("tas");
  absl::StatusOr<v1::GetTopologyUsageResponse> tree = api().GetTopologyUsage(usage);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_FALSE(tree->flavors(0).topology_missing());
  // The flavor's last user goes, then the flavor: the topology goes with it.
  ASSERT_TRUE(del(v1::CLUSTER_QUEUE, "cq").ok());
  ASSERT_TRUE(del(v1::RESOURCE_FLAVOR, "tas").ok());
  EXPECT_EQ(get().status().code(), absl::StatusCode::kNotFound);
}

TEST_F(InventoryTest, HostnameOnlyAsTheLowestLevel) {
  v1::ApplyRequest apply;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        objects {
          topology {
            metadata { name: "bad" }
            spec {
              levels { node_label: "kubernetes.io/hostname" }
              levels { node_label: "rack" }
            }
          }
        }
      )pb",
      &apply));
  absl::Status status = api().Apply(apply).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("spec.levels[0].nodeLabel"));
  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::TOPOLOGY);
  get.mutable_ref()->set_name("bad");
  EXPECT_EQ(api().GetObject(get).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tollgate::engine
