"""deploy/ cannot drift from the code (issue 10 item 7): the Kubernetes manifest's variables,
port and probe paths exist in the driver, secrets come from the Secret, and the Prometheus
hook-up scrapes that port and loads deploy/alerts.yml (``promtool check config``)."""

from __future__ import annotations

import subprocess
from typing import Any

import yaml
from conftest import REPO
from recording_finalize.config import VARIABLE_BY_NAME
from recording_finalize.metrics import LIVEZ, READYZ

MANIFEST = REPO / "deploy" / "kubernetes" / "recording-finalize-retry.yaml"
PROMETHEUS = REPO / "deploy" / "prometheus.yml"


def documents() -> dict[str, dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    return {d["kind"]: d for d in docs}


def test_every_variable_of_the_manifest_is_one_the_driver_reads() -> None:
    docs = documents()
    secret_keys = set(docs["Secret"]["stringData"])
    for kind in ("Deployment", "Job"):
        [container] = docs[kind]["spec"]["template"]["spec"]["containers"]
        for item in container["env"]:
            name = item["name"]
            assert name in VARIABLE_BY_NAME, f"{kind}: {name} is not a variable of the driver"
            spec = VARIABLE_BY_NAME[name]
            if spec.secret or name.startswith("AWS_ACCESS") or "SASL_USERNAME" in name:
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                assert ref and "value" not in item, f"{kind}: {name} must come from the Secret"
                assert ref["name"] == docs["Secret"]["metadata"]["name"]
                assert ref["key"] in secret_keys, ref
    [sidecar] = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert sidecar["args"] == ["run"]
    assert docs["Job"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["migrate"]
    assert 1 <= docs["Deployment"]["spec"]["replicas"] <= 2


def test_probes_and_port_are_the_ones_run_serves() -> None:
    docs = documents()
    [sidecar] = docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in sidecar["env"]}
    [port] = sidecar["ports"]
    assert port["name"] == "metrics" and str(port["containerPort"]) == env["RFR_METRICS_PORT"]
    assert sidecar["livenessProbe"]["httpGet"] == {"path": LIVEZ, "port": "metrics"}
    assert sidecar["readinessProbe"]["httpGet"] == {"path": READYZ, "port": "metrics"}
    assert {"requests", "limits"} <= set(sidecar["resources"])
    [service_port] = docs["Service"]["spec"]["ports"]
    assert service_port["port"] == port["containerPort"]
    assert docs["Service"]["spec"]["selector"] == (
        docs["Deployment"]["spec"]["selector"]["matchLabels"])


def test_prometheus_scrapes_that_port_and_loads_the_alert_rules() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    assert config["rule_files"] == ["alerts.yml"]
    [job] = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    [sd] = job["dns_sd_configs"]
    service = documents()["Service"]
    assert sd["port"] == service["spec"]["ports"][0]["port"]
    assert sd["names"][0].startswith(service["metadata"]["name"] + ".")
    proc = subprocess.run(["promtool", "check", "config", str(PROMETHEUS)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 1 rule files found" in proc.stdout
