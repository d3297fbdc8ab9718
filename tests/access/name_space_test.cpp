// Name spaces: the same name in two name spaces is two channels; the
// ZIPC_NAMESPACE environment variable applies when the option is unset.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <thread>

#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace name_space_test {
namespace {

zipc::SegmentOptions in(const std::string& ns) {
  zipc::SegmentOptions o;
  o.name_space = ns;
  return o;
}

zipc::QueueOptions queue_in(const std::string& ns) {
  zipc::QueueOptions q;
  q.block_count = 4;
  q.block_size = 64;
  q.segment = in(ns);
  return q;
}

std::span<const std::byte> bytes(const char* s) {
  return std::as_bytes(std::span(s, std::char_traits<char>::length(s)));
}

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

// Sets ZIPC_NAMESPACE for a scope (tests run single-threaded).
class EnvNameSpace {
 public:
  explicit EnvNameSpace(const char* value) {
    ::setenv("ZIPC_NAMESPACE", value, 1);  // NOLINT(concurrency-mt-unsafe)
  }
  ~EnvNameSpace() { ::unsetenv("ZIPC_NAMESPACE"); }  // NOLINT(concurrency-mt-unsafe)
  EnvNameSpace(const EnvNameSpace&) = delete;
  EnvNameSpace& operator=(const EnvNameSpace&) = delete;
};

std::string ns_tag(const char* t) {
  return std::string(t) + std::to_string(::getpid());
}

}  // namespace

TEST(NameSpace, TheSameNameInTwoNameSpacesIsTwoChannels) {
  zipc::test::TempName name("ns2");
  const std::string a = ns_tag("appa"), b = ns_tag("appb");
  auto qa = zipc::Queue::create(name.str(), queue_in(a));
  auto qb = zipc::Queue::create(name.str(), queue_in(b));
  EXPECT_TRUE(exists("/dev/shm/zipc." + a + ":" + name.str()));
  EXPECT_TRUE(exists("/dev/shm/zipc." + b + ":" + name.str()));
  EXPECT_FALSE(exists("/dev/shm/zipc." + name.str()));
  ASSERT_EQ(qa.try_send(bytes("for a")), zipc::Status::ok);
  std::array<std::byte, 64> buf{};
  EXPECT_EQ(qb.try_recv(buf).status, zipc::Status::empty);
  auto r = qa.try_recv(buf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), r.size), "for a");
  // Opening without a name space finds neither.
  try {
    (void)zipc::Queue::open(name.str(), zipc::Role::both, {}, in(""));
    ADD_FAILURE() << "a name-spaced queue was found without its name space";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::not_found) << e.what();
  }
  EXPECT_TRUE(zipc::Queue::remove(name.str(), in(a)));
  EXPECT_TRUE(zipc::Queue::remove(name.str(), in(b)));
}

TEST(NameSpace, TheEnvironmentVariableAppliesWhenTheOptionIsUnsetAndAnEmptyOptionOverridesIt) {
  zipc::test::TempName name("nsenv");
  const std::string ns = ns_tag("env");
  {
    EnvNameSpace env(ns.c_str());
    EXPECT_EQ(zipc::Segment::name_space_for(), ns);
    auto t = zipc::Topic::create(name.str());
    EXPECT_TRUE(exists("/dev/shm/zipc." + ns + ":" + name.str()));
    // An explicit "" means no name space, whatever the environment says.
    EXPECT_EQ(zipc::Segment::path_for(name.str(), in("")), "/dev/shm/zipc." + name.str());
    EXPECT_FALSE(exists("/dev/shm/zipc." + name.str()));
    // A child in another name space does not see it; one in the same does.
    auto other = zipc::test::spawn([&] {
      ::setenv("ZIPC_NAMESPACE", (ns + "x").c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
      try {
        (void)zipc::Topic::open(name.str());
      } catch (const zipc::Error& e) {
        return e.errc() == zipc::Errc::not_found ? 0 : 2;
      }
      return 3;
    });
    EXPECT_EQ(other.wait().exit_code, 0);
    auto same = zipc::test::spawn([&] { return zipc::Topic::open(name.str()).segment().is_attached() ? 0 : 2; });
    EXPECT_EQ(same.wait().exit_code, 0);
    EXPECT_TRUE(zipc::Topic::remove(name.str()));
  }
  EXPECT_EQ(zipc::Segment::name_space_for(), "");
}

TEST(NameSpace, AQualifiedNameOpensItsNameSpaceAndListShowsIt) {
  zipc::test::TempName name("nsq");
  const std::string ns = ns_tag("q");
  auto q = zipc::Queue::create(name.str(), queue_in(ns));
  const std::string qualified = ns + ":" + name.str();
  auto same = zipc::Queue::open(qualified);
  ASSERT_EQ(same.try_send(bytes("hi")), zipc::Status::ok);
  std::array<std::byte, 8> buf{};
  EXPECT_TRUE(q.try_recv(buf).ok());
  const auto all = zipc::Segment::list();
  const auto it = std::find_if(all.begin(), all.end(), [&](const zipc::SegmentInfo& i) { return i.name == qualified; });
  ASSERT_NE(it, all.end());
  EXPECT_TRUE(it->valid) << it->problem;
  EXPECT_EQ(it->kind, zipc::SegmentKind::queue);
  EXPECT_TRUE(zipc::Queue::remove(qualified));
}

TEST(NameSpace, AnUnusableNameSpaceIsAnInvalidName) {
  for (const char* bad : {"a/b", "a.b", "a:b", "sp ace"}) {
    try {
      (void)zipc::Segment::path_for("x", in(bad));
      ADD_FAILURE() << "name space '" << bad << "' accepted";
    } catch (const zipc::Error& e) {
      EXPECT_EQ(e.errc(), zipc::Errc::invalid_name) << e.what();
    }
  }
  EXPECT_THROW(zipc::Segment::validate_name(":x"), zipc::Error);
  EXPECT_THROW(zipc::Segment::validate_name("ns:"), zipc::Error);
  EXPECT_NO_THROW(zipc::Segment::validate_name("ns:x.y"));
}

TEST(NameSpace, TwoRpcServersWithOneNameInTwoNameSpacesOfOneProcessStayApart) {
  zipc::test::TempName name("nsrpc");
  const std::string a = ns_tag("ra"), b = ns_tag("rb");
  zipc::RpcOptions oa, ob;
  oa.segment = in(a);
  ob.segment = in(b);
  auto sa = zipc::RpcServer::create(name.str(), oa);
  auto sb = zipc::RpcServer::create(name.str(), ob);
  std::thread ta([&] { sa.serve([](zipc::RpcRequest& req) { (void)req.reply(bytes("a")); }); });
  std::thread tb([&] { sb.serve([](zipc::RpcRequest& req) { (void)req.reply(bytes("b")); }); });
  std::string got;
  for (const std::string& ns : {a, b}) {
    EnvNameSpace env(ns.c_str());
    auto client = zipc::RpcClient::connect(name.str(), 1s);
    zipc::RpcResponse r = client.call(bytes("?"), 5s);
    if (r.ok()) got += std::string(reinterpret_cast<const char*>(r.data().data()), r.size());
  }
  sa.stop();
  sb.stop();
  ta.join();
  tb.join();
  EXPECT_EQ(got, "ab");
}

}  // namespace name_space_test
