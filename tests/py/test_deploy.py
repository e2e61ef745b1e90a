"""deploy/ as a cluster would take it, checked offline: a manifest a cluster refuses fails here.

Every kustomization of deploy/kubernetes (the base and each overlay) is rendered with
``kubectl kustomize`` and validated against the Kubernetes OpenAPI schemas (kubernetes-validate,
strict: an unknown field is an error) of the oldest and the newest Kubernetes this supports.
Then what the schemas cannot say: rendering is deterministic; the release is in the image tag
and the migrate Job's name; migrate runs before the new pods by construction; no Secret is
shipped and the owner's Secret reaches only migrate; every container passes Pod Security
"restricted"; the variables, port and probes are the driver's own; the NetworkPolicy lets out
what the configuration points at; the Prometheus hook-up finds the pods in any namespace; the
image is built as the manifests run it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml
from conftest import CLI, REPO
from kube import (
    BASE,
    KUSTOMIZATIONS,
    OVERLAYS,
    containers,
    load_release,
    one,
    pod_specs,
    prometheus_with_static_target,
    pss_restricted_violations,
    render,
    render_text,
)
from recording_finalize import __version__
from recording_finalize.config import VARIABLE_BY_NAME, load_settings, require_kafka
from recording_finalize.metrics import LIVEZ, READYZ

PROMETHEUS = REPO / "deploy" / "prometheus.yml"
DOCKERFILE = REPO / "deploy" / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"

#: The oldest and the newest Kubernetes the manifests are validated for (PSS labels, the
#: Job's TTL and every field used exist from 1.25 on; 1.28 is the oldest still maintained by
#: the large providers' extended support when this was written).
KUBERNETES_VERSIONS = ("1.28.0", kubernetes_validate.latest_version())

WORKER_SECRET = "recording-finalize-retry-worker"
OWNER_SECRET = "recording-finalize-retry-owner"
IMAGE = "recording-finalize-retry"


IDS = [str(k.relative_to(REPO)) for k in KUSTOMIZATIONS]


def migrate_spec(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The ConfigMap that carries the migrate Job's spec (and names it)."""
    [spec] = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"].get("labels", {})
              .get("app.kubernetes.io/component") == "migrate-spec"]
    return spec


def settings_config_maps(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The ConfigMaps of settings (the pods' variables), by name."""
    spec = migrate_spec(docs)["metadata"]["name"]
    return {d["metadata"]["name"]: d.get("data", {}) for d in docs
            if d["kind"] == "ConfigMap" and d["metadata"]["name"] != spec}


@pytest.fixture(scope="module", params=KUSTOMIZATIONS, ids=IDS)
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


@pytest.fixture(scope="module", params=OVERLAYS, ids=[str(o.relative_to(REPO)) for o in OVERLAYS])
def overlay(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


def test_there_is_a_base_and_an_overlay() -> None:
    assert BASE.is_dir() and OVERLAYS, "deploy/kubernetes needs base/ and overlays/*/"


@pytest.mark.parametrize("k8s", KUBERNETES_VERSIONS)
def test_rendered_manifests_validate_against_the_kubernetes_schemas(
        rendered: list[dict[str, Any]], k8s: str) -> None:
    kinds = {d["kind"] for d in rendered}
    assert {"Namespace", "ServiceAccount", "ConfigMap", "Deployment", "Job", "Service",
            "NetworkPolicy"} <= kinds, kinds
    for doc in rendered:
        try:
            kubernetes_validate.validate(doc, k8s, strict=True)
        except kubernetes_validate.ValidationError as err:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} is not valid for Kubernetes "
                        f"{k8s}: {err.message} at {'/'.join(map(str, err.path))}")


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS, ids=IDS)
def test_rendering_twice_gives_the_same_bytes(kustomization: Path) -> None:
    assert render_text(kustomization) == render_text(kustomization)


def test_the_release_is_in_the_image_tag_and_the_migrate_jobs_name(
        rendered: list[dict[str, Any]]) -> None:
    for where, spec in pod_specs(rendered):
        for c in containers(spec):
            # No registry host: the image name alone; an overlay's `images:` adds a registry.
            assert c["image"] == f"{IMAGE}:{__version__}", (where, c["name"], c["image"])
    job = one(rendered, "Job")
    # The version's name, then the hash suffix of the ConfigMap of its spec (its name).
    assert job["metadata"]["name"] == migrate_spec(rendered)["metadata"]["name"]
    assert re.fullmatch(rf"{IMAGE}-migrate-{__version__.replace('.', '-')}-[a-z0-9]{{10}}",
                        job["metadata"]["name"]), job["metadata"]["name"]
    assert len(job["metadata"]["name"]) <= 63  # the job-name label of its pods
    assert "generateName" not in job["metadata"]  # `kubectl apply` needs a fixed name
    assert 0 < job["spec"]["ttlSecondsAfterFinished"] <= 7 * 86400
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"


def test_the_next_release_renders_a_new_job_and_the_same_release_the_same_one(
        tmp_path: Path) -> None:
    """Applying the next release creates a Job of its own (the old one's pod template is
    immutable); applying the same release twice sends the same Job (valid: no change)."""
    release = load_release()
    for rel in ("pyproject.toml", "driver/__init__.py", "CHANGELOG.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    shutil.copytree(REPO / "deploy" / "kubernetes", tmp_path / "deploy" / "kubernetes")
    before = {o.name: render(o) for o in OVERLAYS}
    next_version = ".".join([*__version__.split(".")[:2], str(int(__version__.split(".")[2]) + 1)])
    release.set_version(next_version, root=tmp_path, fingerprint="f" * 64)
    for o in OVERLAYS:
        after = render(tmp_path / o.relative_to(REPO))
        old_job, new_job = one(before[o.name], "Job"), one(after, "Job")
        assert old_job["metadata"]["name"] != new_job["metadata"]["name"]
        assert f"-migrate-{next_version.replace('.', '-')}-" in new_job["metadata"]["name"]
        old_dep, new_dep = one(before[o.name], "Deployment"), one(after, "Deployment")
        images = {c["image"] for c in containers(new_dep["spec"]["template"]["spec"])}
        assert images == {f"{IMAGE}:{next_version}"}
        # Nothing else moves: the Deployment differs in its image tags only.
        assert yaml.safe_dump(old_dep).replace(__version__, next_version) == yaml.safe_dump(
            new_dep)
    assert render_text(tmp_path / OVERLAYS[0].relative_to(REPO)) == render_text(
        tmp_path / OVERLAYS[0].relative_to(REPO))


def test_whatever_changes_the_jobs_spec_changes_its_name(tmp_path: Path) -> None:
    """A re-built image of one version (another registry, tag or a digest
    pin), or any edit of the Job's spec, gives a new Job name, so `kubectl apply` never meets
    the old Job's immutable pod template; the same input renders the same name."""
    shutil.copytree(REPO / "deploy" / "kubernetes", tmp_path / "kubernetes")
    overlay = tmp_path / "kubernetes" / "overlays" / "example"
    kustomization = overlay / "kustomization.yaml"
    original = kustomization.read_text()

    def job_name() -> tuple[str, str]:
        docs = render(overlay)
        job = one(docs, "Job")
        [image] = {c["image"] for c in containers(job["spec"]["template"]["spec"])}
        return job["metadata"]["name"], image

    names = {job_name()}
    assert job_name() in names  # stable
    for images in (
        f"images:\n  - name: {IMAGE}\n    newName: registry.example/{IMAGE}\n",
        f"images:\n  - name: {IMAGE}\n    newName: registry.example/{IMAGE}\n"
        f"    digest: sha256:{'a' * 64}\n",
        f"images:\n  - name: {IMAGE}\n    newName: registry.example/{IMAGE}\n"
        f"    digest: sha256:{'b' * 64}\n",
    ):
        kustomization.write_text(original + images)
        name, image = job_name()
        assert image.startswith(f"registry.example/{IMAGE}"), image
        assert (name, image) not in names and name not in {n for n, _ in names}, name
        names.add((name, image))
    kustomization.write_text(original)
    job_file = tmp_path / "kubernetes" / "base" / "migrate-job.yaml"
    job_file.write_text(job_file.read_text().replace("backoffLimit: 3", "backoffLimit: 4"))
    name, _ = job_name()
    assert name not in {n for n, _ in names}, "an edit of the Job's spec kept its name"


def test_migrate_runs_first_by_construction(rendered: list[dict[str, Any]]) -> None:
    deployment = one(rendered, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    [init] = spec["initContainers"]
    [sidecar] = spec["containers"]
    assert init["args"][:1] == ["wait-for-schema"], init["args"]
    timeout = init["args"][init["args"].index("--timeout") + 1]
    assert init["image"] == sidecar["image"]  # the same package decides what "matches" means
    # The worker's login, like the sidecar; never the owner.
    assert _secret_ref(init, "DATABASE_URL") == (WORKER_SECRET, "database-url")
    # The rollout is not declared failed while the init container may still be waiting.
    assert deployment["spec"]["progressDeadlineSeconds"] > _seconds(timeout)
    [migrate] = one(rendered, "Job")["spec"]["template"]["spec"]["containers"]
    assert migrate["args"] == ["migrate"] and migrate["image"] == sidecar["image"]
    assert _secret_ref(migrate, "DATABASE_URL") == (OWNER_SECRET, "database-url")


def test_old_pods_stop_before_new_ones_start(rendered: list[dict[str, Any]]) -> None:
    """Recreate: a release's migrate may drop or change a function the old package calls, so no
    old pod may run beside it (a rolling update would leave one failing its cycles). Every
    document that describes a rollout says the same."""
    deployment = one(rendered, "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}, deployment["spec"]["strategy"]
    for doc in (REPO / "deploy" / "README.md", REPO / "docs" / "install.md",
                REPO / "docs" / "runbook.md"):
        text = " ".join(doc.read_text().split())
        assert "Recreate" in text, f"{doc.name} does not say the rollout is Recreate"
        assert "maxUnavailable" not in text and "rolling update" not in text.lower().replace(
            "not a rolling update", ""), f"{doc.name} still describes a rolling update"


@pytest.mark.parametrize("k8s", KUBERNETES_VERSIONS)
def test_the_rollback_job_is_valid_and_runs_the_clis_rollback(k8s: str) -> None:
    """deploy/kubernetes/rollback-job.yaml, created by hand (docs/install.md, "Rolling back a
    release"): a valid Job that passes "restricted", as the schema owner, running the rollback
    to the previous release that the CLI parses."""
    job = yaml.safe_load((REPO / "deploy" / "kubernetes" / "rollback-job.yaml").read_text())
    kubernetes_validate.validate(job, k8s, strict=True)
    spec = job["spec"]["template"]["spec"]
    assert pss_restricted_violations(spec) == []
    [container] = spec["containers"]
    assert container["image"] == IMAGE  # `kubectl set image --local` sets the release's
    assert _secret_ref(container, "DATABASE_URL") == (OWNER_SECRET, "database-url")
    assert container["args"] == ["rollback", "--to", "previous", "--yes", "--target-sql",
                                 "/target-sql/sql"]
    from recording_finalize.cli import build_parser

    args = build_parser().parse_args(container["args"])
    assert (args.command, args.to, args.yes) == ("rollback", "previous", True)
    # The previous release's SQL, copied out of its own image into the volume rollback reads.
    [init] = spec["initContainers"]
    assert init["image"] == IMAGE + "-previous"  # `kubectl set image --local` sets it too
    assert "/target-sql/sql" in init["command"][-1]
    assert {m["name"] for m in init["volumeMounts"]} == {"target-sql"}
    assert str(args.target_sql) == "/target-sql/sql"


def test_the_commands_the_manifests_run_are_the_clis(rendered: list[dict[str, Any]]) -> None:
    commands = _cli_commands()
    used = {c["args"][0] for _, spec in pod_specs(rendered) for c in containers(spec)}
    assert used == {"run", "migrate", "wait-for-schema"}, used
    assert used <= commands, f"the CLI has no command {sorted(used - commands)}"
    help_text = subprocess.run([CLI, "wait-for-schema", "--help"], capture_output=True,
                               text=True, timeout=30).stdout
    assert "--timeout" in help_text


def test_no_secret_is_shipped_and_the_owners_reaches_migrate_only(
        rendered: list[dict[str, Any]]) -> None:
    text = yaml.safe_dump_all(rendered)
    assert "Secret" not in {d["kind"] for d in rendered}
    assert "CHANGE-ME" not in text
    assert not re.search(r"://[^/\s:@]+:[^/\s@]+@", text), "a URL with a password"
    for where, spec in pod_specs(rendered):
        refs = {(ref["name"], ref["key"])
                for c in containers(spec) for ref in _secret_refs(c)}
        assert not any(v.get("secret") for v in spec.get("volumes", [])), where
        if where.startswith("Job/"):
            assert {name for name, _ in refs} == {OWNER_SECRET}, (where, refs)
        else:
            assert {name for name, _ in refs} == {WORKER_SECRET}, (where, refs)


def test_every_container_passes_pod_security_restricted(rendered: list[dict[str, Any]]) -> None:
    namespace = one(rendered, "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    specs = dict(pod_specs(rendered))
    assert len(specs) == 2, specs.keys()  # the Deployment and the migrate Job
    for where, spec in specs.items():
        assert pss_restricted_violations(spec) == [], where
        for c in containers(spec):
            assert {"requests", "limits"} <= set(c["resources"]), (where, c["name"])
            assert "memory" in c["resources"]["limits"], (where, c["name"])


def test_the_restricted_check_catches_what_it_is_for() -> None:
    """The checker itself can fail: each change below breaks one rule of "restricted"."""
    spec = dict(pod_specs(render(BASE)))[f"Deployment/{IMAGE}"]
    assert pss_restricted_violations(spec) == []
    breakages = {
        "hostNetwork": lambda s: s.update(hostNetwork=True),
        "hostPath": lambda s: s["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
        "escalation": lambda s: s["containers"][0]["securityContext"].update(
            allowPrivilegeEscalation=True),
        "caps": lambda s: s["initContainers"][0]["securityContext"]["capabilities"].update(
            add=["NET_ADMIN"]),
        "root": lambda s: s["containers"][0]["securityContext"].update(runAsUser=0),
        "seccomp": lambda s: s["initContainers"][0]["securityContext"].pop("seccompProfile"),
        "rootfs": lambda s: s["containers"][0]["securityContext"].pop("readOnlyRootFilesystem"),
        "hostPort": lambda s: s["containers"][0]["ports"][0].update(hostPort=9464),
    }
    for name, breakage in breakages.items():
        broken = yaml.safe_load(yaml.safe_dump(spec))
        breakage(broken)
        assert pss_restricted_violations(broken), f"{name} went unnoticed"


def test_serviceaccount_without_token_and_pods_in_the_namespace(
        rendered: list[dict[str, Any]]) -> None:
    namespace = one(rendered, "Namespace")["metadata"]["name"]
    account = one(rendered, "ServiceAccount")
    assert account["automountServiceAccountToken"] is False
    for doc in rendered:
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == namespace, doc["metadata"]
    for where, spec in pod_specs(rendered):
        assert spec["serviceAccountName"] == account["metadata"]["name"], where
        assert spec["automountServiceAccountToken"] is False, where
        assert spec.get("enableServiceLinks") is False, where


def test_every_variable_of_the_manifests_is_one_the_driver_reads(
        rendered: list[dict[str, Any]]) -> None:
    config_maps = settings_config_maps(rendered)
    for where, spec in pod_specs(rendered):
        for c in containers(spec):
            env = _environment(c, config_maps)
            for name in env:
                assert name in VARIABLE_BY_NAME, f"{where} {c['name']}: {name} is not a variable"
            for item in c.get("env", []):
                spec_ = VARIABLE_BY_NAME[item["name"]]
                if spec_.secret or item["name"] in ("AWS_ACCESS_KEY_ID", "KAFKA_SASL_USERNAME"):
                    assert "value" not in item and _secret_ref(c, item["name"]), (
                        f"{where}: {item['name']} must come from a Secret")
    # A credential never sits in a ConfigMap.
    for data in config_maps.values():
        assert not {n for n in data if VARIABLE_BY_NAME[n].secret}, data


def test_the_overlays_configuration_passes_the_drivers_own_validation(
        overlay: list[dict[str, Any]]) -> None:
    """What `run` would say at start about this environment (with stand-ins for the Secret's
    values): nothing, it is valid."""
    config_maps = settings_config_maps(overlay)
    [sidecar] = one(overlay, "Deployment")["spec"]["template"]["spec"]["containers"]
    env = _environment(sidecar, config_maps, secret="stand-in",
                       database_url="postgresql://login:stand-in@db:5432/messenger")
    settings = load_settings(env)
    require_kafka(settings)
    assert settings.metrics_port == sidecar["ports"][0]["containerPort"]


def test_probes_and_port_are_the_ones_run_serves(rendered: list[dict[str, Any]]) -> None:
    deployment = one(rendered, "Deployment")
    [sidecar] = deployment["spec"]["template"]["spec"]["containers"]
    assert sidecar["args"] == ["run"]
    assert 1 <= deployment["spec"]["replicas"] <= 2
    env = {e["name"]: e.get("value") for e in sidecar["env"]}
    [port] = sidecar["ports"]
    assert port["name"] == "metrics" and str(port["containerPort"]) == env["RFR_METRICS_PORT"]
    assert sidecar["livenessProbe"]["httpGet"] == {"path": LIVEZ, "port": "metrics"}
    assert sidecar["readinessProbe"]["httpGet"] == {"path": READYZ, "port": "metrics"}
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert 10 <= grace <= 120
    service = one(rendered, "Service")
    [service_port] = service["spec"]["ports"]
    assert service_port["port"] == port["containerPort"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def test_the_networkpolicy_lets_out_what_the_configuration_points_at(
        overlay: list[dict[str, Any]]) -> None:
    policy = one(overlay, "NetworkPolicy")["spec"]
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    selector = policy["podSelector"]["matchLabels"]
    for doc in overlay:
        if doc["kind"] in ("Deployment", "Job"):
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= labels.items(), doc["metadata"]["name"]
    # In: the metrics port, from the monitoring namespace only.
    [ingress] = policy["ingress"]
    assert ingress["ports"] == [{"protocol": "TCP", "port": "metrics"}]
    assert all("namespaceSelector" in peer for peer in ingress["from"])
    # Out: DNS, PostgreSQL, the S3 endpoint's port and every Kafka bootstrap server's port.
    allowed = {(p.get("protocol", "TCP"), p["port"]) for rule in policy["egress"]
               for p in rule["ports"]}
    assert all(rule.get("to") for rule in policy["egress"]), "an egress rule without `to`"
    [data] = settings_config_maps(overlay).values()
    s3 = urlsplit(data["S3_ENDPOINT_URL"])
    wanted = {("UDP", 53), ("TCP", 53), ("TCP", 5432),
              ("TCP", s3.port or (443 if s3.scheme == "https" else 80))}
    wanted |= {("TCP", int(server.rsplit(":", 1)[1]))
               for server in data["KAFKA_BOOTSTRAP_SERVERS"].split(",")}
    assert wanted <= allowed, wanted - allowed


def test_prometheus_finds_the_pods_in_any_namespace(tmp_path: Path) -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    assert config["rule_files"] == ["alerts.yml"]
    [job] = config["scrape_configs"]
    assert job["job_name"] == IMAGE and job["metrics_path"] == "/metrics"
    [sd] = job["kubernetes_sd_configs"]
    assert sd["role"] == "pod" and "namespaces" not in sd  # every namespace
    assert "svc.cluster.local" not in PROMETHEUS.read_text()
    [selector] = sd["selectors"]
    deployment = one(render(OVERLAYS[0]), "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    wanted = dict(pair.split("=") for pair in selector["label"].split(","))
    assert wanted.items() <= pod_labels.items()
    [sidecar] = deployment["spec"]["template"]["spec"]["containers"]
    keep = [r for r in job["relabel_configs"] if r.get("action") == "keep"]
    assert [(r["source_labels"], r["regex"]) for r in keep] == [
        (["__meta_kubernetes_pod_container_port_name"], sidecar["ports"][0]["name"])]
    targets = {r.get("target_label") for r in job["relabel_configs"]}
    assert {"namespace", "pod"} <= targets
    # promtool on everything but the discovery (Debian's Prometheus has no Kubernetes SD).
    static = prometheus_with_static_target(config, "127.0.0.1:9464", REPO / "deploy")
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(static))
    proc = subprocess.run(["promtool", "check", "config", str(tmp_path / "prometheus.yml")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS: 1 rule files found" in proc.stdout


def test_the_image_is_built_as_the_manifests_run_it() -> None:
    text = DOCKERFILE.read_text()
    [base] = re.findall(r"^FROM\s+(\S+)", text, re.M)
    # An exact version tag of the official image (no registry host, no floating tag); a digest
    # is the release pipeline's to add.
    match = re.fullmatch(r"python:(3\.\d+)\.\d+-slim-(bookworm|trixie)", base)
    assert match, base
    lock_python = re.search(r"--python-version (3\.\d+)",
                            (REPO / "scripts" / "lock.sh").read_text())
    assert lock_python and match[1] == lock_python[1], "the image's Python is the locks' Python"
    [user] = re.findall(r"^USER\s+(\S+)", text, re.M)
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0
    [expose] = re.findall(r"^EXPOSE\s+(\d+)", text, re.M)
    for docs in (render(k) for k in KUSTOMIZATIONS):
        for _, spec in pod_specs(docs):
            assert spec["securityContext"]["runAsUser"] == int(uid)
        [sidecar] = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
        assert sidecar["ports"][0]["containerPort"] == int(expose)
    assert "--require-hashes" in text and "ARG VERSION" in text


@pytest.mark.parametrize(("path", "sent"), [
    ("requirements.lock", True),
    (f"dist/recording_finalize_retry-{__version__}-py3-none-any.whl", True),
    (".venv/bin/python", False),
    (".stack/test/state.json", False),
    (".stack/dev/env", False),
    ("out/demo/report.md", False),
    (".git/HEAD", False),
    (".pytest_cache/v/cache/nodeids", False),
    (".mypy_cache/3.11/x.json", False),
    (".ruff_cache/0.5/x", False),
    ("driver/__pycache__/cli.cpython-311.pyc", False),
    ("requirements-dev.lock", False),
    ("dist/recording_finalize_retry-0.2.0.tar.gz", False),
])
def test_the_build_context_carries_only_the_lock_and_the_wheel(path: str, sent: bool) -> None:
    assert _docker_sends(path) is sent, path


# --- helpers ---------------------------------------------------------------------------------


def _secret_refs(container: dict[str, Any]) -> list[dict[str, Any]]:
    refs = [e["valueFrom"]["secretKeyRef"] for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})]
    refs += [{"name": e["secretRef"]["name"], "key": "*"} for e in container.get("envFrom", [])
             if "secretRef" in e]
    return refs


def _secret_ref(container: dict[str, Any], variable: str) -> tuple[str, str] | None:
    for item in container.get("env", []):
        if item["name"] == variable and "secretKeyRef" in item.get("valueFrom", {}):
            ref = item["valueFrom"]["secretKeyRef"]
            return ref["name"], ref["key"]
    return None


def _environment(container: dict[str, Any], config_maps: dict[str, dict[str, str]],
                 secret: str = "", database_url: str = "") -> dict[str, str]:
    """The container's environment as the kubelet builds it (envFrom first, env over it);
    Secret values replaced by ``secret`` (DATABASE_URL by ``database_url``)."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        assert "configMapRef" in source, source
        env.update(config_maps[source["configMapRef"]["name"]])
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
        else:
            env[item["name"]] = database_url if item["name"] == "DATABASE_URL" else secret
    return env


def _seconds(duration: str) -> float:
    match = re.fullmatch(r"(\d+)(s|m|h)", duration)
    assert match, duration
    return int(match[1]) * {"s": 1, "m": 60, "h": 3600}[match[2]]


def _cli_commands() -> set[str]:
    out = subprocess.run([CLI, "--help"], capture_output=True, text=True, timeout=30).stdout
    block = out.split("positional arguments:", 1)[1].split("options:", 1)[0]
    return set(re.findall(r"^    ([a-z][a-z-]+)", block, re.M))


def _docker_sends(path: str) -> bool:
    """Whether ``docker build .`` sends ``path`` (relative to the repository): the rules of
    .dockerignore - each line a pattern, `!` re-includes, the last match wins, a pattern
    matches a path or one of its parent directories."""
    sent = True
    parts = path.split("/")
    for raw in DOCKERIGNORE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:] if negate else line
        pattern = pattern.strip("/")
        depth = pattern.count("/") + 1
        candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        if any(fnmatchcase(c, pattern) and c.count("/") + 1 == depth for c in candidates):
            sent = negate
    return sent
