//! `openDiff`: shown in the editor; without one, in the browser page when a page is
//! watching (the person accepts, maybe after editing, or rejects there); otherwise it
//! is declined at once so the CLI falls back to its terminal prompt. An edit gate of the
//! automation policy (`onEditProposed`, `action = "check"`) may reject it first.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::actors::dashboard::diffs::{DiffAnswer, DiffCheck, DiffOffer};
use crate::actors::dashboard::{CheckedDiff, OfferDiff, PageRefusal};
use crate::actors::extension::{DiffOutcome, ExtError, OpenDiff as ExtOpenDiff};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::files::check_edit::{compare, described, edit_gate};
use crate::tools::{blocking, EditorUse, Tool, ToolContext, ToolError, ToolResult, ToolTimeout};
use crate::workspace::files::{read_text, FileError};

pub struct OpenDiff;

/// The paths only label the diff (the editor writes nothing; the agent does), so they
/// are passed on as given.
#[derive(Deserialize, JsonSchema)]
pub struct Args {
    /// Path of the file before the change
    old_file_path: String,
    /// Path of the file after the change
    new_file_path: String,
    /// Full proposed contents
    new_file_contents: String,
    /// Name of the diff tab
    tab_name: String,
}

impl Tool for OpenDiff {
    type Args = Args;
    const NAME: &'static str = "openDiff";
    const EFFECT: Effect = Effect::Changes;
    // Without an editor the person answers on the page, or the diff is declined.
    const EDITOR: EditorUse = EditorUse::Optional;
    const DESCRIPTION: &'static str =
        "Show a proposed change as a diff in the editor (or, without one, in the bridge's \
         browser page) and block until the user accepts (FILE_SAVED + final text) or \
         rejects it (DIFF_REJECTED + tab name).";
    const TIMEOUT: ToolTimeout = ToolTimeout::Unbounded;

    async fn call(ctx: ToolContext, args: Args) -> ToolResult {
        // The automation policy's edit gate may refuse the proposal before anyone sees it.
        let gated = ctx.services.automation.is_some();
        if let (true, Ok(path)) = (gated, ctx.services.workspace.resolve(&args.new_file_path)) {
            let agent = match crate::tools::claims::me(&ctx).await {
                crate::coordination::claims::Holder::Agent { label, .. } => label,
                crate::coordination::claims::Holder::Person => String::new(),
            };
            let text = args.new_file_contents.clone();
            let refused = edit_gate(
                &ctx.services,
                &ctx.session_id,
                &agent,
                &path,
                Self::NAME,
                || Some(text),
            )
            .await;
            if let Some(reason) = refused {
                let mut answer = rejected(args.tab_name);
                answer
                    .content
                    .push(crate::protocol::mcp::Content::Text { text: reason });
                return Ok(answer);
            }
        }
        let params = json!({
            "oldFilePath": args.old_file_path,
            "newFilePath": args.new_file_path,
            "newFileContents": args.new_file_contents,
            "tabName": args.tab_name,
        });
        let shown = ctx
            .services
            .extension
            .send(ExtOpenDiff {
                session_id: ctx.session_id.clone(),
                tab_name: args.tab_name.clone(),
                params,
            })
            .await;
        match shown.map_err(|e| ToolError::refused(e.to_string()))? {
            Ok(DiffOutcome::Saved(text)) => Ok(saved(text)),
            Ok(DiffOutcome::Rejected) => Ok(rejected(args.tab_name)),
            Err(ExtError::NotConnected) => in_the_page(&ctx, args).await,
            // Shown, but the editor went away before anyone decided.
            Err(ExtError::Disconnected(_) | ExtError::Restarted(_)) => Ok(declined(
                &args.tab_name,
                " any more (it went away before anyone decided)",
            )),
            Err(e) => Err(e.into()),
        }
    }
}

fn saved(text: String) -> CallToolResult {
    CallToolResult::texts(["FILE_SAVED".to_string(), text])
}

fn rejected(tab: String) -> CallToolResult {
    CallToolResult::texts(["DIFF_REJECTED".to_string(), tab])
}

/// The answer when nobody can see the diff: the CLI then asks in its terminal.
fn declined(tab: &str, also: &str) -> CallToolResult {
    CallToolResult::declined(format!(
        "No editor is connected to ide-bridge{also}, so the diff \"{tab}\" cannot be shown. \
         Ask the user to approve the change in the terminal instead."
    ))
}

/// Without an editor: the diff waits in the browser page when one watches.
async fn in_the_page(ctx: &ToolContext, args: Args) -> ToolResult {
    if !ctx.services.settings.ui.enabled {
        return Ok(declined(&args.tab_name, ""));
    }
    // The page shows only what is inside the workspace.
    let Ok(old_path) = ctx.services.workspace.resolve(&args.old_file_path) else {
        return Ok(declined(
            &args.tab_name,
            " and the file is outside the workspace",
        ));
    };
    let workspace = ctx.services.workspace.clone();
    let file = old_path.clone();
    let original = blocking(move || match read_text(workspace.dir(), &file) {
        Ok((text, _)) => Ok(text),
        Err(FileError::NotFound(_)) => Ok(String::new()),
        Err(e) => Err(e),
    })
    .await?;
    let original = match original {
        Ok(text) => text,
        Err(e) => return Ok(declined(&args.tab_name, &format!(" and {e}"))),
    };
    let check_token = crate::actors::language_servers::next_token();
    let proposed = args.new_file_contents.clone();
    let offer = DiffOffer {
        session: ctx.session_id.clone(),
        tab: args.tab_name.clone(),
        old_path: args.old_file_path,
        new_path: args.new_file_path,
        original,
        proposed: args.new_file_contents,
        check_token,
    };
    let offered = ctx.services.dashboard.send(OfferDiff(offer)).await;
    let answer = match offered {
        Ok(Ok(answer)) => {
            check_in_the_page(ctx, old_path, proposed, check_token);
            answer
        }
        Ok(Err(PageRefusal::NobodyWatching)) | Err(_) => {
            return Ok(declined(&args.tab_name, ""));
        }
        Ok(Err(full)) => return Ok(declined(&args.tab_name, &format!(" and {full}"))),
    };
    Ok(match answer.await {
        Ok(DiffAnswer::Saved(text)) => saved(text),
        Ok(DiffAnswer::Rejected) => rejected(args.tab_name),
        Ok(DiffAnswer::Unanswered) | Err(_) => declined(
            &args.tab_name,
            " and nobody decided in the browser page before it closed",
        ),
    })
}

/// The file's language server checks the proposal shown in the page (as `checkEdit`
/// does), and the page shows what it adds: in the background, so the diff shows at once.
/// Nothing is checked for a file no configured server serves.
fn check_in_the_page(ctx: &ToolContext, path: std::path::PathBuf, proposed: String, token: u64) {
    let services = ctx.services.clone();
    let lsp = &services.settings.lsp;
    let servers = crate::lsp::servers::effective(&lsp.servers);
    if !lsp.enabled || crate::lsp::servers::language_of(&servers, &path).is_none() {
        return;
    }
    actix_rt::spawn(async move {
        let check = match compare(&services, path, proposed).await {
            Ok(answer) => {
                let added: Vec<String> = answer.added.iter().take(20).map(described).collect();
                let errors = answer
                    .added
                    .iter()
                    .filter(|d| d.severity == crate::diagnostics::Severity::Error)
                    .count();
                let summary = match (answer.added.len(), errors) {
                    (0, _) => "adds no problems".to_string(),
                    (n, 0) => format!("adds {n} warning(s) or note(s): {}", added[0]),
                    (_, e) => format!("adds {e} error(s): {}", added[0]),
                };
                DiffCheck {
                    summary,
                    errors_added: errors,
                    added,
                }
            }
            Err(why) => DiffCheck {
                summary: format!("not checked: {why}"),
                errors_added: 0,
                added: Vec::new(),
            },
        };
        services.dashboard.do_send(CheckedDiff {
            check_token: token,
            check,
        });
    });
}
