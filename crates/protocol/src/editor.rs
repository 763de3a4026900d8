//! The requests the bridge sends an editor (`extension/<method>`, docs/protocol.md),
//! declared once. Rust names them by [`Method`]; tests check the Neovim and VS Code
//! plugins, their test lists and docs/protocol.md against [`Method::ALL`], so a method
//! added here and missing there fails a test.

use crate::mcp::Effect;

/// Declares [`Method`]: each variant and its wire name.
macro_rules! methods {
    ($( $variant:ident = $name:literal, )*) => {
        /// An editor method.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $( #[doc = concat!("`extension/", $name, "`")] $variant, )*
            /// `extension/debugLink`: test builds only (fault injection); no plugin
            /// implements it.
            DebugLink,
        }

        impl Method {
            /// Every method a plugin implements (not [`Method::DebugLink`]).
            pub const ALL: &'static [Method] = &[ $( Method::$variant, )* ];

            /// The name after `extension/`, as tools and plugins spell it.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Method::$variant => $name, )*
                    Method::DebugLink => "debugLink",
                }
            }
        }
    };
}

methods! {
    // Language server
    GoToDefinition = "goToDefinition",
    FindReferences = "findReferences",
    GetHover = "getHover",
    GetCodeActions = "getCodeActions",
    ApplyCodeAction = "applyCodeAction",
    RenameSymbol = "renameSymbol",
    SearchSymbols = "searchSymbols",
    GetDocumentSymbols = "getDocumentSymbols",
    GetCallHierarchy = "getCallHierarchy",
    GetInlayHints = "getInlayHints",
    GetTypeHierarchy = "getTypeHierarchy",
    // Terminals
    ListTerminals = "listTerminals",
    GetTerminalOutput = "getTerminalOutput",
    CreateTerminal = "createTerminal",
    DisposeTerminal = "disposeTerminal",
    SendTerminalCommand = "sendTerminalCommand",
    ExecuteInTerminal = "executeInTerminal",
    WaitForTerminalOutput = "waitForTerminalOutput",
    // Debugging
    GetDebugState = "getDebugState",
    EvaluateInDebugger = "evaluateInDebugger",
    SetDebugBreakpoints = "setDebugBreakpoints",
    StartDebugging = "startDebugging",
    StopDebugging = "stopDebugging",
    // Files and tabs
    GetOpenFiles = "getOpenFiles",
    IsDirty = "isDirty",
    OpenFile = "openFile",
    SaveFile = "saveFile",
    CloseTab = "closeTab",
    GetFileContent = "getFileContent",
    CreateFile = "createFile",
    DeleteFile = "deleteFile",
    RenameFile = "renameFile",
    GetWorkspaceFolders = "getWorkspaceFolders",
    // Text
    EditText = "editText",
    ReplaceBlock = "replaceBlock",
    // Code actions
    FormatDocument = "formatDocument",
    FixAllLintErrors = "fixAllLintErrors",
    OrganizeImports = "organizeImports",
    // Diffs
    OpenDiff = "openDiff",
    // Other
    GetDiagnostics = "getDiagnostics",
    GetSelection = "getSelection",
    GetAIComments = "getAIComments",
    WatchFiles = "watchFiles",
    UnwatchFiles = "unwatchFiles",
    SetDecorations = "setDecorations",
    ClearDecorations = "clearDecorations",
    ReadClipboard = "readClipboard",
    WriteClipboard = "writeClipboard",
    GetWorkspaceSettings = "getWorkspaceSettings",
    SetWorkspaceSetting = "setWorkspaceSetting",
    ExecuteVSCodeCommand = "executeVSCodeCommand",
    ListVSCodeCommands = "listVSCodeCommands",
    CaptureScreenshot = "captureScreenshot",
}

impl Method {
    /// The JSON-RPC method: `extension/<name>`.
    pub fn wire(self) -> String {
        format!("extension/{}", self.name())
    }

    /// Terminal methods: their `name` param is prefixed per agent session.
    pub fn names_a_terminal(self) -> bool {
        matches!(
            self,
            Method::CreateTerminal
                | Method::DisposeTerminal
                | Method::SendTerminalCommand
                | Method::ExecuteInTerminal
                | Method::WaitForTerminalOutput
                | Method::GetTerminalOutput
        )
    }

    /// What the method does in the editor and the workspace; the tool forwarding it
    /// says the same.
    pub const fn effect(self) -> Effect {
        use Method::*;
        match self {
            GoToDefinition
            | FindReferences
            | GetHover
            | GetCodeActions
            | SearchSymbols
            | GetDocumentSymbols
            | GetCallHierarchy
            | GetInlayHints
            | GetTypeHierarchy
            | ListTerminals
            | GetTerminalOutput
            | WaitForTerminalOutput
            | GetDebugState
            | GetOpenFiles
            | IsDirty
            | GetFileContent
            | GetWorkspaceFolders
            | GetDiagnostics
            | GetSelection
            | GetAIComments
            | ReadClipboard
            | GetWorkspaceSettings
            | ListVSCodeCommands
            | CaptureScreenshot => Effect::Reads,
            OpenFile | CreateTerminal | WatchFiles | UnwatchFiles | SetDecorations
            | ClearDecorations => Effect::Adds,
            ApplyCodeAction | RenameSymbol | DisposeTerminal | SetDebugBreakpoints
            | StopDebugging | SaveFile | CloseTab | CreateFile | DeleteFile | RenameFile
            | EditText | ReplaceBlock | FormatDocument | FixAllLintErrors | OrganizeImports
            | OpenDiff | WriteClipboard | SetWorkspaceSetting => Effect::Changes,
            SendTerminalCommand | ExecuteInTerminal | EvaluateInDebugger | StartDebugging
            | ExecuteVSCodeCommand | DebugLink => Effect::Runs,
        }
    }

    /// The method named `name` (without `extension/`).
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Requests that themselves wait, as long as their `timeoutMs` says (at most
    /// [`MAX_WAIT_MS`]; without one [`DEFAULT_WAIT_MS`]): the plugin answers by then
    /// (`timedOut: true`), and the bridge waits that long plus [`WAIT_MARGIN_MS`] for
    /// the answer instead of its editor request timeout.
    pub const fn waits(self) -> bool {
        matches!(
            self,
            Method::ExecuteInTerminal | Method::WaitForTerminalOutput
        )
    }
}

crate::methods::wire_names! {
    /// What an editor tells the bridge without being asked (docs/protocol.md).
    pub enum EditorNotification {
        Hello = "extension/hello",
        DiagnosticsChanged = "extension/diagnosticsChanged",
        SelectionChanged = "extension/selectionChanged",
        ActiveFileChanged = "extension/activeFileChanged",
        AiCommentsChanged = "extension/aiCommentsChanged",
        DebugSessionChanged = "extension/debugSessionChanged",
        FileChanged = "extension/fileChanged",
        FileSaved = "extension/fileSaved",
        AtMentioned = "extension/atMentioned",
    }
}

impl EditorNotification {
    /// Says what is current now (the selection, the active file): the newest one
    /// replaces any earlier, so none is dropped over the rate limit (the bridge keeps
    /// only the newest, debounced, and tells agents that).
    pub const fn latest_wins(self) -> bool {
        matches!(
            self,
            EditorNotification::SelectionChanged | EditorNotification::ActiveFileChanged
        )
    }
}

crate::methods::wire_names! {
    /// What the bridge tells an editor without being asked (docs/protocol.md); both
    /// plugins handle each.
    pub enum BridgeNotification {
        ClaudeConnectionChanged = "bridge/claudeConnectionChanged",
        CloseDiff = "bridge/closeDiff",
        ClaudeTaskOutput = "bridge/claudeTaskOutput",
        AutomationNotice = "bridge/automationNotice",
        ClaimsChanged = "bridge/claimsChanged",
        AgentChanges = "bridge/agentChanges",
    }
}

/// The reason the bridge gives when it closes an editor connection because a newer one
/// took its place: a plugin that reads it stands by instead of reconnecting (two
/// editors would otherwise take the place from each other for ever).
pub const REPLACED: &str = "replaced by a newer editor connection";

/// The longest `timeoutMs` a waiting request ([`Method::waits`]) may ask for.
pub const MAX_WAIT_MS: u32 = 600_000;
/// How long a waiting request without `timeoutMs` waits: below the bridge's default
/// editor request timeout (`editor.request_timeout_ms`, 10 s).
pub const DEFAULT_WAIT_MS: u32 = 9_000;
/// How much longer than its `timeoutMs` the bridge waits for a waiting request's answer.
pub const WAIT_MARGIN_MS: u32 = 2_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn read(rel: &str) -> String {
        std::fs::read_to_string(crate::generated::path_of(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn files(dir: &str, ext: &str) -> String {
        let mut text = String::new();
        for entry in std::fs::read_dir(crate::generated::path_of(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == ext) {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
        text
    }

    /// Each place that lists the editor methods has every one: the plugins' handlers,
    /// the VS Code suite's list, the Neovim tests, docs/protocol.md.
    #[test]
    fn every_method_is_handled_tested_and_documented_everywhere() {
        let nvim = files("editors/nvim/lua/ide_bridge", "lua");
        let vscode = files("editors/vscode/src/handlers", "ts");
        let suite = read("tests/vscode/suite/01_connect.test.js");
        let nvim_tests = files("tests/nvim", "py");
        let docs = read("docs/protocol.md");
        for m in Method::ALL {
            let name = m.name();
            assert!(
                nvim.contains(&format!("(\"{name}\"")),
                "the Neovim plugin has no handler for {name}"
            );
            assert!(
                vscode.contains(&format!("'{name}'")),
                "the VS Code extension has no handler for {name}"
            );
            assert!(
                suite
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .any(|w| w == name),
                "tests/vscode/suite/01_connect.test.js does not list {name}"
            );
            assert!(
                nvim_tests.contains(name),
                "no test in tests/nvim names {name}"
            );
            assert!(
                docs.contains(&format!("`{name}`")),
                "docs/protocol.md lacks {name}"
            );
        }
        assert_eq!(Method::from_name("openFile"), Some(Method::OpenFile));
        assert_eq!(Method::from_name("debugLink"), None);
    }

    /// Each notification is sent and handled where the protocol says: the bridge's go
    /// to both plugins' handlers, the editor's come from both plugins, all documented;
    /// both plugins know the close reason that makes them stand by.
    #[test]
    fn every_notification_is_handled_sent_and_documented_everywhere() {
        let nvim = files("editors/nvim/lua/ide_bridge", "lua");
        let vscode = format!(
            "{}{}",
            files("editors/vscode/src", "ts"),
            files("editors/vscode/src/handlers", "ts")
        );
        let docs = read("docs/protocol.md");
        for n in BridgeNotification::ALL {
            let method = n.name();
            assert!(
                nvim.contains(&format!("on_notification(\"{method}\"")),
                "the Neovim plugin has no handler for {method}"
            );
            assert!(
                vscode.contains(&format!("onNotification('{method}'"))
                    || vscode.contains(&format!("msg.method === '{method}'")),
                "the VS Code extension has no handler for {method}"
            );
            assert!(
                docs.contains(&format!("`{method}`")),
                "docs/protocol.md lacks {method}"
            );
        }
        for n in EditorNotification::ALL {
            let method = n.name();
            assert!(
                nvim.contains(&format!("\"{method}\"")),
                "the Neovim plugin never sends {method}"
            );
            assert!(
                vscode.contains(&format!("'{method}'")),
                "the VS Code extension never sends {method}"
            );
            assert!(
                docs.contains(&format!("`{method}`")),
                "docs/protocol.md lacks {method}"
            );
            assert_eq!(EditorNotification::parse(method), Some(*n));
        }
        assert!(
            nvim.contains(&format!("REPLACED = \"{REPLACED}\"")),
            "client.lua"
        );
        assert!(
            vscode.contains(&format!("REPLACED = '{REPLACED}'")),
            "connection.ts"
        );
    }

    /// The plugins' bounds of a waiting request are the protocol's (a plugin that cut
    /// a 30 s wait at 9 s answered `timedOut` while the bridge was still waiting).
    #[test]
    fn the_plugins_wait_as_long_as_the_protocol_says() {
        let nvim = read("editors/nvim/lua/ide_bridge/init.lua");
        let nvim_terminal = read("editors/nvim/lua/ide_bridge/terminal.lua");
        let vscode = read("editors/vscode/package.json");
        let vscode_terminals = read("editors/vscode/src/handlers/terminals.ts");
        let docs = read("docs/editors.md");
        assert!(
            nvim.contains(&format!("max_wait_ms = {MAX_WAIT_MS},")),
            "init.lua"
        );
        assert!(
            nvim_terminal.contains(&format!("DEFAULT_WAIT_MS = {DEFAULT_WAIT_MS}")),
            "terminal.lua"
        );
        assert!(
            vscode.contains(&format!("\"default\": {MAX_WAIT_MS},")),
            "package.json's ideBridge.maxTerminalWaitMs"
        );
        assert!(
            vscode_terminals.contains(&format!("DEFAULT_WAIT_MS = {DEFAULT_WAIT_MS};")),
            "terminals.ts"
        );
        for shown in [MAX_WAIT_MS, DEFAULT_WAIT_MS] {
            assert!(
                docs.contains(&format!("`{shown}`")),
                "docs/editors.md: {shown}"
            );
        }
    }
}
