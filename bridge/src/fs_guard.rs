//! Keeps every path inside the root (`E_PATH`): no `..`, no absolute path elsewhere, no symlink
//! whose target lies outside, checked on the canonical path (or, for a file not yet there, on
//! its nearest existing folder). Then the file is opened by walking that real path down from
//! the root one folder at a time, never following a symlink (`O_NOFOLLOW`), so that a folder
//! swapped for a symlink after the check cannot lead the open outside; only a regular file with
//! one link (a hard link could be the other name of a file outside) is opened, and it must still
//! be the file that was checked (same device and inode). Opens never block (`O_NONBLOCK`: a
//! named pipe is refused, not waited on). Writes to protected locations (`.git/`, shell startup
//! files: `mimo_protocol::bridge::protected_location`) need the person's confirmation.

use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use mimo_protocol::bridge::protected_location;
use mimo_protocol::{ErrorCode, ErrorObject};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// A path inside the root, real: symlinks resolved.
#[derive(Debug)]
pub(crate) enum Target {
    /// It exists; canonical.
    Existing(PathBuf),
    /// It does not exist yet: its nearest existing folder, canonical and inside the root,
    /// joined with the missing part, which has no `..` and no symlink (nothing of it exists).
    New(PathBuf),
}

/// Resolves `rel` (relative to `root`, which is canonical; an absolute path must lie inside it).
pub(crate) fn resolve(root: &Path, rel: &str) -> Result<Target, ErrorObject> {
    if rel.is_empty() {
        return Err(ErrorObject::new(ErrorCode::EArgs, "path is empty"));
    }
    let path = Path::new(rel);
    // Refused even when it would stay inside: a path that climbs is a mistake or a probe.
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(outside(rel, "`..` is not allowed"));
    }
    let joined = root.join(path);
    match joined.canonicalize() {
        Ok(real) => inside(root, rel, real).map(Target::Existing),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            // The nearest ancestor that exists (as anything, a dangling symlink included, which
            // then fails to canonicalize and is refused) must be inside the root.
            let existing = joined
                .ancestors()
                .skip(1)
                .find(|a| a.symlink_metadata().is_ok())
                .unwrap_or(root);
            if joined.symlink_metadata().is_ok() {
                return Err(outside(rel, "it is a symlink to nothing"));
            }
            let real = existing.canonicalize().map_err(|e| {
                outside(
                    rel,
                    &format!("{} cannot be resolved: {e}", existing.display()),
                )
            })?;
            let missing = joined
                .strip_prefix(existing)
                .expect("an ancestor is a prefix");
            Ok(Target::New(inside(root, rel, real)?.join(missing)))
        }
        Err(e) => Err(ErrorObject::new(
            ErrorCode::ETool,
            format!("cannot resolve {rel}: {e}"),
        )),
    }
}

fn inside(root: &Path, rel: &str, real: PathBuf) -> Result<PathBuf, ErrorObject> {
    if real.starts_with(root) {
        Ok(real)
    } else {
        Err(outside(rel, "it resolves outside the root"))
    }
}

fn outside(rel: &str, why: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::EPath, format!("{rel}: {why}"))
}

/// The path as the person sees it: relative to the root.
pub(crate) fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// What a tool does with the file it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// `read`: an existing file, read only.
    Read,
    /// `edit`: an existing file, read and rewritten.
    Edit,
    /// `write`: an existing file replaced, or a new one created with its missing folders.
    Write,
}

/// An opened file.
pub(crate) struct Opened {
    pub(crate) file: File,
    /// Its real path.
    pub(crate) path: PathBuf,
    /// `write` created it.
    pub(crate) created: bool,
}

/// Opens `rel` for `access`. `confirmed`: the person confirmed this write of a protected
/// location.
pub(crate) fn open(
    root: &Path,
    rel: &str,
    access: Access,
    confirmed: bool,
) -> Result<Opened, ErrorObject> {
    let target = resolve(root, rel)?;
    let real = match &target {
        Target::Existing(real) | Target::New(real) => real.clone(),
    };
    if access != Access::Read && !confirmed {
        // The path as given and the real one: a symlink may lead into `.git/`, and a path
        // through `.git` may be a symlink out of it.
        let location =
            protected_location(rel).or_else(|| protected_location(&display(root, &real)));
        if let Some(location) = location {
            return Err(ErrorObject::new(
                ErrorCode::EPath,
                format!(
                    "{rel} is in {location}, a protected location (version control, editor \
                     settings and shell startup files can make programs run code later): the \
                     bridge writes there only once the person confirmed this very write"
                ),
            ));
        }
    }
    let inner = real
        .strip_prefix(root)
        .expect("resolved paths are in the root");
    let Some(name) = inner.file_name() else {
        return Err(ErrorObject::new(
            ErrorCode::ETool,
            format!("{rel} is a folder"),
        ));
    };
    let parent = inner.parent().unwrap_or(Path::new(""));
    let created = matches!(target, Target::New(_));
    if created && access != Access::Write {
        return Err(ErrorObject::new(
            ErrorCode::ETool,
            format!("{rel}: no such file"),
        ));
    }
    let folder = folder(root, parent, rel, created)?;
    let file = if created {
        // `O_EXCL` with `O_NOFOLLOW`: a file or symlink planted since the check is not opened.
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        rustix::fs::openat(&folder, name, flags | OFlags::CLOEXEC, Mode::from(0o666))
            .map_err(|e| file_error("create", rel, e))?
    } else {
        open_existing(&folder, name, rel, access)?
    };
    Ok(Opened {
        file: File::from(file),
        path: real,
        created,
    })
}

/// The folder `inner` (relative to the root, real), opened by walking down from the root
/// without following symlinks; `create`: missing folders are made.
fn folder(root: &Path, inner: &Path, rel: &str, create: bool) -> Result<OwnedFd, ErrorObject> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut folder = rustix::fs::open(root, flags, Mode::empty())
        .map_err(|e| file_error("open the root for", rel, e))?;
    for component in inner.components() {
        let name = component.as_os_str();
        let mut opened = rustix::fs::openat(&folder, name, flags, Mode::empty());
        if matches!(opened, Err(Errno::NOENT)) && create {
            match rustix::fs::mkdirat(&folder, name, Mode::from(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(file_error("create folders for", rel, e)),
            }
            opened = rustix::fs::openat(&folder, name, flags, Mode::empty());
        }
        folder = match opened {
            Ok(next) => next,
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let is_link = rustix::fs::statat(&folder, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
                return Err(if is_link {
                    outside(
                        rel,
                        &format!(
                            "{} became a symlink after the check",
                            name.to_string_lossy()
                        ),
                    )
                } else {
                    ErrorObject::new(
                        ErrorCode::ETool,
                        format!("{rel}: {} is not a folder", name.to_string_lossy()),
                    )
                });
            }
            Err(e) => return Err(file_error("open the folders of", rel, e)),
        };
    }
    Ok(folder)
}

/// Opens an existing regular file with one link, the one it was when checked.
fn open_existing(
    folder: &OwnedFd,
    name: &std::ffi::OsStr,
    rel: &str,
    access: Access,
) -> Result<OwnedFd, ErrorObject> {
    // Looked at before it is opened: opening a device or a pipe can itself do something.
    let before = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| file_error("open", rel, e))?;
    plain_file(&before, rel)?;
    let flags = match access {
        Access::Read => OFlags::RDONLY,
        Access::Edit => OFlags::RDWR,
        Access::Write => OFlags::WRONLY,
    } | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    let file = rustix::fs::openat(folder, name, flags, Mode::empty()).map_err(|e| match e {
        Errno::LOOP => outside(rel, "it became a symlink after the check"),
        e => file_error("open", rel, e),
    })?;
    let after = rustix::fs::fstat(&file).map_err(|e| file_error("open", rel, e))?;
    plain_file(&after, rel)?;
    if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) {
        return Err(outside(rel, "it was replaced while it was being opened"));
    }
    Ok(file)
}

/// `E_TOOL` for a folder, `E_PATH` for anything but a regular file with a single link.
fn plain_file(st: &Stat, rel: &str) -> Result<(), ErrorObject> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {}
        FileType::Directory => {
            return Err(ErrorObject::new(
                ErrorCode::ETool,
                format!("{rel} is a folder"),
            ))
        }
        FileType::Symlink => return Err(outside(rel, "it became a symlink after the check")),
        other => {
            let kind = match other {
                FileType::Fifo => "a named pipe",
                FileType::Socket => "a socket",
                FileType::CharacterDevice | FileType::BlockDevice => "a device",
                _ => "not a regular file",
            };
            return Err(outside(
                rel,
                &format!("it is {kind}; only regular files are read and written"),
            ));
        }
    }
    #[allow(clippy::unnecessary_cast)] // `st_nlink`'s type differs between platforms
    let links = st.st_nlink as u64;
    if links > 1 {
        return Err(outside(
            rel,
            &format!(
                "it has {links} hard links, and another name of the same file may be outside \
                 the root"
            ),
        ));
    }
    Ok(())
}

fn file_error(what: &str, rel: &str, e: Errno) -> ErrorObject {
    crate::tools::io_error(what, rel, e.into())
}

#[cfg(test)]
mod tests {
    use tempfile::TempDir;

    use super::*;

    /// What the race between the check and the open comes to, made certain: a folder or the file
    /// itself turned into a symlink after `resolve` looked. The walk and the open refuse it.
    #[test]
    fn the_open_follows_no_symlink_that_appeared_after_the_check() {
        let (root, outside) = (TempDir::new().unwrap(), TempDir::new().unwrap());
        let root_path = root.path().canonicalize().unwrap();
        std::fs::write(outside.path().join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.path(), root_path.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root_path.join("file")).unwrap();

        for create in [false, true] {
            let e =
                folder(&root_path, Path::new("sub/deeper"), "sub/deeper/x", create).unwrap_err();
            assert_eq!(e.code, ErrorCode::EPath, "{e:?}");
            assert!(e.message.contains("became a symlink"), "{}", e.message);
        }
        let top = folder(&root_path, Path::new(""), "file", false).unwrap();
        for access in [Access::Read, Access::Edit, Access::Write] {
            let e = open_existing(&top, "file".as_ref(), "file", access).unwrap_err();
            assert_eq!(e.code, ErrorCode::EPath, "{e:?}");
        }
        let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "nothing made outside");
    }
}
