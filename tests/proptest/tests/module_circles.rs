//! No import circles between the Rust modules of the workspace (issue 27 §5).
//!
//! Every crate root of every workspace member (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`,
//! `tests/*.rs`) is read with its module tree. A node is a file module (`a.rs` or `a/mod.rs`;
//! inline modules such as `mod tests { … }` belong to their file). An edge goes from a file to
//! the module that defines what one of its paths names: `use crate::…`, `use super::…`,
//! `crate::x::f()` in code, and paths through a local module or import — followed through
//! re-exports (`pub use`), imports and globs to where the item is defined, so `crate::Thing`
//! re-exported by `lib.rs` counts as an edge to the module defining `Thing`. A module using
//! its ancestors' items is not a circle (the parent holds what its children share); edges
//! between siblings, from a parent into its children and across the tree are, so a circle
//! through a parent (`a/mod.rs` → `a/b.rs` → `c.rs` → `a/mod.rs`) is still one. Comments,
//! strings and doc links are not imports.
//!
//! A small tokenizer rather than `syn`: the check needs paths and `mod`/`use` items only, and
//! stays free of any dependency.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[test]
fn no_module_of_the_workspace_is_in_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = workspace_members(&manifest);
    assert!(
        members.len() >= 6,
        "workspace members not found in Cargo.toml: {members:?}"
    );
    let read = |path: &Path| std::fs::read_to_string(root.join(path)).ok();
    let mut report = String::new();
    let mut files = 0;
    for member in &members {
        for crate_root in crate_roots(&root, member) {
            let graph = Graph::read(&crate_root, &read);
            files += graph.nodes().len();
            report.push_str(&graph.circles());
        }
    }
    // Guards against a check that reads nothing (a moved workspace, a broken walk).
    assert!(files > 100, "only {files} Rust files read");
    assert!(
        report.is_empty(),
        "import circles between modules:\n{report}"
    );
}

#[test]
fn a_circle_between_siblings_is_found_and_named_with_its_lines() {
    let report = check(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
        (
            "src/b.rs",
            "pub struct B;\nfn f() -> crate::a::A { todo!() }\n",
        ),
    ]);
    assert_eq!(
        report,
        "src/a.rs → src/b.rs → src/a.rs\n  src/a.rs:1 uses crate::b::B\n  src/b.rs:2 uses crate::a::A\n"
    );
    // Nested siblings naming each other through their parent, in an inline module and a macro.
    let nested = check(&[
        ("src/lib.rs", "pub mod m;\n"),
        ("src/m/mod.rs", "mod a;\nmod b;\n"),
        ("src/m/a.rs", "mod inner {\n    use super::super::b;\n}\n"),
        ("src/m/b.rs", "fn f() { println!(\"{}\", super::a::X) }\n"),
    ]);
    assert_eq!(
        nested,
        "src/m/a.rs → src/m/b.rs → src/m/a.rs\n  src/m/a.rs:2 uses super::super::b\n  src/m/b.rs:1 uses super::a::X\n"
    );
}

#[test]
fn a_circle_through_a_re_export_or_a_glob_is_found() {
    let through_lib = check(&[
        ("src/lib.rs", "mod a;\nmod b;\npub use b::B;\n"),
        ("src/a.rs", "pub fn a() -> crate::B { crate::B }\n"),
        ("src/b.rs", "use crate::a;\npub struct B;\n"),
    ]);
    assert!(
        through_lib.starts_with("src/a.rs → src/b.rs → src/a.rs\n"),
        "{through_lib}"
    );
    let through_glob = check(&[
        ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
        ("src/a.rs", "pub use crate::b::*;\npub fn x() {}\n"),
        ("src/b.rs", "pub(crate) const B: u8 = 1;\n"),
        ("src/c.rs", "use crate::a::B;\n"),
    ]);
    assert_eq!(through_glob, "", "a → b and c → b are no circle");
    let glob_circle = check(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "pub use crate::b::*;\npub fn x() {}\n"),
        (
            "src/b.rs",
            "pub const B: u8 = 1;\nfn f() { crate::a::x() }\n",
        ),
    ]);
    assert!(
        glob_circle.starts_with("src/a.rs → src/b.rs → src/a.rs\n"),
        "{glob_circle}"
    );
}

#[test]
fn a_circle_through_a_parent_and_a_nested_file_is_found() {
    let report = check(&[
        ("src/lib.rs", "mod a;\nmod c;\n"),
        (
            "src/a/mod.rs",
            "mod b;\npub struct A;\npub fn go() { b::run() }\n",
        ),
        ("src/a/b.rs", "pub fn run() { crate::c::C; }\n"),
        ("src/c.rs", "pub struct C;\nfn f(_: crate::a::A) {}\n"),
    ]);
    assert!(
        report.starts_with("src/a/mod.rs → src/a/b.rs → src/c.rs → src/a/mod.rs\n"),
        "{report}"
    );
}

#[test]
fn children_using_their_parents_and_what_is_not_code_make_no_circle() {
    let report = check(&[
        ("src/lib.rs", "mod a;\npub use a::A;\npub struct Root;\n"),
        (
            "src/a/mod.rs",
            "mod b;\npub use b::B;\npub struct A(B);\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n    use super::b::B;\n}\n",
        ),
        (
            "src/a/b.rs",
            "use super::A;\nuse crate::Root;\n/// Not a link that counts: [`crate::a::A`].\n\
             pub struct B;\nconst S: &str = \"crate::a::A\";\nconst C: char = '\"';\n\
             fn f<'a>(_: &'a str) -> super::A { todo!() }\n",
        ),
    ]);
    assert_eq!(report, "");
}

/// The circles of a crate made of `files`, as the workspace test reports them.
fn check(files: &[(&str, &str)]) -> String {
    let files: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|(p, s)| (PathBuf::from(p), s.to_string()))
        .collect();
    Graph::read(Path::new("src/lib.rs"), &|p: &Path| files.get(p).cloned()).circles()
}

/// The `members = [...]` of the workspace's Cargo.toml.
fn workspace_members(manifest: &str) -> Vec<String> {
    let start = manifest.find("members").expect("no workspace members");
    let list = &manifest[start..];
    let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The crate roots of a package, relative to the workspace root.
fn crate_roots(root: &Path, member: &str) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for file in ["src/lib.rs", "src/main.rs"] {
        let path = Path::new(member).join(file);
        if root.join(&path).is_file() {
            roots.push(path);
        }
    }
    for dir in ["src/bin", "tests"] {
        let Ok(entries) = std::fs::read_dir(root.join(member).join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .map(|p| Path::new(member).join(dir).join(p.file_name().unwrap()))
            .collect();
        files.sort();
        roots.extend(files);
    }
    roots
}

// ---- tokens ----

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// The tokens of a Rust file with their lines, without comments, strings, chars and numbers.
fn tokenize(src: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            line += chars[i..end].iter().filter(|&&c| c == '\n').count();
            i = end;
        } else if c == '"' || (c == 'b' || c == 'c') && at(i + 1) == '"' {
            i += if c == '"' { 1 } else { 2 };
            while i < chars.len() && chars[i] != '"' {
                line += usize::from(chars[i] == '\n');
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' || c == 'b' && at(i + 1) == '\'' {
            // A char literal ('x', '\n', b'x') or a lifetime ('a): a lifetime has no closing
            // quote right after its first character.
            let q = if c == '\'' { i } else { i + 1 };
            if at(q + 1) == '\\' {
                // Past the backslash and the character it escapes (which may be a quote).
                i = q + 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(q + 2) == '\'' {
                i = q + 3;
            } else {
                i = q + 1;
                while is_ident_char(at(i)) {
                    i += 1;
                }
            }
        } else if c == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
            let start = i + 2;
            i = start;
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), line));
        } else if is_ident_start(c) {
            let start = i;
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), line));
        } else if c.is_ascii_digit() {
            while is_ident_char(at(i)) || at(i) == '.' && at(i + 1).is_ascii_digit() {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push((Tok::Path, line));
            i += 2;
        } else if c == '$' && at(i + 1) == 'c' {
            // `$crate` in a macro is the crate itself.
            i += 1;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i` ends, if one does.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars.get(j) == Some(&'b') || chars.get(j) == Some(&'c') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(j)
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

// ---- modules ----

#[derive(Debug, Default)]
struct Module {
    /// The file it is in; for an inline module, its file's.
    file: PathBuf,
    /// The file module it belongs to (itself for a file module).
    node: usize,
    parent: Option<usize>,
    /// Where the files of its `mod x;` children are.
    dir: PathBuf,
    children: BTreeMap<String, usize>,
    /// Names brought in by `use` at module level: name → path as written.
    imports: BTreeMap<String, Vec<String>>,
    globs: Vec<Vec<String>>,
    /// Names defined at module level (fn, struct, enum, trait, type, const, static, macro).
    items: BTreeSet<String>,
}

/// One path in a module, where it is written.
struct Reference {
    module: usize,
    path: Vec<String>,
    line: usize,
}

/// What a name in a module stands for.
#[derive(Clone, Copy)]
enum Target {
    Module(usize),
    /// An item defined in (or only known to be reachable from) this module.
    Item(usize),
}

struct Graph {
    modules: Vec<Module>,
    references: Vec<Reference>,
    /// What `lookup` found: (module, name) → target.
    known: RefCell<HashMap<(usize, String), Option<Target>>>,
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

impl Graph {
    /// Reads a crate from its root file, following `mod x;` to `x.rs` or `x/mod.rs`.
    fn read(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Graph {
        let mut graph = Graph {
            modules: Vec::new(),
            references: Vec::new(),
            known: RefCell::default(),
        };
        let dir = root.parent().unwrap().to_path_buf();
        graph.modules.push(Module {
            file: root.to_path_buf(),
            dir,
            ..Module::default()
        });
        let src = read(root).unwrap_or_else(|| panic!("cannot read {}", root.display()));
        graph.parse(0, &src, read);
        graph
    }

    fn new_module(&mut self, parent: usize, name: &str, file: Option<PathBuf>) -> usize {
        let index = self.modules.len();
        let p = &self.modules[parent];
        let module = match file {
            Some(file) => {
                let dir = if file.ends_with("mod.rs") {
                    file.parent().unwrap().to_path_buf()
                } else {
                    file.with_extension("")
                };
                Module {
                    file,
                    node: index,
                    dir,
                    ..Module::default()
                }
            }
            None => Module {
                file: p.file.clone(),
                node: p.node,
                dir: p.dir.join(name),
                ..Module::default()
            },
        };
        self.modules.push(Module {
            parent: Some(parent),
            ..module
        });
        self.modules[parent]
            .children
            .insert(name.to_string(), index);
        index
    }

    /// Reads the items of one file, the file module `module`.
    fn parse(&mut self, module: usize, src: &str, read: &dyn Fn(&Path) -> Option<String>) {
        let toks = tokenize(src);
        let ident = |i: usize| match toks.get(i) {
            Some((Tok::Ident(s), _)) => Some(s.as_str()),
            _ => None,
        };
        let is = |i: usize, t: Tok| toks.get(i).map(|(x, _)| x) == Some(&t);
        // The inline modules open at this point, with the brace depth of their bodies.
        let mut open: Vec<(usize, i64)> = vec![(module, 0)];
        let mut depth: i64 = 0;
        let mut i = 0;
        while i < toks.len() {
            let (current, body) = *open.last().unwrap();
            let at_module_level = depth == body;
            let line = toks[i].1;
            match &toks[i].0 {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth < body {
                        open.pop();
                    }
                }
                Tok::Ident(kw) if kw == "mod" && ident(i + 1).is_some() => {
                    let name = ident(i + 1).unwrap().to_string();
                    if is(i + 2, Tok::Punct(';')) {
                        let dir = self.modules[current].dir.clone();
                        let (flat, nested) = (
                            dir.join(format!("{name}.rs")),
                            dir.join(&name).join("mod.rs"),
                        );
                        let (file, text) = match read(&flat) {
                            Some(text) => (flat, text),
                            None => {
                                let text = read(&nested).unwrap_or_else(|| {
                                    panic!(
                                        "module {name}: neither {} nor {}",
                                        flat.display(),
                                        nested.display()
                                    )
                                });
                                (nested, text)
                            }
                        };
                        let child = self.new_module(current, &name, Some(file));
                        self.parse(child, &text, read);
                        i += 3;
                        continue;
                    }
                    if is(i + 2, Tok::Punct('{')) {
                        let child = self.new_module(current, &name, None);
                        depth += 1;
                        open.push((child, depth));
                        i += 3;
                        continue;
                    }
                }
                Tok::Ident(kw) if kw == "use" => {
                    let mut leaves = Vec::new();
                    i = use_tree(&toks, i + 1, Vec::new(), &mut leaves);
                    for (path, leaf) in leaves {
                        if at_module_level {
                            let m = &mut self.modules[current];
                            match leaf {
                                Leaf::Glob => m.globs.push(path.clone()),
                                Leaf::Name(name) => {
                                    let mut target = path.clone();
                                    if target.last().is_some_and(|s| s == "self") {
                                        target.pop();
                                    }
                                    if name != "_" {
                                        m.imports.insert(name, target);
                                    }
                                }
                            }
                        }
                        self.references.push(Reference {
                            module: current,
                            path,
                            line,
                        });
                    }
                    continue;
                }
                Tok::Ident(kw) if at_module_level && ITEM_KEYWORDS.contains(&kw.as_str()) => {
                    if let Some(name) = ident(i + 1).filter(|n| !ITEM_KEYWORDS.contains(n)) {
                        self.modules[current].items.insert(name.to_string());
                    }
                }
                Tok::Ident(kw)
                    if at_module_level && kw == "macro_rules" && is(i + 1, Tok::Punct('!')) =>
                {
                    if let Some(name) = ident(i + 2) {
                        self.modules[current].items.insert(name.to_string());
                    }
                }
                Tok::Ident(_)
                    if is(i + 1, Tok::Path)
                        && !(i > 0 && (is(i - 1, Tok::Path) || is(i - 1, Tok::Punct('.')))) =>
                {
                    let mut path = Vec::new();
                    let mut j = i;
                    // Segments up to the first that is not a name (`Vec::<u8>::new` stops at `<`).
                    while let Some(segment) = ident(j) {
                        path.push(segment.to_string());
                        j += 1;
                        if !is(j, Tok::Path) {
                            break;
                        }
                        j += 1;
                    }
                    self.references.push(Reference {
                        module: current,
                        path,
                        line,
                    });
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// What `name` stands for in module `m`, following imports and globs. Remembered: a file
    /// asks about the same names many times, and a name being looked up is unknown to the
    /// lookups it starts (globs and imports may loop).
    fn lookup(&self, m: usize, name: &str) -> Option<Target> {
        let key = (m, name.to_string());
        if let Some(known) = self.known.borrow().get(&key) {
            return *known;
        }
        self.known.borrow_mut().insert(key.clone(), None);
        let found = self.find(m, name);
        self.known.borrow_mut().insert(key, found);
        found
    }

    fn find(&self, m: usize, name: &str) -> Option<Target> {
        let module = &self.modules[m];
        if let Some(&child) = module.children.get(name) {
            return Some(Target::Module(child));
        }
        if let Some(path) = module.imports.get(name) {
            return self.resolve(m, path);
        }
        if module.items.contains(name) {
            return Some(Target::Item(m));
        }
        module
            .globs
            .iter()
            .find_map(|glob| match self.resolve(m, glob) {
                Some(Target::Module(g)) => self.lookup(g, name),
                _ => None,
            })
    }

    /// What a path written in module `m` names; `None` outside this crate.
    fn resolve(&self, m: usize, path: &[String]) -> Option<Target> {
        let (first, rest) = path.split_first()?;
        let mut target = match first.as_str() {
            "crate" => Target::Module(0),
            "self" => Target::Module(m),
            "super" => Target::Module(self.modules[m].parent?),
            name => self.lookup(m, name)?,
        };
        for segment in rest {
            let Target::Module(at) = target else { break };
            target = match segment.as_str() {
                "super" => Target::Module(self.modules[at].parent?),
                "self" => target,
                name => match self.lookup(at, name) {
                    Some(found) => found,
                    // An enum's variant, an associated item or an item of a macro: it is
                    // defined here as far as this check can tell.
                    None => Target::Item(at),
                },
            };
        }
        Some(target)
    }

    /// The file modules, by index.
    fn nodes(&self) -> Vec<usize> {
        (0..self.modules.len())
            .filter(|&m| self.modules[m].node == m)
            .collect()
    }

    fn is_ancestor(&self, ancestor: usize, mut node: usize) -> bool {
        while let Some(parent) = self.modules[node].parent {
            if parent == ancestor {
                return true;
            }
            node = parent;
        }
        false
    }

    /// The edges between file modules, each with the first reference that makes it.
    fn edges(&self) -> BTreeMap<(usize, usize), &Reference> {
        let mut edges = BTreeMap::new();
        for reference in &self.references {
            let Some(target) = self.resolve(reference.module, &reference.path) else {
                continue;
            };
            let (Target::Module(to) | Target::Item(to)) = target;
            let (from, to) = (self.modules[reference.module].node, self.modules[to].node);
            if from != to && !self.is_ancestor(to, from) {
                edges.entry((from, to)).or_insert(reference);
            }
        }
        edges
    }

    /// Each circle (one per strongly connected set of files), as `a → b → a` and the lines that
    /// make its edges; empty when there is none.
    fn circles(&self) -> String {
        let edges = self.edges();
        let mut next: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &(from, to) in edges.keys() {
            next.entry(from).or_default().push(to);
        }
        let reaches = |from: usize| {
            let mut seen = BTreeSet::from([from]);
            let mut queue = VecDeque::from([from]);
            while let Some(n) = queue.pop_front() {
                for &m in next.get(&n).into_iter().flatten() {
                    if seen.insert(m) {
                        queue.push_back(m);
                    }
                }
            }
            seen
        };
        let file = |m: usize| self.modules[m].file.display().to_string();
        let mut report = String::new();
        let mut reported = BTreeSet::new();
        let nodes = self.nodes();
        for &start in &nodes {
            if reported.contains(&start) {
                continue;
            }
            // Its set: the files it reaches that reach it back.
            let set: BTreeSet<usize> = reaches(start)
                .into_iter()
                .filter(|&n| reaches(n).contains(&start))
                .collect();
            if set.len() < 2 {
                continue;
            }
            reported.extend(set.iter().copied());
            // The shortest circle through `start` within the set.
            let mut came_from = BTreeMap::new();
            let mut queue = VecDeque::from([start]);
            'search: while let Some(n) = queue.pop_front() {
                for &m in next.get(&n).into_iter().flatten() {
                    if !set.contains(&m) || came_from.contains_key(&m) {
                        continue;
                    }
                    came_from.insert(m, n);
                    if m == start {
                        break 'search;
                    }
                    queue.push_back(m);
                }
            }
            let mut circle = vec![start];
            let mut n = came_from[&start];
            while n != start {
                circle.push(n);
                n = came_from[&n];
            }
            circle.push(start);
            circle.reverse();
            let names: Vec<String> = circle.iter().map(|&m| file(m)).collect();
            writeln!(report, "{}", names.join(" → ")).unwrap();
            for pair in circle.windows(2) {
                let reference = edges[&(pair[0], pair[1])];
                let written = reference.path.join("::");
                writeln!(
                    report,
                    "  {}:{} uses {written}",
                    file(pair[0]),
                    reference.line
                )
                .unwrap();
            }
            if set.len() > circle.len() - 1 {
                let others: Vec<String> = set
                    .iter()
                    .filter(|m| !circle.contains(m))
                    .map(|&m| file(m))
                    .collect();
                writeln!(report, "  (in the same circle: {})", others.join(", ")).unwrap();
            }
        }
        report
    }
}

enum Leaf {
    /// `use a::b;` or `use a::b as c;`: the name it brings in.
    Name(String),
    /// `use a::*;`
    Glob,
}

/// Reads a use tree from `i` (after `use` or inside braces) onto `prefix`, pushing its leaves;
/// returns the index after it (after the `;` at the top level).
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, Leaf)>,
) -> usize {
    let top = prefix.is_empty();
    if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
        // `use ::extern_crate::…`: outside this crate.
        prefix.push(String::new());
        i += 1;
    }
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Ident(segment)) => {
                prefix.push(segment.clone());
                i += 1;
                if toks.get(i).map(|t| &t.0) == Some(&Tok::Path) {
                    i += 1;
                    continue;
                }
                let mut name = prefix.last().unwrap().clone();
                if name == "self" && prefix.len() > 1 {
                    name = prefix[prefix.len() - 2].clone();
                }
                if let (Some(Tok::Ident(kw)), Some(Tok::Ident(alias))) =
                    (toks.get(i).map(|t| &t.0), toks.get(i + 1).map(|t| &t.0))
                {
                    if kw == "as" {
                        name = alias.clone();
                        i += 2;
                    }
                }
                leaves.push((prefix, Leaf::Name(name)));
                break;
            }
            Some(Tok::Punct('*')) => {
                leaves.push((prefix, Leaf::Glob));
                i += 1;
                break;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                while toks.get(i).is_some_and(|t| t.0 != Tok::Punct('}')) {
                    i = use_tree(toks, i, prefix.clone(), leaves);
                    if toks.get(i).map(|t| &t.0) == Some(&Tok::Punct(',')) {
                        i += 1;
                    }
                }
                i += 1;
                break;
            }
            _ => break,
        }
    }
    if top {
        while toks.get(i).is_some_and(|t| t.0 != Tok::Punct(';')) {
            i += 1;
        }
        i += 1;
    }
    i
}
