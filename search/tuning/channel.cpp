// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/channel.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "src/core/error.hpp"

namespace gemmtune {

ChildProcess start_child(const std::vector<std::string>& argv_in,
                         const std::vector<int>& child_fds) {
  if (argv_in.empty()) throw Error(ErrorCode::kInternal, "helper command line is empty");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw Error(ErrorCode::kDevice,
                std::string("cannot create a helper channel: ") + std::strerror(errno));
  }
  // Built before fork: the child may only call async-signal-safe functions until exec.
  std::vector<char*> argv;
  for (const auto& a : argv_in) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const bool stdout_is_channel =
      std::find(child_fds.begin(), child_fds.end(), 1) != child_fds.end();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw Error(ErrorCode::kDevice, std::string("cannot start a helper: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    ::signal(SIGINT, SIG_IGN);
    if (!stdout_is_channel) ::dup2(2, 1);
    for (int fd : child_fds) {
      // dup2 clears close-on-exec on the copy, but does nothing when the socket already has the
      // wanted number.
      if (sv[1] == fd) {
        ::fcntl(fd, F_SETFD, 0);
      } else {
        ::dup2(sv[1], fd);
      }
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  return {pid, sv[0]};
}

std::string end_child(ChildProcess& child, bool kill, double grace_s) {
  if (child.fd >= 0) {
    ::close(child.fd);
    child.fd = -1;
  }
  if (child.pid < 0) return "";
  int status = 0;
  pid_t r = 0;
  if (!kill) {
    // A helper leaves when its channel closes; give it a moment before forcing it.
    const auto t0 = std::chrono::steady_clock::now();
    while ((r = ::waitpid(child.pid, &status, WNOHANG)) == 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < grace_s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (r == 0) {
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, &status, 0);
  }
  child.pid = -1;
  return describe_exit(status);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return fmt::format("killed by signal {} ({})", sig, name ? name : "?");
  }
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "ended";
}

bool write_line(int fd, const std::string& text) {
  const std::string line = text + "\n";
  size_t done = 0;
  bool socket = true;
  while (done < line.size()) {
    ssize_t n = socket ? ::send(fd, line.data() + done, line.size() - done, MSG_NOSIGNAL) : -1;
    if (n < 0 && socket && errno == ENOTSOCK) {
      socket = false;  // a pipe or a terminal (a helper run by hand)
      continue;
    }
    if (!socket) n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += size_t(n);
  }
  return true;
}

bool read_line(int fd, std::string& buffer, std::string* line) {
  while (true) {
    if (auto nl = buffer.find('\n'); nl != std::string::npos) {
      *line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(buf, size_t(n));
  }
}

void take_lines(std::string& buffer, std::vector<std::string>* lines) {
  size_t start = 0;
  for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n', start)) {
    lines->push_back(buffer.substr(start, nl - start));
    start = nl + 1;
  }
  buffer.erase(0, start);
}

}  // namespace gemmtune
