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
