//! `write`: creates or replaces a file, creating missing folders.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use mimo_protocol::bridge::{WriteArgs, WriteData};
use mimo_protocol::{ErrorCode, ErrorObject};

use crate::fs_guard::{self, Target};

pub(crate) fn run(root: &Path, args: &WriteArgs) -> Result<WriteData, ErrorObject> {
    let rel = &args.path;
    let (path, created) = match fs_guard::resolve(root, rel)? {
        Target::Existing(path) if path.is_dir() => {
            return Err(ErrorObject::new(
                ErrorCode::ETool,
                format!("{rel} is a folder"),
            ))
        }
        Target::Existing(path) => {
            fs::write(&path, &args.content).map_err(|e| super::io_error("write", rel, e))?;
            (path, false)
        }
        Target::New(path) => {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| super::io_error("create folders for", rel, e))?;
            }
            // `create_new` (O_EXCL) never follows a symlink, so one planted after the check
            // cannot redirect the write.
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|mut file| file.write_all(args.content.as_bytes()))
                .map_err(|e| super::io_error("create", rel, e))?;
            (path, true)
        }
    };
    Ok(WriteData {
        path: fs_guard::display(root, &path),
        bytes: args.content.len() as u64,
        created,
    })
}
