// EtcdClient against a real etcd: username/password authentication (tokens, their loss and
// renewal, a refused password) and Shutdown cancelling calls in flight.
#include "storage/etcd_client.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/etcd_store.h"
#include "test/status_matchers.h"
#include "test/support/etcd_cluster.h"

namespace tollgate::storage {
namespace {

using test_support::EtcdCluster;

constexpr char kPrefix[] = "/tollgate-auth/";
constexpr char kUser[] = "tollgate";
constexpr char kPassword[] = "tollgate-secret";

EtcdConnectionOptions ConnectionTo(const EtcdCluster& etcd) {
  EtcdConnectionOptions connection;
  connection.endpoints = {etcd.ClientEndpoint(0)};
  connection.rpc_timeout = absl::Seconds(5);
  return connection;
}

// Each test starts its own member: authentication is switched on for the whole cluster.
class EtcdAuthTest : public testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_SKIP_WITHOUT_ETCD();
    ASSERT_OK_AND_ASSIGN(etcd_, EtcdCluster::Start({}));
    ASSERT_OK(etcd_->EnableAuth("root-secret", kUser, kPassword, kPrefix));
  }

  EtcdStoreOptions StoreOptions() const {
    EtcdStoreOptions options;
    options.connection = ConnectionTo(*etcd_);
    options.connection.user = kUser;
    options.connection.password = kPassword;
    options.key_prefix = absl::StrCat(kPrefix, "store/");
    return options;
  }

  std::unique_ptr<EtcdCluster> etcd_;
};

TEST_F(EtcdAuthTest, UserWithPrefixRoleUsesTheStoreAndAuthenticatesAgainAfterTokenLoss) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdStore> store, EtcdStore::Open(StoreOptions()));
  WriteBatch first;
  first.Put("a", "1");
  first.AppendChange("first");
  ASSERT_OK_AND_ASSIGN(int64_t revision, store->Commit(first));
  EXPECT_EQ(revision, 1);
  ASSERT_OK(store->CompactChanges(1));
  // The leader compacts etcd's history with its change log (the store only logs a failure
  // there): the prefix role must allow it.
  etcdserverpb::RangeRequest range;
  range.set_key(absl::StrCat(kPrefix, "store/"));
  ASSERT_OK_AND_ASSIGN(etcdserverpb::RangeResponse read, store->client().Range(range));
  EXPECT_OK(store->client().Compact(read.header().revision()));

  // Simple tokens live in the member's memory: after a restart etcd refuses the one the client
  // holds, and the client must authenticate again on its own.
  ASSERT_OK(etcd_->Kill(0));
  ASSERT_OK(etcd_->Restart(0));
  ASSERT_OK(etcd_->WaitHealthy(absl::Seconds(30)));
  WriteBatch second;
  second.Put("b", "2");
  second.AppendChange("second");
  ASSERT_OK_AND_ASSIGN(revision, store->Commit(second));
  EXPECT_EQ(revision, 2);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get("a"));
  EXPECT_EQ(value, "1");

  // Without a user etcd answers nothing: no store.
  EtcdStoreOptions anonymous = StoreOptions();
  anonymous.connection.user.clear();
  anonymous.connection.password.clear();
  EXPECT_FALSE(EtcdStore::Open(anonymous).ok());
  // The role covers its prefix only.
  EtcdStoreOptions elsewhere = StoreOptions();
  elsewhere.key_prefix = "/somewhere-else/";
  absl::StatusOr<std::unique_ptr<EtcdStore>> outside = EtcdStore::Open(elsewhere);
  ASSERT_FALSE(outside.ok());
  EXPECT_TRUE(absl::StrContains(outside.status().message(), "permission denied"))
      << outside.status();
}

TEST_F(EtcdAuthTest, WrongPasswordIsRefusedAtConnectNamingTheUser) {
  EtcdConnectionOptions connection = ConnectionTo(*etcd_);
  connection.user = kUser;
  connection.password = "not-the-password";
  absl::StatusOr<std::unique_ptr<EtcdClient>> client = EtcdClient::Connect(connection);
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(client.status())) << client.status();
  EXPECT_TRUE(absl::StrContains(client.status().message(), "user \"tollgate\"")) << client.status();

  connection.password.clear();
  client = EtcdClient::Connect(connection);
  ASSERT_FALSE(client.ok());
  EXPECT_TRUE(absl::StrContains(client.status().message(), "password is empty")) << client.status();
}

TEST(EtcdClientTest, ShutdownCancelsCallsInFlightAndRefusesLaterOnes) {
  TOLLGATE_SKIP_WITHOUT_ETCD();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdCluster> etcd, EtcdCluster::Start({}));
  EtcdConnectionOptions connection = ConnectionTo(*etcd);
  connection.rpc_timeout = absl::Seconds(30);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EtcdClient> client, EtcdClient::Connect(connection));
  etcdserverpb::RangeRequest range;
  range.set_key("k");
  ASSERT_OK(client->Range(range).status());

  // A paused member answers nothing: the call would wait for its whole 30 s deadline.
  ASSERT_OK(etcd->Pause(0));
  absl::Notification calling;
  absl::Notification returned;
  absl::Status in_flight;
  std::thread caller([&] {
    calling.Notify();
    in_flight = client->Range(range).status();
    returned.Notify();
  });
  calling.WaitForNotification();
  // Either way the call must end at once with CANCELLED; this only makes "in flight" likely.
  EXPECT_FALSE(returned.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  const absl::Time shutdown = absl::Now();
  client->Shutdown();
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(5)))
      << "a call in flight outlived Shutdown";
  caller.join();
  EXPECT_LT(absl::Now() - shutdown, absl::Seconds(5));
  EXPECT_TRUE(absl::IsCancelled(in_flight)) << in_flight;
  EXPECT_TRUE(absl::IsCancelled(client->Range(range).status()));
  ASSERT_OK(etcd->Resume(0));
}

}  // namespace
}  // namespace tollgate::storage
