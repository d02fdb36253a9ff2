//! Prints the layout of a table of enums, one line per enum and per variant, for
//! `scripts/enum-layouts-vs-rustc.sh` to compare with rustc's `-Zprint-type-sizes`; with
//! `--report`, prints each enum's full report instead.
//!
//! ```text
//! enum  Tagged  16  8  inferred  8
//! variant  Tagged  Int  8  8  0:?:8
//! ```

#[path = "../tests/all/enum_table.rs"]
mod enum_table;

use arena_kit::layout::TagLayout;

fn main() {
    let report = std::env::args().any(|a| a == "--report");
    for row in enum_table::table() {
        let l = &row.layout;
        if report {
            println!("{l}\n");
            continue;
        }
        let (kind, bytes) = match l.tag() {
            TagLayout::Explicit { size } => ("explicit", size),
            TagLayout::Inferred { bytes } => ("inferred", bytes),
            TagLayout::Niche => ("niche", 0),
            TagLayout::None => ("none", 0),
        };
        println!(
            "enum\t{}\t{}\t{}\t{kind}\t{bytes}\t{}\t{}",
            row.name,
            l.size(),
            l.align(),
            row.size_of,
            row.align_of
        );
        for v in l.variants() {
            // Fields as name:offset:size, the offset `?` where it is not known.
            let fields: Vec<String> = v
                .fields
                .iter()
                .map(|f| {
                    let offset = if l.offsets_known() {
                        f.offset.to_string()
                    } else {
                        "?".to_string()
                    };
                    format!("{}:{offset}:{}", f.name, f.size)
                })
                .collect();
            println!(
                "variant\t{}\t{}\t{}\t{}\t{}",
                row.name,
                v.name,
                v.size,
                v.fields_size(),
                fields.join(",")
            );
        }
    }
}
