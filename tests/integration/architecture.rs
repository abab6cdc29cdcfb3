//! ARCHITECTURE.md's import rules, checked on the source: each top-level module of `src/`
//! may use only the modules of the floors below it, so nothing low reaches up; and no two
//! files import each other, directly or round a loop (a parent module and its own children —
//! `mod.rs` declaring and re-exporting them, a child using its parent's items — are one unit
//! and do not count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Floors, bottom first: a module may import those on lower floors (not its own floor's).
/// The same table is in ARCHITECTURE.md ("Which module may import which").
const FLOORS: &[&[&str]] = &[
    &["domain", "secret", "origin", "metrics", "telemetry"],
    &["lexical", "lock", "auth", "screening", "signing"],
    &["store", "embed", "index", "revision"],
    &["distill"],
    &["configuration"],
    &["service"],
    &["jobs", "transfer"],
    &["operations"],
    &["mcp"],
    &["http"],
    &["startup"],
];

/// Every file below `dir`.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    out.extend(
        files
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "rs")),
    );
}

/// `crate::<name>` references in `text`, comments and doc comments left out.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                refs.insert(name);
            }
            rest = after;
        }
    }
    refs
}

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

#[test]
fn each_module_imports_only_lower_floors() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        // The crate root and the binary edge may use anything.
        if matches!(first.as_str(), "lib" | "main" | "commands") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let refs = crate_refs(&text);
        imports
            .entry(first.clone())
            .or_default()
            .extend(refs.into_iter().filter(|r| *r != first));
    }
    let mut wrong = Vec::new();
    for (module, used) in &imports {
        let Some(floor) = floor_of(module) else {
            wrong.push(format!("{module}: not on any floor of FLOORS"));
            continue;
        };
        for target in used {
            match floor_of(target) {
                Some(f) if f < floor => {}
                Some(f) => wrong.push(format!(
                    "{module} (floor {floor}) imports {target} (floor {f})"
                )),
                None => wrong.push(format!("{module} imports {target}, on no floor")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against ARCHITECTURE.md's floors:\n{}",
        wrong.join("\n")
    );
}

/// The module path of a file under `src/` (`store/sqlite/mod.rs` → `["store", "sqlite"]`).
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] {
        parts.clear();
    }
    parts
}

/// The modules `text` (the file of module `me`) names through `crate::` and `super::` paths.
fn module_refs(
    me: &[String],
    text: &str,
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            // Only a path's start: not the `super` inside `crate::x::super`, nor an identifier
            // that ends in "crate".
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            let mut base: Vec<String> = if segments.first() == Some(&"crate") {
                Vec::new()
            } else {
                me[..me.len().saturating_sub(1)].to_vec()
            };
            segments.remove(0);
            while segments.first() == Some(&"super") {
                base.pop();
                segments.remove(0);
            }
            base.extend(segments.iter().map(|s| s.to_string()));
            // The longest prefix that is a module of ours.
            while !base.is_empty() && !modules.contains(&base) {
                base.pop();
            }
            if !base.is_empty() {
                found.insert(base);
            }
        }
    }
    found
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() < b.len() && b[..a.len()] == *a
}

#[test]
fn no_two_files_import_each_other_round_a_loop() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let paths: Vec<(Vec<String>, PathBuf)> = files
        .iter()
        .map(|f| {
            (
                module_path(f.strip_prefix(&src).expect("under src")),
                f.clone(),
            )
        })
        .collect();
    let modules: BTreeSet<Vec<String>> = paths.iter().map(|(m, _)| m.clone()).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (me, file) in &paths {
        if me.is_empty() || me[0] == "commands" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let targets = module_refs(me, &text, &modules)
            .into_iter()
            .filter(|t| t != me && !is_ancestor(t, me) && !is_ancestor(me, t))
            .collect();
        edges.insert(me.clone(), targets);
    }
    // Depth-first search for a back edge; report the loop it closes.
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
        loops: &mut Vec<String>,
    ) {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next) {
                Some(1) => {
                    let from = stack.iter().position(|n| n == next).unwrap_or(0);
                    let mut names: Vec<String> =
                        stack[from..].iter().map(|n| n.join("::")).collect();
                    names.push(next.join("::"));
                    loops.push(names.join(" → "));
                }
                Some(_) => {}
                None => visit(next, edges, state, stack, loops),
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
    }
    let mut state = BTreeMap::new();
    let mut loops = Vec::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            visit(node, &edges, &mut state, &mut Vec::new(), &mut loops);
        }
    }
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
    assert!(
        edges.len() > 50,
        "the scan found only {} modules: it reads the wrong place",
        edges.len()
    );
}

#[test]
fn the_loop_scan_resolves_paths_like_rustc() {
    let modules: BTreeSet<Vec<String>> = [
        vec!["store"],
        vec!["store", "sqlite"],
        vec!["store", "sqlite", "ledger"],
        vec!["jobs"],
        vec!["jobs", "archive"],
    ]
    .into_iter()
    .map(|m| m.into_iter().map(String::from).collect())
    .collect();
    let me: Vec<String> = vec!["store".into(), "sqlite".into(), "ledger".into()];
    let refs = module_refs(
        &me,
        "use super::ms;\nuse super::super::RunLedger;\nlet x = crate::jobs::archive::Sink;",
        &modules,
    );
    let names: Vec<String> = refs.iter().map(|r| r.join("::")).collect();
    assert_eq!(names, vec!["jobs::archive", "store", "store::sqlite"]);
}

#[test]
fn the_floors_are_checked_against_a_real_reference() {
    // The scanner finds paths in code and skips them in comments.
    let refs = crate_refs("use crate::store::X;\n// crate::jobs\nlet a = crate::service::f();");
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        vec!["service".to_owned(), "store".to_owned()]
    );
    assert!(floor_of("domain") < floor_of("service"));
}

/// The paths a document names in backticks: tokens with a `/` or a file extension, leaving out
/// routes (`/api`), placeholders (`<name>`), globs, Rust paths and URLs.
fn named_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let token = part.trim();
        let looks_like_file = [
            ".rs", ".md", ".toml", ".py", ".mjs", ".sh", ".yaml", ".json",
        ]
        .iter()
        .any(|ext| token.ends_with(ext));
        if token.is_empty()
            || token.starts_with('/')
            || token.starts_with("application/")
            || token.starts_with("text/")
            || token.contains(|c: char| c.is_whitespace() || "<>*…:\"'(){}=|$\\,".contains(c))
            || !(token.contains('/') || looks_like_file)
        {
            continue;
        }
        found.push(token.to_owned());
    }
    found
}

/// Whether `path` exists from the repository root, `src/` or `tests/`; a bare file name may
/// be anywhere under them.
fn exists_in_repo(root: &Path, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    if ["", "src", "tests"]
        .iter()
        .any(|base| root.join(base).join(path).exists())
    {
        return true;
    }
    if path.contains('/') {
        return false;
    }
    let mut files = Vec::new();
    for dir in ["src", "tests", "bench", "scripts", "docs", "prompts"] {
        files_under(&root.join(dir), &mut files);
    }
    files
        .iter()
        .any(|f| f.file_name().is_some_and(|n| n == path))
}

/// ARCHITECTURE.md is a map: every path it names must be there.
#[test]
fn every_path_architecture_md_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let named = named_paths(&text);
    assert!(
        named.len() > 40,
        "the scan finds the map's paths: {named:?}"
    );
    let missing: Vec<&String> = named.iter().filter(|p| !exists_in_repo(root, p)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

/// The top-level folders of the repository: a path in the docs that starts with one of them
/// names a file of the repository, not one the daemon writes or a client reads.
const REPO_FOLDERS: &[&str] = &[
    ".ci",
    "bench",
    "docs",
    "jobs",
    "migrations",
    "prompts",
    "scripts",
    "src",
    "tests",
    "vendor",
];

/// README and docs/ (not the dated history, which keeps what was true then) name only
/// repository files that exist: each path starting at a top-level folder, and each bare
/// source or document file name (`eval.rs`, `distill.md`). Paths of the user's machine
/// (`./data`, `hindsight.toml`, `.cursor/mcp.json`) are not the repository's.
#[test]
fn every_repository_path_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md") && !path.ends_with("history.md") {
            pages.push(path);
        }
    }
    let (mut checked, mut missing) = (0, Vec::new());
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for path in named_paths(&text) {
            let in_repo = REPO_FOLDERS
                .iter()
                .any(|dir| path.strip_prefix(dir).is_some_and(|r| r.starts_with('/')));
            let source_name = !path.contains('/')
                && [".rs", ".md", ".sh", ".py", ".mjs"]
                    .iter()
                    .any(|e| path.ends_with(e));
            if !(in_repo || source_name) {
                continue;
            }
            checked += 1;
            if !exists_in_repo(root, &path) {
                missing.push(format!("{}: {path}", page.display()));
            }
        }
    }
    assert!(checked > 40, "the scan finds the docs' paths: {checked}");
    assert!(
        missing.is_empty(),
        "the docs name files that do not exist: {missing:?}"
    );
}

/// Every relative link in README.md and docs/ leads to a file that exists.
#[test]
fn every_link_in_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md"), root.join("vendor/README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if entry.path().extension().is_some_and(|e| e == "md") {
            pages.push(entry.path());
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in text.split("](").skip(1) {
            let Some(target) = link.split(')').next() else {
                continue;
            };
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !page.parent().unwrap().join(target).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

#[test]
fn the_path_scan_finds_paths_and_leaves_the_rest() {
    let text = "`src/lib.rs`, `index/edge.rs`, `/api/memories`, `jobs/<name>.toml`, \
                `crate::store`, `Operations`, `mod.rs`, `docs/testing.md`";
    assert_eq!(
        named_paths(text),
        ["src/lib.rs", "index/edge.rs", "mod.rs", "docs/testing.md"]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(exists_in_repo(root, "index/edge.rs"));
    assert!(exists_in_repo(root, "mod.rs"));
    assert!(!exists_in_repo(root, "startup.rs"));
    assert!(!exists_in_repo(root, "index/nowhere.rs"));
}

/// The `mod` lines of `file` (`mod x;` and `pub mod x;`, not inline modules).
fn declared_modules(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix("pub ").unwrap_or(line);
            rest.strip_prefix("mod ")?
                .strip_suffix(';')
                .map(str::to_owned)
        })
        .collect()
}

/// Where `file`, a module of the test binary rooted at `main.rs` in `root`, must be declared:
/// the file of its parent module (`main.rs`, `x.rs` beside folder `x/`, or `x/mod.rs`), and
/// its module name.
fn declaring_files(root: &Path, file: &Path) -> (Vec<PathBuf>, String) {
    let dir = file.parent().unwrap();
    let (dir, name) = if file.file_name().is_some_and(|n| n == "mod.rs") {
        (dir.parent().unwrap(), dir.file_name().unwrap())
    } else {
        (dir, file.file_stem().unwrap())
    };
    let parents = if dir == root {
        vec![root.join("main.rs")]
    } else {
        vec![dir.with_extension("rs"), dir.join("mod.rs")]
    };
    (parents, name.to_string_lossy().into_owned())
}

/// The integration tests are one binary per member (`tests/integration/main.rs`,
/// `bench/tests/integration/main.rs`): every file under them is a module some `mod` line
/// reaches, so none is left out of the build unnoticed; and no file beside them in `tests/`
/// makes a test binary of its own (each links the whole library: 4–8 s of a CI build).
#[test]
fn every_test_file_is_compiled() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut unreached, mut loose) = (Vec::new(), Vec::new());
    let mut count = 0;
    for member in [repo.join("tests"), repo.join("bench/tests")] {
        let root = member.join("integration");
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        for file in files.iter().filter(|f| **f != root.join("main.rs")) {
            count += 1;
            let (parents, name) = declaring_files(&root, file);
            if !parents.iter().any(|p| declared_modules(p).contains(&name)) {
                unreached.push(file.strip_prefix(repo).unwrap().display().to_string());
            }
        }
        loose.extend(
            std::fs::read_dir(&member)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs")),
        );
    }
    assert!(count > 30, "the scan finds the test modules: {count}");
    assert!(
        unreached.is_empty(),
        "test files no `mod` line declares, so never compiled: {unreached:?}"
    );
    assert!(
        loose.is_empty(),
        "test files outside tests/integration/, each a binary of its own: {loose:?}"
    );
}

#[test]
fn the_module_scan_finds_a_file_s_declaration() {
    let root = Path::new("/r/tests/integration");
    assert_eq!(
        declaring_files(root, &root.join("jobs.rs")),
        (vec![root.join("main.rs")], "jobs".to_owned())
    );
    assert_eq!(
        declaring_files(root, &root.join("jobs/forget.rs")),
        (
            vec![root.join("jobs.rs"), root.join("jobs/mod.rs")],
            "forget".to_owned()
        )
    );
    assert_eq!(
        declaring_files(root, &root.join("common/mod.rs")),
        (vec![root.join("main.rs")], "common".to_owned())
    );
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration");
    let declared = declared_modules(&here.join("common/mod.rs"));
    assert!(
        declared.contains("data") && declared.contains("pg"),
        "{declared:?}"
    );
    assert!(!declared_modules(&here.join("main.rs")).contains("main"));
}
