//! The files `runner/build.rs` embeds in the binary (every file of `spec-cases/`, `fixtures/`,
//! `protocol/`, and `SPEC.md`, `PROTOCOL.md`, `SUITE_VERSION`,
//! `reports/report.schema.json`), and the suite's version. The bottom of the runner: it depends
//! on nothing, so every layer may read an embedded file (the protocol layer its schemas).
//! What a run makes of them (the embedded suite, its fixtures, `export`) is [`crate::suite`].

/// One embedded file.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedFile {
    /// The path relative to the repository root, with `/` separators (`spec-cases/read/x.yaml`).
    pub path: &'static str,
    /// Whether the file had an execute bit (exported as mode 0755).
    pub executable: bool,
    pub bytes: &'static [u8],
}

mod generated {
    use super::EmbeddedFile;
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Every embedded file, sorted by path.
pub static FILES: &[EmbeddedFile] = generated::FILES;

/// The suite's version (`SUITE_VERSION`).
pub const VERSION: &str = generated::SUITE_VERSION;

/// The embedded file at `path`, if any.
pub fn file(path: &str) -> Option<&'static EmbeddedFile> {
    FILES
        .binary_search_by(|f| f.path.cmp(path))
        .ok()
        .map(|i| &FILES[i])
}
