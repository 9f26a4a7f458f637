// A test-only stand-in for pyxis's slurmstepd side (pyxis 0.24, task_init) and
// enroot's extra PyTorch hook (50-slurm-pytorch.sh), so the tests can run
// spank_wireup next to a container plugin on a machine without pyxis/enroot.
// It reproduces, per task, what those documents and sources say happens to
// the task's environment and mount namespace; it starts no container.
//
// plugstack.conf: required PATH/spank_pyxis_standin.so [opt_root=DIR] [pytorch_hook=on]
//                 [record=FILE]
// srun --container-image=IMAGE [--container-env=NAME,...] [--container-mounts=...]
//   --container-mounts (SRC[:DST[:FLAGS]],...): a source that does not exist
//   fails the task, as enroot's mount does; nothing is mounted (the task keeps
//   the host's root, so every host path is still there: the record says what a
//   real container would show)
//   record=FILE: one line per task appended to FILE, the evidence of what ran
//   in the container: job, step, rank, image, mounts, cwd, ns (the task's mount
//   namespace) and argv (the step's command line, space separated)
//   IMAGE/environment   the image's environment, NAME=VALUE lines (enroot's
//                       ENROOT_ENVIRON: /etc/environment plus environ.d)
//   IMAGE/opt           mounted over OPT_ROOT/opt in the task's new mount
//                       namespace (an empty tmpfs when the image has none)
// task_init, in pyxis's order: (1) read the job environment (S_JOB_ENV), which
// is what `enroot start` and its hooks see; (2) with pytorch_hook=on and
// PYTORCH_VERSION in the image's environment, add MASTER_ADDR (first host
// name of SLURM_STEP_NODELIST), MASTER_PORT (61000 + job id % 4536),
// WORLD_SIZE (SLURM_NTASKS) and OMP_NUM_THREADS=1 (more tasks than nodes), each
// only when the image lacks it; (3) unset LANG, LANGUAGE, LC_ALL; (4) import
// the image's environment with overwrite, except names given to
// --container-env; (5) when PYTORCH_VERSION is set: RANK=SLURM_PROCID,
// LOCAL_RANK=SLURM_LOCALID; (6) move the task into a new mount namespace;
// (7) the working directory: the job's when a mount's destination holds it,
// else the image's ("/"), as pyxis 0.24 does.
// Steps 3 and 4 skip names listed in --container-env. Needs root (CI runs as
// root); any failure fails the task with "pyxis: ..." on its stderr.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

extern "C" {
extern const char plugin_name[] = "pyxis";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

struct Config {
  std::string image, opt_root = "/", record;
  std::vector<std::string> keep;    // --container-env names
  std::vector<std::string> mounts;  // --container-mounts entries
  bool pytorch_hook = false;
} cfg;

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int on_image(int, const char* arg, int) {
  cfg.image = arg ? arg : "";
  return 0;
}
int on_env(int, const char* arg, int) {
  cfg.keep = split_commas(arg ? arg : "");
  return 0;
}
int on_mounts(int, const char* arg, int) {
  cfg.mounts = split_commas(arg ? arg : "");
  return 0;
}

char* c(const char* s) { return const_cast<char*>(s); }
spank_option options[] = {
    {c("container-image"), c("DIR"), c("(test stand-in) image directory"), 1, 1, on_image},
    {c("container-env"), c("NAMES"), c("(test stand-in) names the image must not overwrite"), 1, 2,
     on_env},
    {c("container-mounts"), c("SRC:DST,..."), c("(test stand-in) sources checked, not mounted"), 1,
     3, on_mounts},
};

int fail(const std::string& msg) {
  slurm_error("pyxis: %s", msg.c_str());
  std::fprintf(stderr, "pyxis: %s\n", msg.c_str());
  std::fflush(stderr);
  return -1;
}

bool kept(const std::string& name) {
  return std::find(cfg.keep.begin(), cfg.keep.end(), name) != cfg.keep.end();
}

std::map<std::string, std::string> job_env(spank_t sp) {
  std::map<std::string, std::string> env;
  char** e = nullptr;
  if (spank_get_item(sp, S_JOB_ENV, &e) != ESPANK_SUCCESS || e == nullptr) return env;
  for (; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
  }
  return env;
}

// enroot's 50-slurm-pytorch.sh: values from the job environment, added to the
// image's environment only where it lacks the name.
void pytorch_hook(std::vector<std::pair<std::string, std::string>>& image,
                  std::map<std::string, std::string>& job) {
  auto has = [&](const char* n) {
    return std::any_of(image.begin(), image.end(), [&](const auto& kv) { return kv.first == n; });
  };
  if (!has("PYTORCH_VERSION")) return;
  if (!job["SLURM_STEP_NODELIST"].empty() && !has("MASTER_ADDR")) {
    auto hl = slurm_hostlist_create(job["SLURM_STEP_NODELIST"].c_str());
    if (char* first = slurm_hostlist_shift(hl)) {
      image.emplace_back("MASTER_ADDR", first);
      std::free(first);
    }
    slurm_hostlist_destroy(hl);
  }
  if (!job["SLURM_JOB_ID"].empty() && !has("MASTER_PORT"))
    image.emplace_back("MASTER_PORT",
                       std::to_string(std::stoul(job["SLURM_JOB_ID"]) % 4536 + 61000));
  if (!job["SLURM_NTASKS"].empty() && !has("WORLD_SIZE"))
    image.emplace_back("WORLD_SIZE", job["SLURM_NTASKS"]);
  const auto tasks = job["SLURM_STEP_NUM_TASKS"], nodes = job["SLURM_STEP_NUM_NODES"];
  if (std::stoul(tasks.empty() ? "1" : tasks) > std::stoul(nodes.empty() ? "1" : nodes) &&
      !has("OMP_NUM_THREADS"))
    image.emplace_back("OMP_NUM_THREADS", "1");
}

int import_environment(spank_t sp, const std::vector<std::pair<std::string, std::string>>& image) {
  for (const char* n : {"LANG", "LANGUAGE", "LC_ALL"})
    if (!kept(n) && spank_unsetenv(sp, n) != ESPANK_SUCCESS) return fail(std::string("unset ") + n);
  for (const auto& [name, value] : image) {
    const spank_err_t rc = spank_setenv(sp, name.c_str(), value.c_str(), kept(name) ? 0 : 1);
    if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) return fail("set " + name);
  }
  char buf[64];
  if (spank_getenv(sp, "PYTORCH_VERSION", buf, sizeof buf) != ESPANK_SUCCESS) return 0;
  for (const auto& [from, to] :
       {std::pair{"SLURM_PROCID", "RANK"}, {"SLURM_LOCALID", "LOCAL_RANK"}}) {
    if (spank_getenv(sp, from, buf, sizeof buf) != ESPANK_SUCCESS ||
        spank_setenv(sp, to, buf, 1) != ESPANK_SUCCESS)
      return fail(std::string("pytorch: cannot copy ") + from + " to " + to);
  }
  return 0;
}

int enter_mount_namespace() {
  const std::string target = (cfg.opt_root == "/" ? "" : cfg.opt_root) + "/opt";
  const std::string source = cfg.image + "/opt";
  struct stat st {};
  if (::unshare(CLONE_NEWNS) != 0) return fail(std::string("unshare: ") + std::strerror(errno));
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return fail(std::string("make / private: ") + std::strerror(errno));
  const bool has_opt = ::stat(source.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const int rc = has_opt
                     ? ::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr)
                     : ::mount("tmpfs", target.c_str(), "tmpfs", 0, "size=1m");
  if (rc != 0) return fail("mount over " + target + ": " + std::strerror(errno));
  return 0;
}

// An entry's source and destination: SRC, SRC:DST or SRC:DST:FLAGS.
std::pair<std::string, std::string> mount_paths(const std::string& entry) {
  const auto colon = entry.find(':');
  if (colon == std::string::npos) return {entry, entry};
  const std::string src = entry.substr(0, colon), rest = entry.substr(colon + 1);
  return {src, rest.substr(0, rest.find(':'))};
}

bool under(const std::string& path, const std::string& dir) {
  return path == dir || (path.rfind(dir, 0) == 0 && (dir == "/" || path[dir.size()] == '/'));
}

// enroot mounts every source or fails; pyxis keeps the job's working directory
// when the container sees it through a mount, else starts in the image's.
int check_mounts_and_workdir() {
  struct stat st {};
  bool cwd_mounted = false;
  char cwd[4096] = "";
  if (::getcwd(cwd, sizeof cwd) == nullptr) cwd[0] = '\0';
  for (const auto& entry : cfg.mounts) {
    const auto [src, dst] = mount_paths(entry);
    if (::stat(src.c_str(), &st) != 0)
      return fail("enroot-mount: failed to mount: " + src + " at " + dst + ": " +
                  std::strerror(errno));
    if (src == dst && under(cwd, dst)) cwd_mounted = true;
  }
  if (!cwd_mounted && ::chdir("/") != 0)
    return fail(std::string("chdir /: ") + std::strerror(errno));
  return 0;
}

// One line a task, written at once (O_APPEND) so that tasks never interleave.
void record(spank_t sp) {
  if (cfg.record.empty()) return;
  uint32_t job = 0, step = 0, rank = 0;
  int argc = 0;
  char** argv = nullptr;
  spank_get_item(sp, S_JOB_ID, &job);
  spank_get_item(sp, S_JOB_STEPID, &step);
  spank_get_item(sp, S_TASK_GLOBAL_ID, &rank);
  spank_get_item(sp, S_JOB_ARGV, &argc, &argv);
  char cwd[4096] = "", ns[64] = "";
  if (::getcwd(cwd, sizeof cwd) == nullptr) cwd[0] = '\0';
  const ssize_t n = ::readlink("/proc/self/ns/mnt", ns, sizeof ns - 1);
  ns[n > 0 ? n : 0] = '\0';
  std::string mounts;
  for (const auto& m : cfg.mounts) mounts += (mounts.empty() ? "" : ",") + m;
  std::string line = "job=" + std::to_string(job) + " step=" + std::to_string(step) +
                     " rank=" + std::to_string(rank) + " image=" + cfg.image + " mounts=" + mounts +
                     " cwd=" + cwd + " ns=" + ns + " argv=";
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  line += "\n";
  const int fd = ::open(cfg.record.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (::write(fd, line.data(), line.size()) < 0)
    slurm_error("pyxis: cannot write %s", cfg.record.c_str());
  ::close(fd);
}

}  // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
  for (int i = 0; i < ac; ++i) {
    const std::string a = av[i];
    if (a.rfind("opt_root=", 0) == 0) cfg.opt_root = a.substr(9);
    if (a == "pytorch_hook=on") cfg.pytorch_hook = true;
    if (a.rfind("record=", 0) == 0) cfg.record = a.substr(7);
  }
  for (auto& o : options)
    if (spank_option_register(sp, &o) != ESPANK_SUCCESS)
      slurm_error("pyxis: cannot register --%s", o.name);
  return 0;
}

int slurm_spank_task_init(spank_t sp, int, char**) {
  if (cfg.image.empty()) return 0;
  auto job = job_env(sp);
  std::ifstream in(cfg.image + "/environment");
  if (!in) return fail("image " + cfg.image + ": not found (no environment file)");
  std::vector<std::pair<std::string, std::string>> image;
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos && line[0] != '#')
      image.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  if (cfg.pytorch_hook) pytorch_hook(image, job);
  if (import_environment(sp, image) != 0) return -1;
  if (enter_mount_namespace() != 0 || check_mounts_and_workdir() != 0) return -1;
  record(sp);
  return 0;
}

}  // extern "C"
