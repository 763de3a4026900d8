"""Time the hooks `ide-bridge init` installs add to each tool call of the real Claude
Code CLI, with and without a bridge serving the directory.

    .venv-test/bin/python benches/hook_cost.py [--calls 30] [--rounds 3] [--tool Write|Read] \\
        BRIDGE_BINARY CLI [CLI ...]

For each CLI, `claude -p` runs a scripted model (tests/python/fake_model.py) that asks
for `--calls` tool calls in a row; the time from one model request to the next is one
tool call as the CLI sees it (the model's answer, the tool, the hooks). Three set-ups
run interleaved, `--rounds` times each: the hooks absent (`init --no-hooks`), installed
with a bridge serving the workspace, and installed in a directory no bridge serves (and
that is no project, so none is started). Reported: p50 and p99 per set-up, and what the
hooks add to the p50, as milliseconds."""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

from fake_model import FakeModel, text, tool_use  # noqa: E402

API_KEY = "sk-ant-ide-bridge-benchmark-key-000001"


def one_run(cli, config, workspace, tool, calls):
    """Milliseconds between consecutive model requests (the first gap is dropped)."""
    stamps = []
    run_id = time.monotonic_ns()

    def step(i):
        def reply(body):
            stamps.append(time.monotonic())
            if i == calls:
                return text("done")
            if tool == "Write":
                # A new file each time: the CLI refuses to overwrite a file it has not read.
                return tool_use("Write", {"file_path": str(workspace / f"out-{run_id}-{i}.txt"), "content": f"v{i}\n"})
            return tool_use("Read", {"file_path": str(workspace / "a.txt")})

        return reply

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "IDE_BRIDGE"))}
    with FakeModel([{"on": "any", "reply": step(i)} for i in range(calls + 1)]) as model:
        env.update({"CLAUDE_CONFIG_DIR": str(config), "HOME": str(config.parent), "ANTHROPIC_API_KEY": API_KEY,
                    "ANTHROPIC_BASE_URL": model.url, "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
        out = subprocess.run([cli, "-p", "go"], cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise SystemExit(f"{cli} failed: {out.stderr[-2000:]}")
    errors = [r for r in model.tool_results() if r.get("is_error")]
    if errors:
        raise SystemExit(f"{cli}: a tool call failed, which would skip its hooks: {errors[0]}")
    return [(b - a) * 1000 for a, b in zip(stamps[1:], stamps[2:])]


def config_dir(base, name, binary, workspace, hooks):
    config = base / name / "claude"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Read", "Write", "Edit"]}}))
    (config / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True,
                                                     "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                                                     "projects": {str(workspace): {"hasTrustDialogAccepted": True}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "IDE_BRIDGE"))}
    env.update({"CLAUDE_CONFIG_DIR": str(config), "HOME": str(config.parent)})
    args = [binary, "init"] + ([] if hooks else ["--no-hooks"])
    subprocess.run(args, env=env, check=True, capture_output=True)
    # Only the hooks are measured: without the MCP registration no relay starts a
    # bridge of its own for the workspace.
    claude_json = config / ".claude.json"
    registered = json.loads(claude_json.read_text())
    registered.pop("mcpServers", None)
    claude_json.write_text(json.dumps(registered))
    return config, env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tool", default="Write", choices=["Write", "Read"])
    ap.add_argument("binary")
    ap.add_argument("clis", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(tmp)
        served = base / "served"
        served.mkdir()
        (served / ".git").mkdir()
        (served / "a.txt").write_text("hello\n")
        bare = base / "bare"
        bare.mkdir()
        (bare / "a.txt").write_text("hello\n")
        plain, _ = config_dir(base, "plain", a.binary, served, hooks=False)
        hooked, env = config_dir(base, "hooked", a.binary, served, hooks=True)
        hooked_bare, _ = config_dir(base, "hooked-bare", a.binary, bare, hooks=True)
        bridge = subprocess.Popen([a.binary, "--workspace", str(served)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 20
            while not list((hooked / "ide").glob("*.lock")):
                if time.monotonic() > deadline:
                    raise SystemExit("the bridge did not start")
                time.sleep(0.05)
            setups = {
                "no hooks": (plain, served),
                "hooks, bridge": (hooked, served),
                "hooks, no bridge": (hooked_bare, bare),
            }
            for cli in a.clis:
                version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.split()[0]
                gaps = {name: [] for name in setups}
                for _ in range(a.rounds):
                    for name, (config, ws) in setups.items():
                        gaps[name] += one_run(cli, config, ws, a.tool, a.calls)
                base_p50 = statistics.median(gaps["no hooks"])
                print(f"\nClaude Code {version}, {a.tool}, {a.calls} calls x {a.rounds} rounds")
                print("| set-up | calls | p50 ms | p99 ms | added to p50 |")
                print("|---|---:|---:|---:|---:|")
                for name, g in gaps.items():
                    g.sort()
                    p50 = statistics.median(g)
                    p99 = g[min(len(g) - 1, int(len(g) * 0.99))]
                    added = "—" if name == "no hooks" else f"{p50 - base_p50:+.1f} ms"
                    print(f"| {name} | {len(g)} | {p50:.1f} | {p99:.1f} | {added} |")
        finally:
            bridge.terminate()
            bridge.wait(10)


if __name__ == "__main__":
    main()
