#include "core/multikueue_dispatcher.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

// The MultiKueue dispatchers, after Kueue's incrementaldispatcher_test.go (nomination rounds and
// step sizes, config order) and the nomination cases of the multikueue workload_test.go.

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);

TEST(DispatcherModeTest, KueuesNamesAndExternal) {
  EXPECT_EQ(DispatcherModeOf(kAllAtOnceDispatcherName), DispatcherMode::kAllAtOnce);
  EXPECT_EQ(DispatcherModeOf(kIncrementalDispatcherName), DispatcherMode::kIncremental);
  EXPECT_EQ(DispatcherModeOf("example.com/my-dispatcher"), DispatcherMode::kExternal);
  EXPECT_EQ(MultiKueueSettings{}.dispatcher_name, kAllAtOnceDispatcherName);
  EXPECT_EQ(MultiKueueSettings{}.incremental_step_size, 3);
  EXPECT_EQ(MultiKueueSettings{}.worker_lost_timeout, absl::Minutes(15));
  EXPECT_EQ(MultiKueueSettings{}.gc_interval, absl::Minutes(1));
  EXPECT_EQ(MultiKueueSettings{}.origin, "multikueue");
}

TEST(MayNominateTest, FollowsShouldSkipClusterNomination) {
  struct Case {
    std::string name;
    NominationGate gate;
    bool want;
  };
  const std::vector<Case> cases = {
      {"pending with quota", {true, false, CheckState::kPending, std::nullopt}, true},
      {"no quota reserved", {false, false, CheckState::kPending, std::nullopt}, false},
      {"finished", {true, true, CheckState::kPending, std::nullopt}, false},
      {"check ready", {true, false, CheckState::kReady, std::nullopt}, false},
      {"check rejected", {true, false, CheckState::kRejected, std::nullopt}, false},
      {"check retry", {true, false, CheckState::kRetry, std::nullopt}, false},
      {"already assigned to cluster", {true, false, CheckState::kPending, "assigned"}, false},
  };
  for (const Case& c : cases) EXPECT_EQ(MayNominate(c.gate), c.want) << c.name;
}

TEST(MayNominateTest, CopiesWaitForEveryOtherCheck) {
  auto check = [](std::string name, CheckState state) {
    AdmissionCheckState c;
    c.name = std::move(name);
    c.state = state;
    return c;
  };
  EXPECT_EQ(FirstOtherCheckNotReady(
                {check("approval", CheckState::kReady), check("multikueue", CheckState::kPending)},
                "multikueue"),
            std::nullopt);
  EXPECT_EQ(FirstOtherCheckNotReady(
                {check("approval", CheckState::kPending), check("budget", CheckState::kRetry),
                 check("multikueue", CheckState::kPending)},
                "multikueue"),
            "approval");
  EXPECT_EQ(FirstOtherCheckNotReady({check("multikueue", CheckState::kPending)}, "multikueue"),
            std::nullopt);
}

TEST(MayNominateTest, OnlyAllAtOnceAndComponentsWaitForOtherChecksToNominate) {
  EXPECT_FALSE(NominatesBeforeOtherChecksReady(DispatcherMode::kAllAtOnce, false));
  EXPECT_TRUE(NominatesBeforeOtherChecksReady(DispatcherMode::kIncremental, false));
  EXPECT_TRUE(NominatesBeforeOtherChecksReady(DispatcherMode::kExternal, false));
  EXPECT_FALSE(NominatesBeforeOtherChecksReady(DispatcherMode::kIncremental, true));
  EXPECT_FALSE(NominatesBeforeOtherChecksReady(DispatcherMode::kExternal, true));
}

TEST(IncrementalDispatcherTest, NominatesStepsInConfigOrder) {
  struct Case {
    std::string name;
    std::vector<std::string> clusters;
    std::vector<std::string> nominated;
    // Minutes since the last round started; unset: no round yet.
    std::optional<int> round_age_minutes;
    int step_size = 3;
    std::vector<std::string> want;
    bool want_changed;
    bool want_no_more_workers;
  };
  const std::vector<Case> cases = {
      {"one remote", {"A"}, {}, std::nullopt, 3, {"A"}, true, false},
      {"two remotes keep config order", {"B", "A"}, {}, std::nullopt, 3, {"B", "A"}, true, false},
      {"three remotes", {"C", "B", "A"}, {}, std::nullopt, 3, {"C", "B", "A"}, true, false},
      {"fifteen remotes: the first step only",
       {"O", "N", "M", "L", "K", "J", "I", "H", "G", "F", "E", "D", "C", "B", "A"},
       {},
       std::nullopt,
       3,
       {"O", "N", "M"},
       true,
       false},
      {"all already nominated (3)",
       {"C", "B", "A"},
       {"C", "B", "A"},
       std::nullopt,
       3,
       {"C", "B", "A"},
       false,
       true},
      {"all already nominated (1)", {"A"}, {"A"}, std::nullopt, 3, {"A"}, false, true},
      {"round expired, next set nominated",
       {"F", "E", "D", "C", "B", "A"},
       {"F", "E", "D"},
       6,
       3,
       {"F", "E", "D", "C", "B", "A"},
       true,
       false},
      {"round in progress, keep current",
       {"F", "E", "D", "C", "B", "A"},
       {"F", "E", "D"},
       1,
       3,
       {"F", "E", "D"},
       false,
       false},
      {"round ends exactly now: still in progress",
       {"F", "E", "D", "C", "B", "A"},
       {"F", "E", "D"},
       5,
       3,
       {"F", "E", "D"},
       false,
       false},
      {"round expired, nominate the rest",
       {"H", "G", "F", "E", "D", "C", "B", "A"},
       {"H", "G", "F", "E", "D", "C"},
       6,
       3,
       {"H", "G", "F", "E", "D", "C", "B", "A"},
       true,
       false},
      {"no remotes", {}, {}, std::nullopt, 3, {}, false, true},
      {"stepSize=2, first batch is exactly 2",
       {"E", "D", "C", "B", "A"},
       {},
       std::nullopt,
       2,
       {"E", "D"},
       true,
       false},
      {"stepSize=2, round expired: the next 2",
       {"E", "D", "C", "B", "A"},
       {"E", "D"},
       6,
       2,
       {"E", "D", "C", "B"},
       true,
       false},
  };
  for (const Case& c : cases) {
    NominationInput input;
    input.config_clusters = c.clusters;
    input.nominated = c.nominated;
    input.step_size = c.step_size;
    if (c.round_age_minutes.has_value()) {
      input.round = IncrementalRound{kNow - absl::Minutes(*c.round_age_minutes)};
    }
    const Nomination got = NominateIncremental(input, kNow);
    EXPECT_EQ(got.nominated, c.want) << c.name;
    EXPECT_EQ(got.changed, c.want_changed) << c.name;
    EXPECT_EQ(got.no_more_workers, c.want_no_more_workers) << c.name;
    if (c.want_changed) {
      ASSERT_TRUE(got.new_round.has_value()) << c.name;
      EXPECT_EQ(got.new_round->started, kNow) << c.name;
      EXPECT_EQ(got.recheck_at, kNow + kIncrementalRoundTimeout) << c.name;
    } else {
      EXPECT_FALSE(got.new_round.has_value()) << c.name;
    }
  }
}

TEST(IncrementalDispatcherTest, RoundInProgressAsksToLookAgainWhenItEnds) {
  NominationInput input;
  input.config_clusters = {"a", "b", "c", "d"};
  input.nominated = {"a", "b", "c"};
  input.round = IncrementalRound{kNow - absl::Minutes(2)};
  const Nomination got = NominateIncremental(input, kNow);
  EXPECT_FALSE(got.changed);
  EXPECT_EQ(got.recheck_at, kNow + absl::Minutes(3));
}

TEST(IncrementalDispatcherTest, WalksTheWholeConfigRoundByRound) {
  // Six workers, step 2: three rounds five minutes apart (and a moment), then nothing more.
  NominationInput input;
  input.config_clusters = {"w1", "w2", "w3", "w4", "w5", "w6"};
  input.step_size = 2;
  absl::Time now = kNow;
  std::vector<std::vector<std::string>> rounds;
  for (int i = 0; i < 4; ++i) {
    const Nomination got = NominateIncremental(input, now);
    if (got.no_more_workers) break;
    // Inside the round nothing moves.
    EXPECT_FALSE(
        NominateIncremental({input.config_clusters, {}, got.nominated, got.new_round, 2, {}},
                            now + absl::Minutes(4))
            .changed);
    rounds.push_back(got.nominated);
    input.nominated = got.nominated;
    input.round = got.new_round;
    now += kIncrementalRoundTimeout + absl::Seconds(1);
  }
  EXPECT_THAT(rounds, ElementsAre(ElementsAre("w1", "w2"), ElementsAre("w1", "w2", "w3", "w4"),
                                  ElementsAre("w1", "w2", "w3", "w4", "w5", "w6")));
  EXPECT_TRUE(NominateIncremental(input, now).no_more_workers);
}

TEST(IncrementalDispatcherTest, NomineesNeedNotBeConnected) {
  // Kueue nominates from the config; a nominee gets its copy when it connects.
  NominationInput input;
  input.config_clusters = {"w1", "w2"};
  input.connected = {"w2"};
  EXPECT_THAT(NominateIncremental(input, kNow).nominated, ElementsAre("w1", "w2"));
}

TEST(AllAtOnceDispatcherTest, NominatesEveryConnectedWorkerSorted) {
  NominationInput input;
  input.config_clusters = {"worker2", "worker3", "worker1"};
  input.connected = {"worker1", "worker2"};
  Nomination got = NominateAllAtOnce(input);
  EXPECT_THAT(got.nominated, ElementsAre("worker1", "worker2"));
  EXPECT_TRUE(got.changed);
  EXPECT_FALSE(got.recheck_at.has_value());

  // The same set in another order is not rewritten.
  input.nominated = {"worker2", "worker1"};
  got = NominateAllAtOnce(input);
  EXPECT_FALSE(got.changed);
  EXPECT_THAT(got.nominated, ElementsAre("worker2", "worker1"));

  // A worker that connects joins; one that drops leaves.
  input.connected = {"worker1", "worker3"};
  got = NominateAllAtOnce(input);
  EXPECT_TRUE(got.changed);
  EXPECT_THAT(got.nominated, ElementsAre("worker1", "worker3"));

  input.connected = {};
  got = NominateAllAtOnce(input);
  EXPECT_THAT(got.nominated, IsEmpty());
}

TEST(ExternalDispatcherTest, KeepsWhatTheOtherControllerStored) {
  NominationInput input;
  input.config_clusters = {"worker1", "worker2"};
  input.connected = {"worker1", "worker2"};
  input.nominated = {"worker2"};
  const Nomination got = Nominate(DispatcherMode::kExternal, input, kNow);
  EXPECT_THAT(got.nominated, ElementsAre("worker2"));
  EXPECT_FALSE(got.changed);
}

TEST(DispatcherTest, AComponentFollowingItsObjectIsNominatedThereAloneByEveryDispatcher) {
  NominationInput input;
  input.config_clusters = {"w1", "w2", "w3"};
  input.connected = {"w1", "w2", "w3"};
  input.only_on = "w2";
  for (DispatcherMode mode :
       {DispatcherMode::kAllAtOnce, DispatcherMode::kIncremental, DispatcherMode::kExternal}) {
    input.nominated = {"w1"};
    Nomination got = Nominate(mode, input, kNow);
    EXPECT_THAT(got.nominated, ElementsAre("w2"));
    EXPECT_TRUE(got.changed);
    EXPECT_FALSE(got.new_round.has_value());
    input.nominated = {"w2"};
    EXPECT_FALSE(Nominate(mode, input, kNow).changed);
  }
}

TEST(SyncCopiesTest, CopiesFollowTheNomination) {
  // worker1 nominated and connected without a copy: create; worker2 nominated with a copy:
  // keep; worker3 not nominated with a copy: remove; worker4 nominated but unreachable.
  const CopySync got = SyncCopies({"worker4", "worker2", "worker1"},
                                  {"worker1", "worker2", "worker3"}, {"worker2", "worker3"});
  EXPECT_EQ(got, (CopySync{{"worker1"}, {"worker3"}, {"worker4"}}));
  EXPECT_EQ(SyncCopies({}, {"worker1"}, {"worker1"}), (CopySync{{}, {"worker1"}, {}}));
}

}  // namespace
}  // namespace tollgate::core
