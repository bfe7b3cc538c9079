#include "services/auth/oidc_authenticator.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace tollgate::auth {

absl::StatusOr<std::unique_ptr<OidcAuthenticator>> OidcAuthenticator::Create(
    OidcConfig config, std::string jwks_file) {
  if (absl::Status valid = ValidateOidcConfig(config); !valid.ok()) return valid;
  std::unique_ptr<OidcAuthenticator> authenticator(
      new OidcAuthenticator(std::move(config), std::move(jwks_file)));
  absl::MutexLock lock(&authenticator->mu_);
  if (absl::Status loaded = authenticator->ReloadIfChangedLocked(/*force=*/true); !loaded.ok()) {
    return loaded;
  }
  return authenticator;
}

absl::Status OidcAuthenticator::Reload() {
  absl::MutexLock lock(&mu_);
  return ReloadIfChangedLocked(/*force=*/true);
}

absl::Status OidcAuthenticator::ReloadIfChangedLocked(bool force) {
  struct stat info;
  if (stat(jwks_file_.c_str(), &info) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--oidc-jwks-file=", jwks_file_, ": ", std::strerror(errno)));
  }
  const int64_t mtime_ns =
      static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  if (!force && mtime_ns == file_mtime_ns_ && info.st_size == file_size_) {
    return absl::OkStatus();
  }
  std::ifstream in(jwks_file_, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("--oidc-jwks-file=", jwks_file_, ": cannot open: ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  // Remember the file's state even when it does not parse, so a bad file is not re-parsed on
  // every call; the next change is read again.
  file_mtime_ns_ = mtime_ns;
  file_size_ = info.st_size;
  absl::StatusOr<JwkSet> keys =
      ParseJwks(text.str(), absl::StrCat("--oidc-jwks-file=", jwks_file_));
  if (!keys.ok()) return keys.status();
  verifier_ = std::make_shared<const OidcVerifier>(config_, *std::move(keys));
  return absl::OkStatus();
}

absl::StatusOr<Identity> OidcAuthenticator::Verify(absl::string_view token, absl::Time now) {
  std::shared_ptr<const OidcVerifier> verifier;
  {
    absl::MutexLock lock(&mu_);
    if (now - last_check_ >= kCheckInterval) {
      last_check_ = now;
      // A file that vanished or does not parse keeps the keys in force; Reload reports it.
      ReloadIfChangedLocked(/*force=*/false).IgnoreError();
    }
    verifier = verifier_;
  }
  return verifier->Verify(token, now);
}

}  // namespace tollgate::auth
