//! Links the release binary with the functions a run touches side by side, and its relocations
//! packed (docs/PERFORMANCE.md, "The code a run touches, packed").
//!
//! Every page of code a run touches costs a 64 KB window of resident memory (the kernel's
//! fault-around), so ~3 MB of functions spread over 19 MB of code made 16 MB of a headless run
//! resident. `assets/symbol-order.txt` (written by `scripts/symbol_order.py`) lists them; LLD,
//! Rust's default linker on x86_64 Linux, puts them first. A name missing from a later build is
//! skipped, so a stale list costs only memory. Packed relocations (`DT_RELR`) spare the loader
//! 1.5 MB of relocation records read at every start.
//!
//! Only for release builds of the binary on x86_64 Linux with the default linker: another
//! linker may not know the options; packed relocations only where glibc is 2.36 or later. `HARNESS9_KEEP_SYMBOLS=1` keeps the symbol table, for
//! `scripts/symbol_order.py` (the names carry a hash of the profile, so the list must come
//! from the profile that ships).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=assets/symbol-order.txt");
    println!("cargo:rerun-if-env-changed=HARNESS9_KEEP_SYMBOLS");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let release = var("PROFILE") == "release";
    let default_linker = var("TARGET") == "x86_64-unknown-linux-gnu"
        && !var("CARGO_ENCODED_RUSTFLAGS").contains("link")
        && var("RUSTC_LINKER").is_empty();
    if !release || !default_linker {
        return;
    }
    let order = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("assets/symbol-order.txt");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
    // A loader older than glibc 2.36 refuses a binary with packed relocations outright, so they
    // are asked for only where the C library that will load it (this machine's) reads them.
    if var("HOST") == var("TARGET") && glibc_reads_packed_relocations() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if var("HARNESS9_KEEP_SYMBOLS").is_empty() {
        println!("cargo:rustc-link-arg-bins=-Wl,--strip-all");
    }
}

/// Whether this machine's glibc is 2.36 or later (`getconf GNU_LIBC_VERSION` says "glibc 2.36").
fn glibc_reads_packed_relocations() -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut numbers = text
        .trim()
        .trim_start_matches("glibc ")
        .split('.')
        .map(|part| part.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (2, 36),
        _ => false,
    }
}
