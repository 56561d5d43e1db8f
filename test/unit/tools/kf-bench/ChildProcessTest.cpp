// Work in a child process: its text, its error, and a child that dies.
#include "child_process.h"

#include <csignal>
#include <unistd.h>

#include "gmock/gmock.h"

namespace kf::bench {
namespace {

using ::testing::HasSubstr;

TEST(ChildProcess, ReturnsTheChildsTextFromAnotherProcess) {
  const pid_t parent = getpid();
  absl::StatusOr<std::string> r =
      runInChild([&]() -> absl::StatusOr<std::string> {
        return getpid() == parent ? "same process" : std::string(100000, 'x');
      });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, std::string(100000, 'x')); // more than a pipe holds
}

TEST(ChildProcess, CarriesTheChildsError) {
  absl::StatusOr<std::string> r =
      runInChild([]() -> absl::StatusOr<std::string> {
        return absl::FailedPreconditionError("oneDNN refuses ISA avx2");
      });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "oneDNN refuses ISA avx2");
}

TEST(ChildProcess, SaysHowTheChildDied) {
  absl::StatusOr<std::string> r =
      runInChild([]() -> absl::StatusOr<std::string> {
        raise(SIGKILL);
        return "unreachable";
      });
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("the child process died of signal 9"));
}

} // namespace
} // namespace kf::bench
