//! The doc examples are the ones users paste: the facade re-exports this crate's items with their
//! docs, so every example here is shown on `arena-kit`'s pages too. They run as this crate's
//! doctests through a dev-dependency on the facade, which is only worth something if they name
//! the facade (`arena_kit::Arena`), never this crate, and use the derives instead of hand-written
//! impls. These tests read the sources and fail on an example that does not.

use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, and every `.md` file (pages included with `include_str!`).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(path);
        }
    }
}

/// The files whose text ends up on the facade's rendered pages: both crates' sources, the derive's,
/// the README (the facade's crate docs) and the guide pages.
fn doc_files() -> Vec<PathBuf> {
    let core = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = core.parent().unwrap();
    let mut files = Vec::new();
    for dir in [
        core.join("src"),
        root.join("src"),
        root.join("arena-derive/src"),
    ] {
        sources(&dir, &mut files);
    }
    let guide = root.join("docs/guide");
    if guide.is_dir() {
        sources(&guide, &mut files);
    }
    files.push(root.join("README.md"));
    files
}

/// What a line of documentation is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Prose,
    /// A fence of another language (`text`, `sh`, `cpp`, ...).
    OtherCode,
    /// A Rust example rustdoc compiles and runs (or at least compiles: `no_run`).
    Example,
    /// A Rust example that must fail to compile (`compile_fail`).
    CompileFail,
}

/// One line of documentation: its place, what it is part of, and its text.
struct DocLine {
    place: String,
    kind: Kind,
    text: String,
}

impl DocLine {
    fn in_example(&self) -> bool {
        matches!(self.kind, Kind::Example | Kind::CompileFail)
    }
}

/// The documentation lines of `path`: `///` and `//!` comments of a Rust file, every line of a
/// Markdown file. A fence opens a Rust example unless its info string names another language
/// (`text`, `sh`, ...).
fn doc_lines(path: &Path) -> Vec<DocLine> {
    let source = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let markdown = path.extension().is_some_and(|e| e == "md");
    parse_doc_lines(&path.display().to_string(), &source, markdown)
}

/// [`doc_lines`] of `source`, read from `name`.
fn parse_doc_lines(name: &str, source: &str, markdown: bool) -> Vec<DocLine> {
    let mut lines = Vec::new();
    let mut fence: Option<Kind> = None; // what the open fence holds
    for (number, line) in source.lines().enumerate() {
        let trimmed = line.trim_start();
        let text = if markdown {
            line
        } else if let Some(rest) = trimmed.strip_prefix("///").or(trimmed.strip_prefix("//!")) {
            rest.strip_prefix(' ').unwrap_or(rest)
        } else {
            continue;
        };
        if let Some(info) = text.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => {
                    let mut words = info.split(',').map(str::trim);
                    let rust = words.clone().all(|w| {
                        matches!(
                            w,
                            "" | "rust" | "compile_fail" | "no_run" | "should_panic" | "ignore"
                        ) || w.starts_with("edition")
                            || w.starts_with('E')
                    });
                    Some(if !rust {
                        Kind::OtherCode
                    } else if words.any(|w| w == "compile_fail") {
                        Kind::CompileFail
                    } else {
                        Kind::Example
                    })
                }
            };
            continue;
        }
        lines.push(DocLine {
            place: format!("{name}:{}", number + 1),
            kind: fence.unwrap_or(Kind::Prose),
            text: text.to_owned(),
        });
    }
    assert!(fence.is_none(), "{name}: a code fence is never closed");
    lines
}

/// Every documentation line `bad` picks, as `place: text`, for an assertion message.
fn lines_where(bad: impl Fn(&DocLine) -> bool) -> String {
    let mut found = String::new();
    for file in doc_files() {
        for line in doc_lines(&file).iter().filter(|l| bad(l)) {
            found += &format!("\n{}: {}", line.place, line.text.trim());
        }
    }
    found
}

#[test]
#[cfg_attr(miri, ignore = "reads the source files; Miri isolates the file system")]
fn doc_examples_and_prose_name_the_facade_not_arena_kit_core() {
    // A path a user would type: `arena_kit_core::..` or the crate's old name. The package name in
    // prose (`arena-kit-core`) and `#[soa(crate = arena_kit_core)]` are fine.
    let wrong =
        lines_where(|l| l.text.contains("arena_kit_core::") || l.text.contains("arena_core"));
    assert!(
        wrong.is_empty(),
        "documentation names arena-kit-core's paths; users see it on arena-kit's pages, where \
         `arena_kit::..` is the path that works:{wrong}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "reads the source files; Miri isolates the file system")]
fn doc_examples_derive_soa_instead_of_implementing_it() {
    let wrong = lines_where(|l| {
        let code = l.text.trim_start_matches(['#', ' ']);
        l.in_example() && code.starts_with("impl") && code.contains("Soa for ")
    });
    assert!(
        wrong.is_empty(),
        "doc examples implement `Soa` by hand; users write `#[derive(Soa)]`:{wrong}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "reads the source files; Miri isolates the file system")]
fn doc_examples_hide_no_lines() {
    // Rustdoc does not show a line starting with `# `, so a reader copying the example does not
    // get it. Without hidden lines, the doctest is exactly what a reader pastes. (A
    // `compile_fail` example may hide its setup: it is not there to be pasted.)
    let wrong = lines_where(|l| {
        let code = l.text.trim_start();
        l.kind == Kind::Example && (code == "#" || code.starts_with("# "))
    });
    assert!(
        wrong.is_empty(),
        "doc examples hide lines that a reader copying them from the rendered page does not \
         get; show them (an assertion is better than `let _ = ..`):{wrong}"
    );
}

#[test]
fn doc_lines_find_examples_and_skip_other_languages() {
    let source = [
        "//! Prose.",
        "//! ```",
        "//! use arena_kit::Arena;",
        "//! ```",
        "/// ```text",
        "/// output",
        "/// ```",
        "/// ```compile_fail,E0502",
        "/// # use arena_kit::Arena;",
        "/// ```",
        "fn not_documentation() {}",
    ]
    .join("\n");
    let lines = parse_doc_lines("sample.rs", &source, false);
    let seen: Vec<(Kind, &str)> = lines.iter().map(|l| (l.kind, l.text.as_str())).collect();
    assert_eq!(
        seen,
        [
            (Kind::Prose, "Prose."),
            (Kind::Example, "use arena_kit::Arena;"),
            (Kind::OtherCode, "output"),
            (Kind::CompileFail, "# use arena_kit::Arena;"),
        ]
    );
    assert_eq!(lines[1].place, "sample.rs:3");
}
