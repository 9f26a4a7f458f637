#include <catch2/catch.hpp>
#include <map>

#include "wireup/error.hpp"
#include "wireup/master_addr.hpp"
#include "wireup/slurm_conf_nodes.hpp"

using namespace wireup;

namespace {

// An in-memory file system for slurm.conf and its includes.
struct Files {
  std::map<std::string, std::string> text;
  ConfReader reader() const {
    return [this](const std::string& p) -> std::optional<std::string> {
      const auto it = text.find(p);
      return it == text.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  }
};

std::optional<ConfNode> find(const std::string& conf, const std::string& node,
                             const Files& files = {}) {
  return find_conf_node(conf, "/etc/slurm/slurm.conf", node, files.reader());
}

}  // namespace

TEST_CASE("slurm.conf NodeAddr ranges pair with NodeName ranges") {
  const std::string conf =
      "ClusterName=c\n"
      "NodeName=gpu[01-32] NodeAddr=10.0.0.[1-32] CPUs=96 RealMemory=100000\n";
  CHECK(find(conf, "gpu01")->addr == "10.0.0.1");
  CHECK(find(conf, "gpu09")->addr == "10.0.0.9");
  CHECK(find(conf, "gpu10")->addr == "10.0.0.10");
  CHECK(find(conf, "gpu32")->addr == "10.0.0.32");
  CHECK(find(conf, "gpu32")->origin == "/etc/slurm/slurm.conf:2");
  CHECK_FALSE(find(conf, "gpu33"));
  CHECK_FALSE(find(conf, "gpu1"));  // zero padding is part of the name
  // Padded addresses too, and several ranges inside one list.
  const std::string padded = "NodeName=n[1-2,5] NodeAddr=node-[001-002,005]\n";
  CHECK(find(padded, "n5")->addr == "node-005");
}

TEST_CASE("slurm.conf: several lines, case, comments, continuations, DEFAULT, hostname") {
  const std::string conf =
      "# NodeName=gpu01 NodeAddr=9.9.9.9 (commented out)\n"
      "nodename=DEFAULT CPUs=8 State=UNKNOWN\n"
      "NODENAME=cpu[1-2] NODEADDR=10.1.0.[1-2]   # trailing comment\n"
      "\n"
      "NodeName=gpu[01-02] \\\n"
      "   NodeAddr=10.2.0.[7-8] Feature=\"a b\"\n"
      "NodeName=login NodeHostname=login-real\n"
      "NodeName=shared[1-3] NodeHostname=box NodeAddr=127.0.0.1 Port=[7001-7003]\n"
      "PartitionName=all Nodes=ALL Default=YES\n";
  CHECK(find(conf, "cpu2")->addr == "10.1.0.2");
  CHECK(find(conf, "gpu02")->addr == "10.2.0.8");
  CHECK(find(conf, "gpu02")->origin == "/etc/slurm/slurm.conf:5");
  CHECK(find(conf, "login")->addr.empty());
  CHECK(find(conf, "login")->hostname == "login-real");
  CHECK(find(conf, "shared3")->addr == "127.0.0.1");  // one address for all names
  CHECK(find(conf, "shared3")->hostname == "box");
  CHECK_FALSE(find(conf, "DEFAULT"));
  CHECK_FALSE(find(conf, "all"));
}

TEST_CASE("slurm.conf includes are followed, relative to the including file") {
  Files files;
  files.text["/etc/slurm/nodes.conf"] = "NodeName=a[1-2] NodeAddr=192.168.0.[1-2]\n";
  files.text["/abs/more.conf"] = "include /abs/deeper.conf\n";
  files.text["/abs/deeper.conf"] = "NodeName=z NodeAddr=172.16.0.9\n";
  const std::string conf = "Include nodes.conf\ninclude /abs/more.conf\n";
  CHECK(find(conf, "a2", files)->addr == "192.168.0.2");
  CHECK(find(conf, "a2", files)->origin == "/etc/slurm/nodes.conf:1");
  CHECK(find(conf, "z", files)->addr == "172.16.0.9");
  CHECK_THROWS_WITH(find("include missing.conf\n", "x", files),
                    Catch::Contains("slurm.conf:1") && Catch::Contains("/etc/slurm/missing.conf"));
  files.text["/loop.conf"] = "include /loop.conf\n";
  CHECK_THROWS_WITH(find("include /loop.conf\n", "x", files), Catch::Contains("nested"));
}

TEST_CASE("bad NodeName lines name the file, the line and what was expected") {
  CHECK_THROWS_WITH(find("\nNodeName=gpu[01-04] NodeAddr=10.0.0.[1-2]\n", "gpu01"),
                    Catch::Contains("slurm.conf:2") && Catch::Contains("NodeAddr lists 2") &&
                        Catch::Contains("4 NodeName"));
  // Checked even when the node asked for is elsewhere on the line.
  CHECK_THROWS_AS(find("NodeName=gpu[01-04] NodeHostname=h[1-3]\n", "gpu09"), InputError);
  CHECK_THROWS_WITH(find("NodeName=gpu[01-04 NodeAddr=x\n", "gpu01"),
                    Catch::Contains("slurm.conf:1") && Catch::Contains("unclosed"));
  CHECK_THROWS_WITH(find("NodeName= CPUs=2\n", "a"), Catch::Contains("empty"));
  CHECK_THROWS_WITH(find("NodeName=a CPUs\n", "a"), Catch::Contains("expected KEY=VALUE"));
  CHECK_THROWS_WITH(find("NodeName=a Feature=\"x\n", "a"), Catch::Contains("unclosed"));
  CHECK_THROWS_AS(find("NodeName=n[1-99999999]\n", "n1"), InputError);  // capped expansion
  // A file cannot make the parse unbounded: 2^21 names in all, includes counted.
  Files files;
  files.text["/etc/slurm/big.conf"] = "NodeName=n[1-65536]\ninclude big.conf\ninclude big.conf\n";
  CHECK_THROWS_WITH(find("include big.conf\n", "x", files),
                    Catch::Contains("host names") || Catch::Contains("nested"));
  std::string many;
  for (int i = 0; i < 40; ++i) many += "NodeName=a" + std::to_string(i) + "n[1-65536]\n";
  CHECK_THROWS_WITH(find(many, "x"), Catch::Contains("more than 2097152 host names"));
  // Lines other than NodeName are not judged.
  CHECK_FALSE(find("SomethingNew\nPartitionName=p Nodes=x\n", "a"));
}

TEST_CASE("MASTER_ADDR sources are asked in order") {
  Files files;
  files.text["/run/slurm/conf/slurm.conf"] = "NodeName=gpu[01-02] NodeAddr=10.0.0.[1-2]\n";
  std::vector<std::string> resolved;
  std::map<std::string, std::string> dns = {{"known", "192.0.2.5"}, {"gpu-ib-01", "10.9.0.1"}};
  AddressSources s;
  s.resolve = [&](const std::string& n) -> std::optional<std::string> {
    resolved.push_back(n);
    const auto it = dns.find(n);
    return it == dns.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  s.read_file = files.reader();
  s.slurm_conf_paths = {"/missing/slurm.conf", "/run/slurm/conf/slurm.conf"};

  SECTION("the name rule needs no lookup at all") {
    const auto a = find_node_ipv4("ip-10-1-2-3", s);
    CHECK(a.ipv4 == "10.1.2.3");
    CHECK(a.source == "node name");
    CHECK(resolved.empty());
  }
  SECTION("the resolver comes before slurm.conf") {
    dns["gpu01"] = "192.0.2.77";
    const auto a = find_node_ipv4("gpu01", s);
    CHECK(a.ipv4 == "192.0.2.77");
    CHECK(a.source == "resolver");
  }
  SECTION("slurm.conf NodeAddr when the name does not resolve") {
    const auto a = find_node_ipv4("gpu02", s);
    CHECK(a.ipv4 == "10.0.0.2");
    CHECK(a.source == "slurm.conf NodeAddr (/run/slurm/conf/slurm.conf:1)");
    CHECK(a.tried.size() == 3);  // name, resolver, the missing file
  }
  SECTION("a NodeAddr that is a name is resolved; NodeHostname when NodeAddr is absent") {
    files.text["/run/slurm/conf/slurm.conf"] =
        "NodeName=gpu01 NodeAddr=gpu-ib-01\nNodeName=gpu02 NodeHostname=ip-10-3-0-2\n";
    CHECK(find_node_ipv4("gpu01", s).ipv4 == "10.9.0.1");
    CHECK(find_node_ipv4("gpu01", s).source ==
          "slurm.conf NodeAddr gpu-ib-01 (/run/slurm/conf/slurm.conf:1)");
    CHECK(find_node_ipv4("gpu02", s).ipv4 == "10.3.0.2");
  }
  SECTION("a malformed or silent file is skipped for the next one") {
    files.text["/bad/slurm.conf"] = "NodeName=gpu[01-02] NodeAddr=10.0.0.[1-\n";
    files.text["/silent/slurm.conf"] = "ClusterName=x\n";
    s.slurm_conf_paths.insert(s.slurm_conf_paths.begin(),
                              {"/bad/slurm.conf", "/silent/slurm.conf"});
    const auto a = find_node_ipv4("gpu01", s);
    CHECK(a.ipv4 == "10.0.0.1");
    REQUIRE(a.tried.size() == 5);
    CHECK_THAT(a.tried[2], Catch::Contains("/bad/slurm.conf:1"));
    CHECK(a.tried[3] == "/silent/slurm.conf: no NodeName line names it");
  }
  SECTION("no source knows: every source is named in the error") {
    const auto a = find_node_ipv4("cpu7", s);
    CHECK(a.ipv4.empty());
    const std::string msg =
        no_address_message("cpu7", "first node of SLURM_STEP_NODELIST", a, "pass --master-addr");
    CHECK_THAT(msg, Catch::Contains("'cpu7'") && Catch::Contains("resolver") &&
                        Catch::Contains("/missing/slurm.conf: absent or unreadable") &&
                        Catch::Contains("/run/slurm/conf/slurm.conf: no NodeName line") &&
                        Catch::Contains("NodeAddr") && Catch::Contains("or pass --master-addr"));
  }
  SECTION("a NodeAddr with no IPv4 address is not taken") {
    files.text["/run/slurm/conf/slurm.conf"] = "NodeName=v6 NodeAddr=fd00--1\n";
    const auto a = find_node_ipv4("v6", s);
    CHECK(a.ipv4.empty());
    CHECK_THAT(a.tried.back(), Catch::Contains("has no IPv4 address"));
  }
}

TEST_CASE("slurm.conf candidates: the task's, the process's, configless cache, usual places") {
  const auto c =
      slurm_conf_candidates(std::string("/job/slurm.conf"), std::string("/job/slurm.conf"));
  REQUIRE(c.size() >= 4);
  CHECK(c[0] == "/job/slurm.conf");
  CHECK(c[1] == "/run/slurm/conf/slurm.conf");
  CHECK(c[2] == "/var/spool/slurmd/conf-cache/slurm.conf");
  CHECK(slurm_conf_candidates(std::string(""), std::nullopt).front() ==
        "/run/slurm/conf/slurm.conf");
}

TEST_CASE("resolve_master_addr: a source's answer, else the task's own IPv4 literal, else the error") {
  NodeAddress found{"10.0.0.7", "resolver", {"node name: not ip-A-B-C-D"}};
  auto m = resolve_master_addr("gpu01", found, std::string("10.9.9.9"), "REMEDY");
  CHECK(m.ipv4 == "10.0.0.7");
  CHECK(m.source == "resolver");
  const NodeAddress none{"", "", {"node name: not ip-A-B-C-D", "resolver: no IPv4 address"}};
  m = resolve_master_addr("gpu01", none, std::string("10.9.9.9"), "REMEDY");
  CHECK(m.ipv4 == "10.9.9.9");
  CHECK(m.source == "the task's own MASTER_ADDR");
  for (const auto& own : {std::optional<std::string>(), std::optional<std::string>("gpu01")}) {
    try {
      resolve_master_addr("gpu01", none, own, "export MASTER_ADDR=IPV4 before srun");
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) ==
            "MASTER_ADDR: cannot find an IPv4 address for node 'gpu01' (first node of "
            "SLURM_STEP_NODELIST). Tried: node name: not ip-A-B-C-D; resolver: no IPv4 address. "
            "Make the name resolvable, declare NodeAddr in slurm.conf, or export "
            "MASTER_ADDR=IPV4 before srun");
    }
  }
}
