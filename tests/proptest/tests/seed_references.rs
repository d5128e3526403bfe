//! Every "seed 00X §Y" cited in the sources and the README has its heading in `docs/seeds.md`
//! (issue 27 §6): the seed documents are not in the repository, and that page says what each
//! cited section asks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[test]
fn every_cited_seed_section_is_described_in_docs_seeds_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/seeds.md")).unwrap();
    let headings: BTreeSet<String> = doc
        .lines()
        .filter(|line| line.starts_with('#'))
        .filter_map(|line| line.trim_start_matches('#').split(':').next())
        .map(|h| h.trim().to_string())
        .collect();
    let mut files = Vec::new();
    walk(&root, &mut files);
    let (mut cited, mut missing) = (0, Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, citation) in citations(&text) {
            cited += 1;
            if !headings.contains(&citation) {
                let file = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                missing.push(format!("{file}:{line}: {citation}"));
            }
        }
    }
    // Guards against a walk that reads nothing.
    assert!(cited > 90, "only {cited} seed citations found");
    assert!(
        missing.is_empty(),
        "cited but without a heading in docs/seeds.md:\n{}",
        missing.join("\n")
    );
}

#[test]
fn citations_are_read_across_comment_lines_and_lists() {
    let text = "/// (seed 000 §5.1,\n/// seed 002 §5.2.1); seed 004 §5–§6 and seed 003 §2, §7.\n\
                // the local bridge (seed 004\n    // §4.2), seed 001's loop; seed 002's API (§8)";
    let found: Vec<(usize, String)> = citations(text);
    let expected = [
        (1, "seed 000 §5.1"),
        (2, "seed 002 §5.2.1"),
        (2, "seed 004 §5"),
        (2, "seed 004 §6"),
        (2, "seed 003 §2"),
        (2, "seed 003 §7"),
        (3, "seed 004 §4.2"),
        (4, "seed 001"),
        (4, "seed 002"),
    ];
    let expected: Vec<(usize, String)> =
        expected.iter().map(|(l, c)| (*l, c.to_string())).collect();
    assert_eq!(found, expected);
}

/// The source and documentation files of the repository, without what is built or installed.
fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !name.starts_with('.')
                && !["target", "node_modules", "dist", "build"].contains(&&*name)
            {
                walk(&path, files);
            }
        } else if ["rs", "ts", "mjs", "md", "html", "sh"]
            .iter()
            .any(|ext| name.ends_with(&format!(".{ext}")))
            && !path.ends_with("docs/seeds.md")
        {
            files.push(path);
        }
    }
}

/// Each "seed 00X" (as "seed 00X §Y" for each section listed after it: "§5, §9", "§5–§6",
/// "§2 and §3") with its line. A citation may go on in the next comment line.
fn citations(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    // "Seed 000" begins a sentence.
    let next = |from: usize| {
        ["seed 00", "Seed 00"]
            .iter()
            .filter_map(|p| text[from..].find(p))
            .min()
    };
    while let Some(at) = next(from) {
        let start = from + at;
        from = start + "seed 00".len();
        let Some(digit) = text[from..].chars().next().filter(char::is_ascii_digit) else {
            continue;
        };
        from += 1;
        let line = text[..start].matches('\n').count() + 1;
        let seed = format!("seed 00{digit}");
        let mut sections = Vec::new();
        let mut rest = &text[from..];
        loop {
            let skipped = skip_separator(rest, sections.is_empty());
            let Some(after) = skipped.strip_prefix('§') else {
                break;
            };
            let number: String = after
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if number.is_empty() {
                break;
            }
            sections.push(number.to_string());
            rest = &after[number.len()..];
        }
        if sections.is_empty() {
            out.push((line, seed));
        } else {
            out.extend(sections.iter().map(|s| (line, format!("{seed} §{s}"))));
        }
    }
    out
}

/// `text` after what may come between a seed's number and a section, or between two sections:
/// a space (a line break and the next line's comment marker included), ", ", "–", " and ".
fn skip_separator(text: &str, first: bool) -> &str {
    let mut rest = text;
    if !first {
        rest = rest
            .strip_prefix(',')
            .or_else(|| rest.strip_prefix('–'))
            .unwrap_or(rest);
    }
    let trimmed = rest.trim_start();
    let trimmed = if trimmed.len() < rest.len() && rest[..rest.len() - trimmed.len()].contains('\n')
    {
        trimmed.trim_start_matches(['/', '!', '*']).trim_start()
    } else {
        trimmed
    };
    if first {
        return trimmed;
    }
    trimmed.strip_prefix("and ").unwrap_or(trimmed)
}
