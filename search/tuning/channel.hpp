// SPDX-License-Identifier: Apache-2.0
// The line channels between the tuner and its helper processes (the evaluation worker, the
// compile workers): starting a helper with a socket on the descriptors it expects, ending it, and
// reading and writing one JSON line at a time on either side.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gemmtune {

struct ChildProcess {
  pid_t pid = -1;
  int fd = -1;  // the tuner's end of the channel
};

// Starts `argv` with one end of a socket pair on each descriptor of `child_fds`. The child gets its
// own process group (Ctrl-C on the terminal reaches the tuner, which ends its helpers in order),
// is killed with the tuner, and sends stdout to stderr unless 1 is a channel descriptor (stray
// driver output must not corrupt a channel). Throws Error(kDevice) when it cannot be started.
ChildProcess start_child(const std::vector<std::string>& argv, const std::vector<int>& child_fds);

// Closes the channel and ends the child: with SIGKILL at once when `kill`, else after up to
// `grace_s` seconds for it to leave on its own. Returns how it ended ("exited with code 0"), or ""
// when there was no child.
std::string end_child(ChildProcess& child, bool kill, double grace_s = 5);

// "killed by signal 9 (Killed)", "exited with code 1": a waitpid status in words.
std::string describe_exit(int status);

// Writes `line` and a newline, whole; false when the other side is gone (never raises SIGPIPE on
// a socket).
bool write_line(int fd, const std::string& line);

// Reads one line (without its newline) into `line`, keeping what follows in `buffer`; blocks; false
// at the end of the channel.
bool read_line(int fd, std::string& buffer, std::string* line);

// Moves the complete lines of `buffer` to `lines`, keeping an unfinished one.
void take_lines(std::string& buffer, std::vector<std::string>* lines);

}  // namespace gemmtune
