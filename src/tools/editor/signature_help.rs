//! `getSignatureHelp`: the signatures of the call at a position (the function's
//! parameters, which one the position is in), from the bridge's language server for
//! the file. No editor method answers it: it works the same with or without an editor.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::args::At;
use super::pool::{ask, parse};
use crate::lsp::shapes;
use crate::lsp::types::{Documentation, ParameterLabel, SignatureHelp};
use crate::protocol::mcp::CallToolResult;
use crate::protocol::mcp::Effect;
use crate::tools::{output, Tool, ToolContext, ToolError, ToolResult};

pub struct GetSignatureHelp;

/// The signatures of the call around the position; empty when it is in none.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    signatures: Vec<Signature>,
    /// Index of the signature that applies (overloads), when the server says.
    #[serde(skip_serializing_if = "Option::is_none")]
    active_signature: Option<u32>,
    /// Index of the parameter the position is in, when the server says.
    #[serde(skip_serializing_if = "Option::is_none")]
    active_parameter: Option<u32>,
}

/// One signature.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Signature {
    /// As the server writes it: `area(width, height)`.
    label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    documentation: Option<String>,
    /// Each parameter's label.
    parameters: Vec<String>,
}

fn text(doc: &Documentation) -> String {
    match doc {
        Documentation::String(s) => s.clone(),
        Documentation::MarkupContent(m) => m.value.clone(),
    }
}

impl Tool for GetSignatureHelp {
    type Args = At;
    const NAME: &'static str = "getSignatureHelp";
    const EFFECT: Effect = Effect::Reads;
    const DESCRIPTION: &'static str =
        "The signature of the call at file:line:column (1-based): its parameters and which one the \
         position is in, from the bridge's language server for the file.";
    const OUTPUT: Option<fn() -> serde_json::Value> = Some(output::<Answer>);

    async fn call(ctx: ToolContext, args: At) -> ToolResult {
        if !ctx.services.settings.lsp.enabled {
            return Err(ToolError::refused(
                "getSignatureHelp needs the bridge's language servers, and lsp.enabled is false",
            ));
        }
        let file = args.file.resolve(&ctx)?;
        let params = json!({
            "textDocument": {"uri": shapes::uri_of(&file)},
            "position": shapes::position(args.line.into(), args.column.into()),
        });
        let help: Option<SignatureHelp> =
            parse(ask(&ctx, &file, "textDocument/signatureHelp", params).await?)?;
        let help = help.unwrap_or(SignatureHelp {
            signatures: Vec::new(),
            active_signature: None,
            active_parameter: None,
        });
        let signatures = help
            .signatures
            .iter()
            .map(|s| Signature {
                label: s.label.clone(),
                documentation: s.documentation.as_ref().map(text),
                parameters: s
                    .parameters
                    .iter()
                    .flatten()
                    .map(|p| match &p.label {
                        ParameterLabel::Simple(l) => l.clone(),
                        ParameterLabel::LabelOffsets([from, to]) => {
                            let units: Vec<u16> = s
                                .label
                                .encode_utf16()
                                .skip(*from as usize)
                                .take(to.saturating_sub(*from) as usize)
                                .collect();
                            String::from_utf16_lossy(&units)
                        }
                    })
                    .collect(),
            })
            .collect();
        let active_parameter = help.active_parameter.or_else(|| {
            let at = help.active_signature.unwrap_or(0) as usize;
            help.signatures.get(at).and_then(|s| s.active_parameter)
        });
        Ok(CallToolResult::structured(&Answer {
            signatures,
            active_signature: help.active_signature,
            active_parameter,
        }))
    }
}
