"""Offline helpers for the Kubernetes manifests of deploy/kubernetes: render a kustomization
with ``kubectl kustomize``, and the Pod Security "restricted" rules as code.

Rendering needs kubectl with kustomize v5 (``kubectl kustomize``). Debian 12 has no kubectl
package (its ``kubernetes-client`` is 1.20, whose kustomize v2.0.3 cannot build this tree); the
Debian 12 image this project's machines and CI run on ships kubectl 1.32 with kustomize v5.5.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO

KUSTOMIZE_ROOT = REPO / "deploy" / "kubernetes"
BASE = KUSTOMIZE_ROOT / "base"
OVERLAYS = sorted(p.parent for p in (KUSTOMIZE_ROOT / "overlays").glob("*/kustomization.yaml"))
#: Every kustomization of the tree: the base and each overlay.
KUSTOMIZATIONS = [BASE, *OVERLAYS]


def load_release() -> Any:
    """scripts/release.py as a module (the version and fingerprint rules)."""
    if "rfr_release" in sys.modules:
        return sys.modules["rfr_release"]
    spec = importlib.util.spec_from_file_location("rfr_release", REPO / "scripts" / "release.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["rfr_release"] = module
    spec.loader.exec_module(module)
    return module


def kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.fail("kubectl (with kustomize v5) is needed to render deploy/kubernetes: it comes "
                    "with this project's machine image; Debian 12 has no kubectl package")
    out = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    kustomize = json.loads(out).get("kustomizeVersion", "")
    match = re.match(r"v(\d+)\.", kustomize)
    if not match or int(match[1]) < 5:
        pytest.fail(f"kubectl's kustomize is {kustomize or 'unknown'}; deploy/kubernetes needs v5")
    return path


def render_text(kustomization: Path) -> str:
    proc = subprocess.run([kubectl(), "kustomize", str(kustomization)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, f"kubectl kustomize {kustomization}: {proc.stderr}"
    return proc.stdout


def render(kustomization: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(render_text(kustomization)) if d]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def pod_specs(docs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``Kind/name``, pod spec) of every workload that makes pods."""
    for doc in docs:
        if doc["kind"] in ("Deployment", "Job", "StatefulSet", "DaemonSet", "ReplicaSet"):
            yield f"{doc['kind']}/{doc['metadata']['name']}", doc["spec"]["template"]["spec"]
        elif doc["kind"] == "CronJob":
            yield (f"CronJob/{doc['metadata']['name']}",
                   doc["spec"]["jobTemplate"]["spec"]["template"]["spec"])
        elif doc["kind"] == "Pod":
            yield f"Pod/{doc['metadata']['name']}", doc["spec"]


def containers(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key, [])


# --- deploy/prometheus.yml without a cluster -------------------------------------------------


def prometheus_with_static_target(config: dict[str, Any], target: str, rules_dir: Path,
                                  namespace: str = "recording-finalize-retry",
                                  pod: str = "recording-finalize-retry-0") -> dict[str, Any]:
    """deploy/prometheus.yml with its Kubernetes discovery replaced by one static target that
    carries the meta labels a discovered worker pod would (so its relabelling is exercised)."""
    out = yaml.safe_load(yaml.safe_dump(config))
    out["rule_files"] = [str(rules_dir / f) for f in config["rule_files"]]
    [job] = out["scrape_configs"]
    del job["kubernetes_sd_configs"]
    job["static_configs"] = [{"targets": [target], "labels": {
        "__meta_kubernetes_pod_container_port_name": "metrics",
        "__meta_kubernetes_pod_phase": "Running",
        "__meta_kubernetes_namespace": namespace,
        "__meta_kubernetes_pod_name": pod,
    }}]
    return out


# --- Pod Security Standards, "restricted" (which includes "baseline") ------------------------
# As the Kubernetes documentation states them (concepts/security/pod-security-standards), plus
# what this project adds: every container sets all of runAsNonRoot, seccompProfile,
# allowPrivilegeEscalation, capabilities and readOnlyRootFilesystem itself, not through the
# pod's defaults only.

RESTRICTED_VOLUME_TYPES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                           "persistentVolumeClaim", "projected", "secret"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {None, "", "container_t", "container_init_t", "container_kvm_t",
                 "container_engine_t"}


def pss_restricted_violations(spec: dict[str, Any]) -> list[str]:
    """What keeps this pod spec out of a namespace that enforces "restricted" (empty: none)."""
    out: list[str] = []
    pod_sc = spec.get("securityContext") or {}
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key):
            out.append(f"pod: {key} is set")
    for volume in spec.get("volumes", []):
        types = set(volume) - {"name"}
        if not types <= RESTRICTED_VOLUME_TYPES:
            out.append(f"pod: volume {volume['name']} of type {sorted(types)}")
    for sysctl in pod_sc.get("sysctls", []):
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"pod: sysctl {sysctl.get('name')}")
    out += _sc_violations("pod", pod_sc, pod_level=True)
    for c in containers(spec):
        name = f"container {c['name']}"
        sc = c.get("securityContext") or {}
        out += _sc_violations(name, sc, pod_level=False)
        for port in c.get("ports", []):
            if port.get("hostPort"):
                out.append(f"{name}: hostPort {port['hostPort']}")
        if sc.get("privileged"):
            out.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{name}: allowPrivilegeEscalation is not false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{name}: capabilities do not drop ALL")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            out.append(f"{name}: capabilities add {caps['add']}")
        if sc.get("procMount") not in (None, "Default"):
            out.append(f"{name}: procMount {sc['procMount']}")
        # runAsNonRoot and seccomp may come from the pod; this project wants both here too.
        for key, ok in (("runAsNonRoot", sc.get("runAsNonRoot") is True),
                        ("seccompProfile", (sc.get("seccompProfile") or {}).get("type")
                         in ("RuntimeDefault", "Localhost")),
                        ("readOnlyRootFilesystem", sc.get("readOnlyRootFilesystem") is True)):
            if not ok:
                out.append(f"{name}: {key} not set as required on the container")
        if sc.get("runAsNonRoot") is False or (
                sc.get("runAsNonRoot") is None and pod_sc.get("runAsNonRoot") is not True):
            out.append(f"{name}: may run as root (runAsNonRoot)")
        if (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type") not in (
                "RuntimeDefault", "Localhost"):
            out.append(f"{name}: seccompProfile neither RuntimeDefault nor Localhost")
    return out


def _sc_violations(name: str, sc: dict[str, Any], pod_level: bool) -> list[str]:
    out = []
    if (sc.get("windowsOptions") or {}).get("hostProcess"):
        out.append(f"{name}: windowsOptions.hostProcess")
    if sc.get("runAsUser") == 0:
        out.append(f"{name}: runAsUser 0")
    seccomp = (sc.get("seccompProfile") or {}).get("type")
    if seccomp == "Unconfined":
        out.append(f"{name}: seccompProfile Unconfined")
    apparmor = (sc.get("appArmorProfile") or {}).get("type")
    if apparmor not in (None, "RuntimeDefault", "Localhost"):
        out.append(f"{name}: appArmorProfile {apparmor}")
    selinux = sc.get("seLinuxOptions") or {}
    if selinux.get("type") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
        out.append(f"{name}: seLinuxOptions {selinux}")
    if pod_level and sc.get("runAsNonRoot") is False:
        out.append(f"{name}: runAsNonRoot false")
    return out
