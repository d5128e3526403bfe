//! Property tests of the bridge's checks of commands and paths (`make fuzz` target
//! `bridge_checks`, which runs them longer). Whatever the words and the paths:
//! - words quoted as a shell would are never taken for shell operators, and split back whole;
//! - an interpreter is refused under any folder, letter case and version, whatever follows;
//! - a form that makes an allowed program run another is refused wherever it sits;
//! - a pattern without `*` matches its own words and nothing else;
//! - a path, however it climbs, loops or links, opens only inside the root, and a write never
//!   lands outside it or in a protected location;
//! - `.git` is protected however it is spelled, and plain names are not.

use std::path::Path;

use mimo_proptest::{cases, text as any_text};
use mimo_protocol::bridge::protected_location;
use mimo_protocol::ErrorCode;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use tempfile::TempDir;

use crate::fs_guard::{self, Access};
use crate::policy::{Allowed, Policy};
use crate::tools::bash::shell_operator;

fn policy(allow: &[&str], strict: bool) -> Policy {
    let allow: Vec<String> = allow.iter().map(|s| (*s).to_owned()).collect();
    Policy::new(&allow, strict).expect("a valid policy")
}

/// A word a command might have: plain, option-like, or any text at all.
fn word() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        "[a-z0-9_./=-]{1,10}",
        "-{1,2}[a-zA-Z][a-z-]{0,8}(=[a-z/]{0,6})?",
        any_text(),
    ]
}

/// A word that is no option (so git reads it as an argument, not one of its own options).
fn plain_word() -> impl Strategy<Value = String> + Clone {
    "[a-z0-9_./]{1,10}"
}

const INTERPRETERS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "python", "perl", "ruby", "node", "php", "lua", "awk", "env",
    "xargs", "timeout", "sudo", "busybox", "npx", "vim",
];

/// Forms refused for a program allowed by name: the program, the form, and whether it must come
/// before any other argument (git's own options precede its subcommand).
const FORMS: &[(&str, &str, bool)] = &[
    ("find", "-exec", false),
    ("find", "-execdir", false),
    ("find", "-ok", false),
    ("find", "-fprint", false),
    ("tar", "--to-command=x", false),
    ("tar", "--checkpoint-action=exec=x", false),
    ("tar", "--use-compress-program=x", false),
    ("tar", "-I", false),
    ("rsync", "-e", false),
    ("rsync", "--rsh=x", false),
    ("rsync", "--rsync-path=x", false),
    ("ssh", "-oProxyCommand=x", false),
    ("ssh", "-F", false),
    ("git", "-c", true),
    ("git", "-C", true),
    ("git", "--config-env=x", true),
    ("git", "--exec-path=x", true),
    ("git", "--git-dir=x", true),
    ("git", "--work-tree=x", true),
];

/// Path components that climb, loop, link in and out of the root, or name protected places.
const COMPONENTS: &[&str] = &[
    ".", "..", "", "a", "f.txt", "in-link", "out-link", "out-file", "dangling", ".git", ".GIT.",
    "new", "pipe",
];

/// A root with folders, links leading in and out, a protected folder and a pipe, beside a
/// folder outside it that holds one file.
struct Fixture {
    root: TempDir,
    outside: TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let root = TempDir::new().unwrap();
        let outside = TempDir::new().unwrap();
        let (r, o) = (root.path(), outside.path());
        std::fs::create_dir_all(r.join("a")).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(r.join("a/f.txt"), "inside").unwrap();
        std::fs::write(o.join("secret"), "outside").unwrap();
        std::os::unix::fs::symlink(r.join("a"), r.join("in-link")).unwrap();
        std::os::unix::fs::symlink(o, r.join("out-link")).unwrap();
        std::os::unix::fs::symlink(o.join("secret"), r.join("out-file")).unwrap();
        std::os::unix::fs::symlink(o.join("nothing"), r.join("dangling")).unwrap();
        let pipe =
            std::ffi::CString::new(r.join("pipe").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo(3) only creates the file.
        assert_eq!(unsafe { libc::mkfifo(pipe.as_ptr(), 0o600) }, 0);
        Fixture { root, outside }
    }

    fn root(&self) -> std::path::PathBuf {
        self.root.path().canonicalize().unwrap()
    }

    fn outside_unchanged(&self) -> bool {
        let names: Vec<_> = std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names == ["secret"]
            && std::fs::read_to_string(self.outside.path().join("secret")).unwrap() == "outside"
    }
}

/// `.git` as a case-insensitive, lenient file system would also take it.
fn disguised_git() -> impl Strategy<Value = String> {
    (
        vec(any::<bool>(), 4),
        "[. ]{0,3}",
        proptest::option::of((
            any::<Index>(),
            select(&['\u{200c}', '\u{feff}', '\u{200b}'][..]),
        )),
    )
        .prop_map(|(upper, tail, zero_width)| {
            let mut name: String = ".git"
                .chars()
                .zip(upper)
                .map(|(c, up)| if up { c.to_ascii_uppercase() } else { c })
                .collect();
            if let Some((at, c)) = zero_width {
                let at = 1 + at.index(name.len());
                name.insert(at.min(name.len()), c);
            }
            name + &tail
        })
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn bridge_checks_quoted_words_are_never_operators(words in vec(any_text(), 1..6)) {
        let command = shell_words::join(&words);
        prop_assert_eq!(shell_operator(&command), None, "{}", command);
        prop_assert_eq!(shell_words::split(&command).unwrap(), words);
    }

    #[test]
    fn bridge_checks_interpreters_are_refused_in_any_disguise(
        name in select(INTERPRETERS),
        folder in prop_oneof![Just(""), Just("/usr/bin/"), Just("./"), Just("/opt/x/")],
        upper in any::<bool>(),
        version in "[0-9.]{0,4}",
        args in vec(word(), 0..5),
    ) {
        let name = if upper { name.to_uppercase() } else { name.to_owned() };
        let program = format!("{folder}{name}{version}");
        let words: Vec<String> = std::iter::once(program.clone()).chain(args).collect();
        for p in [policy(&[], false), policy(&[program.as_str()], true)] {
            let refused = p.check(&words).unwrap_err();
            prop_assert_eq!(refused.code, ErrorCode::ECmd);
            prop_assert!(refused.message.contains("interpreter"), "{}", refused.message);
        }
    }

    #[test]
    fn bridge_checks_smuggling_forms_are_refused_wherever_they_sit(
        (program, form, first) in select(FORMS),
        args in vec(plain_word(), 0..5),
        at in any::<Index>(),
        value in plain_word(),
    ) {
        let mut words = vec![program.to_owned()];
        if program == "git" {
            words.push("status".into());
        }
        words.extend(args);
        let at = if first { 1 } else { 1 + at.index(words.len()) };
        words.insert(at, form.to_owned());
        words.insert(at + 1, value);
        let refused = policy(&[program], true).check(&words).unwrap_err();
        prop_assert_eq!(refused.code, ErrorCode::ECmd);
        prop_assert!(refused.message.contains("run another program"), "{}", refused.message);
    }

    #[test]
    fn bridge_checks_a_pattern_without_wildcards_matches_only_itself(
        words in vec("[a-z0-9 ._-]{1,6}", 2..5),
        other in vec("[a-z0-9 ._-]{1,6}", 1..5),
    ) {
        let p = Policy::new(&[shell_words::join(&words)], true).unwrap();
        prop_assert_eq!(p.check(&words), Ok(Allowed::Pattern));
        if other != words {
            prop_assert!(p.check(&other).is_err());
        }
    }

    #[test]
    fn bridge_checks_paths_open_only_inside_the_root(
        components in vec(prop_oneof![select(COMPONENTS).prop_map(str::to_owned), any_text()], 1..6),
        absolute in any::<bool>(),
        access in select(&[Access::Read, Access::Edit, Access::Write][..]),
    ) {
        let fixture = Fixture::new();
        let root = fixture.root();
        let rel = components.join("/");
        let rel = if absolute { format!("{}/{rel}", root.display()) } else { rel };
        match fs_guard::open(&root, &rel, access, false) {
            Ok(mut opened) => {
                prop_assert!(opened.path.starts_with(&root), "{} opened {}", rel, opened.path.display());
                if access != Access::Read {
                    let inner = fs_guard::display(&root, &opened.path);
                    prop_assert_eq!(protected_location(&inner), None, "{}", rel);
                    std::io::Write::write_all(&mut opened.file, b"written").unwrap();
                }
            }
            Err(e) => prop_assert!(
                matches!(e.code, ErrorCode::EPath | ErrorCode::ETool | ErrorCode::EArgs),
                "{:?}", e
            ),
        }
        prop_assert!(fixture.outside_unchanged(), "{} reached outside", rel);
        prop_assert!(!Path::new(&fixture.outside.path().join("nothing")).exists());
    }

    #[test]
    fn bridge_checks_git_is_protected_however_it_is_spelled(
        before in vec("[a-z0-9_-]{1,8}", 0..3),
        git in disguised_git(),
        after in vec(any_text(), 0..3),
    ) {
        let path = before.iter().chain(std::iter::once(&git)).chain(&after).cloned().collect::<Vec<_>>().join("/");
        let location = protected_location(&path);
        prop_assert_eq!(location.as_deref(), Some(".git/"), "{:?}", path);
        let plain = before.join("/");
        prop_assert_eq!(protected_location(&plain), None, "{:?}", plain);
    }
}
