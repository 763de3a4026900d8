"""Judges a run of the conformance suite's MCP 2026-07-28 scenarios (their checks.json
files under the directory given): every check passes, except checks the suite itself
says are "Not testable" (they call a diagnostic fixture tool of its own server) and the
scenarios in expected-failures.yml (built entirely on its fixtures). Prints what failed
otherwise and exits 1."""

import json
import pathlib
import re
import sys

here = pathlib.Path(__file__).resolve().parent
fixtures = set(re.findall(r"^\s+- ([a-z0-9-]+)\s*$", (here / "expected-failures.yml").read_text(), re.MULTILINE))
results = sorted(pathlib.Path(sys.argv[1]).glob("*/checks.json"))
if not results:
    sys.exit("no results: the suite ran no scenario")
unexpected, passed, scenarios = [], 0, set()
for path in results:
    scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", path.parent.name)
    scenarios.add(scenario)
    for check in json.loads(path.read_text()):
        if check["status"] in ("SUCCESS", "INFO", "WARNING", "SKIPPED"):
            passed += 1
        elif scenario in fixtures or (check.get("errorMessage") or "").startswith("Not testable"):
            continue
        else:
            unexpected.append(f"{scenario}: {check['name']}: {check.get('errorMessage')}")
print(f"MCP 2026-07-28: {len(scenarios)} scenarios, {passed} checks passed, {len(unexpected)} unexpected failures")
for line in unexpected:
    print("  ✗", line)
sys.exit(1 if unexpected else 0)
