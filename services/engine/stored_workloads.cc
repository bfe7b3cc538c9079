#include "services/engine/stored_workloads.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "google/protobuf/arena.h"
#include "services/api/api_codec.h"
#include "services/engine/state_keys.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::engine {
namespace {

// The key the executor writes a workload under: kWorkloadPrefix + "<namespace>/<name>".
bool IsKeyOf(absl::string_view key, const v1::ObjectMeta& meta) {
  const std::string& ns = meta.namespace_();
  const std::string& name = meta.name();
  if (key.size() != kWorkloadPrefix.size() + ns.size() + 1 + name.size()) return false;
  if (!absl::ConsumePrefix(&key, kWorkloadPrefix) || !absl::ConsumePrefix(&key, ns) ||
      !absl::ConsumePrefix(&key, "/")) {
    return false;
  }
  return key == name;
}

}  // namespace

int StoredWorkloadParser::DefaultHelpers() {
  return std::max(1u, std::thread::hardware_concurrency()) - 1;
}

StoredWorkloadParser::StoredWorkloadParser(int helpers)
    : helpers_(std::max(0, helpers)), current_(NewBatch()) {}

std::unique_ptr<StoredWorkloadParser::Batch> StoredWorkloadParser::NewBatch() {
  auto batch = std::make_unique<Batch>();
  // Room for typical records (a pending workload is ~200 bytes), so a batch rarely regrows.
  batch->bytes.reserve(kRecordsPerBatch * 256);
  batch->sizes.reserve(kRecordsPerBatch);
  return batch;
}

StoredWorkloadParser::~StoredWorkloadParser() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void StoredWorkloadParser::Add(absl::string_view key, absl::string_view value) {
  current_->bytes.append(key.data(), key.size());
  current_->bytes.append(value.data(), value.size());
  current_->sizes.emplace_back(static_cast<uint32_t>(key.size()),
                               static_cast<uint32_t>(value.size()));
  if (current_->sizes.size() == kRecordsPerBatch) {
    Submit(std::move(current_), /*start_helpers=*/true);
    current_ = NewBatch();
  }
}

void StoredWorkloadParser::Submit(std::unique_ptr<Batch> batch, bool start_helpers) {
  Batch* raw = batch.get();
  batches_.push_back(std::move(batch));
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(raw);
  }
  if (start_helpers && threads_.empty()) {
    for (int i = 0; i < helpers_; ++i) threads_.emplace_back([this] { Drain(true); });
  }
}

void StoredWorkloadParser::Drain(bool wait_for_more) {
  while (true) {
    Batch* batch = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (wait_for_more) {
        mu_.Await(absl::Condition(
            +[](StoredWorkloadParser* p)
                 ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return p->closed_ || !p->queue_.empty(); },
            this));
      }
      if (queue_.empty()) return;
      batch = queue_.front();
      queue_.pop_front();
    }
    Parse(*batch);
  }
}

void StoredWorkloadParser::Parse(Batch& batch) {
  batch.parsed.resize(batch.sizes.size());
  // The protos live on an arena that is reset every few records: Clear() would free and
  // reallocate every submessage and string of every record. The block stays in cache.
  constexpr size_t kRecordsPerArena = 128;
  std::vector<char> block(512 << 10);
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = block.data();
  arena_options.initial_block_size = block.size();
  google::protobuf::Arena arena(arena_options);
  size_t offset = 0;
  for (size_t i = 0; i < batch.sizes.size(); ++i) {
    const auto [key_size, value_size] = batch.sizes[i];
    const absl::string_view key(batch.bytes.data() + offset, key_size);
    const absl::string_view value(batch.bytes.data() + offset + key_size, value_size);
    offset += key_size + value_size;
    if (!batch.error.ok()) continue;  // only the first failure is reported
    if (i % kRecordsPerArena == 0) arena.Reset();
    v1::Workload& proto = *google::protobuf::Arena::CreateMessage<v1::Workload>(&arena);
    if (!proto.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
      batch.error = absl::DataLossError(absl::StrCat("store key ", key, " is not a Workload"));
      continue;
    }
    absl::StatusOr<core::Workload> wl = api::WorkloadFromStoredProto(proto);
    if (!wl.ok()) {
      batch.error =
          absl::DataLossError(absl::StrCat("store key ", key, ": ", wl.status().message()));
      continue;
    }
    // Restart orders equal creation times by key, which is only sound if each key belongs to
    // the workload stored under it.
    if (!IsKeyOf(key, proto.metadata())) {
      batch.error = absl::DataLossError(absl::StrCat("store key ", key, " holds workload ",
                                                     proto.metadata().namespace_(), "/",
                                                     proto.metadata().name()));
      continue;
    }
    wl->resource_version = proto.metadata().resource_version();
    batch.parsed[i] = std::make_unique<core::Workload>(*std::move(wl));
  }
  // The record bytes are no longer needed; free them while other batches are still parsing.
  std::string().swap(batch.bytes);
}

absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> StoredWorkloadParser::Finish() {
  // The last, partial batch alone is not worth starting a thread for.
  if (!current_->sizes.empty()) Submit(std::move(current_), /*start_helpers=*/false);
  current_ = NewBatch();
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  Drain(false);
  for (std::thread& t : threads_) t.join();
  threads_.clear();

  size_t total = 0;
  for (const std::unique_ptr<Batch>& batch : batches_) {
    if (!batch->error.ok()) return batch->error;
    total += batch->parsed.size();
  }
  std::vector<std::unique_ptr<core::Workload>> out;
  out.reserve(total);
  for (std::unique_ptr<Batch>& batch : batches_) {
    for (std::unique_ptr<core::Workload>& wl : batch->parsed) out.push_back(std::move(wl));
  }
  batches_.clear();
  return out;
}

absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> ParseStoredWorkloads(
    const std::vector<std::pair<std::string, std::string>>& stored) {
  StoredWorkloadParser parser;
  for (const auto& [key, value] : stored) parser.Add(key, value);
  return parser.Finish();
}

}  // namespace tollgate::engine
