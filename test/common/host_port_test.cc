#include "common/host_port.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::common {
namespace {

using ::testing::HasSubstr;

TEST(HostPortTest, ParsesHostsPortsAndIpv6Literals) {
  absl::StatusOr<HostPort> v4 = ParseHostPort("127.0.0.1:50051", "--listen");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 50051);
  absl::StatusOr<HostPort> v6 = ParseHostPort("[::1]:0", "--listen");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
}

TEST(HostPortTest, RefusalsNameTheFlagTheValueAndWhy) {
  struct Case {
    const char* address;
    bool allow_port_zero;
    const char* why;
  };
  for (const Case& c :
       {Case{"localhost", true, "want HOST:PORT"}, Case{":9090", true, "the host is empty"},
        Case{"0.0.0.0:http", true, "not a number from 0 to 65535"},
        Case{"0.0.0.0:70000", true, "not a number from 0 to 65535"},
        Case{"etcd:0", false, "must not be 0"}}) {
    absl::Status status = ParseHostPort(c.address, "--metrics-listen", c.allow_port_zero).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.address;
    EXPECT_THAT(status.message(), HasSubstr(std::string("--metrics-listen=") + c.address + ": "));
    EXPECT_THAT(status.message(), HasSubstr(c.why)) << c.address;
  }
}

TEST(HostPortTest, WithPortReplacesOrAddsThePort) {
  EXPECT_EQ(WithPort("0.0.0.0:0", 43117), "0.0.0.0:43117");
  EXPECT_EQ(WithPort("[::1]:0", 9), "[::1]:9");
  EXPECT_EQ(WithPort("localhost", 9), "localhost:9");
  EXPECT_EQ(WithPort("[::1]", 9), "[::1]:9");
}

TEST(HostPortTest, LoopbackIsOnlyLoopback) {
  for (const char* address : {"127.0.0.1:50051", "127.1.2.3:1", "[::1]:0", "localhost:80",
                              "LOCALHOST:80", "ipv4:127.0.0.1:50051", "::1", "127.0.0.1"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0:50051", "[::]:0", "10.0.0.1:80", "localhost.example:80",
                              "128.0.0.1:1", "example.com:443"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

}  // namespace
}  // namespace tollgate::common
