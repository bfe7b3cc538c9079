#include "services/rpc/watch_hub.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "test/services/engine/executor_fixture.h"
#include "test/status_matchers.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::rpc {
namespace {

// Watch only, with the write share named by the client's "x-share" metadata: the hub's own
// rule, without the access gate (grpc_services.h's WatchShareKey names the identity there).
class WatchOnlyService
    : public v1::AdmissionService::WithCallbackMethod_Watch<v1::AdmissionService::Service> {
 public:
  explicit WatchOnlyService(WatchHub& hub) : hub_(hub) {}
  grpc::ServerWriteReactor<v1::WatchEvent>* Watch(grpc::CallbackServerContext* context,
                                                  const v1::WatchRequest* request) override {
    auto share = context->client_metadata().find("x-share");
    const std::string key = share == context->client_metadata().end()
                                ? std::string()
                                : std::string(share->second.data(), share->second.size());
    return hub_.Start(context, *request, absl::OkStatus(), {}, "", key);
  }

 private:
  WatchHub& hub_;
};

// One stream that reads on its own thread until it has seen `want` distinct ADDED workloads.
class Reader {
 public:
  Reader(v1::AdmissionService::Stub& stub, const std::string& share, int want) : want_(want) {
    context_.AddMetadata("x-share", share);
    context_.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    stream_ = stub.Watch(&context_, v1::WatchRequest());
    thread_ = std::thread([this] {
      v1::WatchEvent event;
      while (stream_->Read(&event)) {
        absl::MutexLock lock(&mu_);
        if (event.revision() < last_revision_) out_of_order_ = true;
        last_revision_ = event.revision();
        if (event.type() == v1::WatchEvent::ADDED) {
          names_.insert(event.workload().metadata().name());
          ++added_;
        }
        if (static_cast<int>(names_.size()) >= want_) break;
      }
      context_.TryCancel();
      stream_->Finish();
    });
  }
  ~Reader() { thread_.join(); }

  // Waits (up to the stream's deadline) until the thread is done; true if it saw everything.
  bool Done() {
    thread_.join();
    thread_ = std::thread([] {});
    absl::MutexLock lock(&mu_);
    return static_cast<int>(names_.size()) >= want_;
  }
  int added() {
    absl::MutexLock lock(&mu_);
    return added_;
  }
  bool out_of_order() {
    absl::MutexLock lock(&mu_);
    return out_of_order_;
  }

 private:
  const int want_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream_;
  absl::Mutex mu_;
  int64_t last_revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool out_of_order_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> names_ ABSL_GUARDED_BY(mu_);
  int added_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

class WatchHubTest : public testing::Test {
 protected:
  void Start(WatchHub::Options options) {
    ASSERT_OK(fx_.Open(engine::SettleByHand()));
    ASSERT_OK(fx_.ApplyOneQueue());
    hub_ = std::make_unique<WatchHub>(*fx_.executor, options);
    service_ = std::make_unique<WatchOnlyService>(*hub_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    if (hub_ != nullptr) hub_->Stop();
    if (server_ != nullptr) server_->Shutdown();
  }

  // A client on its own connection; `window_bytes` > 0 gives it a fixed HTTP/2 receive window
  // (BDP probing off): never read, its transport stops taking data once that much is buffered.
  std::unique_ptr<v1::AdmissionService::Stub> NewStub(int window_bytes = 0) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    if (window_bytes > 0) {
      args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
      args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, window_bytes);
    }
    return v1::AdmissionService::NewStub(grpc::CreateCustomChannel(
        absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials(), args));
  }

  void SubmitMany(const std::string& prefix, int count) {
    for (int i = 0; i < count; ++i) {
      ASSERT_OK(fx_.api->Submit(engine::OnePodSubmitRequest("team", absl::StrCat(prefix, i), "1"))
                    .status());
    }
  }

  // Waits until `done` holds, up to 30 s.
  static bool Await(const std::function<bool()>& done) {
    for (const absl::Time deadline = absl::Now() + absl::Seconds(30); absl::Now() < deadline;) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return done();
  }

  engine::ExecutorFixture fx_;
  std::unique_ptr<WatchHub> hub_;
  std::unique_ptr<WatchOnlyService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(WatchHubTest, StreamsSharingOneSlotEachSeeEveryEventInRevisionOrder) {
  WatchHub::Options options;
  options.writes_per_identity = 1;
  Start(options);
  SubmitMany("listed-", 40);

  auto stub = NewStub();
  std::vector<std::unique_ptr<Reader>> alice;
  for (int i = 0; i < 4; ++i) alice.push_back(std::make_unique<Reader>(*stub, "alice", 100));
  Reader bob(*stub, "bob", 100);
  SubmitMany("later-", 60);

  for (size_t i = 0; i < alice.size(); ++i) {
    EXPECT_TRUE(alice[i]->Done()) << "alice's stream " << i << " starved";
    EXPECT_FALSE(alice[i]->out_of_order()) << "alice's stream " << i;
    EXPECT_EQ(alice[i]->added(), 100) << "alice's stream " << i;
  }
  EXPECT_TRUE(bob.Done());
  EXPECT_FALSE(bob.out_of_order());
}

constexpr int kListed = 600;

TEST_F(WatchHubTest, AClosedStreamFreesItsIdentitysSlot) {
  WatchHub::Options options;
  options.writes_per_identity = 1;
  // Never counted out as stuck: only the hung stream's end can free the slot.
  options.stuck_after = absl::Hours(1);
  Start(options);
  // Far more than the hung client's window takes.
  SubmitMany("listed-", kListed);

  // Never read, with a 2 KiB window: once that and gRPC's write buffer are full its write stops
  // completing, holding alice's only slot.
  auto hung_stub = NewStub(2048);
  grpc::ClientContext hung_context;
  hung_context.AddMetadata("x-share", "alice");
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> hung =
      hung_stub->Watch(&hung_context, v1::WatchRequest());
  ASSERT_TRUE(Await([&] { return hub_->sent().events > 0; }));

  auto stub = NewStub();
  Reader reader(*stub, "alice", kListed);
  ASSERT_TRUE(Await([&] {
    const WatchHub::Slots slots = hub_->slots();
    return slots.held == 1 && slots.waiting == 1;
  })) << "held "
      << hub_->slots().held << ", waiting " << hub_->slots().waiting << ", read " << reader.added()
      << ", sent " << hub_->sent().events;
  EXPECT_LT(reader.added(), kListed)
      << "the reader listed everything while the hung stream held the "
         "identity's only slot";
  hung_context.TryCancel();
  EXPECT_TRUE(reader.Done()) << "the cancelled stream kept its identity's slot";
  EXPECT_TRUE(Await([&] { return hub_->open_streams() == 0; }));
  EXPECT_EQ(hub_->slots().held, 0);
}

TEST_F(WatchHubTest, AHungStreamDoesNotStarveItsIdentitysOtherStreams) {
  WatchHub::Options options;
  options.writes_per_identity = 1;
  Start(options);
  // Far more than the hung client's window takes.
  SubmitMany("listed-", kListed);

  auto hung_stub = NewStub(2048);
  grpc::ClientContext hung_context;
  hung_context.AddMetadata("x-share", "alice");
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> hung =
      hung_stub->Watch(&hung_context, v1::WatchRequest());
  ASSERT_TRUE(Await([&] { return hub_->sent().events > 0; }));

  auto stub = NewStub();
  Reader reader(*stub, "alice", kListed + 50);
  SubmitMany("later-", 50);
  EXPECT_TRUE(reader.Done()) << "a hung stream starved another stream of its identity";
  EXPECT_FALSE(reader.out_of_order());
  hung_context.TryCancel();
}

}  // namespace
}  // namespace tollgate::rpc
