//! The forwarded tools, one line of table each: the editor method (its name is the
//! tool's), description, argument type.

use super::args::{self, CallDirection, TypeDirection};
use super::forward;
use crate::protocol::editor::{self, Method};
use crate::tools::registry::{CatalogError, EditorUse, Effect, Tool, ToolRegistry, ToolTimeout};
use crate::tools::{ToolContext, ToolResult};

macro_rules! editor_tools {
    ($( $ty:ident $desc:literal => $args:ty; )*) => {
        $(
            #[doc = concat!("Forwarded to the editor method [`Method::", stringify!($ty), "`] of the same name.")]
            pub struct $ty;

            impl Tool for $ty {
                type Args = $args;
                const NAME: &'static str = Method::$ty.name();
                const DESCRIPTION: &'static str = $desc;
                const EFFECT: Effect = Method::$ty.effect();
                const EDITOR: EditorUse = if super::answers_without_editor(Method::$ty) {
                    EditorUse::Optional
                } else {
                    EditorUse::Required
                };
                // A request that waits may take its longest `timeoutMs` and the margin.
                const TIMEOUT: ToolTimeout = if Method::$ty.waits() {
                    ToolTimeout::Fixed(std::time::Duration::from_millis(
                        (editor::MAX_WAIT_MS + editor::WAIT_MARGIN_MS) as u64 + 1_000,
                    ))
                } else {
                    ToolTimeout::Default
                };

                async fn call(ctx: ToolContext, args: $args) -> ToolResult {
                    forward(ctx, Method::$ty, args).await
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
    GoToDefinition "Where the symbol at file:line:column (1-based) is defined." => args::At;
    FindReferences "Every reference to the symbol at file:line:column (1-based)." => args::At;
    GetHover "Hover information (types, docs) at file:line:column (1-based)." => args::At;
    GetCodeActions "Code actions (quick fixes, refactorings) available for a range." => args::Span;
    ApplyCodeAction "Apply the code action with this title to a range." => args::ApplyCodeAction;
    RenameSymbol "Rename the symbol at file:line:column across the workspace (preview: true lists the edits and writes nothing)." => args::RenameSymbol;
    SearchSymbols "Workspace symbols matching a query (at most 200)." => args::SearchSymbols;
    GetDocumentSymbols "The symbols (outline) of a file." => args::File;
    GetCallHierarchy "Callers and/or callees of the function at file:line:column." => args::Hierarchy<CallDirection>;
    // Terminal (6 more; getTerminalOutput has its own module)
    ListTerminals "The editor's terminals." => args::NoArgs;
    CreateTerminal "Create a terminal (named with this session's prefix)." => args::CreateTerminal;
    DisposeTerminal "Close one of this session's terminals." => args::TerminalRef;
    SendTerminalCommand "Type text into a terminal (the user's shell runs it)." => args::SendTerminalCommand;
    ExecuteInTerminal "Run a command in a terminal and wait for its exit code and output." => args::ExecuteInTerminal;
    WaitForTerminalOutput "Wait until a terminal prints a line matching a regex." => args::WaitForTerminalOutput;
    // Debug (5)
    GetDebugState "The debug session: paused or not, call stack, scopes, breakpoints." => args::NoArgs;
    EvaluateInDebugger "Evaluate an expression in the paused debug session." => args::EvaluateInDebugger;
    SetDebugBreakpoints "Set the breakpoints of a file (replacing its others)." => args::SetDebugBreakpoints;
    StartDebugging "Start debugging (a launch configuration by name, or the default)." => args::StartDebugging;
    StopDebugging "Stop the debug session." => args::NoArgs;
    // Files (5 more; the others have their own modules)
    GetOpenFiles "Files open in the editor, with dirty and active flags." => args::NoArgs;
    IsDirty "Whether a file has unsaved changes in the editor." => args::File;
    SaveFile "Save a file open in the editor." => args::File;
    CloseTab "Close the editor tab of a file." => args::File;
    GetFileContent "A file's content as the editor has it (including unsaved changes); without an editor, from disk." => args::File;
    // Code actions (3)
    FormatDocument "Format a file with the editor's formatter." => args::File;
    FixAllLintErrors "Apply every automatic lint fix to a file." => args::File;
    OrganizeImports "Sort and prune a file's imports." => args::File;
    // Other (15 more; getDiagnostics has its own module)
    GetSelection "The editor's current selection (1-based) and its text." => args::NoArgs;
    GetAIComments "// AI: comments found in open files." => args::NoArgs;
    WatchFiles "Watch files matching a glob; changes arrive as editor events." => args::WatchFiles;
    UnwatchFiles "Stop a file watch." => args::WatchId;
    SetDecorations "Highlight lines of a file in the editor." => args::SetDecorations;
    ClearDecorations "Remove decorations (one set by id, or all)." => args::ClearDecorations;
    ReadClipboard "The clipboard's text." => args::NoArgs;
    WriteClipboard "Put text on the clipboard." => args::WriteClipboard;
    GetInlayHints "Inlay hints (inferred types, parameter names) for lines of a file." => args::InlayHints;
    GetTypeHierarchy "Supertypes and/or subtypes of the type at file:line:column." => args::Hierarchy<TypeDirection>;
    GetWorkspaceSettings "Editor settings (one section, or all)." => args::WorkspaceSettings;
    SetWorkspaceSetting "Change an editor setting." => args::SetWorkspaceSetting;
    ExecuteVSCodeCommand "Run an editor command by id." => args::ExecuteCommand;
    ListVSCodeCommands "Editor command ids, optionally filtered." => args::ListCommands;
    CaptureScreenshot "A screenshot of the editor window (PNG image)." => args::NoArgs;
}
