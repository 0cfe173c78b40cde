// Between processes of one machine (torch.multiprocessing): messages of bytes and file
// descriptors over Unix sockets, and worker processes started from the tide program.
//
// A socket pair of records (SOCK_SEQPACKET) is the one transport: every send arrives whole
// at exactly one reader, however many processes write or read the same end, and may carry
// descriptors (SCM_RIGHTS) -- memfds of shared tensors, other sockets. A Queue is one pair
// (put writes one end, get reads the other); a Pipe's two connections are the two ends.
#pragma once
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tide::ipc {

// An owned file descriptor, closed by the destructor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

// A received message: its bytes and the descriptors that came with it (owned until taken).
struct Message {
  std::string bytes;
  std::vector<Fd> fds;
};

// The most descriptors one message carries (the kernel's SCM_MAX_FD is 253; one is kept for
// a payload that travels in a memfd).
constexpr size_t kMaxMessageFds = 252;

// A connected pair of record sockets (close-on-exec).
std::pair<Fd, Fd> socket_pair(const char* op);

// Sends one message on socket fd, waiting while its buffer is full (Ctrl-C interrupts the
// wait). Payloads above 32 KiB travel in a memfd. Errors name `op`.
void send(int fd, const std::string& bytes, const std::vector<int>& fds, const char* op);
// Receives one message from socket fd, waiting up to `timeout` seconds (negative: without a
// limit); false when the time ran out. An end of file (every writer gone) is an error.
bool recv(int fd, Message& out, double timeout, const char* op);
// Whether a message (or an end of file) is waiting, after up to `timeout` seconds.
bool readable(int fd, double timeout);

// The tide program, which worker processes run: TIDE_EXECUTABLE when set, else the path the
// tide program registered at start (set_program_path); an error in a host that embeds tide
// without setting either.
void set_program_path(const std::string& path);
std::string program_path(const char* op);

// Starts `argv` (argv[0] the program) with the environment `env` (NAME=value entries) and
// the descriptor `pass_fd` as descriptor 3 in the new process; the other descriptors of this
// process are not inherited (they are close-on-exec). Signals start with default handling.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int pass_fd,
            const char* op);

// How a process ended.
struct ExitStatus {
  bool signaled = false;
  int code = 0;  // the exit status, or the signal's number
  // "exit code 3" or "signal SIGKILL"
  std::string str() const;
};
// The status of a child process that has ended (reaped), or nothing while it runs.
std::optional<ExitStatus> poll_child(pid_t pid);
// Waits for a child to end, up to `timeout` seconds (negative: without a limit).
std::optional<ExitStatus> wait_child(pid_t pid, double timeout);

}  // namespace tide::ipc
