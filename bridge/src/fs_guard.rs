//! Keeps every path inside the root (`E_PATH`): no `..`, no absolute path elsewhere, no symlink
//! whose target lies outside, checked on the canonical path (or, for a file not yet there, on
//! its nearest existing folder).

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use mimo_protocol::{ErrorCode, ErrorObject};

/// A path inside the root.
#[derive(Debug)]
pub(crate) enum Target {
    /// It exists; canonical, so symlinks are resolved.
    Existing(PathBuf),
    /// It does not exist yet: the root joined with the given path, whose nearest existing
    /// folder is inside the root, and whose missing part has no `..` and no symlink (nothing of
    /// it exists).
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
            inside(root, rel, real)?;
            Ok(Target::New(joined))
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

/// `Existing` or `E_TOOL` "no such file" (for the tools that need a file there).
pub(crate) fn existing_file(root: &Path, rel: &str) -> Result<PathBuf, ErrorObject> {
    match resolve(root, rel)? {
        Target::Existing(path) if path.is_dir() => Err(ErrorObject::new(
            ErrorCode::ETool,
            format!("{rel} is a folder"),
        )),
        Target::Existing(path) => Ok(path),
        Target::New(_) => Err(ErrorObject::new(
            ErrorCode::ETool,
            format!("{rel}: no such file"),
        )),
    }
}
