//! The layout snapshot's rows and file comparison against numbers and text safe code chooses:
//! `Row::new` takes any numbers, and `Snapshot::compare` reads a file anyone may have edited.
//! Neither may panic on them (an overflow in debug builds) or print a wrapped number (release).

use arena_kit_core::layout::snapshot::{Row, Snapshot};

/// The waste percentage of a row whose padding times 100 does not fit a `usize`: exact when the
/// padding is within the size (as for every real type), saturated otherwise; never an overflow.
#[test]
fn a_row_with_a_huge_padding_reports_its_waste_without_overflowing() {
    let rows = [
        (usize::MAX, usize::MAX - 1, 99),
        (usize::MAX, usize::MAX / 2, 49),
        (usize::MAX / 2, usize::MAX / 4, 49),
        (usize::MAX, usize::MAX, 100),
        (1, usize::MAX / 50, usize::MAX),
        (0, usize::MAX, 0),
        (64, 16, 25),
    ];
    for (size, padding, percent) in rows {
        let row = Row::new("Huge", size, 1, padding, 1);
        assert_eq!(
            row.waste_percent(),
            percent,
            "size {size}, padding {padding}"
        );
    }
    let table = Snapshot::from_rows(
        rows.map(|(size, padding, _)| Row::new(format!("T{size}/{padding}"), size, 1, padding, 1)),
    );
    assert_eq!(table.render().lines().count(), rows.len() + 2);
    assert!(table.to_markdown().contains(&format!("{}%", usize::MAX)));
}

/// A snapshot file full of lines that are not rows (huge numbers, missing fields, stray
/// characters, non-ASCII text) is reported line by line, never a panic.
#[cfg(not(miri))] // Miri's isolation forbids the file.
#[test]
fn a_hostile_snapshot_file_is_reported_not_panicked_on() {
    use arena_kit_core::layout::snapshot::SnapshotError;

    let lines = [
        "# header",
        "99999999999999999999999999 1 1 1% 1  Overflowing",
        "1 1 1 1 1  NoPercent",
        "1 1 1 1%",
        "1 1 1 1% 1",
        "       ",
        "%%%% % % % %",
        "1 1 1 1% 1  ünïcödé ✓ name with spaces",
        "18446744073709551615 18446744073709551615 18446744073709551615 100% 18446744073709551615  Max",
        "\u{0}\u{1}\u{7f} 1 1 1% 1",
        "-1 1 1 1% 1  Negative",
    ];
    let path = std::env::temp_dir().join(format!(
        "arena-kit-layout-attacks-{}.txt",
        std::process::id()
    ));
    std::fs::write(&path, lines.join("\n")).unwrap();
    let table = Snapshot::from_rows([Row::new("Max", 8, 8, 0, 8)]);
    let result = table.compare(&path);
    std::fs::remove_file(&path).ok();
    match result {
        Err(SnapshotError::Changed { changes, .. }) => {
            let text: Vec<String> = changes.iter().map(ToString::to_string).collect();
            assert!(text.iter().any(|t| t.contains("line 2")), "{text:?}");
            assert!(text.iter().any(|t| t.contains("`Max`")), "{text:?}");
            let error = table.compare(std::env::temp_dir().join("arena-kit-no-such-file"));
            assert!(matches!(error, Err(SnapshotError::Missing { .. })));
        }
        other => panic!("{other:?}"),
    }
}

/// `StructLayout::new` and `FieldLayout::new` take any numbers (a hand-written `HasLayout`, or
/// one listed with `layouts!`, goes into the registry and the snapshot like a derived one). A
/// layout whose fields outgrow its size, with an alignment of 0, or with a field ending past
/// `usize::MAX`, is nonsense, but reading its numbers, its row and its report must not panic
/// on an arithmetic overflow (debug builds) or print wrapped numbers (release builds).
#[test]
fn a_hand_made_layout_with_inconsistent_numbers_reports_without_overflowing() {
    use arena_kit_core::layout::{FieldLayout, Repr, StructLayout};
    use std::panic::{AssertUnwindSafe, catch_unwind};

    static FIELDS: [FieldLayout; 2] = [
        FieldLayout::new("a", "u64", 0, 8, 8),
        FieldLayout::new("b", "[u8; N]", usize::MAX - 2, usize::MAX, 1),
    ];
    let liars = [
        // Fields larger than the struct.
        StructLayout::new("Shrunk", Repr::C, 4, 8, &FIELDS[..1]),
        // An alignment of 0.
        StructLayout::new("Unaligned", Repr::RUST, 8, 0, &FIELDS[..1]),
        // A field ending past the address space; field sizes that sum past it.
        StructLayout::new("Endless", Repr::C, usize::MAX, 8, &FIELDS),
    ];
    let mut failures = Vec::new();
    for liar in liars {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let row = Row::of_struct(liar.name(), &liar);
            let _ = (row.padding(), row.best_size(), row.waste_percent());
            let _ = (liar.savings(), liar.is_optimal(), liar.fields_size());
            let _ = liar.to_string();
        }));
        if let Err(e) = outcome {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{}: {msg}", liar.name()));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
