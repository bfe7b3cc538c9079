#include "adapters/kube/kube_adapter.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"

namespace tollgate::kube {
namespace {

class ResumeFileTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(dir_, test_support::MakeScratchDir("tollgate_resume_file"));
    path_ = dir_ + "/kube.state";
  }
  void TearDown() override { test_support::RemoveScratchDir(dir_); }
  std::string dir_;
  std::string path_;
};

TEST_F(ResumeFileTest, RoundTripsRevisionAndStoreIdentity) {
  ASSERT_TRUE(WriteResumeFile(path_, ResumePoint{.revision = 42,
                                                 .store_id = "0123456789abcdef0123456789abcdef",
                                                 .store_epoch = 3})
                  .ok());
  const ResumePoint point = ReadResumeFile(path_);
  EXPECT_EQ(point.revision, 42);
  EXPECT_EQ(point.store_id, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(point.store_epoch, 3);
  EXPECT_EQ(ReadRevisionFile(path_), 42);
}

// A state file from before store identities holds the revision alone; it resumes without an
// identity (the server then checks only that the revision is not ahead of it).
TEST_F(ResumeFileTest, RevisionOnlyFileStillReads) {
  std::ofstream(path_) << "17\n";
  const ResumePoint point = ReadResumeFile(path_);
  EXPECT_EQ(point.revision, 17);
  EXPECT_EQ(point.store_id, "");
  EXPECT_EQ(point.store_epoch, 0);
}

TEST_F(ResumeFileTest, MissingOrGarbageFileStartsFromZero) {
  EXPECT_EQ(ReadResumeFile(path_).revision, 0);
  std::ofstream(path_) << "not a revision\n";
  const ResumePoint point = ReadResumeFile(path_);
  EXPECT_EQ(point.revision, 0);
  EXPECT_EQ(point.store_id, "");
  std::ofstream(path_) << "-5 abc 1\n";
  EXPECT_EQ(ReadResumeFile(path_).revision, 0);
}

}  // namespace
}  // namespace tollgate::kube
