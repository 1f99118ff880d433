#include "coordinator/cli/control.h"

#include <ctime>
#include <iostream>
#include <optional>
#include <vector>

#include "coordinator/cost/alerts.h"
#include "coordinator/rpc/client.h"
#include "coordinator/run/files.h"

namespace sift::coordinator {
namespace {

struct ControlOptions {
  common::ClientOptions client;  // --coordinator, TLS and the token (AddClientFlags)
  std::string run_dir;
  int64_t study_id = 0;
  double max_dollars = 0, max_hours = 0;
  int64_t max_trials = 0;
  CLI::Option *dollars = nullptr, *hours = nullptr, *trials = nullptr;
};

ControlOptions& ControlOpts() {
  static ControlOptions options;
  return options;
}

const char* const kControlCommands[] = {"cancel", "pause", "resume", "budget"};

std::string When(double at) {
  const std::time_t t = static_cast<std::time_t>(at);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

int Failed(const std::string& what, const grpc::Status& s, const std::string& address) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
      s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::cerr << "cannot reach the coordinator at " << address << ": " << s.error_message() << "\n";
    return 1;
  }
  std::cerr << what << ": " << s.error_message() << "\n";
  return s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ? 2 : 1;
}

// The study a command acts on: --study, else the one open (running or paused) study there.
int PickStudy(v1::Studies::Stub& stub, const ControlOptions& o, int64_t* id) {
  if (o.study_id > 0) {
    *id = o.study_id;
    return 0;
  }
  v1::ListStudiesResponse studies;
  grpc::Status s =
      stub.ListStudies(MakeContext(o.client.token).get(), v1::ListStudiesRequest(), &studies);
  if (!s.ok()) return Failed("ListStudies", s, o.client.address);
  std::vector<int64_t> open;
  std::string listed;
  for (const auto& st : studies.studies()) {
    if (st.state() == v1::STUDY_RUNNING || st.state() == v1::STUDY_PAUSED) {
      open.push_back(st.id());
    }
    listed += " " + std::to_string(st.id()) + " (" + ToString(FromProto(st).record.state) + ")";
  }
  if (open.size() == 1) {
    *id = open.front();
    return 0;
  }
  std::cerr << (open.empty() ? "no running or paused study" : "several open studies") << " at "
            << o.client.address
            << "; give --study N (studies:" << (listed.empty() ? " none" : listed) << ")\n";
  return 1;
}

std::string Limit(double v, const char* fmt) {
  if (v <= 0) return "none";
  char buf[32];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

int Control(const std::string& command, ControlOptions o) {
  if (command == "budget" && !o.dollars->count() && !o.hours->count() && !o.trials->count()) {
    std::cerr << "sift budget: give --max-dollars, --max-hours or --max-trials\n";
    return 2;
  }
  if (int rc = ResolveRunDir(o.run_dir, &o.client); rc != 0) return rc;
  auto stub = v1::Studies::NewStub(common::MakeChannel(o.client));
  int64_t id = 0;
  if (int rc = PickStudy(*stub, o, &id); rc != 0) return rc;
  v1::Study study;
  grpc::Status s;
  if (command == "cancel") {
    v1::CancelStudyRequest req;
    req.set_study_id(id);
    s = stub->CancelStudy(MakeContext(o.client.token).get(), req, &study);
  } else if (command == "pause") {
    v1::PauseStudyRequest req;
    req.set_study_id(id);
    s = stub->PauseStudy(MakeContext(o.client.token).get(), req, &study);
  } else if (command == "resume") {
    v1::ResumeStudyRequest req;
    req.set_study_id(id);
    s = stub->ResumeStudy(MakeContext(o.client.token).get(), req, &study);
  } else {
    v1::UpdateBudgetRequest req;
    req.set_study_id(id);
    if (o.dollars->count()) req.set_max_dollars(o.max_dollars);
    if (o.hours->count()) req.set_max_hours(o.max_hours);
    if (o.trials->count()) req.set_max_trials(o.max_trials);
    s = stub->UpdateBudget(MakeContext(o.client.token).get(), req, &study);
  }
  if (!s.ok()) {
    return Failed("sift " + command + " (study " + std::to_string(id) + ")", s, o.client.address);
  }
  std::cout << "study " << study.id() << " '" << study.name()
            << "': " << ToString(FromProto(study).record.state);
  if (!study.end_reason().empty()) std::cout << " (" << study.end_reason() << ")";
  if (command == "budget") {
    std::cout << "; budget now: max_dollars " << Limit(study.max_dollars(), "$%.4f")
              << ", max_hours " << Limit(study.max_hours(), "%.2f") << ", max_trials "
              << study.max_trials();
  } else if (command == "pause") {
    std::cout << "; running trials hand back at their next epoch";
  }
  std::cout << "\n";
  return 0;
}

}  // namespace

void AddControlCommands(CLI::App& app) {
  ControlOptions& o = ControlOpts();
  const std::pair<const char*, const char*> commands[] = {
      {"cancel", "end a study for good (its results so far stay)"},
      {"pause", "stop handing out a study's work; running trials checkpoint and hand back"},
      {"resume", "continue a paused study"},
      {"budget", "change a running or paused study's budget (applies to the next work)"}};
  for (const auto& [name, help] : commands) {
    auto* cmd = app.add_subcommand(name, help);
    common::AddClientFlags(cmd, &o.client);
    cmd->add_option("--run", o.run_dir, "the run directory of a running `sift run`");
    cmd->add_option("--study", o.study_id, "the study (default: the one open study)");
    if (std::string(name) == "budget") {
      o.dollars = cmd->add_option("--max-dollars", o.max_dollars, "new dollar budget (> 0)");
      o.hours = cmd->add_option("--max-hours", o.max_hours,
                                "new wall-clock budget in hours (> 0; paused time not counted)");
      o.trials = cmd->add_option("--max-trials", o.max_trials,
                                 "new trial budget (>= the trials already created)");
    }
  }
}

int RunControlCommand(const CLI::App& app) {
  for (const char* name : kControlCommands) {
    const auto* cmd = app.get_subcommand(name);
    if (cmd->parsed()) {
      return Control(name, ControlOpts());
    }
  }
  return -1;
}

int ResolveRunDir(const std::string& run_dir, common::ClientOptions* client) {
  if (run_dir.empty()) return 0;
  RunEndpoint endpoint;
  if (std::string problem = ReadRunEndpoint(run_dir, &endpoint); !problem.empty()) {
    std::cerr << problem << "\n";
    return 1;
  }
  client->address = endpoint.address;
  // The run's own token, unless the caller named one.
  if (client->token_file.empty()) client->token = endpoint.token;
  return 0;
}

std::string FormatStudyEvents(const StudySummary& study) {
  std::string out;
  for (const auto& e : study.events) {
    // An alert's or a recorded forecast's detail is JSON for machines; people get its message.
    const std::string message = CostEventMessage(e);
    const std::string& detail = message.empty() ? e.detail : message;
    out += "  " + When(e.at) + "  " + e.user + "  " + e.action +
           (detail.empty() ? "" : " " + detail) + "\n";
  }
  return out.empty() ? "" : "history:\n" + out;
}

}  // namespace sift::coordinator
