#pragma once

// The OIDC authenticator tollgated runs: an OidcVerifier over the issuer's key set read from
// --oidc-jwks-file, re-read when the file changes (checked at most once per
// kCheckInterval, on the calls that need it) or on Reload (SIGHUP). Issuers rotate keys by
// publishing the new one next to the old; whatever keeps the file in sync with the issuer's
// jwks_uri (a sidecar, a cron job, a ConfigMap) is outside tollgated, so it makes no outbound
// call.

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "services/auth/oidc_verifier.h"

namespace tollgate::auth {

// Thread-safe.
class OidcAuthenticator {
 public:
  static constexpr absl::Duration kCheckInterval = absl::Seconds(1);

  // Reads and parses the key set; INVALID_ARGUMENT / FAILED_PRECONDITION naming the flag and
  // the file when the configuration or the file is unusable.
  static absl::StatusOr<std::unique_ptr<OidcAuthenticator>> Create(OidcConfig config,
                                                                   std::string jwks_file);

  absl::StatusOr<Identity> Verify(absl::string_view token, absl::Time now);

  // Re-reads the key set now. On error the previous keys stay in force and the error is
  // returned (for the log).
  absl::Status Reload();

 private:
  OidcAuthenticator(OidcConfig config, std::string jwks_file)
      : config_(std::move(config)), jwks_file_(std::move(jwks_file)) {}
  // Reads the file when its modification time or size differ from the last read.
  absl::Status ReloadIfChangedLocked(bool force) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const OidcConfig config_;
  const std::string jwks_file_;
  absl::Mutex mu_;
  std::shared_ptr<const OidcVerifier> verifier_ ABSL_GUARDED_BY(mu_);
  absl::Time last_check_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t file_mtime_ns_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t file_size_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace tollgate::auth
