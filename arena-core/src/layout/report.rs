//! The layout report and the pieces of text the assertion messages share with it.
//!
//! Everything here writes into a [`Text`] from `const fn`, so the `report` assertion prints at
//! compile time exactly what `Display` prints at run time.

use super::order::{OrderKind, Walk};
use super::text::{Text, char_count, digit_count};
use super::{Repr, ReprKind, StructLayout};

/// How many names an order lists before it says how many more there are.
const MAX_NAMES_IN_MESSAGE: usize = 16;

/// Writes `repr(C, packed(2))`-style text.
pub(crate) const fn write_repr<const CAP: usize>(t: &mut Text<CAP>, repr: &Repr) {
    t.str("repr(");
    t.str(match repr.kind {
        ReprKind::Rust => "Rust",
        ReprKind::C => "C",
        ReprKind::Transparent => "transparent",
    });
    if let Some(n) = repr.packed {
        t.str(", packed(");
        t.num(n);
        t.str(")");
    }
    if let Some(n) = repr.align {
        t.str(", align(");
        t.num(n);
        t.str(")");
    }
    t.str(")");
}

/// Writes the padding holes in memory order: `7 between a and b, 7 at the end`, or `none`.
pub(crate) const fn write_holes<const CAP: usize>(
    t: &mut Text<CAP>,
    l: &StructLayout,
    memory: Walk<'_>,
) {
    let mut written = 0;
    let mut end = 0;
    let mut pos = 0;
    let mut prev = None;
    while let Some(i) = memory.next(l, pos, prev) {
        let f = &l.fields[i];
        if f.offset > end {
            if written > 0 {
                t.str(", ");
            }
            t.num(f.offset - end);
            match prev {
                Some(p) => {
                    t.str(" between ");
                    t.str(l.fields[p].name);
                    t.str(" and ");
                }
                None => t.str(" before "),
            }
            t.str(f.name);
            written += 1;
        }
        if f.end() > end {
            end = f.end();
        }
        prev = Some(i);
        pos += 1;
    }
    if l.size > end {
        if written > 0 {
            t.str(", ");
        }
        t.num(l.size - end);
        t.str(" at the end");
        written += 1;
    }
    if written == 0 {
        t.str("none");
    }
}

/// Writes the names of the fields in `walk` order as `(b, a, c)`, listing at most `max_names`.
const fn write_names<const CAP: usize>(
    t: &mut Text<CAP>,
    l: &StructLayout,
    walk: Walk<'_>,
    max_names: usize,
) {
    t.str("(");
    let mut pos = 0;
    let mut prev = None;
    while let Some(i) = walk.next(l, pos, prev) {
        if pos == max_names {
            t.str(", ... ");
            t.num(l.fields.len() - pos);
            t.str(" more");
            break;
        }
        if pos > 0 {
            t.str(", ");
        }
        t.str(l.fields[i].name);
        prev = Some(i);
        pos += 1;
    }
    t.str(")");
}

/// Writes what to do about the size: the better order and what it saves, or why none exists.
pub(crate) const fn write_fix<const CAP: usize>(
    t: &mut Text<CAP>,
    l: &StructLayout,
    best: Walk<'_>,
    max_names: usize,
) {
    if l.padding() == 0 {
        t.str("no padding: the fields alone take ");
        t.num(l.size);
        t.str(" bytes");
    } else if l.is_optimal() {
        t.str("no field order does better: ");
        t.num(l.fields_size());
        t.str(" bytes of fields round up to ");
        t.num(l.size);
        t.str(" at align ");
        t.num(l.align);
    } else {
        t.str("reordering to ");
        write_names(t, l, best, max_names);
        if !l.repr.keeps_declaration_order() {
            t.str(" under repr(C)");
        }
        t.str(" gives ");
        t.num(l.min_size());
        t.str(" bytes, saving ");
        t.num(l.savings());
    }
}

/// Short form of [`write_fix`] for one-line messages.
pub(crate) const fn write_fix_short<const CAP: usize>(
    t: &mut Text<CAP>,
    l: &StructLayout,
    best: Walk<'_>,
) {
    write_fix(t, l, best, MAX_NAMES_IN_MESSAGE);
}

/// Writes the full report: header, one row per field and per hole in memory order, totals,
/// the best order and the cost as struct-of-arrays.
pub(crate) const fn write_report<const CAP: usize>(
    t: &mut Text<CAP>,
    l: &StructLayout,
    memory: Walk<'_>,
    best: Walk<'_>,
) {
    write_title(t, l.name, l.size, l.align);
    write_repr(t, &l.repr);
    t.str("\n");

    let name_w = name_width(l);
    let offset_w = max(digit_count(l.size), 6);
    t.str("  ");
    t.spaces(offset_w - 6);
    t.str("offset  size  align  line  ");
    t.str_left("field", name_w);
    t.str("  type\n");

    let mut end = 0;
    let mut pos = 0;
    let mut prev = None;
    while let Some(i) = memory.next(l, pos, prev) {
        let f = &l.fields[i];
        if f.offset > end {
            write_gap_row(t, end, f.offset - end, "padding", offset_w);
        }
        t.str("  ");
        t.num_right(f.offset, offset_w);
        t.num_right(f.size, 6);
        t.num_right(l.field_align(i), 7);
        write_line_cell(t, f.first_cache_line(), f.last_cache_line());
        t.str("  ");
        t.str_left(f.name, name_w);
        t.str("  ");
        t.str(f.ty);
        t.str("\n");
        if f.end() > end {
            end = f.end();
        }
        prev = Some(i);
        pos += 1;
    }
    if l.size > end {
        write_gap_row(t, end, l.size - end, "tail padding", offset_w);
    }

    t.str("  fields ");
    bytes(t, l.fields_size());
    t.str(", padding ");
    bytes(t, l.padding());
    if l.padding() > 0 {
        t.str(" (");
        t.num(super::percent(l.padding(), l.size));
        t.str("%): ");
        write_holes(t, l, memory);
    }
    t.str("\n  best order: ");
    write_fix(t, l, best, usize::MAX);
    t.str("\n  as struct-of-arrays: ");
    t.num(l.soa_size());
    t.str(" bytes per element (");
    t.num(l.size);
    t.str(" as an array of structs)");
}

/// `Name: 24 bytes, align 8, `: a report's first line, up to the repr.
pub(crate) const fn write_title<const CAP: usize>(
    t: &mut Text<CAP>,
    name: &str,
    size: usize,
    align: usize,
) {
    t.str(name);
    t.str(": ");
    t.num(size);
    t.str(" bytes, align ");
    t.num(align);
    t.str(", ");
}

/// The report's text for the `report` assertion: the table and how to get rid of the error.
pub(crate) const fn write_report_message<const CAP: usize>(
    t: &mut Text<CAP>,
    l: &StructLayout,
    memory: Walk<'_>,
    best: Walk<'_>,
) {
    t.str("layout report (remove `report` from #[layout(...)] to build):\n");
    write_report(t, l, memory, best);
}

/// `1 byte` or `N bytes`.
pub(crate) const fn bytes<const CAP: usize>(t: &mut Text<CAP>, n: usize) {
    t.num(n);
    t.str(if n == 1 { " byte" } else { " bytes" });
}

const fn write_gap_row<const CAP: usize>(
    t: &mut Text<CAP>,
    offset: usize,
    len: usize,
    what: &str,
    offset_w: usize,
) {
    t.str("  ");
    t.num_right(offset, offset_w);
    t.num_right(len, 6);
    t.str("               (");
    t.str(what);
    t.str(")\n");
}

/// The cache-line column: `0`, or `0-1` for a field that straddles a line boundary.
const fn write_line_cell<const CAP: usize>(t: &mut Text<CAP>, first: usize, last: usize) {
    let width = if first == last {
        digit_count(first)
    } else {
        digit_count(first) + 1 + digit_count(last)
    };
    t.spaces(6usize.saturating_sub(width));
    t.num(first);
    if last != first {
        t.str("-");
        t.num(last);
    }
}

/// The width of the field-name column.
const fn name_width(l: &StructLayout) -> usize {
    let mut w = "field".len();
    let mut i = 0;
    while i < l.fields.len() {
        w = max(w, char_count(l.fields[i].name));
        i += 1;
    }
    w
}

const fn max(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// How many bytes of text windows `Display` streams the report through.
const WINDOW: usize = 1024;

impl core::fmt::Display for StructLayout {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let memory = Walk::Scan(OrderKind::Memory);
        let best = Walk::Scan(OrderKind::Best);
        let mut skip = 0;
        loop {
            let mut window = Text::<WINDOW>::window(skip);
            write_report(&mut window, self, memory, best);
            let s = window.as_str();
            f.write_str(s)?;
            skip += s.len();
            if skip >= window.total_len() || s.is_empty() {
                return Ok(());
            }
        }
    }
}
