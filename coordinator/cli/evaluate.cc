#include "coordinator/cli/evaluate.h"

#include <chrono>
#include <iostream>
#include <thread>

#include "common/metric_json.h"
#include "common/per_class_key.h"
#include "coordinator/cli/control.h"
#include "coordinator/rpc/client.h"
#include "coordinator/run/embedded_run.h"
#include "coordinator/run/files.h"

namespace sift::coordinator {
namespace {

struct EvaluateOptions {
  common::ClientOptions client;
  std::string run_dir;
  int64_t study_id = 0;
  int64_t trial = -1;
  double timeout_s = 600;
  bool no_wait = false;
};

EvaluateOptions& EvaluateOpts() {
  static EvaluateOptions options;
  return options;
}

// Prints the trial's evaluation; returns the exit code it stands for (0 done, 1 failed, -1 open).
int Show(const v1::Trial& t) {
  const std::string& state = t.test_evaluation();
  if (state != "done" && state != "failed") return -1;
  std::cout << "trial " << t.number() << " held-out test score (scored once): ";
  if (state == "failed") {
    std::cout << "failed: " << t.test_error() << "\n";
    return 1;
  }
  std::string scores;
  for (const auto& [k, v] :
       std::map<std::string, double>(t.test_metrics().begin(), t.test_metrics().end())) {
    if (common::IsPerClassKey(k) || k == "test_seconds") continue;
    scores += (scores.empty() ? "" : ", ") + k + " " + common::FormatMetric(v, 4);
  }
  std::cout << (scores.empty() ? "-" : scores) << "\n";
  return 0;
}

int Evaluate(EvaluateOptions o) {
  if (o.trial < 0) {
    std::cerr << "sift evaluate: give --trial N\n";
    return 2;
  }
  if (o.study_id <= 0) {
    std::cerr << "sift evaluate: give --study S\n";
    return 2;
  }
  if (!o.run_dir.empty()) {
    RunEndpoint endpoint;
    // A run that has ended: its database, a coordinator and one worker of this command's own.
    if (!ReadRunEndpoint(o.run_dir, &endpoint).empty()) {
      return EvaluateInRunDir(o.run_dir, o.study_id, o.trial, o.timeout_s);
    }
  }
  if (int rc = ResolveRunDir(o.run_dir, &o.client); rc != 0) return rc;
  auto stub = v1::Studies::NewStub(common::MakeChannel(o.client));
  v1::EvaluateTrialRequest req;
  req.set_study_id(o.study_id);
  req.set_trial_number(o.trial);
  v1::Trial trial;
  grpc::Status s = stub->EvaluateTrial(MakeContext(o.client.token).get(), req, &trial);
  if (!s.ok()) {
    std::cerr << "sift evaluate (study " << o.study_id << ", trial " << o.trial
              << "): " << s.error_message() << "\n";
    return s.error_code() == grpc::StatusCode::UNAVAILABLE ? 1 : 2;
  }
  if (int rc = Show(trial); rc >= 0) return rc;
  std::cout << "trial " << o.trial << ": test evaluation " << trial.test_evaluation() << "\n";
  if (o.no_wait) return 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    v1::ListTrialsRequest list;
    list.set_study_id(o.study_id);
    v1::ListTrialsResponse trials;
    s = stub->ListTrials(MakeContext(o.client.token).get(), list, &trials);
    if (!s.ok()) {
      std::cerr << "ListTrials: " << s.error_message() << "\n";
      return 1;
    }
    for (const auto& t : trials.trials()) {
      if (t.number() != o.trial) continue;
      if (int rc = Show(t); rc >= 0) return rc;
    }
  }
  std::cerr << "trial " << o.trial << ": no test score after " << o.timeout_s
            << " s (is a worker connected?); it stays queued\n";
  return 1;
}

}  // namespace

void AddEvaluateCommand(CLI::App& app) {
  EvaluateOptions& o = EvaluateOpts();
  auto* cmd = app.add_subcommand(
      "evaluate", "score a finished trial's checkpoint on the held-out test split, once");
  common::AddClientFlags(cmd, &o.client);
  cmd->add_option(
      "--run", o.run_dir,
      "a `sift run` directory (running, or ended: then scored here by one local worker)");
  cmd->add_option("--study", o.study_id, "the study")->required();
  cmd->add_option("--trial", o.trial, "the trial to score")->required();
  cmd->add_option("--timeout", o.timeout_s, "seconds to wait for the score (default 600)");
  cmd->add_flag("--no-wait", o.no_wait, "queue it and return");
}

int RunEvaluateCommand(const CLI::App& app) {
  const auto* cmd = app.get_subcommand("evaluate");
  return cmd->parsed() ? Evaluate(EvaluateOpts()) : -1;
}

}  // namespace sift::coordinator
