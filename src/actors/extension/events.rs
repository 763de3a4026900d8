//! What the editor pushes (`extension/*` notifications): kept in the cache, fanned out
//! to agents through the registry (selection changes debounced, mentions, tool-list
//! changes), to automation (diagnostics, saves) and to diagnostics long-polls.

use actix::prelude::*;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;

use super::cache::{WireDiagnostic, WireSelection};
use super::{ExtError, ExtensionClient, WatchDiagnostics, MAX_LISTENERS, NAME, SELECTION_DEBOUNCE};
use crate::actors::messages::automation::EditorEvent;
use crate::actors::messages::registry::{Broadcast, Mention};
use crate::actors::supervise::guard;
use crate::diagnostics::FileDiagnostics;
use crate::protocol::editor::EditorNotification;
use crate::workspace::file_url;

impl ExtensionClient {
    /// Handles one editor notification (or request, answered by the caller); false
    /// when the method is not one the bridge knows, which is then only logged.
    pub(super) fn on_notification(
        &mut self,
        method: &str,
        params: Value,
        ctx: &mut Context<Self>,
    ) -> bool {
        let Some(notification) = EditorNotification::parse(method) else {
            tracing::info!(method, "unknown editor notification ignored");
            return false;
        };
        match notification {
            EditorNotification::Hello => {
                if let Some(c) = &mut self.conn {
                    c.hello = Some(params);
                }
            }
            EditorNotification::DiagnosticsChanged => self.diagnostics_changed(params),
            EditorNotification::SelectionChanged => {
                match serde_json::from_value::<WireSelection>(params) {
                    Ok(sel) => {
                        self.cache.selection = Some(sel);
                        self.schedule_selection(ctx);
                    }
                    Err(e) => tracing::debug!(%e, "malformed selectionChanged ignored"),
                }
            }
            EditorNotification::ActiveFileChanged => {
                if let Some(file) = params.get("file").and_then(Value::as_str) {
                    // An empty selection in the new file tells agents which file is open.
                    self.cache.selection = Some(WireSelection {
                        file: file.to_string(),
                        start_line: 1,
                        start_column: 1,
                        end_line: 1,
                        end_column: 1,
                        selected_text: String::new(),
                    });
                    self.schedule_selection(ctx);
                }
            }
            EditorNotification::AiCommentsChanged => {
                let comments = params
                    .get("comments")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let file = params.get("file").and_then(Value::as_str);
                self.cache.set_ai_comments(comments, file);
                self.tools_changed(false);
            }
            EditorNotification::DebugSessionChanged | EditorNotification::FileChanged => {
                self.tools_changed(false);
            }
            EditorNotification::FileSaved => {
                self.tools_changed(false);
                let file = ["file", "filePath", "uri"]
                    .iter()
                    .find_map(|k| params.get(*k).and_then(Value::as_str));
                match (file, &self.links.automation) {
                    (Some(file), Some(automation)) => automation.do_send(EditorEvent::FileSaved {
                        file: file.to_string(),
                    }),
                    (None, _) => tracing::debug!("fileSaved without a file ignored"),
                    _ => {}
                }
            }
            EditorNotification::AtMentioned => {
                self.links.registry.mention.do_send(Mention(params));
            }
        }
        true
    }

    fn diagnostics_changed(&mut self, params: Value) {
        #[derive(Deserialize)]
        struct Changed {
            file: String,
            #[serde(default)]
            diagnostics: Vec<WireDiagnostic>,
        }
        let changed = match serde_json::from_value::<Changed>(params) {
            Ok(changed) => changed,
            Err(e) => return tracing::debug!(%e, "malformed diagnosticsChanged ignored"),
        };
        let file = changed.file.clone();
        if !self
            .cache
            .set_diagnostics(changed.file, changed.diagnostics)
        {
            return;
        }
        self.notify_listeners(&file);
        self.tools_changed(false);
        if let Some(automation) = &self.links.automation {
            let diagnostics = self
                .cache
                .diagnostics
                .get(&file)
                .cloned()
                .unwrap_or_default();
            automation.do_send(EditorEvent::Diagnostics { file, diagnostics });
        }
    }

    fn notify_listeners(&mut self, file: &str) {
        let Some(diags) = self.cache.diagnostics.get(&file.to_string()).cloned() else {
            return;
        };
        let change = vec![FileDiagnostics {
            uri: file_url(std::path::Path::new(file)),
            diagnostics: diags,
        }];
        for l in self.listeners.drain(..) {
            let _ = l.send(change.clone());
        }
    }

    fn schedule_selection(&mut self, ctx: &mut Context<Self>) {
        if self.selection_timer.is_some() {
            return;
        }
        self.selection_timer = Some(ctx.run_later(SELECTION_DEBOUNCE, |act, _| {
            act.selection_timer = None;
            let Some(sel) = &act.cache.selection else {
                return;
            };
            let params = serde_json::to_value(sel.to_claude()).unwrap_or(Value::Null);
            if act.last_selection_sent.as_ref() == Some(&params) {
                return;
            }
            act.last_selection_sent = Some(params.clone());
            act.links.registry.broadcast.do_send(Broadcast {
                method: crate::protocol::ide::SELECTION_CHANGED,
                params,
            });
        }));
    }

    fn watch_diagnostics(&mut self) -> Result<oneshot::Receiver<Vec<FileDiagnostics>>, ExtError> {
        if self.conn.is_none() {
            return Err(ExtError::NotConnected);
        }
        self.listeners.retain(|l| !l.is_closed());
        if self.listeners.len() >= MAX_LISTENERS {
            return Err(ExtError::Editor {
                method: "watchDiagnostics".into(),
                message: format!("too many watchers ({MAX_LISTENERS})"),
            });
        }
        let (tx, rx) = oneshot::channel();
        self.listeners.push(tx);
        Ok(rx)
    }
}

impl Handler<WatchDiagnostics> for ExtensionClient {
    type Result = Result<oneshot::Receiver<Vec<FileDiagnostics>>, ExtError>;
    fn handle(&mut self, _: WatchDiagnostics, ctx: &mut Context<Self>) -> Self::Result {
        guard(NAME, self, ctx, |act, _| act.watch_diagnostics())?
    }
}
