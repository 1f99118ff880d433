#include "worker/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/checkpoint_file.h"
#include "common/checkpoint_names.h"
#include "common/framed_file.h"
#include "common/metric_names.h"
#include "common/params_json.h"
#include "common/posix_fs.h"
#include "common/subprocess.h"
#include "common/wire/proto_convert.h"
#include "worker/coordinator_link.h"
#include "worker/dir_archive.h"
#include "worker/report_line.h"
#include "worker/scratch_dirs.h"
#include "worker/spot_simulator.h"
#include "worker/stop_signals.h"

namespace sift::worker {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxLine = 1 << 20;  // a longer "line" is logged in pieces, never a report
constexpr int kStderrTailLines = 20;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// --name=value with full precision (a searched 1e-4 must reach the program as that number).
std::string ArgValue(const search::ParamValue& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", *d);
    return buf;
  }
  return search::ToString(v);
}

// The last `lines` lines of `path` written after byte `from`.
std::string Tail(const std::string& path, std::streamoff from, int lines) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  const std::streamoff start = std::max(from, end - 8192);
  in.seekg(start);
  std::string text(static_cast<size_t>(end - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::deque<std::string> last;
  size_t start_of_line = 0;
  while (start_of_line < text.size()) {
    size_t nl = text.find('\n', start_of_line);
    if (nl == std::string::npos) nl = text.size();
    last.push_back(text.substr(start_of_line, nl - start_of_line));
    if (static_cast<int>(last.size()) > lines) last.pop_front();
    start_of_line = nl + 1;
  }
  std::string out;
  for (const auto& l : last) out += (out.empty() ? "" : "\n") + l;
  return out;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by ") + strsignal(WTERMSIG(status));
  return "ended";
}

// One lease of a command trial, from restoring its checkpoint folder to the final RPC.
class CommandTrial {
 public:
  CommandTrial(const v1::TrialAssignment& a, CoordinatorLink* link, SpotSimulator* spot,
               std::atomic<bool>* stop, const std::string& log_dir)
      : a_(a), link_(link), spot_(spot), stop_(stop) {
    const std::string tag =
        "study-" + std::to_string(a.study_id()) + "-trial-" + std::to_string(a.trial_number());
    SweepDeadScratchOnce("sift-command-");
    work_dir_ = ScratchPath("sift-command-", "-" + tag);
    checkpoint_dir_ = work_dir_ + "/checkpoint";
    if (std::string p = common::CreateDirectories(log_dir); !p.empty()) spdlog::warn("{}", p);
    stdout_log_ = log_dir + "/" + tag + ".stdout.log";
    stderr_log_ = log_dir + "/" + tag + ".stderr.log";
    grace_ = a.command_grace_seconds();
    report_timeout_ = a.report_timeout_seconds() > 0 ? a.report_timeout_seconds() : 600;
    last_epoch_ = a.start_epoch();
  }

  ~CommandTrial() {
    if (pid_ > 0) {  // never leave the program (or what it started) running
      killpg(pid_, SIGKILL);
      int status;
      common::Wait(pid_, &status);
    }
    if (out_fd_ >= 0) close(out_fd_);
    common::RemoveAll(work_dir_);
  }

  void Run() {
    std::string problem = Restore();
    if (!problem.empty()) return link_->Fail(a_, problem);
    problem = Spawn();
    if (!problem.empty()) return link_->Fail(a_, problem);
    spot_->ArmReclaim(a_.start_epoch() + 1);
    Supervise();
  }

 private:
  // The checkpoint folder of a resumed lease: the newest intact checkpoint, else each fallback,
  // else an empty folder (the program starts over; epochs up to start_epoch are not reported).
  std::string Restore() {
    if (std::string p = common::CreateDirectories(checkpoint_dir_); !p.empty()) return p;
    if (a_.resume_checkpoint().empty()) return "";
    std::vector<std::string> candidates = {a_.resume_checkpoint()};
    candidates.insert(candidates.end(), a_.resume_fallbacks().begin(), a_.resume_fallbacks().end());
    for (const auto& name : candidates) {
      const std::string path = link_->LocalCheckpoint(a_, name);
      bool missing = false;
      std::string problem = link_->FetchCheckpoint(a_, name, path, &missing);
      if (!problem.empty() && !missing) return problem;
      if (problem.empty()) {
        try {
          UnpackDirectory(
              common::ReadFramedFile(path, common::kCheckpointMagic, common::kCheckpointVersion),
              checkpoint_dir_);
        } catch (const std::exception& e) {
          problem = e.what();
          common::RemoveAll(checkpoint_dir_);
          common::CreateDirectories(checkpoint_dir_);
        }
        if (a_.checkpoint_dir().empty()) common::Remove(path);
      }
      if (problem.empty()) {
        spdlog::info("trial {}: checkpoint folder restored from {}", a_.trial_number(), name);
        last_checkpoint_ = name;  // what a preemption before the first report hands back
        const std::string payload = PackDirectory(checkpoint_dir_);
        stored_crc_ = common::Crc32(payload.data(), payload.size());
        return "";
      }
      spdlog::warn("trial {}: checkpoint {} is unusable ({}); trying the next", a_.trial_number(),
                   name, problem);
    }
    spdlog::warn("trial {}: no usable checkpoint; the program starts with an empty folder",
                 a_.trial_number());
    return "";
  }

  std::string Spawn() {
    const search::Params params = common::FromProto(a_.params());
    std::vector<std::string> args(a_.command().begin(), a_.command().end());
    for (const auto& [name, value] : params) args.push_back("--" + name + "=" + ArgValue(value));
    common::SpawnOptions o;
    o.argv = std::move(args);
    o.env.emplace();
    std::vector<std::string>& env = *o.env;
    for (std::string& e : common::CurrentEnvironment()) {
      if (e.compare(0, 5, "SIFT_") != 0) env.push_back(std::move(e));
    }
    env.push_back("SIFT_PARAMS=" + common::ParamsToJsonText(params));
    env.push_back("SIFT_TRIAL=" + std::to_string(a_.trial_number()));
    env.push_back("SIFT_STUDY=" + std::to_string(a_.study_id()));
    env.push_back("SIFT_EPOCH_START=" + std::to_string(a_.start_epoch()));
    env.push_back("SIFT_MAX_EPOCHS=" + std::to_string(a_.max_epochs()));
    env.push_back("SIFT_SEED=" + std::to_string(a_.seed()));
    env.push_back("SIFT_CHECKPOINT_DIR=" + checkpoint_dir_);
    if (getenv("PYTHONUNBUFFERED") == nullptr) env.push_back("PYTHONUNBUFFERED=1");
    o.search_path = true;
    o.dir = a_.command_dir().empty() ? "." : a_.command_dir();
    o.clear_signal_mask = true;  // sift-worker blocks SIGTERM and SIGINT in its threads
    o.own_group = true;          // signals reach what it starts, too
    o.die_with_parent = true;    // a worker that vanishes takes its trial with it

    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
    o.in = common::Stdio::Null();
    o.out = common::Stdio::Fd(out[1]);
    o.err = common::Stdio::File(stderr_log_, /*append=*/true);
    std::error_code ec;
    const auto stderr_size = fs::file_size(stderr_log_, ec);
    stderr_start_ = ec ? 0 : static_cast<std::streamoff>(stderr_size);
    log_.open(stdout_log_, std::ios::app);
    log_ << "# sift: trial " << a_.trial_number() << " lease " << a_.lease_id()
         << " starts at epoch " << a_.start_epoch() << "\n";
    log_.flush();

    std::string error;
    const pid_t pid = common::Spawn(o, &error);
    close(out[1]);
    if (pid < 0) {
      close(out[0]);
      return error;
    }
    pid_ = pid;
    out_fd_ = out[0];
    started_ = last_report_ = Clock::now();
    std::string shown;
    for (const auto& arg : a_.command()) shown += (shown.empty() ? "" : " ") + arg;
    spdlog::info("trial {}: started `{}` (pid {}) in {}; output in {}", a_.trial_number(), shown,
                 pid, o.dir, stdout_log_);
    return "";
  }

  enum class End {
    kRunning,
    kExited,
    kFinished,
    kStopped,
    kPaused,
    kPreempted,
    kAbandoned,
    kFailed
  };

  void Supervise() {
    while (end_ == End::kRunning) {
      Pump(100);
      if (end_ != End::kRunning) break;
      if (Reap()) {
        if (end_ == End::kRunning) end_ = End::kExited;
        break;
      }
      if (link_->revoked()) {
        spdlog::warn("trial {}: lease revoked; killing the program", a_.trial_number());
        Kill();
        end_ = End::kAbandoned;
      } else if (*stop_) {
        Preempt();
      } else if (Seconds(Clock::now() - last_report_) > report_timeout_) {
        Kill();
        Fail("no report for " + std::to_string(static_cast<int64_t>(report_timeout_)) +
             " s (trial.report_timeout); the program was killed" + StderrTail());
      }
    }
    switch (end_) {
      case End::kExited:
        return Exited();
      case End::kFinished:
      case End::kStopped:
      case End::kPaused:
        return Complete();
      default:
        return;  // preempted, abandoned and failed trials said so already
    }
  }

  // Reads what the program printed (waiting up to `wait_ms`), handling each whole line.
  void Pump(int wait_ms) {
    if (out_fd_ < 0) {
      if (wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      return;
    }
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, wait_ms) <= 0) return;
    char buf[65536];
    const ssize_t n = read(out_fd_, buf, sizeof(buf));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) return;
      close(out_fd_);  // EOF: the program (and all it started) closed its stdout
      out_fd_ = -1;
      if (!partial_.empty()) Line(std::exchange(partial_, ""));
      return;
    }
    partial_.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = partial_.find('\n')) != std::string::npos) {
      std::string line = partial_.substr(0, nl);
      partial_.erase(0, nl + 1);
      Line(line);
    }
    if (partial_.size() > kMaxLine) Line(std::exchange(partial_, ""));
  }

  void Line(const std::string& line) {
    log_ << line << "\n";
    log_.flush();
    if (end_ != End::kRunning || line.size() > kMaxLine) return;  // after the decision: output only
    std::string error;
    const std::optional<ReportLine> r = ParseReportLine(line, &error);
    if (!error.empty()) {
      Kill();
      return Fail("a malformed report on stdout (" + error + "): " + line.substr(0, 200));
    }
    if (r) Report(*r);
  }

  void Report(const ReportLine& r) {
    const double seconds = Seconds(Clock::now() - last_report_);
    last_report_ = Clock::now();
    if (r.epoch <= a_.start_epoch()) {
      spdlog::info("trial {}: the program redid epoch {} (reported before)", a_.trial_number(),
                   r.epoch);
      return;
    }
    if (!a_.objective_metric().empty() && !r.metrics.count(a_.objective_metric())) {
      Kill();
      return Fail("the report for epoch " + std::to_string(r.epoch) + " has no '" +
                  a_.objective_metric() + "' (the study's objective.metric)");
    }
    spot_->EpochDone(seconds);
    // The program waits (SIGSTOP) while its folder is packed and the report is answered, as the
    // built-in trainer does: the folder cannot change under the packing.
    Signal(SIGSTOP);
    std::string checkpoint;
    if (std::string p =
            StoreFolder(common::EpochCheckpointName(a_.trial_number(), r.epoch), &checkpoint);
        !p.empty()) {
      Kill();
      return Fail(p);
    }
    v1::ReportProgressRequest req;
    req.set_seq(++seq_);
    req.set_epoch(r.epoch);
    req.set_checkpoint(checkpoint);
    auto& metrics = *req.mutable_metrics();
    metrics.insert(r.metrics.begin(), r.metrics.end());
    if (!metrics.count(common::kEpochSeconds)) metrics[common::kEpochSeconds] = seconds;
    v1::ReportProgressResponse resp;
    grpc::Status s = link_->Report(a_, &req, &resp);
    Signal(SIGCONT);
    last_report_ = Clock::now();  // the report's own time is not the program's
    if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      spdlog::warn("trial {}: {}; abandoning it", a_.trial_number(), s.error_message());
      Kill();
      end_ = End::kAbandoned;
      return;
    }
    if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      Kill();
      return Fail("the coordinator refused a report: " + s.error_message());
    }
    if (!s.ok()) {
      spdlog::error("trial {}: report failed: {}", a_.trial_number(), s.error_message());
      Kill();
      end_ = End::kAbandoned;
      return;
    }
    last_epoch_ = r.epoch;
    if (!checkpoint.empty()) last_checkpoint_ = checkpoint;
    if (resp.decision() == v1::DECISION_STOP || resp.decision() == v1::DECISION_PAUSE) {
      spdlog::info("trial {}: {} after epoch {}; SIGTERM to the program", a_.trial_number(),
                   resp.decision() == v1::DECISION_STOP ? "stopped" : "paused", r.epoch);
      end_ = resp.decision() == v1::DECISION_STOP ? End::kStopped : End::kPaused;
      Terminate();
    } else if (r.epoch >= a_.max_epochs()) {
      end_ = End::kFinished;
      WaitForExit();  // its last epoch: it should leave by itself
    } else {
      spot_->ArmReclaim(r.epoch + 1);
    }
  }

  // Packs the checkpoint folder as `name` and stores it (shared folder or upload). An empty
  // folder, or one unchanged since the last store, stores nothing (*stored: the checkpoint that
  // holds it, or "").
  std::string StoreFolder(const std::string& name, std::string* stored) {
    stored->clear();
    try {
      const std::string payload = PackDirectory(checkpoint_dir_);
      if (payload.size() <= 8) return "";
      const uint32_t crc = common::Crc32(payload.data(), payload.size());
      if (!last_checkpoint_.empty() && crc == stored_crc_) {
        *stored = last_checkpoint_;
        return "";
      }
      common::WriteFramedFile(link_->LocalCheckpoint(a_, name), common::kCheckpointMagic,
                              common::kCheckpointVersion, payload);
      if (std::string p = link_->StoreCheckpoint(a_, name); !p.empty()) return p;
      stored_crc_ = crc;
      *stored = name;
      return "";
    } catch (const std::exception& e) {
      return std::string("cannot store SIFT_CHECKPOINT_DIR: ") + e.what();
    }
  }

  // The worker is stopping (SIGTERM, or the spot simulator's notice): the program gets the
  // signal and grace_seconds to write its checkpoint and leave; the folder is then handed back.
  void Preempt() {
    spdlog::warn("trial {}: worker stopping; SIGTERM to the program", a_.trial_number());
    end_ = End::kPreempted;
    Terminate();
    std::string checkpoint;
    std::string problem =
        StoreFolder(common::PreemptCheckpointName(a_.trial_number(), last_epoch_, 1), &checkpoint);
    if (!problem.empty()) {
      spdlog::error("trial {}: no checkpoint on preemption ({}); it resumes from its last report",
                    a_.trial_number(), problem);
      checkpoint = last_checkpoint_;
    }
    const std::string reason = spot_->reason();
    grpc::Status s = link_->Preempt(a_, checkpoint, reason.empty() ? "SIGTERM" : reason);
    spdlog::warn("trial {} preempted after epoch {}: {}", a_.trial_number(), last_epoch_,
                 s.ok() ? "checkpointed and handed back" : s.error_message());
  }

  // The program left by itself.
  void Exited() {
    if (!(WIFEXITED(status_) && WEXITSTATUS(status_) == 0)) {
      return Fail("the program " + DescribeExit(status_) + StderrTail());
    }
    if (last_epoch_ == a_.start_epoch() && last_epoch_ < a_.max_epochs()) {
      return Fail(
          "the program exited with status 0 without reporting an epoch (print "
          "{\"sift\": {\"epoch\": N, ...}} lines on stdout)" +
          StderrTail());
    }
    Complete();
  }

  void Complete() {
    v1::CompleteTrialRequest req;
    req.set_checkpoint(last_checkpoint_);
    (*req.mutable_final_metrics())["program_seconds"] = Seconds(Clock::now() - started_);
    grpc::Status s = link_->Complete(a_, &req);
    if (!s.ok()) {
      spdlog::warn("trial {}: completion not recorded: {}", a_.trial_number(), s.error_message());
    }
  }

  void Fail(const std::string& error) {
    end_ = End::kFailed;
    link_->Fail(a_, error);
  }

  std::string StderrTail() {
    const std::string tail = Tail(stderr_log_, stderr_start_, kStderrTailLines);
    return tail.empty() ? "" : "; its stderr ended with:\n" + tail;
  }

  // True once the program has exited (its status in status_); the rest of its output is read.
  bool Reap() {
    if (pid_ <= 0) return true;
    if (common::TryWait(pid_, &status_) != pid_) return false;
    killpg(pid_, SIGKILL);  // anything it started and left behind
    pid_ = -1;
    for (int i = 0; i < 100 && out_fd_ >= 0; ++i) Pump(10);
    return true;
  }

  // SIGTERM, then SIGKILL after the grace period; its output meanwhile goes to the log.
  void Terminate() {
    if (pid_ <= 0) return;
    Signal(SIGCONT);
    Signal(SIGTERM);
    const auto until =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(grace_ * 1000));
    while (Clock::now() < until && !Reap()) Pump(50);
    Kill();
  }

  // After its last report: the grace period to exit by itself, then as Terminate.
  void WaitForExit() {
    const auto until =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(grace_ * 1000));
    while (Clock::now() < until && !Reap()) Pump(50);
    Terminate();
  }

  // Never with pid_ <= 0: killpg(-1) would signal init.
  void Signal(int sig) {
    if (pid_ > 0) killpg(pid_, sig);
  }

  void Kill() {
    if (pid_ <= 0) return;
    killpg(pid_, SIGKILL);
    common::Wait(pid_, &status_);
    pid_ = -1;
  }

  const v1::TrialAssignment& a_;
  CoordinatorLink* link_;
  SpotSimulator* spot_;
  std::atomic<bool>* stop_;
  std::string work_dir_, checkpoint_dir_, stdout_log_, stderr_log_;
  std::ofstream log_;
  std::streamoff stderr_start_ = 0;
  double grace_ = 10, report_timeout_ = 600;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int status_ = 0;
  std::string partial_;
  Clock::time_point started_, last_report_;
  End end_ = End::kRunning;
  int64_t seq_ = 0;
  int64_t last_epoch_ = 0;
  std::string last_checkpoint_;  // of the newest report (or the resumed one): "" if none
  uint32_t stored_crc_ = 0;
};

}  // namespace

void CommandRunner::Run(const v1::TrialAssignment& a) {
  try {
    CommandTrial(a, link_, spot_, stop_, log_dir_).Run();
  } catch (const std::exception& e) {
    link_->Fail(a, e.what());
  }
}

}  // namespace sift::worker
