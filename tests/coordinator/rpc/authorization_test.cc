// Roles against RPCs over real TLS on 127.0.0.1: a coordinator with a throwaway CA, mutual TLS for
// workers and one token per role, called by every role on every method of every service.
#include "coordinator/rpc/authorization.h"

#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/client_channel.h"
#include "coordinator/rpc/server.h"
#include "sift/v1/studies_service.grpc.pb.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/test_pki.h"

namespace sift::coordinator {
namespace authorization_test {

using common::Role;

// What each RPC should need, stated apart from AccessTable() so the table is checked against
// intent: every Workers RPC is for workers; a Studies RPC is a write unless it is listed here as
// a read. A new read-only Studies RPC goes in this list (and in AccessTable()).
const std::set<std::string> kStudiesReads = {"GetStudy", "ListStudies", "ListTrials"};

Access Intended(const std::string& method) {
  const std::string studies = "/sift.v1.Studies/";
  if (method.rfind(studies, 0) != 0) return Access::kWorker;
  return kStudiesReads.count(method.substr(studies.size())) ? Access::kRead : Access::kWrite;
}

const std::string kWorkerToken = "worker-0123456789abcdef";
const std::string kUserToken = "user-0123456789abcdef";
const std::string kViewerToken = "viewer-0123456789abcdef";

// Every method of the sift.v1 services, as the compiled protos declare them.
std::vector<std::string> ProtoMethods() {
  std::vector<std::string> out;
  for (const char* service : {v1::Studies::service_full_name(), v1::Workers::service_full_name()}) {
    const auto* d = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    for (int i = 0; d != nullptr && i < d->method_count(); ++i) {
      out.push_back("/" + std::string(service) + "/" + d->method(i)->name());
    }
  }
  return out;
}

// Calls any method (unary or streaming) with one empty request and returns its status.
grpc::Status CallEmpty(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                       const std::string& token) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  auto ctx = common::MakeContext(token, /*timeout_s=*/10);
  auto call = stub.PrepareCall(ctx.get(), method, &cq);
  void* tag = nullptr;
  bool ok = false;
  auto wait = [&] { return cq.Next(&tag, &ok) && ok; };
  call->StartCall(nullptr);
  wait();
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  call->Write(request, nullptr);
  wait();
  call->WritesDone(nullptr);
  wait();
  grpc::ByteBuffer response;
  do call->Read(&response, nullptr);
  while (wait());
  grpc::Status status;
  call->Finish(&status, nullptr);
  wait();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

bool PastAuth(const grpc::Status& s) {
  return s.error_code() != grpc::StatusCode::UNAUTHENTICATED &&
         s.error_code() != grpc::StatusCode::PERMISSION_DENIED &&
         s.error_code() != grpc::StatusCode::UNAVAILABLE;
}

std::string Dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("sift-auth-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// A coordinator over TLS, with its own database, and clients for it.
class TlsCoordinator {
 public:
  TlsCoordinator(const std::string& name, const testing::TestPki& pki, bool mutual,
                 bool with_tokens) {
    dir_ = Dir(name);
    CoordinatorOptions o;
    o.checkpoint_dir = dir_ + "/checkpoints";
    coordinator_ = std::make_unique<Coordinator>(OpenSqliteStore(dir_ + "/sift.db"), o);
    ServerSecurity sec;
    sec.tls_cert = pki.server_cert;
    sec.tls_key = pki.server_key;
    if (mutual) sec.tls_client_ca = pki.ca;
    if (with_tokens) {
      EXPECT_EQ(sec.credentials.Add(Role::kWorker, kWorkerToken, "test"), "");
      EXPECT_EQ(sec.credentials.Add(Role::kUser, kUserToken, "test"), "");
      EXPECT_EQ(sec.credentials.Add(Role::kViewer, kViewerToken, "test"), "");
    }
    server_ = std::make_unique<Server>(coordinator_.get(), "127.0.0.1:0", std::move(sec));
  }
  ~TlsCoordinator() {
    server_.reset();
    coordinator_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server_->port()); }
  // A client trusting `ca`, with a client certificate when cert is set.
  std::shared_ptr<grpc::Channel> Channel(const std::string& ca, const std::string& cert = "",
                                         const std::string& key = "") const {
    common::ClientOptions c;
    c.address = address();
    c.tls_ca = ca;
    c.tls_cert = cert;
    c.tls_key = key;
    EXPECT_EQ(common::LoadClientOptions(&c), "");
    return common::MakeChannel(c);
  }

 private:
  std::string dir_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Server> server_;
};

class AuthorizationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_dir_ = new std::string(Dir("pki"));
    pki_ = new testing::TestPki;
    pki_error_ = new std::string(testing::MakeTestPki(*pki_dir_, pki_));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*pki_dir_);
    delete pki_dir_;
    delete pki_;
    delete pki_error_;
  }
  void SetUp() override { ASSERT_EQ(*pki_error_, ""); }
  static std::string* pki_dir_;
  static testing::TestPki* pki_;
  static std::string* pki_error_;
};
std::string* AuthorizationTest::pki_dir_ = nullptr;
testing::TestPki* AuthorizationTest::pki_ = nullptr;
std::string* AuthorizationTest::pki_error_ = nullptr;

TEST(AccessTable, CoversEveryRpcOfEveryServiceAsIntended) {
  const auto methods = ProtoMethods();
  ASSERT_GE(methods.size(), 14u);
  for (const auto& m : methods) {
    ASSERT_TRUE(AccessTable().count(m)) << m << " is missing from AccessTable()";
    EXPECT_EQ(AccessTable().at(m), Intended(m)) << m;
  }
  EXPECT_EQ(AccessTable().size(), methods.size()) << "AccessTable() names an RPC the protos lack";
}

TEST(AccessTable, AMethodMissingFromTheTableIsRefusedEvenWithoutCredentials) {
  const Authorizer open({}, false);
  EXPECT_TRUE(open.Decide("/sift.v1.Studies/ListStudies", nullptr, false).ok());
  const grpc::Status s = open.Decide("/sift.v1.Studies/DropEverything", nullptr, false);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(s.error_message().find("DropEverything"), std::string::npos) << s.error_message();
}

// The matrix: worker (token and client certificate), user, viewer, no token, a wrong token, and a
// worker token without its certificate, on every method.
TEST_F(AuthorizationTest, EveryRoleAgainstEveryRpcOverMutualTls) {
  TlsCoordinator coordinator("matrix", *pki_, /*mutual=*/true, /*with_tokens=*/true);
  const auto with_cert = coordinator.Channel(pki_->ca, pki_->worker_cert, pki_->worker_key);
  const auto no_cert = coordinator.Channel(pki_->ca);
  struct Caller {
    const char* name;
    std::shared_ptr<grpc::Channel> channel;
    std::string token;
    std::optional<Role> role;  // nullopt: no valid token
  };
  const Caller callers[] = {
      {"worker", with_cert, kWorkerToken, Role::kWorker},
      {"user", no_cert, kUserToken, Role::kUser},
      {"viewer", no_cert, kViewerToken, Role::kViewer},
      {"user with a client certificate", with_cert, kUserToken, Role::kUser},
      {"no token", with_cert, "", std::nullopt},
      {"wrong token", with_cert, "wrong-0123456789abcdef", std::nullopt},
  };
  int allowed = 0, workers_rpcs = 0, studies_rpcs = 0, reads = 0;
  for (const std::string& method : ProtoMethods()) {
    const Access access = Intended(method);
    (access == Access::kWorker ? workers_rpcs : studies_rpcs) += 1;
    reads += access == Access::kRead;
    for (const auto& c : callers) {
      const grpc::Status s = CallEmpty(c.channel, method, c.token);
      const std::string what = std::string(c.name) + " -> " + method + ": " +
                               std::to_string(s.error_code()) + " " + s.error_message();
      if (!c.role) {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << what;
      } else if (RoleMay(*c.role, access)) {
        EXPECT_TRUE(PastAuth(s)) << what;
        ++allowed;
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << what;
      }
    }
    // Under mutual TLS a worker token alone is not enough for the Workers service.
    const grpc::Status s = CallEmpty(no_cert, method, kWorkerToken);
    EXPECT_EQ(s.error_code(), access == Access::kWorker ? grpc::StatusCode::UNAUTHENTICATED
                                                        : grpc::StatusCode::PERMISSION_DENIED)
        << "worker token without a certificate -> " << method << ": " << s.error_message();
  }
  // Every Workers RPC for the worker, every Studies RPC for both user callers, reads for the
  // viewer.
  EXPECT_EQ(allowed, workers_rpcs + 2 * studies_rpcs + reads);
  EXPECT_GT(reads, 0);
}

TEST_F(AuthorizationTest, ViewerReadsWhatTheUserWrote) {
  TlsCoordinator coordinator("viewer", *pki_, /*mutual=*/false, /*with_tokens=*/true);
  auto studies = v1::Studies::NewStub(coordinator.Channel(pki_->ca));
  v1::CreateStudyRequest create;
  create.set_config("name: v\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n");
  v1::CreateStudyResponse created;
  grpc::Status s = studies->CreateStudy(common::MakeContext(kViewerToken).get(), create, &created);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  s = studies->CreateStudy(common::MakeContext(kUserToken).get(), create, &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  v1::ListStudiesResponse list;
  s = studies->ListStudies(common::MakeContext(kViewerToken).get(), {}, &list);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(list.studies_size(), 1);
  EXPECT_EQ(list.studies(0).name(), "v");
  v1::CancelStudyRequest cancel;
  cancel.set_study_id(created.study().id());
  v1::Study study;
  s = studies->CancelStudy(common::MakeContext(kViewerToken).get(), cancel, &study);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
}

TEST_F(AuthorizationTest, WithoutMutualTlsAWorkerTokenAloneReachesTheWorkersService) {
  TlsCoordinator coordinator("tls-only", *pki_, /*mutual=*/false, /*with_tokens=*/true);
  const grpc::Status s =
      CallEmpty(coordinator.Channel(pki_->ca), "/sift.v1.Workers/AcquireTrial", kWorkerToken);
  EXPECT_TRUE(PastAuth(s)) << s.error_code() << " " << s.error_message();
}

TEST_F(AuthorizationTest, PlaintextAndUntrustedPeersAreRefusedByATlsCoordinator) {
  TlsCoordinator coordinator("refused", *pki_, /*mutual=*/true, /*with_tokens=*/true);
  v1::ListStudiesResponse list;
  // A plaintext client, with a valid token: the handshake fails before any RPC runs.
  auto plaintext = v1::Studies::NewStub(coordinator.Channel(""));
  grpc::Status s = plaintext->ListStudies(common::MakeContext(kUserToken, 5).get(), {}, &list);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  // A client that trusts another CA does not accept the coordinator's certificate.
  auto wrong_ca = v1::Studies::NewStub(coordinator.Channel(pki_->rogue_ca));
  s = wrong_ca->ListStudies(common::MakeContext(kUserToken, 5).get(), {}, &list);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  // A client certificate from a CA the coordinator does not trust ends the handshake.
  s = CallEmpty(coordinator.Channel(pki_->ca, pki_->rogue_cert, pki_->rogue_key),
                "/sift.v1.Workers/AcquireTrial", kWorkerToken);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  // The same coordinator still serves a proper client.
  auto good = v1::Studies::NewStub(coordinator.Channel(pki_->ca));
  s = good->ListStudies(common::MakeContext(kUserToken).get(), {}, &list);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(AuthorizationTest, AServerThatCannotReadItsKeySaysWhich) {
  CoordinatorOptions o;
  const std::string dir = Dir("nokey");
  Coordinator coordinator(OpenSqliteStore(dir + "/sift.db"), o);
  ServerSecurity sec;
  sec.tls_cert = pki_->server_cert;
  sec.tls_key = dir + "/missing.key";
  try {
    Server server(&coordinator, "127.0.0.1:0", std::move(sec));
    ADD_FAILURE() << "a server started without its key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.key: cannot read"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace authorization_test
}  // namespace sift::coordinator
