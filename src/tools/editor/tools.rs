//! The forwarded tools, one line of table each: name, description, argument type.

use super::args::{self, CallDirection, TypeDirection};
use super::forward;
use crate::tools::registry::{CatalogError, EditorUse, Tool, ToolRegistry};
use crate::tools::{ToolContext, ToolResult};

macro_rules! editor_tools {
    ($( $ty:ident $name:literal $desc:literal => $args:ty; )*) => {
        $(
            #[doc = concat!("`", $name, "`: forwarded to `extension/", $name, "`.")]
            pub struct $ty;

            impl Tool for $ty {
                type Args = $args;
                const NAME: &'static str = $name;
                const DESCRIPTION: &'static str = $desc;
                const EDITOR: EditorUse = EditorUse::Required;

                async fn call(ctx: ToolContext, args: $args) -> ToolResult {
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
    GoToDefinition "goToDefinition" "Where the symbol at file:line:column (1-based) is defined." => args::At;
    FindReferences "findReferences" "Every reference to the symbol at file:line:column (1-based)." => args::At;
    GetHover "getHover" "Hover information (types, docs) at file:line:column (1-based)." => args::At;
    GetCodeActions "getCodeActions" "Code actions (quick fixes, refactorings) available for a range." => args::Span;
    ApplyCodeAction "applyCodeAction" "Apply the code action with this title to a range." => args::ApplyCodeAction;
    RenameSymbol "renameSymbol" "Rename the symbol at file:line:column across the workspace." => args::RenameSymbol;
    SearchSymbols "searchSymbols" "Workspace symbols matching a query (at most 200)." => args::SearchSymbols;
    GetDocumentSymbols "getDocumentSymbols" "The symbols (outline) of a file." => args::File;
    GetCallHierarchy "getCallHierarchy" "Callers and/or callees of the function at file:line:column." => args::Hierarchy<CallDirection>;
    // Terminal (6 more; getTerminalOutput has its own module)
    ListTerminals "listTerminals" "The editor's terminals." => args::NoArgs;
    CreateTerminal "createTerminal" "Create a terminal (named with this session's prefix)." => args::CreateTerminal;
    DisposeTerminal "disposeTerminal" "Close one of this session's terminals." => args::TerminalRef;
    SendTerminalCommand "sendTerminalCommand" "Type text into a terminal (the user's shell runs it)." => args::SendTerminalCommand;
    ExecuteInTerminal "executeInTerminal" "Run a command in a terminal and wait for its exit code and output." => args::ExecuteInTerminal;
    WaitForTerminalOutput "waitForTerminalOutput" "Wait until a terminal prints a line matching a regex." => args::WaitForTerminalOutput;
    // Debug (5)
    GetDebugState "getDebugState" "The debug session: paused or not, call stack, scopes, breakpoints." => args::NoArgs;
    EvaluateInDebugger "evaluateInDebugger" "Evaluate an expression in the paused debug session." => args::EvaluateInDebugger;
    SetDebugBreakpoints "setDebugBreakpoints" "Set the breakpoints of a file (replacing its others)." => args::SetDebugBreakpoints;
    StartDebugging "startDebugging" "Start debugging (a launch configuration by name, or the default)." => args::StartDebugging;
    StopDebugging "stopDebugging" "Stop the debug session." => args::NoArgs;
    // Files (5 more; the others have their own modules)
    GetOpenFiles "getOpenFiles" "Files open in the editor, with dirty and active flags." => args::NoArgs;
    IsDirty "isDirty" "Whether a file has unsaved changes in the editor." => args::File;
    SaveFile "saveFile" "Save a file open in the editor." => args::File;
    CloseTab "closeTab" "Close the editor tab of a file." => args::File;
    GetFileContent "getFileContent" "A file's content as the editor has it (including unsaved changes); without an editor, from disk." => args::File;
    // Code actions (3)
    FormatDocument "formatDocument" "Format a file with the editor's formatter." => args::File;
    FixAllLintErrors "fixAllLintErrors" "Apply every automatic lint fix to a file." => args::File;
    OrganizeImports "organizeImports" "Sort and prune a file's imports." => args::File;
    // Other (15 more; getDiagnostics has its own module)
    GetSelection "getSelection" "The editor's current selection (1-based) and its text." => args::NoArgs;
    GetAIComments "getAIComments" "// AI: comments found in open files." => args::NoArgs;
    WatchFiles "watchFiles" "Watch files matching a glob; changes arrive as editor events." => args::WatchFiles;
    UnwatchFiles "unwatchFiles" "Stop a file watch." => args::WatchId;
    SetDecorations "setDecorations" "Highlight lines of a file in the editor." => args::SetDecorations;
    ClearDecorations "clearDecorations" "Remove decorations (one set by id, or all)." => args::ClearDecorations;
    ReadClipboard "readClipboard" "The clipboard's text." => args::NoArgs;
    WriteClipboard "writeClipboard" "Put text on the clipboard." => args::WriteClipboard;
    GetInlayHints "getInlayHints" "Inlay hints (inferred types, parameter names) for lines of a file." => args::InlayHints;
    GetTypeHierarchy "getTypeHierarchy" "Supertypes and/or subtypes of the type at file:line:column." => args::Hierarchy<TypeDirection>;
    GetWorkspaceSettings "getWorkspaceSettings" "Editor settings (one section, or all)." => args::WorkspaceSettings;
    SetWorkspaceSetting "setWorkspaceSetting" "Change an editor setting." => args::SetWorkspaceSetting;
    ExecuteVSCodeCommand "executeVSCodeCommand" "Run an editor command by id." => args::ExecuteCommand;
    ListVSCodeCommands "listVSCodeCommands" "Editor command ids, optionally filtered." => args::ListCommands;
    CaptureScreenshot "captureScreenshot" "A screenshot of the editor window (PNG image)." => args::NoArgs;
}
