//! Reading the files a user names (report.json inputs, known-failures lists, case files): only
//! regular files, opened without blocking, and only up to a size cap, so that a FIFO, a device
//! or a huge file gives an error naming the file instead of a hang or unbounded memory; and
//! [`invisible`], the characters of such text that show as nothing.

use std::io::Read as _;
use std::path::Path;

/// Characters that show as nothing or reorder the text around them: soft hyphen, zero-width and
/// joiner characters, direction marks, embeddings and overrides, the line and paragraph
/// separators, word joiner and invisible operators, the byte order mark. Text from a file the
/// user names writes them escaped where a person reads or pastes it.
pub fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// What a file that is not a regular one is, for messages.
fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// The bytes of `file`, which must be a regular file (a symlink to one is followed) of at most
/// `cap` bytes. It is opened without blocking (a FIFO with no writer must not hang) and without
/// becoming a controlling terminal, and its type is checked on the opened descriptor. `what`
/// says what such a file should be, for the message when it is not a regular file.
pub fn read_regular(file: &Path, cap: u64, what: &str) -> Result<Vec<u8>, String> {
    use rustix::fs::{Mode, OFlags};
    let shown = file.display();
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(file, flags, Mode::empty())
        .map_err(|e| format!("cannot read {shown}: {}", std::io::Error::from(e)))?;
    let f = std::fs::File::from(fd);
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{shown} is not a regular file ({}): {what}",
            kind_of(meta.file_type())
        ));
    }
    let too_big = |n: u64| {
        format!(
            "{shown} is larger than {} ({n} bytes or more): {what}",
            shown_size(cap)
        )
    };
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    // A file that grows while it is read is still cut at the limit.
    f.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_regular`], as UTF-8 text.
pub fn read_regular_text(file: &Path, cap: u64, what: &str) -> Result<String, String> {
    let bytes = read_regular(file, cap, what)?;
    String::from_utf8(bytes).map_err(|e| format!("cannot read {}: not UTF-8 ({e})", file.display()))
}

fn shown_size(cap: u64) -> String {
    if cap >= 1024 * 1024 && cap.is_multiple_of(1024 * 1024) {
        format!("{} MiB", cap / (1024 * 1024))
    } else {
        format!("{cap} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let err = read_regular(&fifo, 10, "a list").unwrap_err();
        assert!(err.contains("not a regular file (a FIFO): a list"), "{err}");
        let err = read_regular(Path::new("/dev/zero"), 10, "a list").unwrap_err();
        assert!(err.contains("a character device"), "{err}");
        let big = dir.path().join("big");
        std::fs::write(&big, [b'x'; 11]).unwrap();
        let err = read_regular(&big, 10, "a list").unwrap_err();
        assert!(err.contains("larger than 10 bytes"), "{err}");
        std::fs::write(&big, [b'x'; 10]).unwrap();
        assert_eq!(
            read_regular_text(&big, 10, "a list").unwrap(),
            "x".repeat(10)
        );
    }
}
