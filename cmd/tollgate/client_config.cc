#include "cmd/tollgate/client_config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/yaml_documents.h"
#include "grpcpp/security/credentials.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::cli {
namespace {

// The error names what the file is for ("client key ...: cannot read ...").
absl::StatusOr<std::string> ReadFile(absl::string_view what, const std::string& path) {
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(), absl::StrCat(what, ": ", text.status().message()));
  }
  return text;
}

struct ContextEntry {
  std::string server, ca, cert, key, token, token_file;
};

absl::StatusOr<ContextEntry> ReadContext(const std::string& path, const std::string& wanted) {
  absl::StatusOr<std::string> text = ReadFile("config file", path);
  if (!text.ok()) return text.status();
  auto bad = [&](absl::string_view field, absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", field, ": ", problem));
  };
  absl::StatusOr<YAML::Node> loaded = common::LoadYamlDocument(*text, path);
  if (!loaded.ok()) return loaded.status();
  try {
    const YAML::Node& root = *loaded;
    if (!root.IsMap()) return bad("(top level)", "want a mapping");
    const std::string name =
        !wanted.empty()
            ? wanted
            : (root["current-context"] ? root["current-context"].as<std::string>() : "");
    const YAML::Node contexts = root["contexts"];
    if (!contexts.IsSequence()) return bad("contexts", "want a list");
    for (size_t i = 0; i < contexts.size(); ++i) {
      const YAML::Node c = contexts[i];
      const std::string this_name = c["name"] ? c["name"].as<std::string>() : "";
      // With no context named anywhere, a file with one context uses it.
      if (!(this_name == name || (name.empty() && contexts.size() == 1))) continue;
      ContextEntry entry;
      for (const auto& item : c) {
        const std::string key = item.first.as<std::string>();
        const std::string value = item.second.as<std::string>();
        if (key == "name") continue;
        if (key == "server") {
          entry.server = value;
        } else if (key == "certificate-authority") {
          entry.ca = value;
        } else if (key == "client-certificate") {
          entry.cert = value;
        } else if (key == "client-key") {
          entry.key = value;
        } else if (key == "token") {
          entry.token = value;
        } else if (key == "token-file") {
          entry.token_file = value;
        } else {
          return bad(absl::StrCat("contexts[", i, "].", key),
                     "unknown field (known: name, server, certificate-authority, "
                     "client-certificate, client-key, token, token-file)");
        }
      }
      return entry;
    }
    return bad("current-context", name.empty() ? std::string("no context chosen")
                                               : absl::StrCat("no context named \"", name, "\""));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

std::string First(const std::string& a, const std::string& b, const std::string& c = "") {
  return !a.empty() ? a : !b.empty() ? b : c;
}

}  // namespace

absl::StatusOr<Connection> ResolveConnection(const ConnectionInputs& in) {
  ContextEntry file;
  const std::string config = First(in.config_flag, in.config_env);
  if (!config.empty()) {
    absl::StatusOr<ContextEntry> entry = ReadContext(config, in.context_flag);
    if (!entry.ok()) return entry.status();
    file = *std::move(entry);
    if (!file.token_file.empty() && file.token.empty()) {
      absl::StatusOr<std::string> token = ReadFile("token file", file.token_file);
      if (!token.ok()) return token.status();
      file.token = std::string(absl::StripAsciiWhitespace(*token));
    }
  } else if (!in.context_flag.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--context=", in.context_flag, " needs a config file (--config or $", kConfigEnvVar, ")"));
  }
  Connection out;
  out.server =
      First(in.server_flag, in.server_env, First(file.server, std::string(kDefaultServer)));
  out.certificate_authority = First(in.ca_flag, file.ca);
  out.client_certificate = First(in.cert_flag, file.cert);
  out.client_key = First(in.key_flag, file.key);
  out.token = First(in.token_flag, in.token_env, file.token);
  if (out.client_certificate.empty() != out.client_key.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate needs its key and a key its certificate (--client-certificate, "
        "--client-key)");
  }
  return out;
}

absl::StatusOr<client::Credentials> CredentialsFor(const Connection& connection) {
  client::Credentials credentials;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> channel = client::TlsChannelCredentials(
      connection.certificate_authority, connection.client_certificate, connection.client_key);
  if (!channel.ok()) return channel.status();
  credentials.channel = *std::move(channel);
  credentials.bearer_token = connection.token;
  return credentials;
}

std::string ResolveServer(absl::string_view flag_value, absl::string_view env_value) {
  if (!flag_value.empty()) return std::string(flag_value);
  if (!env_value.empty()) return std::string(env_value);
  return std::string(kDefaultServer);
}

}  // namespace tollgate::cli
