//! Links the `ide-bridge` executable of a release build with its relative relocations
//! packed (`-z pack-relative-relocs`, DT_RELR): 0.6 MB less file and less for the loader
//! to write at start-up (docs/benchmarks.md, "Footprint, sixth round").
//!
//! The C library runs them from glibc 2.36 on and the linker must know the option, so
//! the build first links and runs a one-line program with it, with the same compiler,
//! flags and target; when either fails (or when cross-compiling, where the program
//! cannot run here) the option is left out and a warning says why. A binary built here to
//! run on an older system is built with `IDE_BRIDGE_NO_RELR=1` set.

use std::env;
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
    // The flags this build compiles with (a linker chosen there is the one that counts).
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let linked = Command::new(rustc)
        .args(flags.split('\x1f').filter(|f| !f.is_empty()))
        .args(["--target", &target, "-C", "opt-level=1", "-C"])
        .arg(format!("link-arg={OPTION}"))
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .output()
        .map_err(|e| format!("running rustc: {e}"))?;
    if !linked.status.success() {
        return Err(format!(
            "the linker refused it: {}",
            first_line(&linked.stderr)
        ));
    }
    let ran = Command::new(&program)
        .output()
        .map_err(|e| format!("running the linked program: {e}"))?;
    if !ran.status.success() || ran.stdout != b"7\n" {
        return Err(format!(
            "a program linked with it does not run here (the C library needs glibc 2.36 or later): {}",
            first_line(&ran.stderr)
        ));
    }
    Ok(())
}

fn first_line(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no message")
        .to_owned()
}
