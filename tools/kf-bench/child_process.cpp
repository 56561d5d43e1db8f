#include "child_process.h"

#include <cerrno>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace kf::bench {

namespace {

// The child's answer: one status byte ('+' for a result, '-' for an error
// message), then the text.
void writeAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

} // namespace

absl::StatusOr<std::string>
runInChild(absl::FunctionRef<absl::StatusOr<std::string>()> work) {
  int fds[2];
  if (pipe(fds) != 0)
    return absl::InternalError(absl::StrCat(
        "cannot make a pipe for a child process: ", std::strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(
        absl::StrCat("cannot fork a child process: ", std::strerror(error)));
  }
  if (pid == 0) {
    close(fds[0]);
    absl::StatusOr<std::string> result = work();
    if (result.ok())
      writeAll(fds[1], absl::StrCat("+", *result));
    else
      writeAll(fds[1], absl::StrCat("-", result.status().message()));
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    text.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    return absl::InternalError(absl::StrCat("the child process died of signal ",
                                            WTERMSIG(status), " (",
                                            strsignal(WTERMSIG(status)), ")"));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || text.empty())
    return absl::InternalError("the child process ended without an answer");
  if (text[0] == '-')
    return absl::InternalError(text.substr(1));
  return text.substr(1);
}

} // namespace kf::bench
