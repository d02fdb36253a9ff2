//! A committed table of a program's layouts, checked by a test: the `layout-registry` feature
//! fills it with every non-generic `#[derive(Layout)]` struct and enum (and what
//! [`layouts!`](crate::layouts) lists), and `check` compares it with a file, so a field added
//! to any of them fails the test with the type and the bytes it grew by.
//!
//! ```no_run
//! // tests/layout_snapshot.rs, run with `--features layout-registry`:
//! #[cfg(feature = "layout-registry")]
//! #[test]
//! fn layouts_match_the_committed_table() {
//!     arena_kit::layout::snapshot::check(arena_kit::layout::snapshot::default_path());
//! }
//! ```
//!
//! The table has one row per type, sorted by name (the module path and the type as written):
//! its size, alignment, padding, the padding as a share of the size and the size the best field
//! order would give. Numbers come first, so a new long name changes only its own line:
//!
//! ```text
//! # Layout snapshot for x86_64 with 64-bit pointers (ARENA_KIT_BLESS=1 rewrites it).
//! #   size  align  padding  waste  best  type
//!       24      8       10    41%    16  game::Enemy
//!       16      8        0     0%    16  game::Pair<u64>
//! ```
//!
//! A mismatch panics with what changed, one line per type (`` `game::Enemy` grew by 8 bytes
//! (16 -> 24) ``, `` `game::Bullet` is new ``, `` `game::Old` is gone ``); run the test again
//! with `ARENA_KIT_BLESS=1` to rewrite the file, and commit it. Layouts differ between targets, so
//! keep one file per target: [`default_path`] is `tests/layouts/{arch}-{pointer width}.txt`.
//!
//! Without the registry, [`Snapshot::from_rows`] checks rows you build yourself:
//!
//! ```
//! use arena_kit::layout::snapshot::{Change, Row, Snapshot, SnapshotError};
//! use arena_kit::{HasLayout, Layout};
//!
//! #[derive(Layout)]
//! #[repr(C)]
//! struct Before { health: f64, alive: bool }
//! #[derive(Layout)]
//! #[repr(C)]
//! struct After { health: f64, alive: bool, target: u64 }
//!
//! let path = std::env::temp_dir().join(format!("arena-kit-doc-{}.txt", std::process::id()));
//! Snapshot::from_rows([Row::of_struct("Enemy", &Before::LAYOUT)]).bless(&path).unwrap();
//!
//! let grown = Snapshot::from_rows([Row::of_struct("Enemy", &After::LAYOUT)]);
//! let err = grown.compare(&path).unwrap_err();
//! assert!(err.to_string().contains("`Enemy` grew by 8 bytes (16 -> 24)"));
//! assert!(matches!(&err, SnapshotError::Changed { changes, .. } if changes.len() == 1));
//! std::fs::remove_file(&path).unwrap();
//! ```

use core::fmt;
use std::borrow::ToOwned;
use std::collections::BTreeMap;
use std::format;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

use super::StructLayout;

/// The environment variable that makes `check` and [`Snapshot::check`] rewrite the file
/// instead of comparing: set to anything but empty or `0`.
pub const BLESS_VAR: &str = "ARENA_KIT_BLESS";

/// One type's row in the table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    name: String,
    size: usize,
    align: usize,
    padding: usize,
    best_size: usize,
}

impl Row {
    /// A row from its numbers.
    pub fn new(
        name: impl Into<String>,
        size: usize,
        align: usize,
        padding: usize,
        best_size: usize,
    ) -> Self {
        Row {
            name: name.into(),
            size,
            align,
            padding,
            best_size,
        }
    }

    /// The row of a struct's layout, under `name`.
    pub fn of_struct(name: impl Into<String>, layout: &StructLayout) -> Self {
        Row::new(
            name,
            layout.size(),
            layout.align(),
            layout.padding(),
            layout.min_size(),
        )
    }

    /// The row of an enum's layout, under `name`: its best size is the size with the variant
    /// its boxing hint names boxed (its size when there is none).
    pub fn of_enum(name: impl Into<String>, layout: &super::EnumLayout) -> Self {
        Row::new(
            name,
            layout.size(),
            layout.align(),
            layout.padding(),
            layout.best_size(),
        )
    }

    /// The row of a registered type.
    #[cfg(feature = "layout-registry")]
    pub fn of_registered(r: &super::Registered) -> Self {
        Row::new(r.name(), r.size(), r.align(), r.padding(), r.best_size())
    }

    /// The type's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `size_of` the type.
    pub fn size(&self) -> usize {
        self.size
    }

    /// `align_of` the type.
    pub fn align(&self) -> usize {
        self.align
    }

    /// The bytes no field holds.
    pub fn padding(&self) -> usize {
        self.padding
    }

    /// The size the best field order would give.
    pub fn best_size(&self) -> usize {
        self.best_size
    }

    /// The padding as a whole percentage of the size, rounded down (0 for a zero-sized type;
    /// `usize::MAX` if a row's padding is so far over its size that the percentage does not fit).
    pub fn waste_percent(&self) -> usize {
        // A row holds any numbers (`Row::new`): `padding * 100` may not fit a `usize`.
        super::percent(self.padding, self.size)
    }

    /// The table line; [`parse_row`] reads it back.
    fn line(&self) -> String {
        format!(
            "{:>8} {:>6} {:>8} {:>5}% {:>5}  {}",
            self.size,
            self.align,
            self.padding,
            self.waste_percent(),
            self.best_size,
            self.name
        )
    }
}

/// Reads a line written by [`Row::line`]: five numbers, then the name (which may hold spaces).
fn parse_row(line: &str) -> Option<Row> {
    let mut rest = line.trim_start();
    let mut numbers = [0usize; 5];
    for (i, n) in numbers.iter_mut().enumerate() {
        let end = rest.find(' ')?;
        let word = &rest[..end];
        let word = if i == 3 {
            word.strip_suffix('%')?
        } else {
            word
        };
        *n = word.parse().ok()?;
        rest = rest[end..].trim_start();
    }
    let [size, align, padding, _waste, best_size] = numbers;
    (!rest.is_empty()).then(|| Row::new(rest.trim_end(), size, align, padding, best_size))
}

/// A table of layouts, sorted by name, to render or compare with a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    rows: Vec<Row>,
}

/// What [`Snapshot::try_check`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// The file held this table.
    Matched,
    /// [`BLESS_VAR`] was set, and the file now holds this table.
    Blessed,
}

impl Snapshot {
    /// A table of these rows, sorted by name.
    pub fn from_rows(rows: impl IntoIterator<Item = Row>) -> Self {
        let mut rows: Vec<Row> = rows.into_iter().collect();
        rows.sort_by(|a, b| a.name.cmp(&b.name));
        Snapshot { rows }
    }

    /// Every registered type's row (the `layout-registry` feature).
    #[cfg(feature = "layout-registry")]
    pub fn registered() -> Self {
        Snapshot::from_rows(super::registered().map(Row::of_registered))
    }

    /// The rows, sorted by name.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The file's text: a header naming this target, then one line per row.
    pub fn render(&self) -> String {
        let mut out = header();
        out.push_str("#   size  align  padding  waste  best  type\n");
        for row in &self.rows {
            out.push_str(&row.line());
            out.push('\n');
        }
        out
    }

    /// The table in Markdown, for a README or a pull request.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from(
            "| type | size | align | padding | waste | best size |\n\
             | --- | ---: | ---: | ---: | ---: | ---: |\n",
        );
        for r in &self.rows {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {}% | {} |\n",
                r.name.replace('|', "\\|"),
                r.size,
                r.align,
                r.padding,
                r.waste_percent(),
                r.best_size
            ));
        }
        out
    }

    /// Compares the table with the file at `path` (relative paths resolve against the current
    /// directory, which `cargo test` sets to the package's root). Never writes.
    pub fn compare(&self, path: impl AsRef<Path>) -> Result<(), SnapshotError> {
        let path = path.as_ref();
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(SnapshotError::Missing {
                    path: path.to_owned(),
                });
            }
            Err(error) => {
                return Err(SnapshotError::Io {
                    path: path.to_owned(),
                    error,
                });
            }
        };
        // A checkout that turned the file's line ends into CRLF still holds the same table.
        if text.replace("\r\n", "\n") == self.render() {
            return Ok(());
        }
        Err(SnapshotError::Changed {
            path: path.to_owned(),
            changes: changes(&text, self),
        })
    }

    /// Writes the table to `path`, creating its directory.
    pub fn bless(&self, path: impl AsRef<Path>) -> Result<(), SnapshotError> {
        let path = path.as_ref();
        let io = |error| SnapshotError::Io {
            path: path.to_owned(),
            error,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(path, self.render()).map_err(io)
    }

    /// [`Self::bless`] when [`BLESS_VAR`] is set, else [`Self::compare`].
    pub fn try_check(&self, path: impl AsRef<Path>) -> Result<Checked, SnapshotError> {
        if bless_requested() {
            self.bless(path).map(|()| Checked::Blessed)
        } else {
            self.compare(path).map(|()| Checked::Matched)
        }
    }

    /// [`Self::try_check`], panicking with what changed on a mismatch.
    #[track_caller]
    pub fn check(&self, path: impl AsRef<Path>) {
        if let Err(err) = self.try_check(path) {
            panic!("{err}");
        }
    }
}

/// Checks every registered type against the file at `path` ([`Snapshot::check`] of
/// [`Snapshot::registered`]): panics with what changed, or rewrites the file when
/// [`BLESS_VAR`] is set.
#[cfg(feature = "layout-registry")]
#[track_caller]
pub fn check(path: impl AsRef<Path>) {
    Snapshot::registered().check(path);
}

/// [`check`] returning what changed instead of panicking.
#[cfg(feature = "layout-registry")]
pub fn try_check(path: impl AsRef<Path>) -> Result<Checked, SnapshotError> {
    Snapshot::registered().try_check(path)
}

/// This target's file: `tests/layouts/{arch}-{pointer width}.txt` (`tests/layouts/x86_64-64.txt`),
/// relative to the package root when run by `cargo test`.
pub fn default_path() -> PathBuf {
    PathBuf::from(format!(
        "tests/layouts/{}-{}.txt",
        std::env::consts::ARCH,
        usize::BITS
    ))
}

fn bless_requested() -> bool {
    std::env::var_os(BLESS_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

fn header() -> String {
    format!(
        "# Layout snapshot for {} with {}-bit pointers ({BLESS_VAR}=1 rewrites it).\n",
        std::env::consts::ARCH,
        usize::BITS
    )
}

/// One difference between a file and a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A type the file does not list.
    New(Row),
    /// A type the file lists and the table does not.
    Gone(Row),
    /// A type whose size changed.
    Resized {
        /// The file's row.
        before: Row,
        /// The table's row.
        after: Row,
    },
    /// A type of the same size whose alignment, padding or best size changed.
    Changed {
        /// The file's row.
        before: Row,
        /// The table's row.
        after: Row,
    },
    /// A line of the file that is not a row (1-based).
    Unreadable {
        /// Its line number.
        line: usize,
    },
    /// The rows agree but the rest of the text does not: another target's header, or a file
    /// edited by hand.
    Header {
        /// The file's first line.
        found: String,
        /// The first line this build writes.
        expected: String,
    },
}

/// The differences between the file's `text` and `table`, by name.
fn changes(text: &str, table: &Snapshot) -> Vec<Change> {
    let mut out = Vec::new();
    let mut before = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_row(line) {
            Some(row) => {
                before.insert(row.name.clone(), row);
            }
            None => out.push(Change::Unreadable { line: i + 1 }),
        }
    }
    for after in &table.rows {
        match before.remove(&after.name) {
            None => out.push(Change::New(after.clone())),
            Some(b) if b.size != after.size => out.push(Change::Resized {
                before: b,
                after: after.clone(),
            }),
            Some(b) if b != *after => out.push(Change::Changed {
                before: b,
                after: after.clone(),
            }),
            Some(_) => {}
        }
    }
    out.extend(before.into_values().map(Change::Gone));
    if out.is_empty() {
        out.push(Change::Header {
            found: text.lines().next().unwrap_or("").to_string(),
            expected: header().trim_end().to_string(),
        });
    }
    out
}

fn bytes(n: usize) -> String {
    format!("{n} byte{}", if n == 1 { "" } else { "s" })
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::New(r) => write!(f, "`{}` is new ({})", r.name, bytes(r.size)),
            Change::Gone(r) => write!(f, "`{}` is gone (was {})", r.name, bytes(r.size)),
            Change::Resized { before, after } => {
                let (how, n) = if after.size > before.size {
                    ("grew", after.size - before.size)
                } else {
                    ("shrank", before.size - after.size)
                };
                write!(
                    f,
                    "`{}` {how} by {} ({} -> {})",
                    after.name,
                    bytes(n),
                    before.size,
                    after.size
                )
            }
            Change::Changed { before, after } => {
                write!(f, "`{}` changed at {}:", after.name, bytes(after.size))?;
                let mut sep = " ";
                for (what, b, a) in [
                    ("align", before.align, after.align),
                    ("padding", before.padding, after.padding),
                    ("best size", before.best_size, after.best_size),
                ] {
                    if a != b {
                        write!(f, "{sep}{what} {b} -> {a}")?;
                        sep = ", ";
                    }
                }
                Ok(())
            }
            Change::Unreadable { line } => write!(f, "line {line} is not a row of the table"),
            Change::Header { found, expected } => write!(
                f,
                "the rows agree but the text does not: the file starts `{found}`, this build writes `{expected}`"
            ),
        }
    }
}

/// Why a snapshot check failed.
#[derive(Debug)]
pub enum SnapshotError {
    /// No file at the path yet.
    Missing {
        /// The file checked.
        path: PathBuf,
    },
    /// The file could not be read or written.
    Io {
        /// The file checked.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The file holds another table.
    Changed {
        /// The file checked.
        path: PathBuf,
        /// What differs, new and changed types by name, then the gone ones.
        changes: Vec<Change>,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Missing { path } => write!(
                f,
                "layout snapshot {} does not exist: run the test with {BLESS_VAR}=1 to write it, then commit it",
                path.display()
            ),
            SnapshotError::Io { path, error } => {
                write!(f, "layout snapshot {}: {error}", path.display())
            }
            SnapshotError::Changed { path, changes } => {
                writeln!(f, "layout snapshot {} is out of date:", path.display())?;
                for c in changes {
                    writeln!(f, "  {c}")?;
                }
                write!(
                    f,
                    "run with {BLESS_VAR}=1 to accept the new layouts (and commit the file)"
                )
            }
        }
    }
}

impl std::error::Error for SnapshotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SnapshotError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}
