//! Every tool the bridge offers. Adding a tool: write its module, add one line here.

use super::registry::{CatalogError, ToolRegistry};
use super::{bridge, ide};

/// Builds the registry with every tool.
pub fn build() -> Result<ToolRegistry, CatalogError> {
    let mut r = ToolRegistry::default();
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
    r.register::<bridge::get_bridge_status::GetBridgeStatus>()?;
    #[cfg(feature = "fault-injection")]
    super::debug::register(&mut r)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_schema_compiles_and_names_are_unique() {
        let registry = super::build().expect("catalogue builds");
        assert!(registry.len() >= 12);
        for info in registry.infos() {
            assert_eq!(info.input_schema["type"], "object", "{}", info.name);
        }
    }
}
