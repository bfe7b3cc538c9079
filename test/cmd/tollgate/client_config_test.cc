#include "cmd/tollgate/client_config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tollgate::cli {
namespace {

class ClientConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(std::filesystem::temp_directory_path().string(), "/client_config_test.",
                        getpid());
    std::filesystem::create_directories(dir_);
    Write("token", "file-token\n");
    Write("config.yaml", absl::StrCat(R"(current-context: prod
contexts:
- name: prod
  server: prod.example:443
  certificate-authority: /ca.pem
  client-certificate: /me.pem
  client-key: /me.key
- name: dev
  server: 127.0.0.1:50051
  token-file: )",
                                      dir_, "/token\n"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(absl::StrCat(dir_, "/", name)) << text;
  }
  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }

  std::string dir_;
};

TEST_F(ClientConfigTest, CurrentContextFromTheConfigFile) {
  ConnectionInputs in;
  in.config_env = Path("config.yaml");
  absl::StatusOr<Connection> c = ResolveConnection(in);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "prod.example:443");
  EXPECT_EQ(c->certificate_authority, "/ca.pem");
  EXPECT_EQ(c->client_certificate, "/me.pem");
  EXPECT_EQ(c->client_key, "/me.key");
  EXPECT_TRUE(c->tls());
  EXPECT_EQ(c->token, "");
}

TEST_F(ClientConfigTest, FlagsBeatEnvironmentBeatsFile) {
  ConnectionInputs in;
  in.config_flag = Path("config.yaml");
  in.context_flag = "dev";
  absl::StatusOr<Connection> c = ResolveConnection(in);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "127.0.0.1:50051");
  EXPECT_EQ(c->token, "file-token");
  EXPECT_FALSE(c->tls());
  in.token_env = "env-token";
  in.server_env = "env:1";
  EXPECT_EQ(ResolveConnection(in)->token, "env-token");
  EXPECT_EQ(ResolveConnection(in)->server, "env:1");
  in.token_flag = "flag-token";
  in.server_flag = "flag:2";
  EXPECT_EQ(ResolveConnection(in)->token, "flag-token");
  EXPECT_EQ(ResolveConnection(in)->server, "flag:2");
}

TEST_F(ClientConfigTest, NoConfigIsPlaintextLoopback) {
  absl::StatusOr<Connection> c = ResolveConnection(ConnectionInputs());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server, "127.0.0.1:50051");
  EXPECT_FALSE(c->tls());
}

TEST_F(ClientConfigTest, ErrorsNameTheProblem) {
  ConnectionInputs in;
  in.config_flag = Path("config.yaml");
  in.context_flag = "staging";
  EXPECT_NE(ResolveConnection(in).status().message().find("no context named \"staging\""),
            std::string::npos);
  in = ConnectionInputs();
  in.config_flag = Path("missing.yaml");
  EXPECT_EQ(ResolveConnection(in).status().code(), absl::StatusCode::kNotFound);
  in = ConnectionInputs();
  in.cert_flag = "/me.pem";
  EXPECT_NE(ResolveConnection(in).status().message().find("needs its key"), std::string::npos);
  Write("bad.yaml", "contexts:\n- name: x\n  sever: typo:1\n");
  in = ConnectionInputs();
  in.config_flag = Path("bad.yaml");
  EXPECT_NE(ResolveConnection(in).status().message().find("contexts[0].sever: unknown field"),
            std::string::npos)
      << ResolveConnection(in).status();
  in = ConnectionInputs();
  in.ca_flag = Path("nope.pem");
  ASSERT_TRUE(ResolveConnection(in).ok());
  EXPECT_EQ(CredentialsFor(*ResolveConnection(in)).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tollgate::cli
