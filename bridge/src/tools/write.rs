//! `write`: creates or replaces a file, creating missing folders.

use std::io::Write;
use std::path::Path;

use mimo_protocol::bridge::{WriteArgs, WriteData};
use mimo_protocol::ErrorObject;

use crate::fs_guard::{self, Access};

/// `confirmed`: the person confirmed this write of a protected location.
pub(crate) fn run(
    root: &Path,
    args: &WriteArgs,
    confirmed: bool,
) -> Result<WriteData, ErrorObject> {
    let rel = &args.path;
    let mut opened = fs_guard::open(root, rel, Access::Write, confirmed)?;
    if opened.created {
        opened
            .file
            .write_all(args.content.as_bytes())
            .map_err(|e| super::io_error("write", rel, e))?;
    } else {
        super::rewrite(&mut opened.file, rel, &args.content)?;
    }
    Ok(WriteData {
        path: fs_guard::display(root, &opened.path),
        bytes: args.content.len() as u64,
        created: opened.created,
    })
}
