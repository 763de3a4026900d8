"""The streamable HTTP interop tests run in their own venv (the MCP Python SDK 2.x,
which has no WebSocket transport); they share the bridge fixture of tests/python."""

import importlib.util
import pathlib

_spec = importlib.util.spec_from_file_location(
    "bridge_fixtures", pathlib.Path(__file__).resolve().parent.parent / "python" / "conftest.py"
)
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

anyio_backend = _shared.anyio_backend
bridge = _shared.bridge
running_bridge = _shared.running_bridge


@_shared.pytest.fixture
def notifying_bridge(tmp_path):
    """A bridge whose automation policy notifies agents of every change under src/."""
    policy = tmp_path / "automation.json"
    policy.write_text(
        '{"onFileChange": {"patterns": ["src/**"], "action": "notify",'
        ' "message": "{{change}} {{file}}"}}'
    )
    with running_bridge("--automation-policy", str(policy)) as b:
        yield b


class RestartableBridge(dict):
    """A bridge whose process can be stopped (SIGTERM, its final checkpoint written)
    and started again on the same workspace and config directory: with the port 0 it
    has by default, it binds the port it had, and keeps its token."""

    def __init__(self, tmp):
        super().__init__()
        self.tmp = tmp
        self["workspace"] = (tmp / "workspace").resolve()
        self["workspace"].mkdir()
        self["config_dir"] = tmp / "claude"
        self.proc = None
        self.start()

    def start(self):
        with open(self.tmp / "bridge.log", "ab") as log:
            self.proc, self["port"], self["token"] = _shared.start_bridge(
                self["workspace"], self["config_dir"], log
            )

    def restart(self):
        _shared.stop_process(self.proc)
        self.start()

    def stop(self):
        _shared.stop_process(self.proc)


@_shared.pytest.fixture
def restartable_bridge(tmp_path):
    b = RestartableBridge(tmp_path)
    try:
        yield b
    finally:
        b.stop()
