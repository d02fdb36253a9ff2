//! The layout snapshot: a table of every registered `#[derive(Layout)]` type, compared with the
//! committed `tests/layouts/{arch}-{pointer width}.txt` (with `--features layout-registry`), and
//! the check's own behaviour on files of its own, which needs no registry.

use arena_kit::layout::snapshot::{self, Change, Row, Snapshot, SnapshotError};
use arena_kit::{HasLayout, Layout, layouts};

/// A component as first committed: 16 bytes.
#[derive(Layout)]
#[repr(C)]
pub struct EnemyV1 {
    health: f64,
    alive: bool,
}

/// The same component after a field was added: 24 bytes.
#[derive(Layout)]
#[repr(C)]
pub struct EnemyV2 {
    health: f64,
    alive: bool,
    target: u64,
}

/// A generic struct: the derive cannot register it, `layouts!` lists two instantiations.
#[derive(Layout)]
pub struct Pair<T>(T, T);

layouts![Pair<u64>, Pair<u8>];

/// An enum with one big variant: registered by the derive like a struct; its best size is the
/// size with `Mesh` boxed.
#[derive(Layout)]
#[repr(u8)]
pub enum Command {
    /// Go somewhere.
    Move {
        /// Where, across.
        x: f32,
        /// Where, down.
        y: f32,
    },
    /// Draw a mesh of 64 bytes inline: the variant worth boxing.
    Mesh([u64; 8]),
    /// Leave.
    Quit,
}

/// A generic enum: `layouts![enum ..]` lists an instantiation.
#[derive(Layout)]
pub enum Slot<T> {
    /// Nothing in it.
    Empty,
    /// A value.
    Full(T),
}

layouts![enum Slot<u32>];

/// A file of this test's own in the temp directory, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("arena-kit-snapshot-{}", std::process::id()));
        TempFile(dir.join(name))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
#[cfg_attr(miri, ignore = "writes files; Miri isolates the file system")]
fn a_field_added_to_a_struct_fails_the_check_until_blessed() {
    let file = TempFile::new("grown.txt");
    let before = Snapshot::from_rows([
        Row::of_struct("game::Enemy", &EnemyV1::LAYOUT),
        Row::of_struct("game::Pair<u64>", &Pair::<u64>::LAYOUT),
    ]);
    before.bless(&file.0).unwrap();
    before.compare(&file.0).unwrap();

    let after = Snapshot::from_rows([
        Row::of_struct("game::Enemy", &EnemyV2::LAYOUT),
        Row::of_struct("game::Pair<u64>", &Pair::<u64>::LAYOUT),
    ]);
    let err = after.compare(&file.0).unwrap_err();
    let SnapshotError::Changed { changes, .. } = &err else {
        panic!("expected a changed table, got {err}");
    };
    assert_eq!(
        changes,
        &[Change::Resized {
            before: Row::of_struct("game::Enemy", &EnemyV1::LAYOUT),
            after: Row::of_struct("game::Enemy", &EnemyV2::LAYOUT),
        }]
    );
    let message = err.to_string();
    assert!(
        message.contains("`game::Enemy` grew by 8 bytes (16 -> 24)"),
        "{message}"
    );
    assert!(message.contains("ARENA_KIT_BLESS=1"), "{message}");

    after.bless(&file.0).unwrap();
    after.compare(&file.0).unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "writes files; Miri isolates the file system")]
fn new_gone_and_reshaped_types_are_named() {
    let file = TempFile::new("names.txt");
    Snapshot::from_rows([
        Row::new("a::Old", 8, 8, 0, 8),
        Row::new("a::Same", 16, 8, 7, 16),
    ])
    .bless(&file.0)
    .unwrap();
    let err = Snapshot::from_rows([
        Row::new("a::Same", 16, 4, 3, 12),
        Row::new("a::New one<(u8, u16)>", 4, 2, 1, 4),
    ])
    .compare(&file.0)
    .unwrap_err()
    .to_string();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[1..4],
        [
            "  `a::New one<(u8, u16)>` is new (4 bytes)",
            "  `a::Same` changed at 16 bytes: align 8 -> 4, padding 7 -> 3, best size 16 -> 12",
            "  `a::Old` is gone (was 8 bytes)",
        ],
        "{err}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "writes files; Miri isolates the file system")]
fn crlf_line_ends_hold_the_same_table() {
    let file = TempFile::new("crlf.txt");
    let table = Snapshot::from_rows([Row::of_struct("game::Enemy", &EnemyV1::LAYOUT)]);
    std::fs::create_dir_all(file.0.parent().unwrap()).unwrap();
    std::fs::write(&file.0, table.render().replace('\n', "\r\n")).unwrap();
    table.compare(&file.0).unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "writes files; Miri isolates the file system")]
fn a_missing_file_says_how_to_write_it() {
    let file = TempFile::new("missing.txt");
    let err = Snapshot::default().compare(&file.0).unwrap_err();
    assert!(matches!(err, SnapshotError::Missing { .. }));
    assert!(err.to_string().contains("ARENA_KIT_BLESS=1"), "{err}");
}

#[test]
fn the_table_puts_numbers_first_and_sorts_by_name() {
    let table = Snapshot::from_rows([
        Row::of_struct("b::Enemy", &EnemyV1::LAYOUT),
        Row::of_struct("a::Enemy", &EnemyV2::LAYOUT),
    ]);
    let text = table.render();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# Layout snapshot for "), "{text}");
    assert_eq!(lines[1], "#   size  align  padding  waste  best  type");
    assert_eq!(lines[2], "      24      8        7    29%    24  a::Enemy");
    assert_eq!(lines[3], "      16      8        7    43%    16  b::Enemy");
    assert_eq!(
        table.to_markdown().lines().nth(2),
        Some("| `a::Enemy` | 24 | 8 | 7 | 29% | 24 |")
    );
}

#[test]
fn the_default_path_names_the_target() {
    let path = snapshot::default_path();
    let expected = format!(
        "tests/layouts/{}-{}.txt",
        std::env::consts::ARCH,
        usize::BITS
    );
    assert_eq!(path.to_str(), Some(expected.as_str()));
}

/// The facade's own table: every type its tests register. On a target without a committed file
/// the check fails saying to run it with `ARENA_KIT_BLESS=1`, which writes that target's file.
#[cfg(feature = "layout-registry")]
#[test]
fn registered_layouts_match_the_committed_table() {
    snapshot::check(snapshot::default_path());
}

#[cfg(feature = "layout-registry")]
#[test]
fn the_derive_registers_concrete_structs_and_layouts_lists_generic_ones() {
    use arena_kit::HasEnumLayout;
    let table = Snapshot::registered();
    let names: Vec<&str> = table.rows().iter().map(Row::name).collect();
    let here = module_path!();
    for name in [
        "EnemyV1",
        "EnemyV2",
        "Pair<u64>",
        "Pair<u8>",
        "Command",
        "Slot<u32>",
    ] {
        let full = format!("{here}::{name}");
        assert!(names.contains(&full.as_str()), "{full} not in {names:?}");
    }
    for generic in ["Pair", "Slot"] {
        let generic = format!("{here}::{generic}");
        assert!(!names.contains(&generic.as_str()), "{names:?}");
    }
    let command = format!("{here}::Command");
    let row = table.rows().iter().find(|r| r.name() == command).unwrap();
    assert_eq!(row, &Row::of_enum(command.clone(), &Command::LAYOUT));
    assert_eq!((row.size(), row.best_size()), (72, 16), "{row:?}");

    // The registered table as committed, then as the next build sees it after `EnemyV1` gained
    // the field `EnemyV2` has: the check names it and the bytes, and passes once blessed.
    let file = TempFile::new("registered.txt");
    table.bless(&file.0).unwrap();
    let v1 = format!("{here}::EnemyV1");
    let next = Snapshot::from_rows(table.rows().iter().map(|r| {
        if r.name() == v1 {
            Row::of_struct(v1.clone(), &EnemyV2::LAYOUT)
        } else {
            r.clone()
        }
    }));
    let err = next.compare(&file.0).unwrap_err().to_string();
    assert!(
        err.contains(&format!("`{v1}` grew by 8 bytes (16 -> 24)")),
        "{err}"
    );
    assert_eq!(err.lines().count(), 3, "one change only: {err}");
    next.bless(&file.0).unwrap();
    next.compare(&file.0).unwrap();

    assert!(matches!(
        snapshot::try_check(std::env::temp_dir().join("arena-kit-no-such-dir/x.txt")),
        Err(SnapshotError::Missing { .. }) | Ok(snapshot::Checked::Blessed)
    ));
}

#[cfg(feature = "serde")]
#[test]
fn layouts_and_rows_serialize_to_json() {
    let json = serde_json::to_string(&EnemyV1::LAYOUT).unwrap();
    assert_eq!(
        json,
        r#"{"name":"EnemyV1","repr":"repr(C)","size":16,"align":8,"fields_size":9,"padding":7,"min_size":16,"savings":0,"soa_size":9,"fields":[{"name":"health","ty":"f64","offset":0,"size":8,"align":8},{"name":"alive","ty":"bool","offset":8,"size":1,"align":1}],"best_order":["health","alive"]}"#
    );
    let table = Snapshot::from_rows([Row::of_struct("game::Enemy", &EnemyV1::LAYOUT)]);
    assert_eq!(
        serde_json::to_string(&table).unwrap(),
        r#"[{"name":"game::Enemy","size":16,"align":8,"padding":7,"waste_percent":43,"best_size":16}]"#
    );
}

#[cfg(feature = "serde")]
#[test]
fn enum_layouts_serialize_to_json() {
    use arena_kit::HasEnumLayout;
    let json = serde_json::to_value(Command::LAYOUT).unwrap();
    assert_eq!(json["name"], "Command");
    assert_eq!(json["repr"], "repr(u8)");
    assert_eq!(
        (json["size"].clone(), json["align"].clone()),
        (72.into(), 8.into())
    );
    assert_eq!(
        json["tag"],
        serde_json::json!({"kind": "explicit", "bytes": 1})
    );
    assert_eq!(json["largest"], "Mesh");
    assert_eq!(json["best_size"], 16);
    assert_eq!(
        json["boxing_hint"],
        serde_json::json!({"variant": "Mesh", "size": 16})
    );
    assert_eq!(json["offsets_known"], true);
    let mv = &json["variants"][0];
    assert_eq!(mv["name"], "Move");
    assert_eq!(mv["fields"][1]["name"], "y");
    assert_eq!(
        mv["fields"][1]["offset"], 8,
        "after the 1-byte tag, aligned to 4"
    );
    assert_eq!(json["variants"][2]["fields"], serde_json::json!([]));
    let table = Snapshot::from_rows([Row::of_enum("game::Command", &Command::LAYOUT)]);
    assert_eq!(
        serde_json::to_string(&table).unwrap(),
        format!(
            r#"[{{"name":"game::Command","size":72,"align":8,"padding":{},"waste_percent":{},"best_size":16}}]"#,
            Command::LAYOUT.padding(),
            Command::LAYOUT.padding() * 100 / 72
        )
    );
}
