// A C producer and a C++ typed queue agree on a message type: the identity
// zipc_type_identity_init builds equals zipc::type_identity_of<T>() for a T
// whose zipc::type_name<T> gives the same name.
#include <gtest/gtest.h>

#include "typed_test_types.hpp"
#include "zipc/typed.hpp"
#include "zipc/zipc.h"
#include "zipc_test.hpp"

namespace typed_c_identity_test {
namespace {

using typed_test::Versioned;

TEST(TypedCIdentity, TheCIdentityOfATypeEqualsTheCppOne) {
  const zipc::TypeIdentity cpp = zipc::type_identity_of<Versioned>();
  zipc_type_identity_t c;
  ASSERT_EQ(zipc_type_identity_init(&c, cpp.name.c_str(), sizeof(Versioned), alignof(Versioned), cpp.field_count,
                                    cpp.version),
            ZIPC_OK);
  EXPECT_EQ(c.fingerprint, cpp.fingerprint);
}

TEST(TypedCIdentity, ACOpenOfACppTypedQueueChecksTheTypeBothWays) {
  zipc::test::TempName name("tci");
  zipc::QueueOptions qo;
  qo.block_count = 4;
  auto q = zipc::TypedQueue<Versioned>::create(name.str(), qo);
  const zipc::TypeIdentity cpp = zipc::type_identity_of<Versioned>();
  zipc_type_identity_t good, bad;
  ASSERT_EQ(zipc_type_identity_init(&good, "test.Versioned", sizeof(Versioned), alignof(Versioned), cpp.field_count,
                                    cpp.version),
            ZIPC_OK);
  ASSERT_EQ(zipc_type_identity_init(&bad, "test.Versioned", sizeof(Versioned), alignof(Versioned), cpp.field_count,
                                    cpp.version + 1),
            ZIPC_OK);
  zipc_queue_options_t o;
  ASSERT_EQ(zipc_queue_options_init(&o), ZIPC_OK);
  o.type = &good;
  zipc_queue_t* h = nullptr;
  ASSERT_EQ(zipc_queue_open(name.str().c_str(), &o, &h), ZIPC_OK) << zipc_last_error();
  zipc_type_identity_t seen;
  ASSERT_EQ(zipc_queue_type_identity(h, &seen), ZIPC_OK);
  EXPECT_STREQ(seen.name, "test.Versioned");
  EXPECT_EQ(seen.fingerprint, cpp.fingerprint);
  EXPECT_EQ(zipc_queue_detach(h), ZIPC_OK);
  o.type = &bad;
  EXPECT_EQ(zipc_queue_open(name.str().c_str(), &o, &h), ZIPC_TYPE_MISMATCH);
  EXPECT_NE(std::string(zipc_last_error()).find("version 4"), std::string::npos) << zipc_last_error();
}

}  // namespace

}  // namespace typed_c_identity_test
