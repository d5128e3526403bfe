//! Which commands `bash` runs (`E_CMD`). `--allow` takes program names (`git`: any arguments)
//! and full argument patterns (`"git status"`, `"npm run *"`: words matched one by one, `*`
//! within a word matching any characters, a last word `**` any further words). A command a
//! pattern matches runs as written. Any other command runs only if its program is allowed by
//! name (or any program is, without `--allow` and `--strict`), and only if it cannot run code
//! it was handed: interpreters and programs that run other programs (`sh`, `python`, `env`,
//! `xargs`…) are refused, as are the options through which an ordinary program runs a command
//! (`git -c core.fsmonitor=…`, `find -exec`, `tar --to-command`…), and a program file inside the
//! root (which the tools can write) or one that is an interpreter under another name. The lists
//! cover the common ways, not every program's every option: for anything sensitive, allow full
//! patterns with `--strict`.

use std::path::Path;

use mimo_protocol::{ErrorCode, ErrorObject};

/// What `--allow` and `--strict` say, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    /// Programs allowed by name, with any arguments but the ones that run commands.
    names: Vec<String>,
    /// Full argument patterns: what they match runs as written.
    patterns: Vec<Vec<String>>,
    /// Only what `names` or `patterns` allow runs (`--strict`, or any `--allow` at all).
    restricted: bool,
}

/// Why a command may run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Allowed {
    /// A full pattern matched: the person allowed exactly this.
    Pattern,
    /// Its program is allowed; the file it runs is still to be checked ([`check_program_file`]).
    Program,
}

impl Policy {
    /// Parses `--allow` entries: one word is a program name, several a pattern.
    pub(crate) fn new(allow: &[String], strict: bool) -> Result<Self, String> {
        let mut names = Vec::new();
        let mut patterns = Vec::new();
        for entry in allow {
            let words = shell_words::split(entry)
                .map_err(|e| format!("--allow {entry:?} cannot be split into words: {e}"))?;
            match words.as_slice() {
                [] => return Err("--allow \"\": an empty entry allows nothing".into()),
                [name] => names.push(name.clone()),
                [program, ..] if program.contains('*') => {
                    return Err(format!(
                        "--allow {entry:?}: the program of a pattern is written out, not a \
                         wildcard"
                    ))
                }
                _ => {
                    if words[..words.len() - 1].iter().any(|w| w == "**") {
                        return Err(format!("--allow {entry:?}: `**` may only be the last word"));
                    }
                    patterns.push(words);
                }
            }
        }
        Ok(Self {
            names,
            patterns,
            restricted: strict || !allow.is_empty(),
        })
    }

    /// Checks a command's words (split, free of shell operators, at least one).
    pub(crate) fn check(&self, words: &[String]) -> Result<Allowed, ErrorObject> {
        if self.patterns.iter().any(|p| matches_pattern(p, words)) {
            return Ok(Allowed::Pattern);
        }
        let program = &words[0];
        if self.restricted && !self.names.contains(program) {
            let allowed = if self.names.is_empty() && self.patterns.is_empty() {
                "nothing (strict)".to_owned()
            } else {
                self.names
                    .iter()
                    .cloned()
                    .chain(self.patterns.iter().map(shell_words::join))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(ErrorObject::new(
                ErrorCode::ECmd,
                format!("`{program}` is not allowed with these arguments; allowed: {allowed}"),
            ));
        }
        refusal(program, &words[1..])?;
        Ok(Allowed::Program)
    }
}

/// Whether a pattern matches a command word for word.
fn matches_pattern(pattern: &[String], words: &[String]) -> bool {
    match pattern.split_last() {
        Some((last, init)) if last == "**" => {
            words.len() >= init.len() && init.iter().zip(words).all(|(p, w)| glob(p, w))
        }
        _ => pattern.len() == words.len() && pattern.iter().zip(words).all(|(p, w)| glob(p, w)),
    }
}

/// `*` matches any characters (none included); everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty(); // no `*`: the whole text was the first part
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Checks the file a program allowed by name resolved to: one inside the root (or reached
/// through a link there) was put there by the tools, as far as the bridge knows, and one that is
/// an interpreter under another name (a symlink such as `/usr/bin/sh` → `dash`) runs what it is
/// handed.
pub(crate) fn check_program_file(
    root: &Path,
    given: &str,
    found: &Path,
    args: &[String],
) -> Result<(), ErrorObject> {
    let real = found.canonicalize().unwrap_or_else(|_| found.to_owned());
    if found.starts_with(root) || real.starts_with(root) {
        return Err(ErrorObject::new(
            ErrorCode::ECmd,
            format!(
                "`{given}` is a file in the shared folder, which the tools can write: it runs \
                 only when the person allowed this exact command (--allow 'the command')"
            ),
        ));
    }
    match real.file_name().and_then(|n| n.to_str()) {
        Some(name) => refusal(name, args),
        None => Ok(()),
    }
}

/// `E_CMD` when `program` (a name or a path) with `args` can run a command it was handed.
fn refusal(program: &str, args: &[String]) -> Result<(), ErrorObject> {
    let name = base_name(program);
    if RUNS_CODE.contains(&name.as_str()) {
        return Err(ErrorObject::new(
            ErrorCode::ECmd,
            format!(
                "`{program}` runs code or programs it is handed (an interpreter, a shell or a \
                 launcher): it runs only when the person allowed this exact command \
                 (--allow '{program} …')"
            ),
        ));
    }
    if let Some(form) = smuggling_form(&name, args) {
        return Err(ErrorObject::new(
            ErrorCode::ECmd,
            format!(
                "`{program}` with {form} can run another program, or change what runs later: \
                 refused unless the person allowed this exact command (--allow '{program} …')"
            ),
        ));
    }
    Ok(())
}

/// A program's name without its folder, letter case and version (`/usr/bin/Python3.12` is
/// `python`, `pip3` is `pip`).
fn base_name(program: &str) -> String {
    let file = program.rsplit('/').next().unwrap_or(program).to_lowercase();
    let trimmed = file.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if trimmed.is_empty() {
        file
    } else {
        trimmed.to_owned()
    }
}

/// Programs that run code or other programs given in their arguments (or in a file the tools
/// may have written), by [`base_name`].
const RUNS_CODE: &[&str] = &[
    // shells
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "mksh",
    "pdksh",
    "ash",
    "csh",
    "tcsh",
    "fish",
    "yash",
    "rbash",
    "elvish",
    "nu",
    "xonsh",
    "busybox",
    "toybox",
    // interpreters and compilers that run what they compile
    "python",
    "pythonw",
    "pypy",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "r",
    "rscript",
    "julia",
    "guile",
    "racket",
    "sbcl",
    "clisp",
    "ocaml",
    "swift",
    "scala",
    "groovy",
    "kotlin",
    "jshell",
    "java",
    "osascript",
    "pwsh",
    "powershell",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "gdb",
    "lldb",
    "vi",
    "vim",
    "nvim",
    "view",
    "rvim",
    "ex",
    "emacs",
    "ed",
    // programs that run other programs
    "env",
    "xargs",
    "nice",
    "nohup",
    "timeout",
    "stdbuf",
    "setsid",
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "chroot",
    "unshare",
    "nsenter",
    "strace",
    "ltrace",
    "valgrind",
    "time",
    "watch",
    "flock",
    "ionice",
    "taskset",
    "chrt",
    "script",
    "parallel",
    "at",
    "batch",
    "systemd-run",
    "exec",
    "command",
    "builtin",
    "eval",
    "npx",
    "bunx",
    "pnpx",
    "uvx",
];

/// How `name` (a [`base_name`]) would be made to run a command with `args`, if it would.
fn smuggling_form(name: &str, args: &[String]) -> Option<String> {
    if name == "sed" {
        // GNU sed runs commands (`e`, `s///e`) and writes files (`w`) unless sandboxed.
        return (!args.iter().any(|a| a == "--sandbox"))
            .then(|| "a script but no `--sandbox`".to_owned());
    }
    smuggling_argument(name, args).map(|a| format!("`{a}`"))
}

/// The argument through which `name` would run a command, if any.
fn smuggling_argument(name: &str, args: &[String]) -> Option<String> {
    let arg = |i: usize| args.get(i).map(String::as_str);
    let has = |test: &dyn Fn(&str) -> bool| args.iter().find(|a| test(a)).cloned();
    let option = |long: &'static [&'static str]| {
        move |a: &str| {
            long.iter()
                .any(|l| a == *l || a.strip_prefix(l).is_some_and(|r| r.starts_with('=')))
        }
    };
    // A short option in a bundle (`-xvf`), attached value or not (`-oProxyCommand=…`).
    let short = |letters: &'static str| {
        move |a: &str| {
            a.strip_prefix('-')
                .is_some_and(|r| !r.starts_with('-') && r.chars().any(|c| letters.contains(c)))
        }
    };
    match name {
        "git" => git_form(args),
        "find" => has(&|a| {
            matches!(
                a,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        "tar" | "gtar" | "bsdtar" => has(&option(&[
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
        ]))
        .or_else(|| has(&short("IF")))
        // The old style: `tar cIf prog …`, letters without a dash first.
        .or_else(|| {
            arg(0)
                .filter(|a| !a.starts_with('-') && a.contains(['I', 'F']))
                .map(str::to_owned)
        }),
        "rsync" => has(&option(&["--rsh", "--rsync-path"])).or_else(|| has(&short("e"))),
        "ssh" | "scp" | "sftp" => has(&short("oF")),
        "man" => has(&option(&["--pager", "--html"])).or_else(|| has(&short("PH"))),
        "zip" => has(&option(&["--unzip-command"])).or_else(|| has(&|a| a == "-TT")),
        "npm" | "pnpm" | "yarn" => args
            .iter()
            .find(|a| !a.starts_with('-'))
            .filter(|sub| matches!(sub.as_str(), "exec" | "x" | "dlx"))
            .cloned(),
        _ => None,
    }
}

/// git's forms that run a program: configuration given on the command line (`-c
/// core.fsmonitor=…`, `alias.x=!…`) or read from elsewhere (`-C`, `--git-dir`), a subcommand
/// that writes configuration or runs tools and scripts, and options that name a program.
fn git_form(args: &[String]) -> Option<String> {
    let mut rest = args.iter();
    // Options before the subcommand are git's own.
    let subcommand = loop {
        let arg = rest.next()?;
        if !arg.starts_with('-') {
            break arg.as_str();
        }
        let refused = arg.starts_with("-c")
            || arg.starts_with("-C")
            || [
                "--config-env",
                "--exec-path",
                "--git-dir",
                "--work-tree",
                "--namespace",
                "--super-prefix",
            ]
            .iter()
            .any(|o| arg.starts_with(o));
        if refused {
            return Some(arg.clone());
        }
    };
    let args: Vec<&str> = rest.map(String::as_str).collect();
    let refused_subcommand = matches!(
        subcommand,
        "config"
            | "difftool"
            | "mergetool"
            | "filter-branch"
            | "send-email"
            | "instaweb"
            | "daemon"
            | "hook"
            | "web--browse"
    ) || subcommand.starts_with("credential")
        || (subcommand == "submodule" && args.contains(&"foreach"))
        || (subcommand == "bisect" && args.contains(&"run"));
    if refused_subcommand {
        return Some(subcommand.to_owned());
    }
    let long = [
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--extcmd",
        "--template",
        "--open-files-in-pager",
        "--config",
        "--sendmail-cmd",
    ];
    let short: &[&str] = match subcommand {
        "clone" => &["-c", "-u"],
        "ls-remote" | "archive" => &["-u"],
        "rebase" => &["-x"],
        "grep" => &["-O"],
        _ => &[],
    };
    args.iter()
        .find(|a| long.iter().any(|l| a.starts_with(l)) || short.iter().any(|s| a.starts_with(s)))
        .map(|a| format!("{subcommand} {a}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<String> {
        shell_words::split(command).unwrap()
    }

    fn policy(allow: &[&str], strict: bool) -> Policy {
        let allow: Vec<String> = allow.iter().map(|s| (*s).to_owned()).collect();
        Policy::new(&allow, strict).unwrap()
    }

    #[test]
    fn smuggling_forms_are_refused_even_for_an_allowed_program() {
        let p = policy(
            &["git", "find", "tar", "rsync", "ssh", "sed", "npm", "man"],
            true,
        );
        for command in [
            "git -c core.fsmonitor=/tmp/x status",
            "git -ccore.pager=sh log",
            "git --config-env=core.pager=X log",
            "git -C /elsewhere status",
            "git --git-dir=evil status",
            "git --exec-path=/tmp log",
            "git config core.hooksPath hooks",
            "git config --global alias.x !sh",
            "git submodule foreach 'touch x'",
            "git bisect run make",
            "git rebase -x 'touch x' HEAD~1",
            "git rebase --exec=x HEAD~1",
            "git clone -u 'touch x' repo",
            "git clone --template=t repo",
            "git fetch --upload-pack=x origin",
            "git push --receive-pack=x origin",
            "git grep -Ovim foo",
            "git difftool",
            "git credential fill",
            "find . -exec touch x ;",
            "find . -execdir id +",
            "find . -fprint /tmp/x",
            "tar --to-command=sh -xf a.tar",
            "tar -xIsh -f a.tar",
            "tar cIf sh a.tar .",
            "tar -x --checkpoint-action=exec=id -f a.tar",
            "rsync -e 'sh -c id' a b",
            "rsync -avze x a b",
            "rsync --rsh=x a b",
            "ssh -oProxyCommand=id host",
            "ssh -F cfg host",
            "sed -n 1p f",
            "npm exec cowsay",
            "npm --yes x cowsay",
            "man -P id ls",
        ] {
            let e = p.check(&words(command)).unwrap_err();
            assert_eq!(e.code, ErrorCode::ECmd, "{command}");
            assert!(
                e.message.contains("run another program"),
                "{command}: {}",
                e.message
            );
        }
        for command in [
            "git status",
            "git log --oneline -n 5",
            "git -p log",
            "git --no-pager diff HEAD",
            "git commit -m 'a -c b'",
            "git push -u origin main",
            "git add -u",
            "find . -name '*.rs'",
            "tar -xvf a.tar",
            "rsync -av a b",
            "ssh -v host",
            "sed --sandbox -n 1p f",
            "npm test",
            "npm run build",
            "man ls",
        ] {
            assert_eq!(p.check(&words(command)), Ok(Allowed::Program), "{command}");
        }
    }

    #[test]
    fn interpreters_run_only_by_pattern() {
        let open = policy(&[], false);
        for command in [
            "sh -c 'touch x'",
            "bash script.sh",
            "/bin/sh -c id",
            "python3.12 -c 'import os'",
            "Python3 x.py",
            "perl -e 1",
            "node -e 1",
            "env sh -c id",
            "env",
            "xargs rm",
            "awk 'BEGIN{system(\"id\")}'",
            "timeout 5 sh",
            "vim -c ':!id'",
            "npx cowsay",
        ] {
            let e = open.check(&words(command)).unwrap_err();
            assert_eq!(e.code, ErrorCode::ECmd, "{command}");
            assert!(
                e.message.contains("interpreter"),
                "{command}: {}",
                e.message
            );
        }
        assert_eq!(open.check(&words("ls -la")), Ok(Allowed::Program));

        let p = policy(&["sh -c 'echo *'", "npm run **", "git status"], false);
        assert_eq!(p.check(&words("sh -c 'echo hi'")), Ok(Allowed::Pattern));
        assert!(p.check(&words("sh -c 'rm -rf x'")).is_err());
        assert!(p.check(&words("sh -c 'echo hi' extra")).is_err());
        assert_eq!(p.check(&words("npm run")), Ok(Allowed::Pattern));
        assert_eq!(
            p.check(&words("npm run build --watch")),
            Ok(Allowed::Pattern)
        );
        assert_eq!(p.check(&words("git status")), Ok(Allowed::Pattern));
        let e = p.check(&words("git status -s")).unwrap_err();
        assert!(e.message.contains("not allowed"), "{}", e.message);
        assert!(
            e.message
                .contains("allowed: sh -c 'echo *', npm run '**', git status"),
            "{}",
            e.message
        );
    }

    #[test]
    fn patterns_match_word_by_word() {
        assert!(glob("--format=*", "--format=%H"));
        assert!(glob("*.rs", ".rs"));
        assert!(glob("a*b*c", "abbc"));
        assert!(!glob("a*b*c", "acb"));
        assert!(!glob("ab", "abc"));
        assert!(glob("*", ""));
        assert!(!glob("a*", "ba"));
        assert!(Policy::new(&["** x".into()], false).is_err());
        assert!(Policy::new(&["a ** x".into()], false).is_err());
        assert!(Policy::new(&["'unclosed".into()], false).is_err());
        assert!(Policy::new(&["".into()], false).is_err());
    }

    #[test]
    fn names_lose_folder_case_and_version() {
        assert_eq!(base_name("/usr/bin/Python3.12"), "python");
        assert_eq!(base_name("pip3"), "pip");
        assert_eq!(base_name("lua5.4"), "lua");
        assert_eq!(base_name("7z"), "7z");
        assert_eq!(base_name("123"), "123");
    }
}
