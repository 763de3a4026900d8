//! Which command-line linters exist and apply to the workspace, and how each is run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::names::UnknownName;

/// The linters the bridge knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Linter {
    /// `cargo check --message-format=json`.
    Cargo,
    /// `tsc --noEmit`.
    Tsc,
    /// `eslint -f json`.
    Eslint,
    /// `ruff check --output-format json`.
    Ruff,
    /// `pyright --outputjson`.
    Pyright,
    /// `go vet`.
    Go,
    /// `biome lint --reporter=json`.
    Biome,
}

/// Every linter, in the order they are probed.
pub const ALL: [Linter; 7] = [
    Linter::Cargo,
    Linter::Tsc,
    Linter::Eslint,
    Linter::Ruff,
    Linter::Pyright,
    Linter::Go,
    Linter::Biome,
];

/// [`ALL`]'s names, as error messages list them.
const NAMES: &str = "cargo, tsc, eslint, ruff, pyright, go, biome";

impl schemars::JsonSchema for Linter {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Linter".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ALL.iter().map(|l| l.name()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl TryFrom<String> for Linter {
    type Error = UnknownName;
    fn try_from(value: String) -> Result<Self, UnknownName> {
        ALL.into_iter()
            .find(|l| l.name() == value)
            .ok_or(UnknownName {
                value,
                allowed: NAMES,
            })
    }
}

impl Linter {
    /// Name used in configuration and results.
    pub fn name(self) -> &'static str {
        match self {
            Linter::Cargo => "cargo",
            Linter::Tsc => "tsc",
            Linter::Eslint => "eslint",
            Linter::Ruff => "ruff",
            Linter::Pyright => "pyright",
            Linter::Go => "go",
            Linter::Biome => "biome",
        }
    }

    /// Whether a change to `path` (workspace-relative) can change what this linter
    /// reports: its sources and its project files.
    pub fn watches(self, path: &str) -> bool {
        // What the linters themselves write (cargo's build-script output, installed
        // packages) never sets them off again, even where no .gitignore says so.
        if path.starts_with("target/") || path.contains("node_modules/") {
            return false;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        const JS: &[&str] = &["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "json"];
        match self {
            Linter::Cargo => ext == "rs" || name == "Cargo.toml" || name == "Cargo.lock",
            Linter::Tsc => {
                matches!(ext, "ts" | "tsx" | "mts" | "cts") || name.starts_with("tsconfig")
            }
            Linter::Eslint | Linter::Biome => {
                JS.contains(&ext) || name.contains("eslint") || name.starts_with("biome")
            }
            Linter::Ruff | Linter::Pyright => {
                matches!(ext, "py" | "pyi")
                    || matches!(name, "pyproject.toml" | "ruff.toml" | "pyrightconfig.json")
            }
            Linter::Go => ext == "go" || matches!(name, "go.mod" | "go.sum"),
        }
    }

    /// Whether `path` (workspace-relative) holds code or settings this linter executes
    /// or obeys to execute something (a build script, a JavaScript config, a toolchain
    /// override). A change to one pauses the linter's automatic runs (see
    /// `diagnostics.live_after_code_change`). Proc-macro sources also run under
    /// `cargo check`; they are ordinary `.rs` files and not told apart here.
    pub fn executes(self, path: &str) -> bool {
        if path.starts_with("target/") {
            return false;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        // A program in the workspace's node_modules/.bin is what runs for these.
        let local_bin =
            path.starts_with("node_modules/.bin/") || path.contains("/node_modules/.bin/");
        match self {
            Linter::Tsc | Linter::Eslint | Linter::Biome | Linter::Pyright if local_bin => true,
            Linter::Cargo if path.contains("node_modules/") => false,
            Linter::Cargo => {
                matches!(name, "build.rs" | "Cargo.toml")
                    || name.starts_with("rust-toolchain")
                    || path.starts_with(".cargo/")
                    || path.contains("/.cargo/")
            }
            Linter::Eslint => {
                let config = !path.contains("node_modules/")
                    && (name.starts_with("eslint.config.") || name.starts_with(".eslintrc."));
                config
                    && !name.ends_with(".json")
                    && !name.ends_with(".yml")
                    && !name.ends_with(".yaml")
            }
            Linter::Tsc | Linter::Ruff | Linter::Pyright | Linter::Go | Linter::Biome => false,
        }
    }

    /// Program name.
    pub fn program(self) -> &'static str {
        match self {
            Linter::Go => "go",
            other => other.name(),
        }
    }

    /// Arguments for a whole-workspace run.
    pub fn args(self) -> Vec<String> {
        let a: &[&str] = match self {
            Linter::Cargo => &["check", "--message-format=json", "--all-targets", "--quiet"],
            Linter::Tsc => &["--noEmit", "--pretty", "false"],
            Linter::Eslint => &["-f", "json", "."],
            Linter::Ruff => &["check", "--output-format", "json", "--no-cache", "."],
            Linter::Pyright => &["--outputjson"],
            Linter::Go => &["vet", "./..."],
            Linter::Biome => &["lint", "--reporter=json", "."],
        };
        a.iter().map(|s| s.to_string()).collect()
    }

    /// Whether the workspace looks like a project this linter checks.
    pub fn applies_to(self, root: &Path) -> bool {
        let has = |name: &str| root.join(name).exists();
        match self {
            Linter::Cargo => has("Cargo.toml"),
            Linter::Tsc => has("tsconfig.json"),
            Linter::Eslint => [
                "eslint.config.js",
                "eslint.config.mjs",
                "eslint.config.cjs",
                "eslint.config.ts",
                ".eslintrc",
                ".eslintrc.js",
                ".eslintrc.cjs",
                ".eslintrc.json",
                ".eslintrc.yml",
                ".eslintrc.yaml",
            ]
            .iter()
            .any(|f| has(f)),
            Linter::Ruff => {
                has("pyproject.toml")
                    || has("ruff.toml")
                    || has(".ruff.toml")
                    || top_level_ext(root, "py")
            }
            Linter::Pyright => has("pyrightconfig.json"),
            Linter::Go => has("go.mod"),
            Linter::Biome => has("biome.json") || has("biome.jsonc"),
        }
    }
}

fn top_level_ext(root: &Path, ext: &str) -> bool {
    std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == ext))
        })
        .unwrap_or(false)
}

/// Finds `program` in the workspace's `node_modules/.bin`, then on `PATH`.
pub fn find_program(root: &Path, program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let local = root.join("node_modules/.bin");
    std::iter::once(local)
        .chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        )
        .map(|dir| dir.join(program))
        .find(|p| {
            std::fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// What the start-up probe found for one linter.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// Linter.
    pub linter: Linter,
    /// Program found at.
    pub program: Option<PathBuf>,
    /// The workspace has this linter's project files.
    pub applicable: bool,
    /// Enabled in `diagnostics.linters`.
    pub enabled: bool,
}

impl Probe {
    /// Found, applicable and enabled.
    pub fn runs(&self) -> bool {
        self.program.is_some() && self.applicable && self.enabled
    }
}

/// Probes every linter for `root`.
pub fn probe(root: &Path, enabled: &[Linter]) -> Vec<Probe> {
    ALL.iter()
        .map(|&linter| Probe {
            linter,
            program: find_program(root, linter.program()),
            applicable: linter.applies_to(root),
            enabled: enabled.contains(&linter),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_make_a_linter_execute_code_are_known() {
        for (linter, path) in [
            (Linter::Cargo, "build.rs"),
            (Linter::Cargo, "crates/x/build.rs"),
            (Linter::Cargo, ".cargo/config.toml"),
            (Linter::Cargo, "rust-toolchain.toml"),
            (Linter::Eslint, "eslint.config.mjs"),
            (Linter::Eslint, "web/.eslintrc.cjs"),
            (Linter::Eslint, "node_modules/.bin/eslint"),
            (Linter::Tsc, "node_modules/.bin/tsc"),
        ] {
            assert!(linter.executes(path), "{linter:?} {path}");
        }
        for (linter, path) in [
            (Linter::Cargo, "src/main.rs"),
            (Linter::Cargo, "target/debug/build.rs"),
            (Linter::Eslint, ".eslintrc.json"),
            (Linter::Eslint, "node_modules/x/eslint.config.js"),
            (Linter::Ruff, "conftest.py"),
            (Linter::Tsc, "tsconfig.json"),
        ] {
            assert!(!linter.executes(path), "{linter:?} {path}");
        }
    }

    #[test]
    fn applicability_follows_project_files() {
        let t = tempfile::tempdir().unwrap();
        assert!(!Linter::Cargo.applies_to(t.path()));
        std::fs::write(t.path().join("Cargo.toml"), "").unwrap();
        assert!(Linter::Cargo.applies_to(t.path()));
        std::fs::write(t.path().join("x.py"), "").unwrap();
        assert!(Linter::Ruff.applies_to(t.path()));
        assert!(!Linter::Go.applies_to(t.path()));
        let probes = probe(t.path(), &[Linter::Cargo]);
        let cargo = probes.iter().find(|p| p.linter == Linter::Cargo).unwrap();
        assert!(cargo.program.is_some() && cargo.runs());
        assert!(
            !probes
                .iter()
                .find(|p| p.linter == Linter::Ruff)
                .unwrap()
                .enabled
        );
    }

    #[test]
    fn each_linter_watches_its_sources_and_project_files() {
        assert!(Linter::Cargo.watches("src/lib.rs"));
        assert!(Linter::Cargo.watches("crates/a/Cargo.toml"));
        assert!(!Linter::Cargo.watches("README.md"));
        assert!(!Linter::Cargo.watches("target/debug/build/x/out/gen.rs"));
        assert!(!Linter::Eslint.watches("web/node_modules/a/index.js"));
        assert!(Linter::Tsc.watches("web/app.tsx"));
        assert!(Linter::Tsc.watches("tsconfig.base.json"));
        assert!(!Linter::Tsc.watches("tools/x.py"));
        assert!(Linter::Ruff.watches("tools/x.py"));
        assert!(Linter::Go.watches("cmd/main.go"));
        assert!(!Linter::Go.watches("storm/f1.txt"));
    }
}
