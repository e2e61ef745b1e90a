"""deploy/alerts.yml beyond what promtool tests: every rule links an absolute
runbook URL whose section exists in README.md and leads on to the same section of
docs/runbook.md (where the runbook lives), every alert has a promtool test that makes it
fire and one that keeps it silent, the rules select the scrape job deploy/prometheus.yml
defines, and `make alerts-render` swaps the runbook base and nothing else."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml
from conftest import REPO

ALERTS = REPO / "deploy" / "alerts.yml"
ALERT_TESTS = REPO / "deploy" / "alerts.test.yml"
PLACEHOLDER = "https://runbooks.example.com/recording-finalize-retry/README.md"


def rules() -> list[dict[str, Any]]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def sections(path: Path) -> dict[str, str]:
    """GitHub-style anchors of a Markdown file's headings, each with the text under it."""
    out: dict[str, str] = {}
    anchor = ""
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchor = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
            out[anchor] = ""
        elif anchor:
            out[anchor] += line + "\n"
    return out


def test_every_rule_links_an_absolute_runbook_section_that_exists() -> None:
    readme, runbook = sections(REPO / "README.md"), sections(REPO / "docs" / "runbook.md")
    for rule in rules():
        annotations = rule["annotations"]
        assert "runbook" not in annotations, rule["alert"]  # the old relative form
        url = annotations["runbook_url"]
        base, _, section = url.partition("#")
        assert base == PLACEHOLDER, (rule["alert"], url)
        assert section in readme, f"{rule['alert']}: README.md has no section #{section}"
        # The README's section is an index entry: it links the runbook's section of that name.
        assert f"(docs/runbook.md#{section})" in readme[section], (rule["alert"], section)
        assert section in runbook, f"{rule['alert']}: docs/runbook.md has no #{section}"


def test_every_alert_has_a_firing_and_a_silent_promtool_case() -> None:
    fired: set[str] = set()
    silent: set[str] = set()
    for case in yaml.safe_load(ALERT_TESTS.read_text())["tests"]:
        for check in case.get("alert_rule_test", []):
            (fired if check["exp_alerts"] else silent).add(check["alertname"])
    names = {r["alert"] for r in rules()}
    assert names - fired == set(), "never shown firing"
    assert names - silent == set(), "never shown silent"


def test_the_rules_select_the_scrape_job_of_prometheus_yml() -> None:
    [job] = yaml.safe_load((REPO / "deploy" / "prometheus.yml").read_text())["scrape_configs"]
    selected = {m for r in rules() for m in re.findall(r'job="([^"]+)"', r["expr"])}
    assert selected == {job["job_name"]}


def test_alerts_render_swaps_the_runbook_base_only(tmp_path: Path) -> None:
    out = tmp_path / "alerts.yml"
    url = "https://docs.corp.example/messenger/recording-finalize-retry/-/blob/main/README.md"
    proc = subprocess.run(["make", "-s", "alerts-render", f"RUNBOOK_URL={url}",
                           f"ALERTS_OUT={out}"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    before, after = ALERTS.read_text().splitlines(), out.read_text().splitlines()
    assert len(before) == len(after)
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed and all("runbook_url:" in a or PLACEHOLDER in a for a, _ in changed)
    assert all(b.replace(url, PLACEHOLDER) == a for a, b in changed)
    rendered = [r for g in yaml.safe_load(out.read_text())["groups"] for r in g["rules"]]
    assert all(r["annotations"]["runbook_url"].startswith(url + "#") for r in rendered)
