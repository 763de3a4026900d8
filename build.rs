//! Links the `ide-bridge` executable of a release build with its relative relocations
//! packed (`-z pack-relative-relocs`, DT_RELR): 0.6 MB less file and less for the loader
//! to write at start-up (docs/benchmarks.md, "Footprint, sixth round").
//!
//! The C library runs them from glibc 2.36 on and the linker must know the option, so
//! the build first links and runs a one-line program with it, with the same compiler,
//! flags and target; when either fails (or when cross-compiling, where the program
//! cannot run here) the option is left out and a warning says why. To build a binary for
//! an older system, set `IDE_BRIDGE_NO_RELR` (to any value).

use std::env;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

const OPTION: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=IDE_BRIDGE_NO_RELR");
    if env::var("PROFILE").as_deref() != Ok("release") {
        return;
    }
    if env::var_os("IDE_BRIDGE_NO_RELR").is_some() {
        return;
    }
    match probe() {
        Ok(()) => println!("cargo::rustc-link-arg-bins={OPTION}"),
        Err(why) => println!(
            "cargo::warning=linking without packed relocations ({OPTION}): {why}; the binary is about 0.6 MB larger"
        ),
    }
}

/// Links and runs a program with [`OPTION`]; why not, when it cannot.
fn probe() -> Result<(), String> {
    let var = |name: &str| env::var(name).map_err(|e| format!("{name}: {e}"));
    let (host, target) = (var("HOST")?, var("TARGET")?);
    if host != target {
        return Err(format!(
            "cross-compiling for {target}, the result cannot be tried here"
        ));
    }
    let out = PathBuf::from(var("OUT_DIR")?);
    let source = out.join("relr_probe.rs");
    let program = out.join("relr_probe");
    std::fs::write(&source, "fn main() { println!(\"{}\", Box::new(7)); }\n")
        .map_err(|e| format!("writing {}: {e}", source.display()))?;
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    // The flags and the linker this build links with (a linker set in cargo's
    // configuration reaches build scripts as RUSTC_LINKER, not among the flags).
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut compile = Command::new(rustc);
    compile
        .current_dir(&out)
        .args(flags.split('\x1f').filter(|f| !f.is_empty()))
        .args(["--target", &target, "-C", "opt-level=1", "-C"])
        .arg(format!("link-arg={OPTION}"));
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        let mut arg = OsString::from("linker=");
        arg.push(linker);
        compile.arg("-C").arg(arg);
    }
    let linked = compile
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .output()
        .map_err(|e| format!("running rustc: {e}"))?;
    if !linked.status.success() {
        return Err(format!(
            "the linker refused it: {}",
            telling_line(&linked.stderr)
        ));
    }
    let ran = Command::new(&program)
        .current_dir(&out)
        .output()
        .map_err(|e| format!("running the linked program: {e}"))?;
    if !ran.status.success() || ran.stdout != b"7\n" {
        return Err(format!(
            "a program linked with it does not run here (the C library needs glibc 2.36 or later): {}",
            telling_line(&ran.stderr)
        ));
    }
    Ok(())
}

/// The line of a failure's output that says what went wrong: the first error that is
/// not rustc's summary of it (the linker's own, say), else the first line.
fn telling_line(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let lines = || {
        text.lines()
            .map(|l| l.trim().trim_start_matches("= note:").trim())
            .filter(|l| !l.is_empty())
    };
    let summary = |l: &str| {
        l.starts_with("error: linking with")
            || l.starts_with("error: aborting")
            || l.starts_with("collect2")
    };
    lines()
        .find(|l| l.contains("error") && !summary(l))
        .or_else(|| lines().next())
        .unwrap_or("no message")
        .to_owned()
}
