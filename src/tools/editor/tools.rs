//! The forwarded tools, one line of table each: name, description, schema.

use serde_json::{json, Map, Value};

use super::forward;
use crate::protocol::mcp::CallToolResult;
use crate::tools::registry::{CatalogError, EditorUse, Tool, ToolRegistry};
use crate::tools::ToolContext;

fn pos() -> Value {
    json!({ "type": "integer", "minimum": 1 })
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": props, "required": required, "additionalProperties": false })
}

fn at(extra: Value) -> Value {
    let mut props = json!({ "file": { "type": "string" }, "line": pos(), "column": pos() });
    if let (Some(p), Some(e)) = (props.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    props
}

fn range(extra: Value) -> Value {
    let mut props = json!({ "file": { "type": "string" }, "startLine": pos(), "startColumn": pos(), "endLine": pos(), "endColumn": pos() });
    if let (Some(p), Some(e)) = (props.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    props
}

fn terminal(extra: Value) -> Value {
    let mut props = json!({ "name": { "type": "string", "minLength": 1 }, "index": { "type": "integer", "minimum": 0 } });
    if let (Some(p), Some(e)) = (props.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    props
}

macro_rules! editor_tools {
    ($( $ty:ident $name:literal $desc:literal => $schema:expr; )*) => {
        $(
            #[doc = concat!("`", $name, "`: forwarded to `extension/", $name, "`.")]
            pub struct $ty;

            impl Tool for $ty {
                type Args = Map<String, Value>;
                const NAME: &'static str = $name;
                const DESCRIPTION: &'static str = $desc;
                const EDITOR: EditorUse = EditorUse::Required;

                fn schema() -> Value {
                    $schema
                }

                async fn call(ctx: ToolContext, args: Map<String, Value>) -> CallToolResult {
                    forward(ctx, $name, args).await
                }
            }
        )*

        /// Registers every forwarded tool.
        pub fn register(r: &mut ToolRegistry) -> Result<(), CatalogError> {
            $( r.register::<$ty>()?; )*
            Ok(())
        }

    };
}

editor_tools! {
    // LSP (9)
    GoToDefinition "goToDefinition" "Where the symbol at file:line:column (1-based) is defined." => obj(at(json!({})), &["file", "line", "column"]);
    FindReferences "findReferences" "Every reference to the symbol at file:line:column (1-based)." => obj(at(json!({})), &["file", "line", "column"]);
    GetHover "getHover" "Hover information (types, docs) at file:line:column (1-based)." => obj(at(json!({})), &["file", "line", "column"]);
    GetCodeActions "getCodeActions" "Code actions (quick fixes, refactorings) available for a range." => obj(range(json!({})), &["file", "startLine", "startColumn", "endLine", "endColumn"]);
    ApplyCodeAction "applyCodeAction" "Apply the code action with this title to a range." => obj(range(json!({ "actionTitle": { "type": "string", "minLength": 1 } })), &["file", "startLine", "startColumn", "endLine", "endColumn", "actionTitle"]);
    RenameSymbol "renameSymbol" "Rename the symbol at file:line:column across the workspace." => obj(at(json!({ "newName": { "type": "string", "minLength": 1 } })), &["file", "line", "column", "newName"]);
    SearchSymbols "searchSymbols" "Workspace symbols matching a query (at most 200)." => obj(json!({ "query": { "type": "string", "minLength": 1 }, "maxResults": { "type": "integer", "minimum": 1, "maximum": 200 } }), &["query"]);
    GetDocumentSymbols "getDocumentSymbols" "The symbols (outline) of a file." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    GetCallHierarchy "getCallHierarchy" "Callers and/or callees of the function at file:line:column." => obj(at(json!({ "direction": { "enum": ["incoming", "outgoing", "both"] }, "maxResults": { "type": "integer", "minimum": 1, "maximum": 200 } })), &["file", "line", "column"]);
    // Terminal (6 more; getTerminalOutput has its own module)
    ListTerminals "listTerminals" "The editor's terminals." => obj(json!({}), &[]);
    CreateTerminal "createTerminal" "Create a terminal (named with this session's prefix)." => obj(json!({ "name": { "type": "string", "minLength": 1 }, "cwd": { "type": "string" }, "env": { "type": "object", "additionalProperties": { "type": "string" } }, "show": { "type": "boolean" } }), &[]);
    DisposeTerminal "disposeTerminal" "Close one of this session's terminals." => obj(terminal(json!({})), &[]);
    SendTerminalCommand "sendTerminalCommand" "Type text into a terminal (the user's shell runs it)." => obj(terminal(json!({ "text": { "type": "string" }, "addNewline": { "type": "boolean" } })), &["text"]);
    ExecuteInTerminal "executeInTerminal" "Run a command in a terminal and wait for its exit code and output." => obj(terminal(json!({ "command": { "type": "string", "minLength": 1 }, "timeoutMs": { "type": "integer", "minimum": 100, "maximum": 600000 }, "show": { "type": "boolean" } })), &["command"]);
    WaitForTerminalOutput "waitForTerminalOutput" "Wait until a terminal prints a line matching a regex." => obj(terminal(json!({ "pattern": { "type": "string", "minLength": 1 }, "timeoutMs": { "type": "integer", "minimum": 100, "maximum": 600000 } })), &["pattern"]);
    // Debug (5)
    GetDebugState "getDebugState" "The debug session: paused or not, call stack, scopes, breakpoints." => obj(json!({}), &[]);
    EvaluateInDebugger "evaluateInDebugger" "Evaluate an expression in the paused debug session." => obj(json!({ "expression": { "type": "string", "minLength": 1 }, "frameId": { "type": "integer" }, "context": { "enum": ["watch", "repl", "hover"] } }), &["expression"]);
    SetDebugBreakpoints "setDebugBreakpoints" "Set the breakpoints of a file (replacing its others)." => obj(json!({ "file": { "type": "string" }, "breakpoints": { "type": "array", "maxItems": 1000, "items": { "type": "object", "properties": { "line": pos(), "condition": { "type": "string" }, "hitCondition": { "type": "string" }, "logMessage": { "type": "string" } }, "required": ["line"] } } }), &["file", "breakpoints"]);
    StartDebugging "startDebugging" "Start debugging (a launch configuration by name, or the default)." => obj(json!({ "configName": { "type": "string" } }), &[]);
    StopDebugging "stopDebugging" "Stop the debug session." => obj(json!({}), &[]);
    // Files (5 more; the others have their own modules)
    GetOpenFiles "getOpenFiles" "Files open in the editor, with dirty and active flags." => obj(json!({}), &[]);
    IsDirty "isDirty" "Whether a file has unsaved changes in the editor." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    SaveFile "saveFile" "Save a file open in the editor." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    CloseTab "closeTab" "Close the editor tab of a file." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    GetFileContent "getFileContent" "A file's content as the editor has it (including unsaved changes); without an editor, from disk." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    // Code actions (3)
    FormatDocument "formatDocument" "Format a file with the editor's formatter." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    FixAllLintErrors "fixAllLintErrors" "Apply every automatic lint fix to a file." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    OrganizeImports "organizeImports" "Sort and prune a file's imports." => obj(json!({ "file": { "type": "string" } }), &["file"]);
    // Other (15 more; getDiagnostics has its own module)
    GetSelection "getSelection" "The editor's current selection (1-based) and its text." => obj(json!({}), &[]);
    GetAIComments "getAIComments" "// AI: comments found in open files." => obj(json!({}), &[]);
    WatchFiles "watchFiles" "Watch files matching a glob; changes arrive as editor events." => obj(json!({ "id": { "type": "string", "minLength": 1 }, "pattern": { "type": "string", "minLength": 1 } }), &["id", "pattern"]);
    UnwatchFiles "unwatchFiles" "Stop a file watch." => obj(json!({ "id": { "type": "string", "minLength": 1 } }), &["id"]);
    SetDecorations "setDecorations" "Highlight lines of a file in the editor." => obj(json!({ "id": { "type": "string", "minLength": 1 }, "file": { "type": "string" }, "decorations": { "type": "array", "maxItems": 1000, "items": { "type": "object", "properties": { "startLine": pos(), "endLine": pos(), "style": { "enum": ["info", "warning", "error", "focus", "strikethrough", "dim"] }, "message": { "type": "string" }, "hoverMessage": { "type": "string" } }, "required": ["startLine"] } } }), &["id", "file", "decorations"]);
    ClearDecorations "clearDecorations" "Remove decorations (one set by id, or all)." => obj(json!({ "id": { "type": "string" } }), &[]);
    ReadClipboard "readClipboard" "The clipboard's text." => obj(json!({}), &[]);
    WriteClipboard "writeClipboard" "Put text on the clipboard." => obj(json!({ "text": { "type": "string", "maxLength": 1048576 } }), &["text"]);
    GetInlayHints "getInlayHints" "Inlay hints (inferred types, parameter names) for lines of a file." => obj(json!({ "file": { "type": "string" }, "startLine": pos(), "endLine": pos() }), &["file", "startLine", "endLine"]);
    GetTypeHierarchy "getTypeHierarchy" "Supertypes and/or subtypes of the type at file:line:column." => obj(at(json!({ "direction": { "enum": ["supertypes", "subtypes", "both"] }, "maxResults": { "type": "integer", "minimum": 1, "maximum": 200 } })), &["file", "line", "column"]);
    GetWorkspaceSettings "getWorkspaceSettings" "Editor settings (one section, or all)." => obj(json!({ "section": { "type": "string" } }), &[]);
    SetWorkspaceSetting "setWorkspaceSetting" "Change an editor setting." => obj(json!({ "key": { "type": "string", "minLength": 1 }, "value": { "description": "Any JSON value: string, number, boolean, array, object or null", "type": ["string", "number", "integer", "boolean", "array", "object", "null"] }, "target": { "enum": ["global", "workspace", "workspaceFolder"] } }), &["key", "value"]);
    ExecuteVSCodeCommand "executeVSCodeCommand" "Run an editor command by id." => obj(json!({ "command": { "type": "string", "minLength": 1 }, "args": { "type": "array" } }), &["command"]);
    ListVSCodeCommands "listVSCodeCommands" "Editor command ids, optionally filtered." => obj(json!({ "filter": { "type": "string" } }), &[]);
    CaptureScreenshot "captureScreenshot" "A screenshot of the editor window (PNG image)." => obj(json!({}), &[]);
}
