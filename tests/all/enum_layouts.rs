//! The enum table (`enum_table`) checked against `size_of`/`align_of` and against numbers worked
//! out by hand for x86_64 (the same numbers `scripts/enum-layouts-vs-rustc.sh` compares with
//! rustc's `-Zprint-type-sizes`).

use arena_kit::layout::TagLayout;

use crate::enum_table::table;

/// `(name, size, align, tag, [(variant, payload size, field offsets where specified)])`.
type Expected = (
    &'static str,
    usize,
    usize,
    TagLayout,
    &'static [(&'static str, usize, &'static [usize])],
);

const NICHE: TagLayout = TagLayout::Niche;
const fn explicit(size: usize) -> TagLayout {
    TagLayout::Explicit { size }
}
const fn inferred(bytes: usize) -> TagLayout {
    TagLayout::Inferred { bytes }
}

#[cfg(target_arch = "x86_64")]
const X86_64: &[Expected] = &[
    (
        "MaybeRef<'_>",
        8,
        8,
        NICHE,
        &[("Some", 8, &[]), ("None", 0, &[])],
    ),
    (
        "MaybeNonZero",
        4,
        4,
        NICHE,
        &[("Some", 4, &[]), ("None", 0, &[])],
    ),
    ("Flag", 1, 1, NICHE, &[("On", 1, &[]), ("Off", 0, &[])]),
    (
        "Plain",
        1,
        1,
        inferred(1),
        &[("A", 0, &[]), ("B", 0, &[]), ("C", 0, &[])],
    ),
    (
        "Tagged",
        16,
        8,
        inferred(8),
        &[("Int", 8, &[]), ("Byte", 1, &[])],
    ),
    // The tag sits in the payload's padding: no bytes beyond the payload.
    ("InPadding", 8, 4, NICHE, &[("A", 8, &[]), ("B", 0, &[])]),
    (
        "ReprU8",
        8,
        4,
        explicit(1),
        &[("A", 4, &[4]), ("B", 4, &[2, 4]), ("C", 0, &[])],
    ),
    (
        "ReprU32",
        16,
        8,
        explicit(4),
        &[("A", 1, &[4]), ("B", 8, &[8])],
    ),
    (
        "ReprC",
        16,
        8,
        explicit(4),
        &[("A", 8, &[8]), ("B", 4, &[8, 10]), ("C", 0, &[])],
    ),
    (
        "ReprCU8",
        16,
        8,
        explicit(1),
        &[("A", 8, &[8]), ("B", 4, &[8, 10]), ("C", 0, &[])],
    ),
    (
        "Named",
        12,
        4,
        explicit(2),
        &[("Move", 8, &[4, 8]), ("Stop", 0, &[])],
    ),
    ("Signed", 2, 2, explicit(2), &[("A", 0, &[]), ("B", 0, &[])]),
    (
        "Aligned",
        16,
        16,
        explicit(1),
        &[("A", 1, &[1]), ("B", 0, &[])],
    ),
    (
        "Generic<u32>",
        8,
        4,
        inferred(4),
        &[("Some", 4, &[]), ("None", 0, &[])],
    ),
    (
        "Generic<&u16>",
        8,
        8,
        NICHE,
        &[("Some", 8, &[]), ("None", 0, &[])],
    ),
    (
        "Generic<[u8; 3]>",
        4,
        1,
        inferred(1),
        &[("Some", 3, &[]), ("None", 0, &[])],
    ),
    (
        "GenericU8<u64>",
        16,
        8,
        explicit(1),
        &[("A", 8, &[8]), ("B", 0, &[])],
    ),
    (
        "Big",
        72,
        8,
        inferred(8),
        &[("Small", 1, &[]), ("Huge", 64, &[])],
    ),
];

#[test]
fn every_enum_matches_size_of_and_align_of() {
    for row in table() {
        assert_eq!(row.layout.size(), row.size_of, "{}", row.name);
        assert_eq!(row.layout.align(), row.align_of, "{}", row.name);
        // The largest payload fits in the enum, with the tag's bytes on top.
        let l = &row.layout;
        assert!(
            l.max_variant_size() + l.tag().bytes() <= l.size(),
            "{}",
            row.name
        );
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn every_enum_matches_the_numbers_worked_out_for_x86_64() {
    let rows = table();
    assert_eq!(rows.len(), X86_64.len());
    for (row, &(name, size, align, tag, variants)) in rows.iter().zip(X86_64) {
        let l = &row.layout;
        assert_eq!(row.name, name);
        assert_eq!((l.size(), l.align(), l.tag()), (size, align, tag), "{name}");
        assert_eq!(l.variants().len(), variants.len(), "{name}");
        for (v, &(vname, payload, offsets)) in l.variants().iter().zip(variants) {
            assert_eq!((v.name, v.size), (vname, payload), "{name}");
            if l.offsets_known() {
                let got: Vec<usize> = v.fields.iter().map(|f| f.offset).collect();
                assert_eq!(got, offsets, "{name}::{vname}");
            }
        }
    }
}

#[test]
fn the_boxing_hint_names_the_huge_variant_and_the_boxed_size() {
    let big = table()
        .into_iter()
        .find(|r| r.name == "Big")
        .unwrap()
        .layout;
    assert_eq!(big.spread(), 63);
    assert_eq!(big.largest_variant().unwrap().name, "Huge");
    // `Huge(Box<[u64; 8]>)`: a pointer and a tag, 16 bytes on 64-bit targets.
    let pointer = core::mem::size_of::<usize>();
    assert_eq!(big.boxing_hint(), Some((1, 2 * pointer)));
    assert!(big.to_string().ends_with(&format!(
        "boxing variant `Huge` (64 bytes) gives {} bytes, saving {}",
        2 * pointer,
        72 - 2 * pointer
    )));
    // Two payloads of similar size: no hint.
    let tagged = table()
        .into_iter()
        .find(|r| r.name == "Tagged")
        .unwrap()
        .layout;
    assert_eq!(tagged.boxing_hint(), None);
}

#[test]
fn the_report_lists_the_tag_and_every_variant() {
    let rows = table();
    let repr_c = &rows.iter().find(|r| r.name == "ReprC").unwrap().layout;
    assert_eq!(
        repr_c.to_string(),
        "ReprC: 16 bytes, align 8, repr(C)\n\
         \x20 tag 4 bytes at offset 0\n\
         \x20 variant A: payload 8 bytes, align 8, fields 8, padding 0 (largest)\n\
         \x20   offset    8  size    8  0: u64\n\
         \x20 variant B: payload 4 bytes, align 2, fields 3, padding 1\n\
         \x20   offset    8  size    1  0: u8\n\
         \x20   offset   10  size    2  1: u16\n\
         \x20 variant C: payload 0 bytes, align 1, fields 0, padding 0\n\
         \x20 largest payload 8 bytes, spread 8, padding 4"
    );
}

/// Shapes the hidden types must accept: const parameters, where clauses, a parameter only one
/// variant uses, `Box<Self>`, raw identifiers, no variants, and a renamed crate path.
#[allow(dead_code, non_camel_case_types)]
mod shapes {
    use arena_kit::{HasEnumLayout, Layout, assert_enum_layout};

    #[derive(Layout)]
    enum Array<const N: usize> {
        Full([u8; N]),
        Empty,
    }

    #[derive(Layout)]
    enum Either<'a, A, B>
    where
        A: Copy,
    {
        Left(A),
        Right(&'a B),
    }

    #[derive(Layout)]
    #[layout(max_variant_size = 16)]
    enum List {
        Cons(u64, Box<Self>),
        Nil,
    }

    #[derive(Layout)]
    #[repr(u8)]
    enum Raw {
        r#type { r#fn: u16 },
        r#match,
    }

    #[derive(Layout)]
    enum Never {}

    // A check per target: the 64-bit numbers under `cfg` (clippy reads `size =` twice as one
    // attribute repeated).
    #[allow(clippy::duplicated_attributes)]
    #[derive(Layout)]
    #[layout(cfg(target_pointer_width = "64"), size = 16, max_variant_size = 16)]
    #[layout(cfg(target_pointer_width = "32"), size = 8)]
    enum PerTarget {
        Ptr(usize, u8),
        Nothing,
    }

    #[derive(Layout)]
    #[layout(crate = arena_kit, size = 2)]
    #[repr(u8)]
    enum Renamed {
        A(u8),
    }

    assert_enum_layout!(Array<3>, size = 4, max_variant_size = 3);
    assert_enum_layout!(Either<'static, u8, u64>, size = 16);

    #[test]
    fn every_shape_derives() {
        assert_eq!(List::LAYOUT.size(), 16);
        let raw = Raw::LAYOUT;
        assert_eq!(raw.variants()[0].name, "type");
        assert_eq!(raw.variants()[0].fields[0].name, "fn");
        assert_eq!(raw.variants()[0].fields[0].offset, 2);
        assert_eq!(Never::LAYOUT.size(), 0);
        assert_eq!(Never::LAYOUT.largest(), None);
        assert_eq!(Renamed::LAYOUT.variants().len(), 1);
    }
}
