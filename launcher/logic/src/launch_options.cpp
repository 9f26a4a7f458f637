#include "wireup/launch_options.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <map>

#include "wireup/error.hpp"
#include "wireup/launch_report.hpp"
#include "wireup/text.hpp"

namespace wireup {

std::vector<int> default_forwarded_signals() {
  return {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
}

namespace {

// "--nproc_per_node" and "--nproc-per-node" are one flag.
std::string canonical(std::string_view flag) {
  std::string out(flag);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

std::uint32_t want_uint(const std::string& what, const std::string& v, std::uint64_t max) {
  auto n = parse_uint(trim(v), max);
  if (!n)
    throw InputError(what + ": expected a whole number up to " + std::to_string(max) + ", got " +
                     quoted(v));
  return static_cast<std::uint32_t>(*n);
}

double want_seconds(const std::string& what, const std::string& v) {
  char* end = nullptr;
  const std::string s(trim(v));
  const double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !(d >= 0) || d > 86400)
    throw InputError(what + ": expected seconds between 0 and 86400, got " + quoted(v));
  return d;
}

unsigned want_streams(const std::string& what, const std::string& v) {
  // torchrun: 0 none, 1 stdout, 2 stderr, 3 both; per-rank maps are not supported.
  const auto s = to_lower(trim(v));
  if (s == "0" || s == "none") return kNoStreams;
  if (s == "1" || s == "out" || s == "stdout") return kStdout;
  if (s == "2" || s == "err" || s == "stderr") return kStderr;
  if (s == "3" || s == "all" || s == "both") return kBothStreams;
  throw InputError(what + ": expected 0 (none), 1 (stdout), 2 (stderr) or 3 (both), got " +
                   quoted(v));
}

bool want_bool(const std::string& what, const std::string& v) {
  const auto s = to_lower(trim(v));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off" || s.empty()) return false;
  throw InputError(what + ": expected true or false, got " + quoted(v));
}

void check_nproc(const std::string& what, const std::string& v) {
  const auto s = to_lower(trim(v));
  if (s == "gpu" || s == "cpu" || s == "auto") return;
  if (auto n = parse_uint(s, 4096); n && *n > 0) return;
  throw InputError(what + ": expected a number of workers (1-4096), 'gpu', 'cpu' or 'auto', got " +
                   quoted(v));
}

void check_nnodes(const std::string& what, const std::string& v) {
  const auto parts = split(trim(v), ':');
  bool ok = parts.size() == 1 || parts.size() == 2;
  for (const auto& p : parts) ok = ok && parse_uint(p, 1u << 20).value_or(0) > 0;
  if (ok && parts.size() == 2) ok = *parse_uint(parts[0]) <= *parse_uint(parts[1]);
  if (!ok)
    throw InputError(what + ": expected N or MIN:MAX (positive, MIN <= MAX), got " + quoted(v));
}

struct Flag {
  bool takes_value;
  std::function<void(LaunchOptions&, const std::string& what, const std::string& v)> apply;
};

using FlagTable = std::map<std::string, Flag>;

// Where the job runs and how it restarts.
FlagTable job_flags() {
  return {
      {"nproc-per-node",
       {true,
        [](auto& o, auto& w, auto& v) {
          check_nproc(w, v);
          o.nproc_per_node = to_lower(trim(v));
        }}},
      {"nnodes",
       {true,
        [](auto& o, auto& w, auto& v) {
          check_nnodes(w, v);
          o.nnodes = v;
        }}},
      {"node-rank",
       {true, [](auto& o, auto& w, auto& v) { o.node_rank = want_uint(w, v, 1u << 20); }}},
      {"standalone", {false, [](auto& o, auto& w, auto& v) { o.standalone = want_bool(w, v); }}},
      {"max-restarts",
       {true, [](auto& o, auto& w, auto& v) { o.max_restarts = want_uint(w, v, 1000); }}},
      {"monitor-interval",
       {true, [](auto& o, auto& w, auto& v) { o.monitor_interval = want_seconds(w, v); }}},
      {"grace-period",
       {true, [](auto& o, auto& w, auto& v) { o.grace_period = want_seconds(w, v); }}},
      {"role",
       {true,
        [](auto& o, auto& w, auto& v) {
          if (v.empty() || !valid_env_value(v))
            throw InputError(w + ": expected a role name, got " + quoted(v));
          o.role = v;
        }}},
      {"rdzv-id",
       {true,
        [](auto& o, auto& w, auto& v) {
          if (!valid_env_value(v))
            throw InputError(w + ": expected a run id without newlines, got " + quoted(v));
          o.run_id = v;
        }}},
      {"run-id",
       {true,
        [](auto& o, auto& w, auto& v) {
          if (!valid_env_value(v))
            throw InputError(w + ": expected a run id without newlines, got " + quoted(v));
          o.run_id = v;
        }}},
  };
}

// Where the workers' output goes.
FlagTable output_flags() {
  return {
      {"log-dir",
       {true,
        [](auto& o, auto& w, auto& v) {
          if (v.empty()) throw InputError(w + ": expected a directory, got nothing");
          o.log_dir = v;
        }}},
      {"redirects",
       {true,
        [](auto& o, auto& w, auto& v) {
          o.redirects = want_streams(w, v);
          o.redirects_given = true;
        }}},
      {"tee", {true, [](auto& o, auto& w, auto& v) { o.tee = want_streams(w, v); }}},
      {"local-ranks-filter",
       {true, [](auto& o, auto& w, auto& v) { o.local_ranks_filter = parse_rank_list(w, v); }}},
      {"no-prefix", {false, [](auto& o, auto& w, auto& v) { o.prefix_lines = !want_bool(w, v); }}},
  };
}

// The program, its rendezvous, signals; torchrun's flags that PMIx makes moot.
FlagTable program_flags() {
  return {
      {"master-addr",
       {true,
        [](auto& o, auto& w, auto& v) {
          if (v.empty() || !valid_env_value(v) || v.find(' ') != std::string::npos)
            throw InputError(w + ": expected a host name or IP address, got " + quoted(v));
          o.master_addr = v;
        }}},
      {"master-port",
       {true,
        [](auto& o, auto& w, auto& v) {
          const auto p = want_uint(w, v, 65535);
          if (p == 0) throw InputError(w + ": expected a port 1-65535, got 0");
          o.master_port = p;
        }}},
      {"local-addr", {true, [](auto& o, auto&, auto& v) { o.local_addr = v; }}},
      {"control-port",
       {true,
        [](auto& o, auto& w, auto& v) {
          const auto p = want_uint(w, v, 65535);
          if (p == 0) throw InputError(w + ": expected a port 1-65535, got 0");
          o.control_port = p;
        }}},
      {"signals-to-handle",
       {true, [](auto& o, auto& w, auto& v) { o.signals_to_handle = parse_signal_list(w, v); }}},
      {"no-python", {false, [](auto& o, auto& w, auto& v) { o.no_python = want_bool(w, v); }}},
      {"module", {false, [](auto& o, auto& w, auto& v) { o.run_module = want_bool(w, v); }}},
      {"python",
       {true,
        [](auto& o, auto& w, auto& v) {
          if (v.empty()) throw InputError(w + ": expected an interpreter path, got nothing");
          o.python = v;
        }}},
      {"agent-store", {false, [](auto& o, auto& w, auto& v) { o.agent_store = want_bool(w, v); }}},
      {"preload", {true, [](auto& o, auto& w, auto& v) { o.preload = parse_module_list(w, v); }}},
      {"verbose", {false, [](auto& o, auto& w, auto& v) { o.verbose = want_bool(w, v); }}},
      // torchrun flags that mean nothing here: the rendezvous is PMIx's.
      {"rdzv-backend", {true, [](auto& o, auto& w, auto&) { o.ignored.push_back(w); }}},
      {"rdzv-endpoint", {true, [](auto& o, auto& w, auto&) { o.ignored.push_back(w); }}},
      {"rdzv-conf", {true, [](auto& o, auto& w, auto&) { o.ignored.push_back(w); }}},
      {"log-line-prefix-template", {true, [](auto& o, auto& w, auto&) { o.ignored.push_back(w); }}},
      {"start-method", {true, [](auto& o, auto& w, auto&) { o.ignored.push_back(w); }}},
      {"max-nodes", {true, [](auto& o, auto& w, auto&) { o.ignored.push_back(w); }}},
  };
}

const FlagTable& flag_table() {
  static const FlagTable t = [] {
    FlagTable all = job_flags();
    all.merge(output_flags());
    all.merge(program_flags());
    return all;
  }();
  return t;
}

const std::map<std::string, std::string>& short_flags() {
  static const std::map<std::string, std::string> s = {
      {"-r", "redirects"}, {"-t", "tee"}, {"-m", "module"}, {"-h", "help"}, {"-v", "verbose"}};
  return s;
}

}  // namespace

std::vector<int> parse_signal_list(const std::string& what, const std::string& list) {
  std::vector<int> out;
  for (const auto& raw : split(list, ',')) {
    const auto item = std::string(trim(raw));
    if (item.empty()) continue;
    auto sig = signal_number(item);
    if (!sig)
      throw InputError(what + ": unknown signal " + quoted(item) +
                       " (expected names like SIGTERM,SIGUSR1 or numbers 1-64)");
    if (*sig == SIGKILL || *sig == SIGSTOP || *sig == SIGCHLD)
      throw InputError(what + ": " + item + " cannot be caught and forwarded");
    if (std::find(out.begin(), out.end(), *sig) == out.end()) out.push_back(*sig);
  }
  if (out.empty()) throw InputError(what + ": expected at least one signal, got " + quoted(list));
  return out;
}

std::vector<std::string> parse_module_list(const std::string& what, const std::string& list) {
  std::vector<std::string> out;
  for (const auto& raw : split(list, ',')) {
    const std::string item(trim(raw));
    bool ok = !item.empty();
    for (const auto& part : split(item, '.')) {
      ok = ok && !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0]));
      for (char ch : part) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    }
    if (!ok)
      throw InputError(what + ": expected Python module names like torch,numpy.linalg, got " +
                       quoted(list));
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  return out;
}

std::vector<std::uint32_t> parse_rank_list(const std::string& what, const std::string& list) {
  std::vector<std::uint32_t> out;
  auto bad = [&] {
    throw InputError(what + ": expected local ranks like 0 or 0,2-3, got " + quoted(list));
  };
  for (const auto& item : split(list, ',')) {
    const auto parts = split(trim(item), '-');
    if (parts.size() > 2) bad();
    auto lo = parse_uint(parts[0], 4095), hi = parse_uint(parts.back(), 4095);
    if (!lo || !hi || *lo > *hi) bad();
    for (auto r = *lo; r <= *hi; ++r) out.push_back(static_cast<std::uint32_t>(r));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// One command-line flag: its canonical name and the value given with it
// (--name=value, -Xvalue, -X=value).
struct FlagWord {
  std::string name, value;
  bool has_value = false;
};

FlagWord split_flag(const std::string& a) {
  FlagWord f;
  if (a.rfind("--", 0) == 0) {
    const auto eq = a.find('=');
    f.name = canonical(a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
    if (eq != std::string::npos) {
      f.value = a.substr(eq + 1);
      f.has_value = true;
    }
    return f;
  }
  auto s = short_flags().find(a.substr(0, 2));
  if (s == short_flags().end()) throw InputError("unknown option " + quoted(a) + " (see --help)");
  f.name = s->second;
  if (a.size() > 2) {
    f.value = a.substr(a[2] == '=' ? 3 : 2);
    f.has_value = true;
  }
  return f;
}

// Flags that are each valid but not together.
void check_combinations(const LaunchOptions& o) {
  if (o.no_python && o.run_module)
    throw InputError("--no-python and -m/--module cannot be combined (-m runs python -m PROGRAM)");
  if (!o.nproc_per_node && (o.agent_store || !o.preload.empty()))
    throw InputError(std::string(o.agent_store ? "--agent-store" : "--preload") +
                     " needs agent mode (--nproc-per-node): in exec mode no agent stays behind");
  if (o.agent_store && o.master_addr)
    throw InputError(
        "--agent-store and --master-addr cannot be combined: the store runs on "
        "agent 0's node, whose address --local-addr picks");
  if (!o.preload.empty() && !runs_python(o))
    throw InputError(
        "--preload needs a Python PROGRAM (a .py file without --no-python, or -m "
        "MODULE), got " +
        quoted(o.program[0]));
  if (o.standalone && o.nnodes && *o.nnodes != "1" && *o.nnodes != "1:1")
    throw InputError("--standalone means one node, but --nnodes=" + *o.nnodes);
}

}  // namespace

ParsedArgs parse_launch_args(const std::vector<std::string>& args, const EnvLookup& env) {
  ParsedArgs parsed;
  LaunchOptions& o = parsed.options;
  o.signals_to_handle = default_forwarded_signals();
  const auto& table = flag_table();

  // Environment first (PET_NPROC_PER_NODE=...), so the command line wins.
  for (const auto& [name, flag] : table) {
    std::string var = "PET_" + to_upper(name);
    std::replace(var.begin(), var.end(), '-', '_');
    if (auto v = env(var)) flag.apply(o, var, flag.takes_value ? *v : (v->empty() ? "1" : *v));
  }

  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-' || a == "-") break;  // first positional: the program
    auto [name, value, has_value] = split_flag(a);
    if (name == "help") {
      parsed.help = true;
      return parsed;
    }
    if (name == "version") {
      parsed.version = true;
      return parsed;
    }
    if (name == "nproc-per-node" || name == "nproc") name = "nproc-per-node";
    const auto it = table.find(name);
    if (it == table.end()) throw InputError("unknown option " + quoted(a) + " (see --help)");
    const std::string what = "--" + name;
    if (it->second.takes_value) {
      if (!has_value) {
        if (i + 1 >= args.size()) throw InputError(what + ": expected a value, got nothing");
        value = args[++i];
      }
    } else if (!has_value) {
      value = "1";
    }
    it->second.apply(o, what, value);
  }
  o.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (o.program.empty() || o.program[0].empty())
    throw InputError("missing PROGRAM: expected `wireup-launch [options] -- PROGRAM [ARGS...]`");
  check_combinations(o);
  return parsed;
}

bool runs_python(const LaunchOptions& o) {
  const std::string& prog = o.program.at(0);
  const bool is_py = prog.size() > 3 && prog.compare(prog.size() - 3, 3, ".py") == 0;
  return o.run_module || (!o.no_python && is_py);
}

std::vector<std::string> worker_argv(const LaunchOptions& o) {
  std::vector<std::string> argv;
  if (o.run_module) {
    argv = {o.python, "-u", "-m"};
  } else if (runs_python(o)) {
    argv = {o.python, "-u"};
  }
  argv.insert(argv.end(), o.program.begin(), o.program.end());
  return argv;
}

std::string launch_usage() {
  return R"(usage: wireup-launch [options] [--] PROGRAM [ARGS...]

Rank wiring from PMIx (srun --mpi=pmix, mpirun), else from SLURM_* variables,
else --standalone. Without --nproc-per-node each task execs PROGRAM itself
(exec mode); with it, one agent per node spawns and supervises the workers.

  --nproc-per-node=K|gpu|cpu|auto  workers per node (agent mode)
  --nnodes=N|MIN:MAX               checked against the job's node count
  --node-rank=R                    node index, only when nothing else says it
  --standalone                     one node, no scheduler
  --max-restarts=N                 restart every node's workers together, N times
  --grace-period=SECONDS           after a forwarded signal, then SIGKILL (30)
  --signals-to-handle=LIST         forwarded to workers
                                   (SIGTERM,SIGINT,SIGHUP,SIGQUIT,SIGUSR1,SIGUSR2)
  --log-dir=DIR                    DIR/attempt_N/RANK/{stdout,stderr}.log
  -r, --redirects=0|1|2|3          streams that go to files only (3 with --log-dir)
  -t, --tee=0|1|2|3                streams copied to the console as well
  --local-ranks-filter=LIST        console output only from these local ranks
  --no-prefix                      no "[rank N]: " on console lines
  --master-addr=ADDR --master-port=PORT   override rank 0's published address
  --control-port=PORT              plain srun with --max-restarts: agent 0's control port
                                   on the first node (MASTER_PORT+32)
  --role=NAME  --rdzv-id=ID        ROLE_NAME and TORCHELASTIC_RUN_ID
  --no-python  -m, --module  --python=PATH   how PROGRAM is run (.py runs python -u)
  --agent-store                    agent 0 serves the TCPStore (TORCHELASTIC_USE_AGENT_STORE=True):
                                   no worker waits for rank 0's server to come up
  --preload=MODULE[,MODULE]        Python PROGRAM: each agent imports MODULEs once in a
                                   fork server and forks the workers from it
  --verbose                        print the wiring to stderr
Every flag can also come from PET_<FLAG> (PET_NPROC_PER_NODE=4).
torchrun's --rdzv-backend, --rdzv-endpoint and --rdzv-conf are accepted and ignored.
)";
}

}  // namespace wireup
