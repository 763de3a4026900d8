//! MCP resources: workspace files (through one URI template, confined like the file
//! tools), the activity log's tail and the reviews agents presented; `completion/complete`
//! for prompt arguments and the template's path. Subscriptions to files live on each
//! connection ([`Session`](crate::actors::session::Session)) and are fed by the watcher.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::actors::activity_log::Query;
use crate::actors::dashboard::{GetReview, ListReviews};
use crate::protocol::jsonrpc::RpcError;
use crate::services::Services;
use crate::workspace::{tree::walker, Workspace};

/// The activity log's newest entries, as JSON.
pub const ACTIVITY_URI: &str = "ide-bridge://activity";
/// A presented review's markdown: this prefix and the review's id.
pub const REVIEW_PREFIX: &str = "ide-bridge://reviews/";
/// Entries the activity resource holds.
const ACTIVITY_ENTRIES: usize = 100;
/// Files one connection may watch through `resources/subscribe`.
pub const MAX_SUBSCRIPTIONS: usize = 1_000;
/// Values one `completion/complete` answer offers (the protocol's own bound).
const MAX_COMPLETIONS: usize = 100;
/// Directory entries a path completion looks at, at most.
const MAX_COMPLETION_WALK: usize = 20_000;
/// `resources/read` of a file no longer there, or of a review never presented.
pub use crate::protocol::jsonrpc::RESOURCE_NOT_FOUND;

/// What a resource URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file in the workspace (absolute, confined).
    File(PathBuf),
    /// [`ACTIVITY_URI`].
    Activity,
    /// A presented review, by id.
    Review(u64),
}

/// A resource as `resources/list` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub uri: String,
    pub name: String,
    pub description: String,
    pub mime_type: &'static str,
}

/// A URI template as `resources/templates/list` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateInfo {
    pub uri_template: String,
    pub name: &'static str,
    pub description: &'static str,
}

/// `resources/read`, `resources/subscribe` and `resources/unsubscribe` params.
#[derive(Debug, Deserialize)]
pub struct UriParams {
    pub uri: String,
}

/// The template of workspace files: the root's `file://` URL and `{+path}` (RFC 6570
/// reserved expansion: the path keeps its slashes).
pub fn file_template(workspace: &Workspace) -> String {
    format!("{}/{{+path}}", workspace.root_url())
}

/// What `uri` names: -32602 for a URI outside the workspace or of an unknown scheme.
pub fn parse(workspace: &Workspace, uri: &str) -> Result<Target, RpcError> {
    if uri == ACTIVITY_URI {
        return Ok(Target::Activity);
    }
    if let Some(id) = uri.strip_prefix(REVIEW_PREFIX) {
        return id.parse().map(Target::Review).map_err(|_| {
            RpcError::invalid_params(format!(
                "Resource {uri:?}: a review's URI is {REVIEW_PREFIX}<number>"
            ))
        });
    }
    if uri.starts_with("file://") {
        return workspace
            .resolve(uri)
            .map(Target::File)
            .map_err(|e| RpcError::invalid_params(format!("Resource {uri:?}: {e}")));
    }
    Err(RpcError::invalid_params(format!(
        "Resource {uri:?}: this server serves file:// URIs in its workspace, \
         {ACTIVITY_URI} and {REVIEW_PREFIX}<id>"
    )))
}

/// Every listed resource: the activity log, then the presented reviews, newest first.
/// (Files are reached through [`templates`], not listed one by one.)
pub async fn list(services: &Services) -> Vec<ResourceInfo> {
    let mut out = vec![ResourceInfo {
        uri: ACTIVITY_URI.into(),
        name: "activity".into(),
        description: format!(
            "The bridge's activity log: its newest {ACTIVITY_ENTRIES} entries (tool calls of \
             every agent, their own tools included, and lifecycle events), as JSON"
        ),
        mime_type: "application/json",
    }];
    let reviews = services
        .dashboard
        .send(ListReviews)
        .await
        .unwrap_or_default();
    out.extend(reviews.into_iter().map(|r| ResourceInfo {
        uri: format!("{REVIEW_PREFIX}{}", r.id),
        name: format!("review {}: {}", r.id, r.title),
        description: format!(
            "A review agent {} presented ({} references), as markdown",
            r.session_id, r.references
        ),
        mime_type: "text/markdown",
    }));
    out
}

/// The URI templates: workspace files.
pub fn templates(workspace: &Workspace) -> Vec<TemplateInfo> {
    vec![TemplateInfo {
        uri_template: file_template(workspace),
        name: "workspace file",
        description: "A file of the workspace by its relative path (text, or base64 for \
                      binary files); subscribe to be told when it changes on disk",
    }]
}

/// One `resources/read` answer (`contents` with one item).
pub async fn read(services: &Services, uri: &str) -> Result<Value, RpcError> {
    let content = match parse(&services.workspace, uri)? {
        Target::File(path) => read_file(services, uri, path).await?,
        Target::Activity => {
            let entries = services
                .activity
                .send(Query {
                    include_lifecycle: true,
                    limit: ACTIVITY_ENTRIES,
                    ..Query::default()
                })
                .await
                .map_err(|e| RpcError::internal(e.to_string()))?
                .map_err(|e| RpcError::internal(e.to_string()))?;
            let text = serde_json::to_string_pretty(&entries)
                .map_err(|e| RpcError::internal(e.to_string()))?;
            json!({ "uri": uri, "mimeType": "application/json", "text": text })
        }
        Target::Review(id) => {
            let review = services
                .dashboard
                .send(GetReview(id))
                .await
                .ok()
                .flatten()
                .ok_or_else(|| {
                    RpcError::new(RESOURCE_NOT_FOUND, format!("Resource not found: {uri}"))
                })?;
            json!({ "uri": uri, "mimeType": "text/markdown", "text": review.draft.markdown })
        }
    };
    Ok(json!({ "contents": [content] }))
}

async fn read_file(services: &Services, uri: &str, path: PathBuf) -> Result<Value, RpcError> {
    let limit = services.settings.files.max_read_bytes;
    let root = services.workspace.dir().clone();
    let shown = services
        .workspace
        .relative(&path.to_string_lossy())
        .unwrap_or_else(|| path.display().to_string());
    let read = tokio::task::spawn_blocking(move || {
        let (file, len) = crate::workspace::files::open_regular(&root, &path)?;
        if len > limit as u64 {
            return Ok(Err(len));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(file, limit as u64 + 1), &mut bytes)
            .map_err(|e| crate::workspace::files::FileError::io(&path, e))?;
        Ok(if bytes.len() > limit {
            Err(bytes.len() as u64)
        } else {
            Ok(bytes)
        })
    })
    .await
    .map_err(|e| RpcError::internal(e.to_string()))?;
    let bytes = match read {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(size)) => {
            return Err(RpcError::invalid_params(format!(
                "Resource {shown}: {size} bytes, more than files.max_read_bytes ({limit}); \
                 read it in parts with the readFile tool"
            )))
        }
        Err(crate::workspace::files::FileError::NotFound(_)) => {
            return Err(RpcError::new(
                RESOURCE_NOT_FOUND,
                format!("Resource not found: {shown} does not exist"),
            ))
        }
        Err(e) => return Err(RpcError::invalid_params(format!("Resource {shown}: {e}"))),
    };
    let mime = mime_of(Path::new(&shown));
    let text = if bytes.iter().take(8192).any(|b| *b == 0) {
        Err(bytes)
    } else {
        String::from_utf8(bytes).map_err(|e| e.into_bytes())
    };
    Ok(match text {
        Ok(text) => json!({ "uri": uri, "mimeType": mime.unwrap_or("text/plain"), "text": text }),
        Err(bytes) => json!({
            "uri": uri,
            "mimeType": mime.unwrap_or("application/octet-stream"),
            "blob": base64::engine::general_purpose::STANDARD.encode(&bytes),
        }),
    })
}

/// The media type of a file by its extension, for the common kinds.
fn mime_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "js" | "mjs" | "cjs" => "text/javascript",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "ts" | "tsx" => "text/x-typescript",
        "sh" => "text/x-shellscript",
        "txt" | "log" => "text/plain",
        _ => return None,
    })
}

/// `completion/complete` params.
#[derive(Debug, Deserialize)]
pub struct CompleteParams {
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    pub argument: CompletionArgument,
}

/// What is being completed.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// An argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt { name: String },
    /// A variable of a resource template.
    #[serde(rename = "ref/resource")]
    Resource { uri: String },
}

/// The argument and what was typed of it so far.
#[derive(Debug, Deserialize)]
pub struct CompletionArgument {
    pub name: String,
    #[serde(default)]
    pub value: String,
}

/// The `completion/complete` answer: workspace paths for a prompt's `file` argument and
/// the file template's `path`; nothing for other arguments. -32602 for an unknown
/// prompt or template.
pub async fn complete(services: &Services, params: CompleteParams) -> Result<Value, RpcError> {
    let paths = match &params.reference {
        CompletionRef::Prompt { name } => {
            let arguments = services
                .prompts
                .arguments(name)
                .ok_or_else(|| RpcError::invalid_params(format!("Unknown prompt {name:?}")))?;
            // Prompts name a workspace file by their `file` argument.
            params.argument.name == "file" && arguments.contains(&"file")
        }
        CompletionRef::Resource { uri } => {
            if *uri != file_template(&services.workspace) {
                return Err(RpcError::invalid_params(format!(
                    "Unknown resource template {uri:?}"
                )));
            }
            params.argument.name == "path"
        }
    };
    let (values, total) = if paths {
        let root = services.workspace.root().to_path_buf();
        let prefix = params.argument.value.clone();
        tokio::task::spawn_blocking(move || paths_starting_with(&root, &prefix))
            .await
            .unwrap_or_default()
    } else {
        (Vec::new(), 0)
    };
    Ok(json!({ "completion": {
        "values": values,
        "total": total,
        "hasMore": total > MAX_COMPLETIONS,
    }}))
}

/// Workspace files (relative, `/`-separated, not ignored) that start with `prefix`: the
/// first [`MAX_COMPLETIONS`] in path order and how many matched in the part walked
/// (from the prefix's directory; a prefix that climbs out of the workspace matches
/// nothing).
fn paths_starting_with(root: &Path, prefix: &str) -> (Vec<String>, usize) {
    let mut values = Vec::new();
    let mut total = 0;
    let dir = prefix.rsplit_once('/').map_or("", |(dir, _)| dir);
    if prefix.starts_with('/') || dir.split('/').any(|part| part == "..") {
        return (values, total);
    }
    // Through a symlinked directory a walk could leave the workspace: not there.
    let start = root.join(dir);
    if !start
        .canonicalize()
        .is_ok_and(|real| real.starts_with(root) && real.is_dir())
    {
        return (values, total);
    }
    for entry in walker(&start, None).flatten().take(MAX_COMPLETION_WALK) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy();
        if rel.starts_with(prefix) {
            total += 1;
            if values.len() < MAX_COMPLETIONS {
                values.push(rel.into_owned());
            }
        }
    }
    (values, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::file_url;

    #[test]
    fn uris_name_files_inside_the_workspace_the_activity_and_reviews_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let ws = Workspace::open(dir.path()).unwrap();
        let a = ws.root().join("a.txt");
        assert_eq!(parse(&ws, &file_url(&a)).unwrap(), Target::File(a));
        assert_eq!(parse(&ws, ACTIVITY_URI).unwrap(), Target::Activity);
        assert_eq!(
            parse(&ws, "ide-bridge://reviews/7").unwrap(),
            Target::Review(7)
        );
        for bad in [
            "file:///etc/passwd",
            &format!("{}/../x", ws.root_url()),
            "ide-bridge://reviews/x",
            "test://static-text",
            "https://example.com/",
        ] {
            assert_eq!(parse(&ws, bad).unwrap_err().code, -32602, "{bad}");
        }
        assert!(file_template(&ws).ends_with("/{+path}"));
    }

    #[test]
    fn media_types_by_extension() {
        assert_eq!(mime_of(Path::new("a/b.MD")), Some("text/markdown"));
        assert_eq!(mime_of(Path::new("x.png")), Some("image/png"));
        assert_eq!(mime_of(Path::new("Makefile")), None);
    }
}
