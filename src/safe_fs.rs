//! Race-free filesystem access below a directory descriptor.
//!
//! Everything the runtime reads from a skill tree goes through this module. It never resolves a
//! path string below the skills root: it opens one component at a time with `openat` and
//! `O_NOFOLLOW`, opens leaf files with `O_NONBLOCK` (a FIFO can never block the runtime), checks
//! the type and size with `fstat` on the very descriptor it then reads, and enforces size caps
//! while reading (a file that grows during the read is still too large). A leaf is examined
//! before it is opened: by `fstatat` ([`open_regular`]), or by the entry type of the directory
//! listing it came from ([`open_listed`], the discovery scan's guide files); what is not a
//! regular file is never opened.
//!
//! The walks of the tools (the discovery scan, the guide files, `skill_read_reference`,
//! `skill_run_script`, profile `hitl`) list, enter and open through one seam, a [`FileAccess`]
//! that [`access`] gives for each [`Use`]: always [`FileAccess::SAFE`] in a normal build. With
//! the cargo feature `mutants`, the symlink and FIFO defects are defective `FileAccess` values
//! (`mod mutated` below).
//!
//! A primitive: it uses no other module of the crate. Clauses enforced here:
//! `discovery.symlink.*`, `read.realpath`, `read.regular-file`, `run.path` (no link is ever
//! followed, nothing but a regular file is opened), `discovery.size`, `read.size` and
//! `run.approval` (the caps, also while reading).

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// What kind of directory entry a name refers to, as seen without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Directory,
    Regular,
    Symlink,
    /// FIFOs, sockets, devices.
    Special,
}

/// Why a leaf file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafError {
    /// No entry of that name.
    NotFound,
    /// The entry is a symbolic link (never followed).
    Symlink,
    /// The entry exists but is not a regular file (directory, FIFO, socket, device).
    NotRegular,
    /// The file holds more bytes than the cap allows.
    TooLarge,
    /// The entry exists but could not be opened or read (permissions, I/O error).
    Unreadable(String),
}

/// Opens the operator-configured root directory. The root path itself may be a symlink: it is the
/// operator's own choice, so it is resolved once here; nothing below it is ever followed.
pub fn open_root(path: &Path) -> io::Result<OwnedFd> {
    let fd = rfs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(fd)
}

/// The real path of the directory an open descriptor refers to, read from the descriptor itself
/// (`/proc/self/fd` on Linux) so that it names what was opened, not what the path leads to now.
/// Elsewhere, or without `/proc`, `None`.
pub fn real_path_of(fd: &OwnedFd) -> Option<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let p = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
        p.is_absolute().then_some(p)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        None
    }
}

/// Why a directory component could not be entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirError {
    NotFound,
    Symlink,
    NotDirectory,
    Unreadable(String),
}

/// Opens the directory `name` inside `dir` without following a symlink.
// spec: read.realpath (a symlinked directory is never entered)
pub fn open_subdir(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, DirError> {
    match rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => Ok(fd),
        Err(Errno::NOENT) => Err(DirError::NotFound),
        Err(e @ (Errno::LOOP | Errno::NOTDIR)) => Err(match entry_kind(dir, name) {
            Ok(Some(EntryKind::Symlink)) => DirError::Symlink,
            Ok(None) => DirError::NotFound,
            Ok(Some(_)) => DirError::NotDirectory,
            Err(_) => DirError::Unreadable(e.to_string()),
        }),
        Err(e) => Err(DirError::Unreadable(e.to_string())),
    }
}

/// Opens a chain of directories below `dir`, one component at a time, never following a symlink.
pub fn open_dir_chain<C: AsRef<[u8]>>(
    dir: BorrowedFd<'_>,
    components: &[C],
) -> Result<OwnedFd, DirError> {
    FileAccess::SAFE.open_dir_chain(dir, components)
}

/// The kind of the entry `name` in `dir`, without following symlinks; `None` when absent.
pub fn entry_kind(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<EntryKind>> {
    match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(kind_of(FileType::from_raw_mode(st.st_mode)))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn kind_of(ft: FileType) -> EntryKind {
    match ft {
        FileType::Directory => EntryKind::Directory,
        FileType::RegularFile => EntryKind::Regular,
        FileType::Symlink => EntryKind::Symlink,
        _ => EntryKind::Special,
    }
}

/// Lists the entries of a directory (without `.` and `..`), sorted by the bytes of their names.
pub fn list_dir(dir: BorrowedFd<'_>) -> io::Result<Vec<(Vec<u8>, EntryKind)>> {
    let mut out = Vec::new();
    each_entry(dir, &mut |name, file_type| {
        if name == b"." || name == b".." {
            return Ok(());
        }
        let kind = match file_type {
            FileType::Unknown => match entry_kind(dir, OsStr::from_bytes(name))? {
                Some(k) => k,
                None => return Ok(()),
            },
            ft => kind_of(ft),
        };
        out.push((name.to_vec(), kind));
        Ok(())
    })?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Calls `f` with the name and listed type of every entry of `dir`. On Linux the entries are
/// read with `getdents64` straight from `dir`, from its start (`lseek` to 0 first): no second
/// descriptor is opened for the listing, which a scan of 10,000 skill directories would pay three
/// system calls each for (`fcntl`, `openat(".")`, `close`).
#[cfg(target_os = "linux")]
fn each_entry(
    dir: BorrowedFd<'_>,
    f: &mut dyn FnMut(&[u8], FileType) -> io::Result<()>,
) -> io::Result<()> {
    rfs::seek(dir, rfs::SeekFrom::Start(0))?;
    let mut buf = [const { std::mem::MaybeUninit::<u8>::uninit() }; 8192];
    let mut entries = rfs::RawDir::new(dir, &mut buf);
    while let Some(entry) = entries.next() {
        let entry = entry?;
        f(entry.file_name().to_bytes(), entry.file_type())?;
    }
    Ok(())
}

/// [`each_entry`] where `getdents64` is not available: through a directory stream of its own.
#[cfg(not(target_os = "linux"))]
fn each_entry(
    dir: BorrowedFd<'_>,
    f: &mut dyn FnMut(&[u8], FileType) -> io::Result<()>,
) -> io::Result<()> {
    let mut reader = rfs::Dir::read_from(dir)?;
    while let Some(entry) = reader.read() {
        let entry = entry?;
        f(entry.file_name().to_bytes(), entry.file_type())?;
    }
    Ok(())
}

/// Opens the regular file `name` in `dir` for reading. The entry is examined with `fstatat`
/// (without following links) first, and anything that is not a regular file — a symlink, a
/// directory, a FIFO, a socket, a device — is refused without ever being opened, since opening a
/// device or a FIFO can have side effects (a FIFO's writer is released, a tape rewinds). The
/// regular file is then opened without following links and non-blocking, and `fstat` on the
/// opened descriptor must show the same regular file (same device and inode): an entry swapped
/// between the two calls is refused too.
// spec: read.regular-file (examined before it is opened; a FIFO never blocks)
pub fn open_regular(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, LeafError> {
    let before = match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Err(LeafError::NotFound),
        Err(e) => return Err(LeafError::Unreadable(e.to_string())),
    };
    match kind_of(FileType::from_raw_mode(before.st_mode)) {
        EntryKind::Regular => {}
        EntryKind::Symlink => return Err(LeafError::Symlink),
        EntryKind::Directory | EntryKind::Special => return Err(LeafError::NotRegular),
    }
    let fd = open_leaf(dir, name)?;
    let st = rfs::fstat(&fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_dev != before.st_dev
        || st.st_ino != before.st_ino
    {
        return Err(LeafError::NotRegular);
    }
    // The descriptor was opened non-blocking only so that the open itself cannot hang; regular
    // files never block, so the flag is harmless for the reads that follow.
    Ok(fd)
}

/// Opens `name` of `dir` for reading without following a link, non-blocking and without taking a
/// terminal, so that the open itself can never hang; the errors of an entry swapped for a link
/// (`ELOOP`) or a socket (`ENXIO`, `EOPNOTSUPP`) are named as such.
fn open_leaf(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, LeafError> {
    rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )
    .map_err(open_error)
}

/// What a failed no-follow open of a leaf means: gone, a link (`ELOOP`), a socket or other
/// special file (`ENXIO`, `EOPNOTSUPP`), or unreadable.
fn open_error(e: Errno) -> LeafError {
    match e {
        Errno::NOENT => LeafError::NotFound,
        Errno::LOOP => LeafError::Symlink,
        Errno::NXIO | Errno::OPNOTSUPP => LeafError::NotRegular,
        e => LeafError::Unreadable(e.to_string()),
    }
}

/// Opens the entry `name` of `dir` that the directory's listing said is of kind `kind` (the
/// listing's entry type, `d_type`, or `fstatat` without following links where the listing gave
/// none: [`list_dir`]). Anything but a regular file — a symlink, a directory, a FIFO, a socket, a
/// device — is refused by its listed kind, before any call on the name, so it is never opened.
/// A regular file is opened in one `openat`, without following a link and non-blocking
/// (`O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`), and `fstat` on the opened descriptor must show a
/// regular file: an entry swapped since the listing (for a link: `ELOOP`; for a FIFO: the
/// non-blocking open returns at once) is refused too.
pub fn open_listed(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    kind: EntryKind,
) -> Result<OpenedFile, LeafError> {
    // By the listed kind: a symlink, like a FIFO or a device, is refused before any call on its
    // name.
    // spec: discovery.symlink.skill-md (a SKILL.md listed as a symlink is never opened)
    // spec: discovery.symlink.skill-yml (a skill.yml listed as a symlink is never opened)
    match kind {
        EntryKind::Regular => {}
        EntryKind::Symlink => return Err(LeafError::Symlink),
        EntryKind::Directory | EntryKind::Special => return Err(LeafError::NotRegular),
    }
    let fd = open_leaf(dir, name)?;
    regular_with_size(fd)
}

/// An opened regular file and the size `fstat` showed for it.
pub type OpenedFile = (OwnedFd, u64);

/// `fd` with its size, when `fstat` on it shows a regular file (the size saves the read a second
/// `fstat`).
fn regular_with_size(fd: OwnedFd) -> Result<OpenedFile, LeafError> {
    let st = rfs::fstat(&fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(LeafError::NotRegular);
    }
    Ok((fd, u64::try_from(st.st_size).unwrap_or(0)))
}

/// Reads at most `cap` bytes from `fd`. A file with more than `cap` bytes (by `fstat` before the
/// read, or by the bytes actually read) is `TooLarge`; the file is never read past `cap + 1`.
// spec: read.size (by `fstat`, and while reading)
pub fn read_capped(fd: impl AsFd, cap: u64) -> Result<Vec<u8>, LeafError> {
    let fd = fd.as_fd();
    let st = rfs::fstat(fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
    read_capped_sized(fd, cap, u64::try_from(st.st_size).unwrap_or(0))
}

/// [`read_capped`] of a file whose `fstat` just showed `declared` bytes.
fn read_capped_sized(fd: BorrowedFd<'_>, cap: u64, declared: u64) -> Result<Vec<u8>, LeafError> {
    if declared > cap {
        return Err(LeafError::TooLarge);
    }
    let limit = cap.saturating_add(1);
    // Room for the declared bytes and one more: the read that finds the end (or that a file grew
    // past its size) lands in it, and the bytes are read straight into the buffer kept (no zeroed
    // chunk copied from).
    let initial = usize::try_from(declared.min(cap).saturating_add(1)).unwrap_or(0);
    let mut buf: Vec<u8> = Vec::with_capacity(initial);
    loop {
        let room = limit - buf.len() as u64;
        if room == 0 {
            return Err(LeafError::TooLarge);
        }
        if buf.len() == buf.capacity() {
            buf.reserve_exact(usize::try_from(room.min(64 * 1024)).unwrap_or(64 * 1024));
        }
        let read = if (buf.capacity() - buf.len()) as u64 <= room {
            rustix::io::read(fd, rustix::buffer::spare_capacity(&mut buf))
        } else {
            // More capacity than bytes may still be read (the allocator's rounding): the last
            // ones go through a small buffer, so the file is never read past `cap + 1`.
            let mut chunk = [0u8; 512];
            let want = usize::try_from(room)
                .unwrap_or(chunk.len())
                .min(chunk.len());
            rustix::io::read(fd, &mut chunk[..want]).inspect(|&n| {
                buf.extend_from_slice(&chunk[..n]);
            })
        };
        match read {
            Ok(0) => break,
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            Err(e) => return Err(LeafError::Unreadable(e.to_string())),
        }
    }
    if buf.len() as u64 > cap {
        return Err(LeafError::TooLarge);
    }
    Ok(buf)
}

/// Opens and reads the regular file `name` in `dir` with a cap, in one go.
pub fn read_regular(dir: BorrowedFd<'_>, name: &OsStr, cap: u64) -> Result<Vec<u8>, LeafError> {
    FileAccess::SAFE.read_file(dir, name, cap)
}

/// The entries of a directory: names and kinds.
pub type Entries = Vec<(Vec<u8>, EntryKind)>;

/// How a walk lists, enters and opens entries below a directory descriptor: the one seam of the
/// tools' file access. Production code only ever gets [`FileAccess::SAFE`].
#[derive(Clone, Copy)]
pub struct FileAccess {
    /// Lists a directory's entries with their kinds ([`list_dir`]).
    pub list_dir: fn(BorrowedFd<'_>) -> io::Result<Entries>,
    /// Enters a directory ([`open_subdir`]: never through a symlink).
    pub open_dir: fn(BorrowedFd<'_>, &OsStr) -> Result<OwnedFd, DirError>,
    /// Opens a file for reading ([`open_regular`]: only a regular file, never through a link,
    /// never blocking).
    pub open_file: fn(BorrowedFd<'_>, &OsStr) -> Result<OwnedFd, LeafError>,
    /// Opens a file of a listed kind ([`open_listed`]: only what the listing says is a regular
    /// file, never through a link, never blocking).
    pub open_listed: fn(BorrowedFd<'_>, &OsStr, EntryKind) -> Result<OpenedFile, LeafError>,
}

impl FileAccess {
    /// The access of SPEC.md: nothing below the root is followed, nothing but a regular file
    /// is opened.
    pub const SAFE: FileAccess = FileAccess {
        list_dir,
        open_dir: open_subdir,
        open_file: open_regular,
        open_listed,
    };

    /// Opens a chain of directories below `dir`, one component at a time.
    pub fn open_dir_chain<C: AsRef<[u8]>>(
        &self,
        dir: BorrowedFd<'_>,
        components: &[C],
    ) -> Result<OwnedFd, DirError> {
        let mut current = rustix::io::fcntl_dupfd_cloexec(dir, 0)
            .map_err(|e| DirError::Unreadable(e.to_string()))?;
        for c in components {
            current = (self.open_dir)(current.as_fd(), OsStr::from_bytes(c.as_ref()))?;
        }
        Ok(current)
    }

    /// Opens and reads the file `name` in `dir` with a cap, in one go.
    pub fn read_file(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        cap: u64,
    ) -> Result<Vec<u8>, LeafError> {
        let fd = (self.open_file)(dir, name)?;
        read_capped(&fd, cap)
    }

    /// Opens and reads the entry `name` of `dir`, listed as `kind`, with a cap, in one go.
    pub fn read_listed(
        &self,
        dir: BorrowedFd<'_>,
        name: &OsStr,
        kind: EntryKind,
        cap: u64,
    ) -> Result<Vec<u8>, LeafError> {
        let (fd, size) = (self.open_listed)(dir, name, kind)?;
        read_capped_sized(fd.as_fd(), cap, size)
    }
}

/// Which walk asks for a [`FileAccess`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// The discovery scan: listing and entering directories.
    Scan,
    /// A skill directory's `SKILL.md`.
    SkillMd,
    /// A skill directory's `skill.yml`.
    SkillYml,
    /// `skill_read_reference`: the path below the skill directory and the file.
    Reference,
    /// `skill_run_script`: the path below the skill directory and the helper.
    Helper,
    /// Profile `hitl`: `read_skill_file` and `run_skill_script`.
    Hitl,
}

/// The file access of `use_`: [`FileAccess::SAFE`].
#[cfg(not(feature = "mutants"))]
#[inline(always)]
pub fn access(use_: Use) -> &'static FileAccess {
    let _ = use_;
    &FileAccess::SAFE
}

/// The file access of `use_`: [`FileAccess::SAFE`], or this process's mutant's.
#[cfg(feature = "mutants")]
pub use mutated::access;

/// The symlink and FIFO defects: each a [`FileAccess`] with one operation replaced by the
/// "obvious" way a runtime does it, which is exactly what makes it wrong.
#[cfg(feature = "mutants")]
mod mutated {
    use super::*;
    use crate::mutants::{chosen, Mutant};

    pub fn access(use_: Use) -> &'static FileAccess {
        match (chosen(), use_) {
            (Some(Mutant::ReadOpensFifo), _) => &OPENS_THEN_CHECKS,
            (Some(Mutant::DiscoveryFollowsDirSymlink), Use::Scan) => &FOLLOWS_LISTED_LINKS,
            (Some(Mutant::DiscoveryFollowsSkillMdSymlink), Use::SkillMd)
            | (Some(Mutant::DiscoveryFollowsSkillYmlSymlink), Use::SkillYml)
            | (Some(Mutant::ReadFollowsLeafSymlink), Use::Reference) => &FOLLOWS_FILE_LINKS,
            (Some(Mutant::ReadChecksLeafOnly), Use::Reference)
            | (Some(Mutant::RunChecksLeafOnly), Use::Helper) => &FOLLOWS_DIR_LINKS,
            _ => &FileAccess::SAFE,
        }
    }

    /// `read-opens-fifo`.
    const OPENS_THEN_CHECKS: FileAccess = FileAccess {
        open_file: open_then_check,
        open_listed: |dir, name, _kind| open_then_check(dir, name).and_then(regular_with_size),
        ..FileAccess::SAFE
    };
    /// `discovery-follows-dir-symlink`: a listed symlink is a directory, and is entered.
    const FOLLOWS_LISTED_LINKS: FileAccess = FileAccess {
        list_dir: list_links_as_dirs,
        open_dir: open_dir_following,
        ..FileAccess::SAFE
    };
    /// `read-checks-leaf-only`, `run-checks-leaf-only`: directories are entered through links.
    const FOLLOWS_DIR_LINKS: FileAccess = FileAccess {
        open_dir: open_dir_following,
        ..FileAccess::SAFE
    };
    /// `discovery-follows-skill-md-symlink`, `discovery-follows-skill-yml-symlink`,
    /// `read-follows-leaf-symlink`: files are opened through links.
    const FOLLOWS_FILE_LINKS: FileAccess = FileAccess {
        open_file: open_file_following,
        open_listed: |dir, name, _kind| open_file_following(dir, name).and_then(regular_with_size),
        ..FileAccess::SAFE
    };

    /// [`list_dir`], with every symlink reported as a directory.
    fn list_links_as_dirs(dir: BorrowedFd<'_>) -> io::Result<Vec<(Vec<u8>, EntryKind)>> {
        let mut entries = list_dir(dir)?;
        for (_, kind) in &mut entries {
            if *kind == EntryKind::Symlink {
                *kind = EntryKind::Directory;
            }
        }
        Ok(entries)
    }

    /// Opens the directory `name` of `dir`, following a symlink.
    fn open_dir_following(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, DirError> {
        rfs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOENT => DirError::NotFound,
            Errno::NOTDIR => DirError::NotDirectory,
            e => DirError::Unreadable(e.to_string()),
        })
    }

    /// Opens `name` of `dir` following a symlink (non-blocking), then checks it is a regular
    /// file.
    fn open_file_following(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, LeafError> {
        let fd = rfs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOENT => LeafError::NotFound,
            e => LeafError::Unreadable(e.to_string()),
        })?;
        let st = rfs::fstat(&fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(LeafError::NotRegular);
        }
        Ok(fd)
    }

    /// Opens `name` (blocking, not following a link) and only then checks that it is a regular
    /// file.
    fn open_then_check(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, LeafError> {
        let fd = rfs::openat(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(open_error)?;
        let st = rfs::fstat(&fd).map_err(|e| LeafError::Unreadable(e.to_string()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(LeafError::NotRegular);
        }
        Ok(fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::CWD;
    use std::io::Write;

    #[test]
    fn cap_is_inclusive_and_checked_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let exact = dir.path().join("exact");
        std::fs::write(&exact, vec![b'a'; 10]).unwrap();
        let over = dir.path().join("over");
        std::fs::write(&over, vec![b'a'; 11]).unwrap();
        let root = open_root(dir.path()).unwrap();
        assert_eq!(
            read_regular(root.as_fd(), OsStr::new("exact"), 10)
                .unwrap()
                .len(),
            10
        );
        assert_eq!(
            read_regular(root.as_fd(), OsStr::new("over"), 10),
            Err(LeafError::TooLarge)
        );
    }

    #[test]
    fn reads_whole_files_of_every_size_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = open_root(dir.path()).unwrap();
        for (i, len) in [0usize, 1, 511, 512, 65_535, 65_536, 65_537, 200_000]
            .into_iter()
            .enumerate()
        {
            let bytes: Vec<u8> = (0..len).map(|j| (j % 251) as u8).collect();
            let name = format!("f{i}");
            std::fs::write(dir.path().join(&name), &bytes).unwrap();
            for cap in [len as u64, len as u64 + 1, 300_000] {
                assert_eq!(
                    read_regular(root.as_fd(), OsStr::new(&name), cap).as_ref(),
                    Ok(&bytes),
                    "{len} bytes, cap {cap}"
                );
            }
            if len > 0 {
                assert_eq!(
                    read_regular(root.as_fd(), OsStr::new(&name), len as u64 - 1),
                    Err(LeafError::TooLarge)
                );
            }
        }
    }

    #[test]
    fn a_listed_kind_other_than_regular_is_refused_before_any_call_on_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = open_root(dir.path()).unwrap();
        // No entry of that name exists: an open or a stat would say `NotFound`.
        let absent = OsStr::new("absent");
        for (kind, refused) in [
            (EntryKind::Symlink, LeafError::Symlink),
            (EntryKind::Special, LeafError::NotRegular),
            (EntryKind::Directory, LeafError::NotRegular),
        ] {
            assert_eq!(open_listed(root.as_fd(), absent, kind).err(), Some(refused));
        }
        assert_eq!(
            open_listed(root.as_fd(), absent, EntryKind::Regular).err(),
            Some(LeafError::NotFound)
        );
    }

    /// A FIFO at `path` (no writer, no reader).
    fn make_fifo(path: &Path) {
        rustix::fs::mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
    }

    #[test]
    fn a_listed_regular_file_swapped_for_a_fifo_or_a_link_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        make_fifo(&dir.path().join("fifo"));
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("file", dir.path().join("link")).unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let root = open_root(dir.path()).unwrap();
        // The listing said "regular" (a race swapped each entry since): a blocking open of the
        // FIFO would wait for a writer forever, so the check runs in a thread.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let kinds: Vec<_> = ["fifo", "link", "d", "file"]
                .into_iter()
                .map(|n| open_listed(root.as_fd(), OsStr::new(n), EntryKind::Regular).err())
                .collect();
            let _ = tx.send(kinds);
        });
        assert_eq!(
            rx.recv_timeout(std::time::Duration::from_secs(5)),
            Ok(vec![
                Some(LeafError::NotRegular),
                Some(LeafError::Symlink),
                Some(LeafError::NotRegular),
                None,
            ])
        );
    }

    #[test]
    fn fifo_and_symlink_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        make_fifo(&dir.path().join("fifo"));
        std::os::unix::fs::symlink("fifo", dir.path().join("link")).unwrap();
        let root = open_root(dir.path()).unwrap();
        assert_eq!(
            open_regular(root.as_fd(), OsStr::new("fifo")).err(),
            Some(LeafError::NotRegular)
        );
        assert_eq!(
            open_regular(root.as_fd(), OsStr::new("link")).err(),
            Some(LeafError::Symlink)
        );
    }

    #[test]
    fn a_fifo_is_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo);
        // A writer blocks in open() until some reader opens the FIFO: opening it is a side effect
        // the runtime must not have.
        let (tx, rx) = std::sync::mpsc::channel();
        let writer_path = fifo.clone();
        std::thread::spawn(move || {
            let opened = std::fs::OpenOptions::new().write(true).open(&writer_path);
            let _ = tx.send(opened.is_ok());
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        let root = open_root(dir.path()).unwrap();
        assert_eq!(
            open_regular(root.as_fd(), OsStr::new("fifo")).err(),
            Some(LeafError::NotRegular)
        );
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "the FIFO's writer was released: the runtime opened the FIFO"
        );
        // Release the writer ourselves so the thread ends.
        let _reader = std::fs::File::open(&fifo).unwrap();
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(5)), Ok(true));
    }

    #[test]
    fn growth_during_read_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grow");
        std::fs::write(&path, b"abc").unwrap();
        let root = open_root(dir.path()).unwrap();
        let fd = open_regular(root.as_fd(), OsStr::new("grow")).unwrap();
        // Grow after open and fstat-by-open, before the read.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(&[b'x'; 20]).unwrap();
        assert_eq!(read_capped(&fd, 10), Err(LeafError::TooLarge));
    }
}
