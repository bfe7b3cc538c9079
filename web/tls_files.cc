#include "web/tls_files.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace tollgate::web {

struct TlsFiles::Loaded {
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  X509_STORE* client_ca = nullptr;

  ~Loaded() {
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    X509_STORE_free(client_ca);
  }
};

namespace {

absl::Status FileError(absl::string_view flag, const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", path, ": ", why));
}

std::string StatStamp(const std::string& path) {
  struct stat info;
  if (path.empty() || stat(path.c_str(), &info) != 0) return "-";
  return absl::StrCat(info.st_mtim.tv_sec, ".", info.st_mtim.tv_nsec, ":", info.st_size);
}

}  // namespace

TlsFiles::TlsFiles(std::string cert, std::string key, std::string client_ca)
    : cert_(std::move(cert)), key_(std::move(key)), client_ca_(std::move(client_ca)) {}

TlsFiles::~TlsFiles() = default;

absl::StatusOr<std::unique_ptr<TlsFiles>> TlsFiles::Load(std::string cert, std::string key,
                                                         std::string client_ca) {
  std::unique_ptr<TlsFiles> files(
      new TlsFiles(std::move(cert), std::move(key), std::move(client_ca)));
  absl::MutexLock lock(&files->mu_);
  if (absl::Status loaded = files->RefreshLocked(/*first=*/true); !loaded.ok()) return loaded;
  return files;
}

std::string TlsFiles::Stamp() const {
  return absl::StrCat(StatStamp(cert_), "|", StatStamp(key_), "|", StatStamp(client_ca_));
}

absl::Status TlsFiles::RefreshLocked(bool first) {
  const std::string stamp = Stamp();
  if (!first && stamp == stamp_) return absl::OkStatus();
  auto loaded = std::make_shared<Loaded>();
  {
    BIO* bio = BIO_new_file(cert_.c_str(), "r");
    if (bio == nullptr) return FileError("tls-cert", cert_, "cannot open");
    loaded->cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    loaded->chain = sk_X509_new_null();
    while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      sk_X509_push(loaded->chain, extra);
    }
    BIO_free(bio);
    ERR_clear_error();  // the end of the file reads as an error
    if (loaded->cert == nullptr) return FileError("tls-cert", cert_, "no PEM certificate");
  }
  {
    BIO* bio = BIO_new_file(key_.c_str(), "r");
    if (bio == nullptr) return FileError("tls-key", key_, "cannot open");
    loaded->key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    if (loaded->key == nullptr) return FileError("tls-key", key_, "no PEM private key");
  }
  if (X509_check_private_key(loaded->cert, loaded->key) != 1) {
    ERR_clear_error();
    return FileError("tls-key", key_, absl::StrCat("does not match --tls-cert=", cert_));
  }
  if (!client_ca_.empty()) {
    loaded->client_ca = X509_STORE_new();
    if (X509_STORE_load_file(loaded->client_ca, client_ca_.c_str()) != 1) {
      ERR_clear_error();
      return FileError("client-ca", client_ca_, "no PEM CA certificate");
    }
  }
  loaded_ = std::move(loaded);
  stamp_ = stamp;
  return absl::OkStatus();
}

int TlsFiles::OnCertificate(SSL* ssl, void* arg) {
  auto* self = static_cast<TlsFiles*>(arg);
  std::shared_ptr<Loaded> loaded;
  {
    absl::MutexLock lock(&self->mu_);
    // A failed refresh keeps the previous pair (files caught mid-rotation).
    self->RefreshLocked(/*first=*/false).IgnoreError();
    loaded = self->loaded_;
  }
  if (SSL_use_cert_and_key(ssl, loaded->cert, loaded->key, loaded->chain, /*override=*/1) != 1) {
    return 0;
  }
  if (loaded->client_ca != nullptr && SSL_set1_verify_cert_store(ssl, loaded->client_ca) != 1) {
    return 0;
  }
  return 1;
}

bool TlsFiles::Configure(SSL_CTX& ctx) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  SSL_CTX_set_cert_cb(&ctx, &TlsFiles::OnCertificate, this);
  if (!client_ca_.empty()) {
    // Verified when presented, not required (no SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
  } else {
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_NONE, nullptr);
  }
  return true;
}

std::string TlsFiles::PeerCertificatePem(const SSL* ssl) {
  if (ssl == nullptr) return "";
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return "";
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "";
  std::string pem;
  if (PEM_write_bio_X509(bio, peer) == 1) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    pem.assign(data, static_cast<size_t>(size));
  }
  BIO_free(bio);
  return pem;
}

}  // namespace tollgate::web
