//! Every tool the bridge offers. Adding a tool: write its module, add one line here.

use super::registry::{CatalogError, Effect, ToolRegistry, IDE_GROUP};
use super::{
    activity, bridge, changes, claims, commands, compose, editor, files, git, ide, review, tasks,
};

/// Builds the registry with every tool (plus the test-only tools when the
/// `fault-injection` feature is on).
pub fn build() -> Result<ToolRegistry, CatalogError> {
    #[allow(unused_mut)]
    let mut r = production()?;
    #[cfg(feature = "fault-injection")]
    {
        r.set_group("debug");
        super::debug::register(&mut r)?;
    }
    Ok(r)
}

/// The tools a release build offers.
pub fn production() -> Result<ToolRegistry, CatalogError> {
    let mut r = ToolRegistry::default();
    r.set_group(IDE_GROUP);
    r.register::<ide::open_file::OpenFile>()?;
    r.register::<ide::open_diff::OpenDiff>()?;
    r.register::<ide::close_tab::CloseTab>()?;
    r.register::<ide::close_all_diff_tabs::CloseAllDiffTabs>()?;
    r.register::<ide::get_current_selection::GetCurrentSelection>()?;
    r.register::<ide::get_latest_selection::GetLatestSelection>()?;
    r.register::<ide::get_open_editors::GetOpenEditors>()?;
    r.register::<ide::get_workspace_folders::GetWorkspaceFolders>()?;
    r.register::<ide::get_diagnostics::GetDiagnostics>()?;
    r.register::<ide::check_document_dirty::CheckDocumentDirty>()?;
    r.register::<ide::save_document::SaveDocument>()?;
    r.register::<ide::watch_diagnostics::WatchDiagnostics>()?;
    r.set_group("files");
    r.register::<files::read_file::ReadFile>()?;
    r.register::<files::create_file::CreateFile>()?;
    r.register::<files::delete_file::DeleteFile>()?;
    r.register::<files::rename_file::RenameFile>()?;
    r.register::<files::edit_text::EditText>()?;
    r.register::<files::replace_block::ReplaceBlock>()?;
    r.register::<files::check_edit::CheckEdit>()?;
    r.register::<editor::signature_help::GetSignatureHelp>()?;
    r.register::<files::get_file_tree::GetFileTree>()?;
    r.register::<files::find_files::FindFiles>()?;
    r.register::<files::search_workspace::SearchWorkspace>()?;
    r.set_group("claims");
    r.register::<claims::claim_files::ClaimFiles>()?;
    r.register::<claims::release_files::ReleaseFiles>()?;
    r.register::<claims::list_claims::ListClaims>()?;
    r.set_group("commands");
    r.register::<commands::run_command::RunCommand>()?;
    r.register::<commands::run_in_terminal::RunInTerminal>()?;
    r.register::<commands::get_terminal_output::GetTerminalOutput>()?;
    r.set_group("git");
    r.register::<git::git_status::GitStatus>()?;
    r.register::<git::git_diff::GitDiff>()?;
    r.register::<git::git_log::GitLog>()?;
    r.register::<git::git_blame::GitBlame>()?;
    r.register::<git::git_show::GitShow>()?;
    r.register::<git::git_branches::GitBranches>()?;
    r.register::<git::git_add::GitAdd>()?;
    r.register::<git::git_commit::GitCommit>()?;
    r.register::<git::git_push::GitPush>()?;
    r.set_group("editor");
    editor::register(&mut r)?;
    r.register::<compose::IdeCapability>()?;
    r.set_group("tasks");
    r.register::<tasks::run_claude_task::RunClaudeTask>()?;
    r.register::<tasks::get_claude_task_status::GetClaudeTaskStatus>()?;
    r.register::<tasks::list_claude_tasks::ListClaudeTasks>()?;
    r.register::<tasks::cancel_claude_task::CancelClaudeTask>()?;
    r.set_group("review");
    r.register::<review::present_review::PresentReview>()?;
    r.register::<changes::ListChanges>()?;
    r.register::<changes::WhoChanged>()?;
    r.register::<changes::UndoChanges>()?;
    r.register::<changes::KeepChanges>()?;
    r.set_group("activity");
    r.register::<activity::get_activity_log::GetActivityLog>()?;
    r.register::<activity::watch_activity_log::WatchActivityLog>()?;
    r.set_group("bridge");
    r.register::<bridge::get_bridge_status::GetBridgeStatus>()?;
    Ok(r)
}

/// An object schema's properties as docs/tools.md lists them: `` `name` `` when
/// required, `` `name`? `` when not, and the fields of an object, or of a list's
/// objects, after it (`` `edits`: [{`line`, …}] ``).
fn arguments(schema: &serde_json::Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return String::new();
    };
    let fields: Vec<String> = props
        .iter()
        .map(|(k, v)| {
            let optional = if required.contains(&k.as_str()) {
                ""
            } else {
                "?"
            };
            let inner = |v: &serde_json::Value| {
                v["properties"]
                    .is_object()
                    .then(|| format!("{{{}}}", arguments(v)))
            };
            let shape = match inner(v) {
                Some(object) => format!(": {object}"),
                None => inner(&v["items"]).map_or(String::new(), |o| format!(": [{o}]")),
            };
            format!("`{k}`{optional}{shape}")
        })
        .collect();
    fields.join(", ")
}

/// The effect column's words, each with what it means and the `annotations` a client
/// reads.
fn effects() -> String {
    let mut out = String::from(
        "Each tool says what calling it does (its \"effect\"), and `tools/list` gives the \
         same as MCP's tool `annotations` (Claude Code runs the tools marked read-only side by \
         side when its model asks for several at once):\n\n| effect | means | annotations |\n|---|---|---|\n",
    );
    for effect in Effect::ALL {
        let annotations = serde_json::to_string(&effect.annotations()).unwrap_or_default();
        out.push_str(&format!(
            "| {} | {} | `{annotations}` |\n",
            effect.word(),
            effect.means()
        ));
    }
    out.push('\n');
    out
}

/// docs/tools.md, generated from the registry.
pub fn render_markdown(registry: &ToolRegistry) -> String {
    let mut out = String::from(
        "# Tools\n\nGenerated from the tool registry (`src/tools/catalog.rs`; each tool's \
         arguments come from its `Args` type); a test fails when this file is stale. \
         Regenerate with `UPDATE_DOCS=1 cargo test --lib docs_tools_md`. Tools whose \
         answer is typed list an `outputSchema` (derived from the answer's Rust type) and \
         answer with `structuredContent` beside the same JSON as text: their answer \
         column names the fields.\n\n",
    );
    out.push_str(&effects());
    out.push_str(
        "| tool | group | effect | needs an editor | arguments | answer | what it does |\n\
         |---|---|---|---|---|---|---|\n",
    );
    // A description of more than one paragraph (a language's guide) shows its first in
    // the table and the rest after it.
    let mut guides = String::new();
    for tool in registry.tools() {
        let (summary, guide) = tool
            .info
            .description
            .split_once("\n\n")
            .unwrap_or((tool.info.description, ""));
        if !guide.is_empty() {
            guides.push_str(&format!(
                "\n## `{}`: the rest of its description\n\n```text\n{}\n```\n",
                tool.info.name,
                guide.trim_end()
            ));
        }
        let args = arguments(&tool.info.input_schema);
        let answer = match &tool.info.output_schema {
            Some(schema) => schema["properties"]
                .as_object()
                .map(|props| {
                    let fields: Vec<String> = props.keys().map(|k| format!("`{k}`")).collect();
                    format!("{{{}}}", fields.join(", "))
                })
                .unwrap_or_else(|| "typed".into()),
            None => "text".into(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            tool.info.name,
            tool.group,
            tool.effect.word(),
            tool.editor.describe(),
            if args.is_empty() {
                "—".to_string()
            } else {
                args
            },
            answer,
            summary.replace('|', "\\|"),
        ));
    }
    out.push_str(&guides);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_tools_md_is_current() {
        let made = super::render_markdown(&super::production().unwrap());
        crate::generated::file("docs/tools.md", &made, "docs_tools_md");
    }

    /// A tool named as an editor method (its own module routes to the editor, or
    /// answers without one) does what the method does: one may not be read-only where
    /// the other writes.
    #[test]
    fn a_tool_named_as_an_editor_method_has_its_effect() {
        let registry = super::build().expect("catalogue builds");
        let mut named = 0;
        for tool in registry.tools() {
            if let Some(method) = crate::protocol::editor::Method::from_name(tool.info.name) {
                named += 1;
                assert_eq!(tool.effect, method.effect(), "{}", tool.info.name);
            }
        }
        assert!(named > 50, "only {named} tools are named as editor methods");
    }

    /// A misspelt argument name is refused, not ignored (`createFile` with `contents`
    /// wrote an empty file): every tool's schema says `additionalProperties: false`,
    /// but for the `ide` group's, whose arguments are the Claude Code CLI's own
    /// contract — it calls them itself, and a newer CLI may send more.
    #[test]
    fn every_tool_but_the_clis_own_refuses_unknown_argument_names() {
        let registry = super::build().expect("catalogue builds");
        let lenient: Vec<&str> = registry
            .tools()
            .iter()
            .filter(|t| t.group != crate::tools::registry::IDE_GROUP)
            .filter(|t| t.info.input_schema["additionalProperties"] != false)
            .map(|t| t.info.name)
            .collect();
        assert!(
            lenient.is_empty(),
            "add #[serde(deny_unknown_fields)] to: {lenient:?}"
        );
    }

    /// A description that gives an argument's bound in words ("max 55 s") says what
    /// the schema enforces (the words were typed beside a constant).
    #[test]
    fn bounds_in_descriptions_are_the_schemas() {
        let registry = super::build().expect("catalogue builds");
        let mut checked = 0;
        for tool in registry.tools() {
            let text = tool.info.description;
            let Some(at) = text.find("max ") else {
                continue;
            };
            let digits: String = text[at + 4..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let Some(seconds) = text[at + 4 + digits.len()..]
                .starts_with(" s")
                .then(|| digits.parse::<u64>().ok())
                .flatten()
            else {
                continue;
            };
            let max = &tool.info.input_schema["properties"]["timeoutMs"]["maximum"];
            assert_eq!(
                max.as_u64(),
                Some(seconds * 1000),
                "{}: the description says max {seconds} s, the schema {max}",
                tool.info.name
            );
            checked += 1;
        }
        assert!(
            checked >= 2,
            "watchActivityLog and watchDiagnostics say their bound"
        );
    }

    /// The groups `tools.expose` documents are the registry's, and each has tools.
    #[test]
    fn the_expose_setting_names_every_group() {
        let docs = crate::config::docs_table(&[]);
        let line = docs
            .lines()
            .find(|l| l.starts_with("| `tools.expose.include`"))
            .expect("tools.expose.include is documented");
        let registry = super::build().expect("catalogue builds");
        for group in super::super::registry::GROUPS {
            assert!(line.contains(&format!("`{group}`")), "{group}: {line}");
            assert!(
                registry.tools().iter().any(|t| t.group == *group),
                "no tool in {group}"
            );
        }
    }

    #[test]
    fn every_schema_compiles_and_names_are_unique() {
        let registry = super::build().expect("catalogue builds");
        assert!(registry.len() >= 12);
        for info in registry.infos() {
            assert_eq!(info.input_schema["type"], "object", "{}", info.name);
        }
    }
}
