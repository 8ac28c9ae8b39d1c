#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <thread>

#include "clickhouse/connection.h"

namespace chsync::clickhouse {
namespace {

/// A Connection whose transport answers from a script: each Run() takes the next result.
class ScriptedConnection : public Connection {
 public:
  explicit ScriptedConnection(std::deque<Result<std::string>> script) : script_(std::move(script)) {}
  std::string Describe() const override { return "scripted"; }
  bool embedded() const override { return false; }
  int calls = 0;

 protected:
  Result<std::string> Run(std::string_view, std::string_view, std::string_view,
                          const RequestOptions&) override {
    ++calls;
    Result<std::string> next = std::move(script_.front());
    script_.pop_front();
    return next;
  }

 private:
  std::deque<Result<std::string>> script_;
};

RetryPolicy Fast(int attempts) {
  RetryPolicy p;
  p.max_attempts = attempts;
  p.initial_backoff = std::chrono::milliseconds(1);
  p.max_backoff = std::chrono::milliseconds(2);
  return p;
}

std::deque<Result<std::string>> Script(std::initializer_list<Result<std::string>> items) {
  std::deque<Result<std::string>> d;
  for (const auto& i : items) d.push_back(i);
  return d;
}

TEST(ConnectionRetry, TransportFailuresAreRetriedUntilSuccess) {
  ScriptedConnection conn(
      Script({Error(ErrorKind::kNetwork, "connection refused"),
              Error(ErrorKind::kServer, "Too many parts (300)", 252), std::string("1\n")}));
  conn.set_retry_policy(Fast(5));
  auto r = conn.Query("SELECT 1");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, "1\n");
  EXPECT_EQ(conn.calls, 3);
}

TEST(ConnectionRetry, SyntaxAndAuthErrorsReturnAtOnce) {
  ScriptedConnection syntax(Script({Error(ErrorKind::kServer, "Syntax error", 62), std::string("never")}));
  syntax.set_retry_policy(Fast(5));
  auto r = syntax.Execute("SELEC 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().server_code(), 62);
  EXPECT_EQ(syntax.calls, 1);

  ScriptedConnection auth(Script({Error(ErrorKind::kAuth, "Wrong password", 193), std::string("never")}));
  auth.set_retry_policy(Fast(5));
  EXPECT_FALSE(auth.Insert("INSERT INTO t FORMAT RowBinary", "x").ok());
  EXPECT_EQ(auth.calls, 1);
}

TEST(ConnectionRetry, GivesUpAfterMaxAttemptsWithTheLastError) {
  ScriptedConnection conn(
      Script({Error(ErrorKind::kNetwork, "refused 1"), Error(ErrorKind::kNetwork, "refused 2"),
              Error(ErrorKind::kNetwork, "refused 3"), std::string("late")}));
  conn.set_retry_policy(Fast(3));
  auto r = conn.Execute("SELECT 1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "refused 3");
  EXPECT_EQ(conn.calls, 3);
}

TEST(ConnectionRetry, SingleAttemptPolicyNeverRetries) {
  ScriptedConnection conn(Script({Error(ErrorKind::kNetwork, "refused"), std::string("ok")}));
  conn.set_retry_policy(Fast(1));
  EXPECT_FALSE(conn.Query("SELECT 1").ok());
  EXPECT_EQ(conn.calls, 1);
}

/// A Connection whose transport always fails with a retryable error; counts the attempts.
class FailingConnection : public Connection {
 public:
  std::string Describe() const override { return "failing"; }
  bool embedded() const override { return false; }
  std::atomic<int> calls{0};

 protected:
  Result<std::string> Run(std::string_view, std::string_view, std::string_view,
                          const RequestOptions&) override {
    ++calls;
    return Error(ErrorKind::kNetwork, "connection refused");
  }
};

TEST(ConnectionCancel, FlagSetWhileRetryingStopsTheRetries) {
  std::atomic<bool> cancel{false};
  FailingConnection conn;
  RetryPolicy policy;
  policy.max_attempts = 1000;
  policy.initial_backoff = std::chrono::milliseconds(5);
  policy.max_backoff = std::chrono::milliseconds(50);
  conn.set_retry_policy(policy);
  conn.set_cancel(&cancel);
  std::thread canceller([&] {
    while (conn.calls.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel = true;
  });
  auto r = conn.Insert("INSERT INTO t FORMAT RowBinary", "x");
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsCancelled(r.error())) << r.error().message();
  EXPECT_EQ(r.error().kind(), ErrorKind::kNetwork);
  EXPECT_GE(conn.calls.load(), 3);
  EXPECT_LT(conn.calls.load(), 100);
}

TEST(ConnectionCancel, FlagSetDuringALongBackoffEndsTheWait) {
  // Were the back-off not cut short, this test would sleep for ten minutes before failing.
  std::atomic<bool> cancel{false};
  FailingConnection conn;
  RetryPolicy policy;
  policy.max_attempts = 3;
  policy.initial_backoff = std::chrono::minutes(10);
  policy.max_backoff = std::chrono::minutes(10);
  conn.set_retry_policy(policy);
  conn.set_cancel(&cancel);
  std::thread canceller([&] {
    while (conn.calls.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel = true;
  });
  auto r = conn.Query("SELECT 1");
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsCancelled(r.error())) << r.error().message();
  EXPECT_EQ(conn.calls.load(), 1);
}

TEST(ConnectionCancel, AlreadyCancelledSendsNothing) {
  std::atomic<bool> cancel{true};
  FailingConnection conn;
  conn.set_retry_policy(Fast(5));
  conn.set_cancel(&cancel);
  auto r = conn.Execute("SELECT 1");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsCancelled(r.error())) << r.error().message();
  EXPECT_EQ(conn.calls.load(), 0);
}

TEST(ConnectionCancel, IsCancelledTellsCancelledErrorsApart) {
  EXPECT_TRUE(IsCancelled(CancelledError("insert aborted")));
  Error with_context = CancelledError("insert aborted");
  with_context.AddContext("while flushing `db`.`t`");
  EXPECT_TRUE(IsCancelled(with_context)) << with_context.message();
  EXPECT_FALSE(IsCancelled(Error(ErrorKind::kNetwork, "connection refused")));
  EXPECT_FALSE(IsCancelled(Error(ErrorKind::kServer, "cancelled: not ours", 394)));
}

}  // namespace
}  // namespace chsync::clickhouse
