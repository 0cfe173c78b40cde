// Record sockets with descriptors, and worker processes (see ipc.hpp).
#include "ipc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "error.hpp"
#include "interrupt.hpp"

namespace tide::ipc {

namespace {

// A message's first bytes: whether the payload follows inline or sits in the last descriptor.
enum : uint8_t { kInline = 0, kInMemfd = 1 };
constexpr size_t kInlineLimit = 32 * 1024;
constexpr size_t kRecordLimit = kInlineLimit + 1;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// poll() for `events` up to `timeout` seconds (negative: forever), in slices so that Ctrl-C
// (tide::request_interrupt) stops the wait. True when ready.
bool wait_fd(int fd, short events, double timeout) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    check_interrupt();
    double left = timeout < 0 ? 0.1 : std::min(0.1, timeout - seconds_since(t0));
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, left > 0 ? int(left * 1000) + 1 : 0);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) TIDE_FAIL("poll: ", std::strerror(errno));
    if (timeout >= 0 && seconds_since(t0) >= timeout) return false;
  }
}

std::mutex g_path_mu;
std::string g_program_path;

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.release();
  }
  return *this;
}

std::pair<Fd, Fd> socket_pair(const char* op) {
  int sv[2];
  TIDE_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, op, ": cannot create a socket pair (",
             std::strerror(errno), ")");
  return {Fd(sv[0]), Fd(sv[1])};
}

void send(int fd, const std::string& bytes, const std::vector<int>& fds, const char* op) {
  TIDE_CHECK(fds.size() <= kMaxMessageFds, op, ": a message can carry at most ", kMaxMessageFds,
             " shared tensors, queues and pipes, this one has ", fds.size());
  std::vector<int> all = fds;
  std::string record(1, char(kInline));
  Fd payload;
  if (bytes.size() > kInlineLimit) {
    payload = Fd(memfd_create("tide-message", MFD_CLOEXEC));
    TIDE_CHECK(payload.get() >= 0, op, ": cannot create a memfd for a message (", std::strerror(errno), ")");
    for (size_t done = 0; done < bytes.size();) {
      ssize_t w = write(payload.get(), bytes.data() + done, bytes.size() - done);
      TIDE_CHECK(w > 0 || errno == EINTR, op, ": cannot write a message of ", bytes.size(), " bytes (",
                 std::strerror(errno), ")");
      if (w > 0) done += size_t(w);
    }
    record[0] = char(kInMemfd);
    record += std::to_string(bytes.size());
    all.push_back(payload.get());
  } else {
    record += bytes;
  }
  struct iovec iov = {record.data(), record.size()};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control;
  if (!all.empty()) {
    control.assign(CMSG_SPACE(sizeof(int) * all.size()), 0);
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * all.size());
    std::memcpy(CMSG_DATA(c), all.data(), sizeof(int) * all.size());
  }
  for (;;) {
    ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r >= 0) return;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      wait_fd(fd, POLLOUT, -1);
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET)
      TIDE_FAIL(op, ": the other end is closed (every process that could read it has ended)");
    TIDE_FAIL(op, ": cannot send a message (", std::strerror(errno), ")");
  }
}

bool readable(int fd, double timeout) { return wait_fd(fd, POLLIN, timeout); }

bool recv(int fd, Message& out, double timeout, const char* op) {
  auto t0 = std::chrono::steady_clock::now();
  std::string record(kRecordLimit, '\0');
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (kMaxMessageFds + 1)));
  for (;;) {
    double left = timeout < 0 ? -1 : std::max(0.0, timeout - seconds_since(t0));
    if (!wait_fd(fd, POLLIN, left)) return false;
    struct iovec iov = {record.data(), record.size()};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    ssize_t r = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;  // another reader took it
      TIDE_FAIL(op, ": cannot receive a message (", std::strerror(errno), ")");
    }
    std::vector<Fd> fds;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; ++i) {
        int f;
        std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds.emplace_back(f);
      }
    }
    TIDE_CHECK(r > 0, op, ": the other end is closed (every process that could write to it has ended)");
    TIDE_CHECK(!(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)), op, ": a message arrived cut short");
    out.fds.clear();
    if (record[0] == char(kInMemfd)) {
      TIDE_CHECK(!fds.empty(), op, ": a message lost its payload");
      size_t n = std::strtoull(record.c_str() + 1, nullptr, 10);
      Fd payload = std::move(fds.back());
      fds.pop_back();
      out.bytes.assign(n, '\0');
      for (size_t done = 0; done < n;) {
        ssize_t g = pread(payload.get(), out.bytes.data() + done, n - done, off_t(done));
        TIDE_CHECK(g > 0 || (g < 0 && errno == EINTR), op, ": cannot read a message of ", n, " bytes");
        if (g > 0) done += size_t(g);
      }
    } else {
      out.bytes.assign(record.data() + 1, size_t(r) - 1);
    }
    out.fds = std::move(fds);
    return true;
  }
}

void set_program_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_path_mu);
  g_program_path = path;
}

std::string program_path(const char* op) {
  if (const char* env = std::getenv("TIDE_EXECUTABLE"); env && *env) return env;
  std::lock_guard<std::mutex> lock(g_path_mu);
  TIDE_CHECK(!g_program_path.empty(), op, ": worker processes run the tide program, and this process is not it; "
             "set TIDE_EXECUTABLE to the path of tide");
  return g_program_path;
}

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int pass_fd, const char* op) {
  // The descriptor must not be 3 already (dup2 onto itself would leave it close-on-exec).
  Fd moved;
  if (pass_fd == 3) {
    moved = Fd(fcntl(pass_fd, F_DUPFD_CLOEXEC, 4));
    TIDE_CHECK(moved.get() >= 0, op, ": cannot duplicate a descriptor (", std::strerror(errno), ")");
    pass_fd = moved.get();
  }
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pass_fd, 3);
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  TIDE_CHECK(rc == 0, op, ": cannot start ", argv[0], " (", std::strerror(rc), ")");
  return pid;
}

std::string ExitStatus::str() const {
  if (!signaled) return "exit code " + std::to_string(code);
  const char* name = sigabbrev_np(code);
  return name ? std::string("signal SIG") + name : "signal " + std::to_string(code);
}

std::optional<ExitStatus> poll_child(pid_t pid) {
  int status = 0;
  pid_t r;
  do r = waitpid(pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  TIDE_CHECK(r >= 0, "multiprocessing: cannot wait for process ", pid, " (", std::strerror(errno), ")");
  if (r == 0) return std::nullopt;
  if (WIFSIGNALED(status)) return ExitStatus{true, WTERMSIG(status)};
  return ExitStatus{false, WEXITSTATUS(status)};
}

std::optional<ExitStatus> wait_child(pid_t pid, double timeout) {
  auto t0 = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    if (auto s = poll_child(pid)) return s;
    if (timeout >= 0 && seconds_since(t0) >= timeout) return std::nullopt;
    check_interrupt();
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

}  // namespace tide::ipc
