//! Splits the dashboard's wasm into the module every page needs and chunks fetched on demand.
//!
//! The dashboard marks its heavy routes lazy (Leptos' `#[lazy_route]`, `dashboard/src/pages/mod.rs`):
//! each becomes a pair of symbols (`__wasm_split_00<name>00_import_…`/`_export_…`) that
//! `wasm_split_cli_support`, the splitter cargo-leptos runs for `--split`, finds in the linked module. It
//! follows the call graph from those exports, with the linker's relocations (hence `--emit-relocs` on the
//! dashboard's link), moves what only a lazy route reaches into a `split_<name>.wasm`, what several lazy
//! routes share into a `chunk_<n>.wasm`, and writes `__wasm_split.js`, which the main module imports to
//! fetch and instantiate them against its own memory and function table.
//!
//! It reads the module as cargo linked it, so it runs before wasm-bindgen (which rewrites imports and
//! drops the relocations); wasm-bindgen then processes the main module alone.

use std::path::{Path, PathBuf};

/// The loader the main module imports, beside wasm-bindgen's JavaScript in `static/pkg/`.
pub const LOADER: &str = "__wasm_split.js";

/// Splits `raw` (cargo's output) into `main` (for wasm-bindgen) and the chunks and loader in `pkg`,
/// whose loader imports `initSync` from `main_js` (wasm-bindgen's JavaScript, relative to `pkg`).
/// Returns the chunks written.
pub fn split(raw: &Path, main: &Path, pkg: &Path, main_js: &str) -> Result<Vec<PathBuf>, String> {
    let input = std::fs::read(raw).map_err(|e| format!("{}: {e}", raw.display()))?;
    let link_name = format!("./{LOADER}");
    let mut options = wasm_split_cli_support::Options::new(&input);
    options.output_dir = pkg;
    options.main_out_path = main;
    options.main_module = main_js;
    options.link_name = &link_name;
    let started = std::time::Instant::now();
    let cpu = crate::util::cpu::this_process();
    let split = wasm_split_cli_support::transform(options)
        .map_err(|e| format!("splitting {}: {e:#}", raw.display()))?;
    let mut chunks = split.split_modules;
    chunks.sort();
    eprintln!(
        "<== {:.1} s: split {} into {} and {} chunk(s) (CPU {:.1} s)",
        started.elapsed().as_secs_f64(),
        raw.display(),
        main.display(),
        chunks.len(),
        (crate::util::cpu::this_process() - cpu).as_secs_f64()
    );
    Ok(chunks)
}
