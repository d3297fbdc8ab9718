// NATS decentralized identities for the credentials tests, made without the
// `nsc` tool (Debian does not package it): ed25519 keys made and used by the
// openssl command, encoded as nkeys, and JWTs (operator -> account -> user)
// in the nats-io/jwt v2 claim format. What a deployment gets from
// `nsc generate creds`: a server config that trusts the operator and
// preloads the account, and a user's .creds file.
#pragma once

#include <string>

namespace zipc::bridge_test {

// One ed25519 key pair, in directory dir under the given name.
struct NKey {
  std::string pem;         // openssl's private key file
  std::string public_key;  // nkey text: "O..."/"A..."/"U..." (56 characters)
  std::string seed;        // nkey seed text: "SO..."/"SA..."/"SU..."
};

// prefix: 'O' operator, 'A' account, 'U' user. Throws std::runtime_error
// (with openssl's output) when openssl fails.
NKey make_nkey(const std::string& dir, const std::string& name, char prefix);

// A JWT of `kind` ("operator", "account", "user") for subject, signed by issuer.
std::string make_jwt(const std::string& dir, const NKey& issuer, const NKey& subject, const std::string& kind,
                     const std::string& name);

// An operator with one account and one user of it. Writes dir/server.conf
// (the operator trusted; the account and a system account preloaded into a
// memory resolver), dir/user.creds, and dir/stranger.creds: a user of an
// account the server does not know.
struct NatsIdentities {
  std::string server_conf, user_creds, stranger_creds;
  explicit NatsIdentities(const std::string& dir);
};

}  // namespace zipc::bridge_test
