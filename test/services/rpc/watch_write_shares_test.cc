#include "services/rpc/watch_write_shares.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tollgate::rpc {
namespace {

// A stream as the shares see it: a name, and the events it has written.
struct FakeWriter {
  std::string name;
  int written = 0;
};

using Shares = WatchWriteShares<FakeWriter>;

const absl::Time kStart = absl::FromUnixSeconds(1767225600);

TEST(WatchWriteSharesTest, AnIdentityAtItsLimitWaitsAndCompletionsServeItsStreamsInTurn) {
  Shares shares({.writes_per_identity = 1, .stuck_after = absl::Hours(1)});
  Shares::Share* share = shares.Join("user:alice");
  FakeWriter a{"a"}, b{"b"}, c{"c"};
  ASSERT_TRUE(shares.Acquire(*share, &a, kStart));
  EXPECT_FALSE(shares.Acquire(*share, &b, kStart));
  EXPECT_FALSE(shares.Acquire(*share, &c, kStart));

  // Every stream always has more to write: each completion hands the slot to the next one
  // waiting and queues the writer behind it, so none is served twice before another once.
  std::vector<std::string> order;
  FakeWriter* holder = &a;
  for (int i = 0; i < 9; ++i) {
    order.push_back(holder->name);
    ++holder->written;
    FakeWriter* next = shares.Release(*share, holder, kStart);
    ASSERT_NE(next, nullptr) << "a stream waited while its identity had a free slot";
    EXPECT_FALSE(shares.Acquire(*share, holder, kStart));
    holder = next;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "a", "b", "c", "a", "b", "c"}));
  EXPECT_EQ(a.written, 3);
  EXPECT_EQ(b.written, 3);
  EXPECT_EQ(c.written, 3);
}

TEST(WatchWriteSharesTest, IdentitiesDoNotShareSlots) {
  Shares shares({.writes_per_identity = 2, .stuck_after = absl::Hours(1)});
  Shares::Share* stalled = shares.Join("user:stalled");
  std::deque<FakeWriter> many(1000);
  int admitted = 0;
  for (FakeWriter& writer : many) admitted += shares.Acquire(*stalled, &writer, kStart) ? 1 : 0;
  EXPECT_EQ(admitted, 2);

  Shares::Share* active = shares.Join("user:active");
  FakeWriter reader{"reader"};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(shares.Acquire(*active, &reader, kStart)) << "write " << i;
    EXPECT_EQ(shares.Release(*active, &reader, kStart), nullptr);
  }
}

TEST(WatchWriteSharesTest, AClosedStreamFreesItsSlotAndLeavesTheQueue) {
  Shares shares({.writes_per_identity = 1, .stuck_after = absl::Hours(1)});
  Shares::Share* share = shares.Join("peer:ipv4:127.0.0.1:4000");
  FakeWriter closing{"closing"}, withdrawn{"withdrawn"}, waiting{"waiting"};
  ASSERT_TRUE(shares.Acquire(*share, &closing, kStart));
  EXPECT_FALSE(shares.Acquire(*share, &withdrawn, kStart));
  EXPECT_FALSE(shares.Acquire(*share, &waiting, kStart));

  // A waiting stream that ends leaves the queue; withdrawing it again finds nothing.
  EXPECT_TRUE(shares.Withdraw(*share, &withdrawn));
  EXPECT_FALSE(shares.Withdraw(*share, &withdrawn));
  // The holder's last write completes (its client went away): the slot goes to the stream
  // still waiting, not to the withdrawn one.
  EXPECT_EQ(shares.Release(*share, &closing, kStart), &waiting);
  EXPECT_FALSE(shares.Withdraw(*share, &waiting)) << "a stream holding a slot is not queued";
  EXPECT_EQ(shares.Release(*share, &waiting, kStart), nullptr);
  // Nothing is held now: the next write of the identity starts at once.
  FakeWriter later{"later"};
  EXPECT_TRUE(shares.Acquire(*share, &later, kStart));
}

TEST(WatchWriteSharesTest, AStuckWriteStopsCountingAndItsLateCompletionHandsNothingOn) {
  Shares shares({.writes_per_identity = 1, .stuck_after = absl::Milliseconds(50)});
  Shares::Share* share = shares.Join("user:alice");
  FakeWriter hung{"hung"}, reader{"reader"};
  ASSERT_TRUE(shares.Acquire(*share, &hung, kStart));
  EXPECT_FALSE(shares.Acquire(*share, &reader, kStart));

  // A write that goes on within its turn renews the slot: not stuck 50 ms after the first.
  EXPECT_TRUE(shares.Renew(*share, &hung, kStart + absl::Milliseconds(30)));
  EXPECT_TRUE(shares.ReleaseStuck(kStart + absl::Milliseconds(79)).empty());
  EXPECT_TRUE(shares.AnyHeld());
  const std::vector<FakeWriter*> granted = shares.ReleaseStuck(kStart + absl::Milliseconds(80));
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0], &reader);

  // The hung write completes at last: its slot was handed on already, so it can neither go on
  // with it nor hand it over.
  EXPECT_FALSE(shares.Renew(*share, &hung, kStart + absl::Seconds(1)));
  EXPECT_EQ(shares.Release(*share, &hung, kStart + absl::Seconds(1)), nullptr);
  EXPECT_EQ(shares.Release(*share, &reader, kStart + absl::Seconds(1)), nullptr);
  EXPECT_FALSE(shares.AnyHeld());

  // A stuck write with nobody waiting just stops counting.
  ASSERT_TRUE(shares.Acquire(*share, &hung, kStart + absl::Seconds(2)));
  EXPECT_TRUE(shares.ReleaseStuck(kStart + absl::Seconds(3)).empty());
  EXPECT_FALSE(shares.AnyHeld());
  EXPECT_TRUE(shares.Acquire(*share, &reader, kStart + absl::Seconds(3)));
}

TEST(WatchWriteSharesTest, AnIdentityIsForgottenWhenItsLastStreamLeaves) {
  Shares shares({.writes_per_identity = 1, .stuck_after = absl::Hours(1)});
  Shares::Share* first = shares.Join("user:alice");
  EXPECT_EQ(shares.Join("user:alice"), first);
  shares.Leave(first);
  EXPECT_EQ(shares.Join("user:alice"), first) << "one stream is still open";
  shares.Leave(first);
  shares.Leave(first);
  Shares::Share* again = shares.Join("user:alice");
  EXPECT_EQ(again->key(), "user:alice");
  FakeWriter writer{"w"};
  EXPECT_TRUE(shares.Acquire(*again, &writer, kStart));
}

}  // namespace
}  // namespace tollgate::rpc
