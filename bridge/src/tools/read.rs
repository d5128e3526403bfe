//! `read`: some or all lines of a UTF-8 text file (of at most `MAX_BRIDGE_READ_BYTES`), at most
//! `MAX_BRIDGE_OUTPUT_BYTES` of them.

use std::path::Path;

use mimo_protocol::bridge::{ReadArgs, ReadData, MAX_BRIDGE_OUTPUT_BYTES};
use mimo_protocol::ErrorObject;

use crate::fs_guard::{self, Access};

pub(crate) fn run(root: &Path, args: &ReadArgs) -> Result<ReadData, ErrorObject> {
    let mut opened = fs_guard::open(root, &args.path, Access::Read, false)?;
    let text = super::read_text(&mut opened.file, &args.path)?;
    let offset = args.offset.unwrap_or(0);
    let all: Vec<&str> = text.split_inclusive('\n').collect();
    let wanted = all
        .iter()
        .skip(offset as usize)
        .take(args.limit.map_or(usize::MAX, |l| l as usize));
    let mut content = String::new();
    let mut lines = 0u32;
    let mut truncated = false;
    for line in wanted {
        if content.len() + line.len() > MAX_BRIDGE_OUTPUT_BYTES {
            truncated = true;
            // A single line longer than the whole budget is cut rather than never shown.
            if lines == 0 {
                content.push_str(super::cut(line, MAX_BRIDGE_OUTPUT_BYTES));
                lines = 1;
            }
            break;
        }
        content.push_str(line);
        lines += 1;
    }
    Ok(ReadData {
        path: fs_guard::display(root, &opened.path),
        content,
        offset,
        lines,
        total_lines: all.len() as u32,
        truncated,
    })
}
