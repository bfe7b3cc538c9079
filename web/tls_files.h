#pragma once

// TLS for the HTTP port from the same files as the gRPC port (--tls-cert, --tls-key,
// --client-ca), re-read when they change: every handshake compares the files' modification
// times and sizes with the last read (three stat calls) and loads a changed pair before
// presenting it, so a renewed certificate is served without a restart, as on the gRPC port.
// A new certificate whose key does not match (files caught mid-rotation) is not taken; the
// previous pair stays until both files agree. OpenSSL does all of the TLS. Thread-safe.

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace tollgate::web {

class TlsFiles {
 public:
  // Loads the files once (errors name the flag and the file). `client_ca` may be empty: then no
  // client certificate is requested.
  static absl::StatusOr<std::unique_ptr<TlsFiles>> Load(std::string cert, std::string key,
                                                        std::string client_ca);
  ~TlsFiles();

  // Sets up a server SSL_CTX: TLS 1.2 or later, the certificate chosen per handshake, and, with
  // a client CA, client certificates requested and verified when presented (not required: a
  // caller may use a token instead).
  bool Configure(SSL_CTX& ctx);

  // The verified client certificate of a connection as PEM, or "" when none was presented.
  static std::string PeerCertificatePem(const SSL* ssl);

 private:
  struct Loaded;
  TlsFiles(std::string cert, std::string key, std::string client_ca);
  static int OnCertificate(SSL* ssl, void* self);
  // Re-reads the files when they changed; keeps the previous material on any error.
  absl::Status RefreshLocked(bool first) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string Stamp() const;

  const std::string cert_, key_, client_ca_;
  absl::Mutex mu_;
  std::shared_ptr<Loaded> loaded_ ABSL_GUARDED_BY(mu_);
  std::string stamp_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::web
