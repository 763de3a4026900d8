"""A second real language server: typescript-language-server (TypeScript 5's tsserver)
through vim.lsp, answering the bridge's agent tools. setup.sh installs it with npm ci
into tests/nvim/node_modules."""

import json

import pytest

from conftest import TS_LS, TSSERVER_LIB, wait_for

pytestmark = pytest.mark.skipif(
    not (TS_LS.exists() and (TSSERVER_LIB / "tsserver.js").exists()),
    reason="tests/nvim/node_modules has no typescript-language-server (run tests/nvim/setup.sh)",
)

SOURCE = """/** Adds two numbers. */
export function add(a: number, b: number): number {
  return a + b;
}

const total: number = add(1, 2);
const wrong: string = add(3, 4);
console.log(total, wrong);
"""


def diagnostics(agent, uri):
    res = agent.call("getDiagnostics", {"uri": uri})
    return [d for fd in json.loads(res["content"][0]["text"]) for d in fd["diagnostics"]]


def test_typescript_diagnostics_hover_definition(world):
    f = world.workspace / "math.ts"
    f.write_text(SOURCE)
    agent = world.agent()
    world.editor.edit(f)
    assert world.editor.lua("return vim.bo.filetype") == "typescript"
    uri = "file://" + str(f)

    # The type error on line 7 reaches the agent as tsserver reported it.
    def type_error():
        found = [d for d in diagnostics(agent, uri) if "not assignable" in d["message"]]
        return found or None

    diag = wait_for(type_error, timeout=20, interval=0.3, what="the tsserver diagnostic")[0]
    assert diag["message"] == "Type 'number' is not assignable to type 'string'."
    assert diag["severity"] in ("Error", "error", 1)
    # 0-based for agents: `wrong` on line 7, column 7.
    assert diag["range"]["start"] == {"line": 6, "character": 6}
    client = world.editor.lua("return vim.lsp.get_clients({bufnr = 0})[1].name")
    assert client == "tsserver"

    # Definition of the call `add(1, 2)` (line 6, column 23, 1-based): the name in
    # `export function add` on line 2.
    defs = agent.call_json("goToDefinition", {"file": str(f), "line": 6, "column": 23})
    assert defs[0]["file"] == str(f)
    assert defs[0]["line"] == 2
    assert defs[0]["column"] == 17

    # Hover on the same call: tsserver's signature and the JSDoc comment.
    hover = agent.call_json("getHover", {"file": str(f), "line": 6, "column": 24})
    text = "\n".join(hover["contents"])
    assert "function add(a: number, b: number): number" in text
    assert "Adds two numbers." in text

    # Fixing the error in the editor clears it for the agent.
    world.editor.input("7G0f:wciwnumber<Esc>:w<CR>")

    def cleared():
        return not any("not assignable" in d["message"] for d in diagnostics(agent, uri))

    wait_for(cleared, timeout=15, interval=0.3, what="the diagnostic to clear")


def test_search_symbols_asks_every_language_server(world):
    """searchSymbols with pylsp and tsserver attached: the symbols of both languages
    (the first buffer's server alone answered before)."""
    ts = world.workspace / "math.ts"
    ts.write_text(SOURCE)
    py = world.workspace / "shapes.py"
    py.write_text("def rectangle_area(w, h):\n    return w * h\n")
    agent = world.agent()
    for f in (ts, py):
        world.editor.edit(f)
        wait_for(
            lambda: world.editor.lua("return #vim.lsp.get_clients({bufnr = 0}) > 0 and vim.lsp.get_clients({bufnr = 0})[1].initialized"),
            timeout=20,
            what=f"a server for {f.name}",
        )

    def names(query):
        found = agent.call_json("searchSymbols", {"query": query})
        return {s["name"] for s in found["symbols"]}

    assert "add" in wait_for(lambda: names("add") or None, timeout=20, what="the TypeScript symbol")
    assert "rectangle_area" in wait_for(lambda: names("rectangle") or None, timeout=20, what="the Python symbol")
