//! `edit`: search and replace of text that occurs exactly once.

use std::path::Path;

use mimo_protocol::bridge::{EditArgs, EditData};
use mimo_protocol::{ErrorCode, ErrorObject};

use crate::fs_guard::{self, Access};

/// `confirmed`: the person confirmed this edit of a protected location.
pub(crate) fn run(root: &Path, args: &EditArgs, confirmed: bool) -> Result<EditData, ErrorObject> {
    if args.old.is_empty() {
        return Err(ErrorObject::new(ErrorCode::EArgs, "`old` is empty"));
    }
    let mut opened = fs_guard::open(root, &args.path, Access::Edit, confirmed)?;
    let text = super::read_text(&mut opened.file, &args.path)?;
    let at = match occurrences(&text, &args.old).as_slice() {
        [] => {
            return Err(ErrorObject::new(
                ErrorCode::ETool,
                format!("`old` not found in {}", args.path),
            ))
        }
        [at] => *at,
        many => {
            return Err(ErrorObject::new(
                ErrorCode::ETool,
                format!(
                    "`old` matches {} times in {}: include more of the text around it so it \
                     matches once",
                    many.len(),
                    args.path
                ),
            ))
        }
    };
    let edited = format!(
        "{}{}{}",
        &text[..at],
        args.new,
        &text[at + args.old.len()..]
    );
    super::rewrite(&mut opened.file, &args.path, &edited)?;
    Ok(EditData {
        path: fs_guard::display(root, &opened.path),
        line: text[..at].matches('\n').count() as u32 + 1,
    })
}

/// Every start of `needle` in `text`, overlapping ones included: `aa` is in `aaa` twice, so
/// replacing "the" one would be a guess.
fn occurrences(text: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let at = from + i;
        found.push(at);
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::occurrences;

    #[test]
    fn overlapping_matches_count() {
        assert_eq!(occurrences("aaa", "aa"), vec![0, 1]);
        assert_eq!(occurrences("é-é", "é"), vec![0, 3]);
        assert!(occurrences("abc", "x").is_empty());
    }
}
