"""What deploy/ ships, checked against the real daemon (issue 26): the Prometheus alert rules
(`promtool check rules`, `promtool test rules`), the Grafana fleet dashboard and the Kubernetes
manifest; every metric they name must be one a running adloaderd exports."""

import json
import os
import re
import shutil
import subprocess

import grpc
import pytest
import yaml

import grpc_stubs
from adminhttp import get
from conftest import BINARY, ROOT

DEPLOY = os.path.join(ROOT, "deploy")
RULES = os.path.join(DEPLOY, "prometheus", "adloaderd-rules.yml")
RULE_TESTS = os.path.join(DEPLOY, "prometheus", "adloaderd-rules.test.yml")
GRAFANA = os.path.join(DEPLOY, "grafana", "adloaderd-fleet.json")
MANIFEST = os.path.join(DEPLOY, "kubernetes", "adloaderd.yaml")
PROMTOOL = shutil.which("promtool")
METRIC = re.compile(r"\b((?:adloader|process)_[a-z0-9_]+)\b")
ALERTS = {"AdLoaderPoolStarving", "AdLoaderHitRatioLow", "AdLoaderUpstreamFailing", "AdLoaderUpstreamUnreachable",
          "AdLoaderCapStoreDown", "AdLoaderLeaseLeak", "AdLoaderReplicaNotReady", "AdLoaderReplicaDown"}


def promtool(*args):
    assert PROMTOOL, "promtool is missing: the Debian package prometheus (make deps)"
    return subprocess.run([PROMTOOL, *args], cwd=os.path.dirname(RULES), capture_output=True, text=True, timeout=60)


def test_promtool_checks_the_rules():
    run = promtool("check", "rules", RULES)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in run.stdout


def test_promtool_unit_tests_fire_each_alert_and_spare_the_healthy():
    run = promtool("test", "rules", RULE_TESTS)
    assert run.returncode == 0, run.stdout + run.stderr
    tested = set(re.findall(r"alertname: (\w+)", open(RULE_TESTS).read()))
    assert tested == ALERTS  # each alert has a unit test
    rules = yaml.safe_load(open(RULES))
    assert {r["alert"] for g in rules["groups"] for r in g["rules"]} == ALERTS


def exported_families(d):
    """Family names and kinds from a real scrape (Prometheus text format)."""
    _, _, text = get(d.admin, "/metrics")
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))


def named_metrics(text):
    return set(METRIC.findall(text))


def unexported(names, families):
    missing = set()
    for name in names:
        if name in families:
            continue
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if families.get(base) == "histogram":
            continue
        missing.add(name)
    return missing


@pytest.fixture
def scraped(daemon):
    config = {"loaders": {"default": {}, "appopen": {"format": "appOpen"}},
              "capStore": {"type": "memory"}}
    d = daemon(config=config, admin=True)
    d.cli("borrow", "feed-native", "--wait", "2000")  # a pool, so its families have series
    return exported_families(d)


def test_every_metric_the_rules_and_the_dashboard_name_is_exported(scraped):
    for path in (RULES, GRAFANA):
        names = named_metrics(open(path).read())
        assert len(names) >= 8, path
        assert not unexported(names, scraped), (path, unexported(names, scraped))
    # The check can fail: a misspelt name is caught.
    assert unexported({"adloader_pool_borrow_total", "adloader_call_duration_seconds_bucket"}, scraped) == {
        "adloader_pool_borrow_total"}


def test_the_grafana_dashboard_has_the_triage_views_with_units():
    dashboard = json.load(open(GRAFANA))
    assert dashboard["uid"] == "adloaderd-fleet"
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "instance"} <= variables
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    titles = {p["title"] for p in panels}
    for wanted in ("Calls by status code", "Upstream failures by class", "Reclaimed leases (the leak signal)",
                   "Uptime by replica", "Replicas ready"):
        assert wanted in titles
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels:
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]
        assert panel["fieldConfig"]["defaults"].get("unit"), panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}"
        if panel["type"] == "timeseries":
            assert panel["fieldConfig"]["defaults"]["custom"]["axisLabel"], panel["title"]


def manifest():
    return {doc["kind"]: doc for doc in yaml.safe_load_all(open(MANIFEST)) if doc}


def test_the_kubernetes_manifest_probes_and_drains_as_the_daemon_is_configured():
    docs = manifest()
    assert {"ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget"} <= set(docs)
    config = json.loads(docs["ConfigMap"]["data"]["adloaderd.json"])
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"grpc": config["listeners"]["port"], "admin": config["admin"]["port"]}
    assert container["livenessProbe"]["grpc"]["port"] == ports["grpc"]
    assert container["startupProbe"]["grpc"]["port"] == ports["grpc"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "admin"}
    grace = int(config["limits"]["shutdownGracePeriod"].rstrip("s"))
    assert pod["terminationGracePeriodSeconds"] > grace + 1  # the drain and its announce fit
    labels = docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert docs["Deployment"]["spec"]["template"]["metadata"]["labels"] == labels
    assert docs["Service"]["spec"]["selector"] == labels
    help_text = subprocess.run([BINARY, "--help"], capture_output=True, text=True, timeout=20).stdout
    for variable in container["env"]:
        assert variable["name"] in help_text, variable["name"]


def test_the_manifests_configuration_runs_and_health_answers_the_probe_without_a_token(daemon, tmp_path):
    docs = manifest()
    config = json.loads(docs["ConfigMap"]["data"]["adloaderd.json"])
    token = docs["Secret"]["stringData"]["tokens"]
    # As in the pod, but on loopback with free ports (the tests touch no other address).
    d = daemon(config=config, admin=True, args=["--host", "127.0.0.1", "--admin-host", "127.0.0.1"],
               env={"ADLOADERD_AUTH_TOKENS": token, "ADLOADERD_INSTANCE_NAME": "adloaderd-7d9f-abcde",
                    "ADLOADERD_AUTH_REQUIRE_ON_LOOPBACK": "true"})
    s = grpc_stubs.load()
    with grpc.insecure_channel(d.endpoint) as channel:
        check = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=s.health.HealthCheckRequest.SerializeToString,
            response_deserializer=s.health.HealthCheckResponse.FromString)
        assert check(s.health.HealthCheckRequest(service=""), timeout=10).status == s.health.HealthCheckResponse.SERVING
        stats = s.grpc.NativeAdLoaderStub(channel).Stats(
            s.pb.StatsRequest(), metadata=[("authorization", f"Bearer {token}")], timeout=10)
        assert stats.instance == "adloaderd-7d9f-abcde"
    assert get(d.admin, "/readyz")[0] == 200
