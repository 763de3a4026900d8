//! MCP prompts: templates an agent's user can run as slash commands.

use serde_json::{Map, Value};

use crate::protocol::jsonrpc::RpcError;
use crate::protocol::mcp::{
    paginate, Content, GetPromptResult, InvalidCursor, PromptArgument, PromptInfo, PromptMessage,
    PAGE_SIZE,
};

struct PromptDef {
    info: PromptInfo,
    template: &'static str,
}

const fn arg(name: &'static str, description: &'static str, required: bool) -> PromptArgument {
    PromptArgument {
        name,
        description,
        required,
    }
}

fn definitions() -> Vec<PromptDef> {
    vec![
        PromptDef {
            info: PromptInfo {
                name: "review_file",
                description: "Review one file for bugs, unclear code and missing tests",
                arguments: vec![arg("file", "Workspace path of the file to review", true)],
            },
            template: "Review {{file}}. Open it with openFile, check getDiagnostics for it, \
                       and report bugs, unclear code and missing tests with file:line references.",
        },
        PromptDef {
            info: PromptInfo {
                name: "fix_diagnostics",
                description: "Fix the errors the language tools report",
                arguments: vec![arg(
                    "file",
                    "Only this file (default: the whole workspace)",
                    false,
                )],
            },
            template: "Call getDiagnostics{{file_clause}} and fix every error, starting with the \
                       first in each file. Re-check diagnostics after each edit.",
        },
        PromptDef {
            info: PromptInfo {
                name: "explain_selection",
                description: "Explain the code selected in the editor",
                arguments: vec![],
            },
            template: "Call getCurrentSelection and explain the selected code: what it does, \
                       why, and anything surprising.",
        },
        PromptDef {
            info: PromptInfo {
                name: "team_status",
                description: "Summarise what the agents sharing this bridge are doing",
                arguments: vec![],
            },
            template: "Call getBridgeStatus and summarise the sessions, their recent tool calls \
                       and any errors, in a short list.",
        },
    ]
}

/// The prompt catalogue.
pub struct PromptRegistry {
    prompts: Vec<PromptDef>,
    infos: Vec<PromptInfo>,
}

impl Default for PromptRegistry {
    fn default() -> Self {
        let prompts = definitions();
        let infos = prompts.iter().map(|p| p.info.clone()).collect();
        Self { prompts, infos }
    }
}

impl PromptRegistry {
    /// One `prompts/list` page.
    pub fn page(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<PromptInfo>, Option<String>), InvalidCursor> {
        paginate(&self.infos, cursor, PAGE_SIZE)
    }

    /// The argument names of prompt `name`; `None` when there is no such prompt.
    pub fn arguments(&self, name: &str) -> Option<Vec<&'static str>> {
        let def = self.prompts.iter().find(|p| p.info.name == name)?;
        Some(def.info.arguments.iter().map(|a| a.name).collect())
    }

    /// Renders a prompt: -32602 for an unknown name or a missing argument.
    pub fn render(
        &self,
        name: &str,
        args: &Map<String, Value>,
    ) -> Result<GetPromptResult, RpcError> {
        let def = self
            .prompts
            .iter()
            .find(|p| p.info.name == name)
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "Unknown prompt {name:?} (prompts/list names them)"
                ))
            })?;
        let value = |key: &str| match args.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        for a in def.info.arguments.iter().filter(|a| a.required) {
            if value(a.name).is_none_or(|v| v.is_empty()) {
                return Err(RpcError::invalid_params(format!(
                    "Prompt {name:?} requires argument {:?}",
                    a.name
                )));
            }
        }
        let file = value("file").unwrap_or_default();
        let file_clause = if file.is_empty() {
            String::new()
        } else {
            format!(" for {file}")
        };
        let text = def
            .template
            .replace("{{file_clause}}", &file_clause)
            .replace("{{file}}", &file);
        Ok(GetPromptResult {
            description: def.info.description.to_string(),
            messages: vec![PromptMessage {
                role: "user",
                content: Content::Text { text },
            }],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_checks_arguments() {
        let r = PromptRegistry::default();
        let mut args = Map::new();
        assert_eq!(r.render("review_file", &args).unwrap_err().code, -32602);
        args.insert("file".into(), Value::String("src/a.rs".into()));
        let out = r.render("review_file", &args).unwrap();
        let Content::Text { text } = &out.messages[0].content else {
            panic!()
        };
        assert!(text.contains("src/a.rs"));
        assert_eq!(r.render("nope", &args).unwrap_err().code, -32602);
        let out = r.render("fix_diagnostics", &Map::new()).unwrap();
        let Content::Text { text } = &out.messages[0].content else {
            panic!()
        };
        assert!(text.starts_with("Call getDiagnostics and"), "{text}");
    }
}
