#include "auth.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "zipc/error.hpp"

namespace zipc::bridge_detail {

struct Hmac::Ctx {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
  ~Ctx() {
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
  }
};

Hmac::Hmac(const std::string& key_file) : ctx_(std::make_unique<Ctx>()) {
  const std::string where = "auth_key_file '" + key_file + "'";
  struct stat st {};
  if (::stat(key_file.c_str(), &st) != 0) throw Error(Errc::not_found, where + ": cannot be read");
  if ((st.st_mode & 077) != 0)
    throw Error(Errc::invalid_argument, where + ": readable or writable by group or others (chmod 600 it)");
  std::ifstream in(key_file, std::ios::binary);
  std::vector<unsigned char> key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw Error(Errc::not_found, where + ": cannot be read");
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  if (key.size() < 16 || key.size() > 4096)
    throw Error(Errc::invalid_argument,
                where + ": the key is " + std::to_string(key.size()) + " bytes; it must be 16 to 4096");
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_construct_end()};
  ctx_->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (ctx_->mac != nullptr) ctx_->ctx = EVP_MAC_CTX_new(ctx_->mac);
  const bool ok = ctx_->ctx != nullptr && EVP_MAC_init(ctx_->ctx, key.data(), key.size(), params) == 1;
  OPENSSL_cleanse(key.data(), key.size());
  if (!ok) throw Error(Errc::invalid_argument, where + ": OpenSSL cannot make an HMAC-SHA-256 with it");
}

Hmac::~Hmac() = default;

namespace {
bool field(EVP_MAC_CTX* c, std::string_view v) {
  // Each field with its length first: no two field lists give the same input.
  const auto n = static_cast<std::uint64_t>(v.size());
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  return EVP_MAC_update(c, len, sizeof(len)) == 1 &&
         (v.empty() || EVP_MAC_update(c, reinterpret_cast<const unsigned char*>(v.data()), v.size()) == 1);
}
}  // namespace

bool Hmac::sign(const Fields& f, Hex* out) noexcept {
  EVP_MAC_CTX* c = ctx_->ctx;
  unsigned char md[32];
  std::size_t n = 0;
  // A null key: the key given at construction, the state reset.
  const bool ok = EVP_MAC_init(c, nullptr, 0, nullptr) == 1 && field(c, "zipc-auth-1") && field(c, f.subject) &&
                  field(c, f.origin) && field(c, f.channel) && field(c, f.seq) && field(c, f.time) &&
                  field(c, f.skip) && field(c, f.count) && field(c, std::string_view(f.data, f.size)) &&
                  EVP_MAC_final(c, md, &n, sizeof(md)) == 1 && n == sizeof(md);
  if (!ok) return false;
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof(md); ++i) {
    (*out)[2 * i] = kHex[md[i] >> 4];
    (*out)[2 * i + 1] = kHex[md[i] & 15];
  }
  (*out)[64] = '\0';
  return true;
}

bool Hmac::verify(const Fields& f, std::string_view hex) noexcept {
  Hex want;
  if (hex.size() != 64 || !sign(f, &want)) return false;
  return CRYPTO_memcmp(want.data(), hex.data(), 64) == 0;
}

}  // namespace zipc::bridge_detail
