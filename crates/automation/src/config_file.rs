//! How a configuration file the `config` crate could not read is described: the
//! bridge's settings file and automation policies are both read with it.

/// The formats a configuration file may have, by extension.
pub const FORMATS: &str = ".toml, .json, .yaml or .yml";

/// Why the file could not be read, for a message that names the file itself: the
/// parser's complaint (without the `config` crate's ` in <path relative to the current
/// directory>`), or, for an extension it does not know, the formats there are. `None`
/// for an error that is not about reading the file (a value, a key).
pub fn reason(error: &config::ConfigError) -> Option<String> {
    match error {
        config::ConfigError::FileParse { cause, .. } => Some(cause.to_string().trim_end().into()),
        config::ConfigError::Foreign(cause)
            if cause
                .to_string()
                .contains("is not of a supported file format") =>
        {
            Some(format!("not a format the bridge reads (use {FORMATS})"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_does_not_parse_or_has_an_unknown_extension_says_why_alone() {
        let dir = tempfile::tempdir().unwrap();
        let read = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let error = config::Config::builder()
                .add_source(config::File::from(path.as_path()))
                .build()
                .unwrap_err();
            reason(&error)
        };
        let said = read("p.toml", "x = [\n").unwrap();
        assert!(said.starts_with("TOML parse error at line 1"), "{said}");
        assert!(!said.contains(" in ") && !said.contains("p.toml"), "{said}");
        let said = read("p.txt", "x = 1\n").unwrap();
        assert_eq!(
            said,
            "not a format the bridge reads (use .toml, .json, .yaml or .yml)"
        );
    }
}
