//! Compile-time layout assertions, called from the `const _` items that `#[derive(Layout)]` and
//! [`assert_layout!`](crate::assert_layout) generate.
//!
//! Each check returns `None` when it holds and `Some(message)` when it fails; the generated code
//! panics with the message, so the panic carries the span of the attribute that failed. A passing
//! check costs O(fields). The message is built only on failure, in O(n log n): memory order is
//! sorted with a heap sort over `N` indices (`N` is the field count the caller passes as a const
//! parameter; `repr(C)` needs no sort), and the fix names at most 16 fields of the best order.

use super::order::{OrderKind, Walk, sorted};
use super::report::{write_fix_short, write_holes, write_report_message};
use super::text::Text;
use super::{HasLayout, StructLayout};

/// The capacity of a one-line assertion message.
pub const MESSAGE_CAP: usize = 1024;

/// A failed assertion's message.
pub type Message = Text<MESSAGE_CAP>;

/// `size = expected`: the struct is exactly `expected` bytes.
pub const fn size<T: HasLayout, const N: usize>(expected: usize) -> Option<Message> {
    let l = &T::LAYOUT;
    if l.size() == expected {
        return None;
    }
    let mut t = Message::new();
    size_head(&mut t, l.name(), l.size(), expected);
    holes_and_fix::<N>(&mut t, l);
    Some(t)
}

/// `max_size = limit`: the struct is at most `limit` bytes.
pub const fn max_size<T: HasLayout, const N: usize>(limit: usize) -> Option<Message> {
    let l = &T::LAYOUT;
    if l.size() <= limit {
        return None;
    }
    let mut t = Message::new();
    max_size_head(&mut t, l.name(), l.size(), limit);
    holes_and_fix::<N>(&mut t, l);
    Some(t)
}

/// `max_padding = limit`: holes and tail padding add up to at most `limit` bytes.
pub const fn max_padding<T: HasLayout, const N: usize>(limit: usize) -> Option<Message> {
    let l = &T::LAYOUT;
    if l.padding() <= limit {
        return None;
    }
    let mut t = Message::new();
    name(&mut t, l);
    t.str(" has ");
    t.num(l.padding());
    t.str(" bytes of padding, at most ");
    t.num(limit);
    t.str(" allowed");
    key(&mut t, "max_padding", limit);
    holes_and_fix::<N>(&mut t, l);
    Some(t)
}

/// `optimal`: no field order gives a smaller struct.
pub const fn optimal<T: HasLayout, const N: usize>() -> Option<Message> {
    let l = &T::LAYOUT;
    if l.is_optimal() {
        return None;
    }
    let mut t = Message::new();
    name(&mut t, l);
    t.str(" is ");
    t.num(l.size());
    t.str(" bytes, but its fields fit in ");
    t.num(l.min_size());
    t.str(" (optimal)");
    holes_and_fix::<N>(&mut t, l);
    Some(t)
}

/// `align = expected`: the struct's alignment is exactly `expected`.
pub const fn align<T: HasLayout, const N: usize>(expected: usize) -> Option<Message> {
    let l = &T::LAYOUT;
    if l.align() == expected {
        return None;
    }
    let mut t = Message::new();
    if !align_head(&mut t, l.name(), l.align(), expected, l.repr().align) {
        match most_aligned_field(l) {
            Some(i) if l.field_align(i) == l.align() => {
                let f = &l.fields()[i];
                t.str("field ");
                t.str(f.name);
                t.str(" (");
                t.str(f.ty);
                t.str(") has align ");
                t.num(l.field_align(i));
            }
            _ => {
                t.str("no field needs more than ");
                t.num(l.align());
            }
        }
    }
    align_fix(&mut t, l.align(), expected);
    Some(t)
}

/// `hot(a, b, c)` with `line` and `hot_lines`: the bytes of the fields at `fields` (indices into
/// [`StructLayout::fields`]) lie in at most `lines` lines of `line` bytes, counted from the
/// struct's start. Lines only count from the start when the struct is aligned to a line, so an
/// alignment below `line` fails too, asking for `repr(align(line))`.
pub const fn hot<T: HasLayout, const N: usize>(
    fields: &[usize],
    line: usize,
    lines: usize,
) -> Option<Message> {
    let l = &T::LAYOUT;
    if l.align() < line {
        return Some(needs_line_align(l, "hot", fields, line));
    }
    // The fields that start first and end last bound the span.
    let (mut lo, mut hi) = (fields[0], fields[0]);
    let mut i = 1;
    while i < fields.len() {
        let f = fields[i];
        if first_line(l, f, line) < first_line(l, lo, line) {
            lo = f;
        }
        if last_line(l, f, line) > last_line(l, hi, line) {
            hi = f;
        }
        i += 1;
    }
    let span = last_line(l, hi, line) - first_line(l, lo, line) + 1;
    if span <= lines {
        return None;
    }
    let mut t = Message::new();
    call(&mut t, "hot", l, fields);
    t.str(" spans ");
    t.num(span);
    t.str(" cache lines");
    if lines > 1 {
        t.str(", at most ");
        t.num(lines);
        t.str(" allowed");
    }
    t.str(" (");
    in_lines(&mut t, l, lo, line);
    if hi != lo {
        t.str(", ");
        in_lines(&mut t, l, hi, line);
    }
    line_size(&mut t, line);
    t.str("): ");
    if hi != lo {
        t.str("move ");
        t.str(l.fields()[hi].name);
        t.str(" next to ");
        t.str(l.fields()[lo].name);
        t.str(", or ");
    } else if l.fields()[lo].size <= line * lines {
        // One field that would fit, crossing a boundary.
        t.str("start ");
        t.str(l.fields()[lo].name);
        t.str(" at a multiple of ");
        t.num(line);
        t.str(", or ");
    }
    t.str("allow hot_lines = ");
    t.num(span);
    Some(t)
}

/// `same_line(a, b)` with `line`: both fields lie entirely in one line of `line` bytes, counted
/// from the struct's start; like [`hot`], the struct must be aligned to a line.
pub const fn same_line<T: HasLayout, const N: usize>(
    a: usize,
    b: usize,
    line: usize,
) -> Option<Message> {
    let l = &T::LAYOUT;
    if l.align() < line {
        return Some(needs_line_align(l, "same_line", &[a, b], line));
    }
    let (lo, hi) = by_offset(l, a, b);
    let first = first_line(l, lo, line);
    if last_line(l, lo, line) == first && last_line(l, hi, line) == first {
        return None;
    }
    let mut t = Message::new();
    call(&mut t, "same_line", l, &[a, b]);
    t.str(" is not one line (");
    in_lines(&mut t, l, lo, line);
    t.str(", ");
    in_lines(&mut t, l, hi, line);
    line_size(&mut t, line);
    t.str("): ");
    t.str("move ");
    t.str(l.fields()[hi].name);
    t.str(" next to ");
    t.str(l.fields()[lo].name);
    t.str(" within one line");
    Some(t)
}

/// `separate_lines(a, b)` with `line`: the two fields never share a line of `line` bytes, so two
/// threads writing them don't contend for it (false sharing).
///
/// When the struct is aligned to a line, lines count from its start and the check compares line
/// numbers. Otherwise the struct may start anywhere in a line, and the fields are apart at every
/// address only when at least `line - 1` bytes lie between the end of the first and the start of
/// the second (then its last byte and their first byte are `line` bytes apart).
pub const fn separate_lines<T: HasLayout, const N: usize>(
    a: usize,
    b: usize,
    line: usize,
) -> Option<Message> {
    let l = &T::LAYOUT;
    let (lo, hi) = by_offset(l, a, b);
    let (f, g) = (&l.fields()[lo], &l.fields()[hi]);
    let mut t = Message::new();
    if l.align() >= line {
        let shared = last_line(l, lo, line);
        if first_line(l, hi, line) > shared {
            return None;
        }
        call(&mut t, "separate_lines", l, &[a, b]);
        t.str(": ");
        t.str(f.name);
        t.str(" and ");
        t.str(g.name);
        t.str(" share line ");
        t.num(first_line(l, hi, line));
        t.str(" (");
        t.num(line);
        t.str("-byte lines): put ");
        t.num((shared + 1) * line - g.offset);
        t.str(" more bytes between them, or put each in a #[repr(align(");
        t.num(line);
        t.str("))] wrapper");
        return Some(t);
    }
    let gap = g.offset.saturating_sub(f.end());
    if g.offset >= f.end() && gap >= line - 1 {
        return None;
    }
    call(&mut t, "separate_lines", l, &[a, b]);
    t.str(": ");
    if g.offset >= f.end() {
        t.str("only ");
        t.num(gap);
        t.str(" bytes lie");
    } else {
        t.str("no bytes lie");
    }
    t.str(" between ");
    t.str(f.name);
    t.str(" and ");
    t.str(g.name);
    t.str(", and ");
    name_align(&mut t, l);
    t.str(" may start anywhere in a ");
    t.num(line);
    t.str("-byte line, so they need ");
    t.num(line - 1);
    t.str(": add ");
    t.num(line - 1 - gap);
    t.str(if line - 1 - gap == 1 {
        " byte"
    } else {
        " bytes"
    });
    t.str(" of padding between them, or #[repr(align(");
    t.num(line);
    t.str("))] and keep them in different lines");
    Some(t)
}

/// The line of `line` bytes field `i` starts in.
const fn first_line(l: &StructLayout, i: usize, line: usize) -> usize {
    l.fields()[i].offset / line
}

/// The line of `line` bytes field `i` ends in (its start line for a zero-sized field).
const fn last_line(l: &StructLayout, i: usize, line: usize) -> usize {
    let f = &l.fields()[i];
    if f.size == 0 {
        f.offset / line
    } else {
        (f.end() - 1) / line
    }
}

/// The two fields, the one at the lower offset first.
const fn by_offset(l: &StructLayout, a: usize, b: usize) -> (usize, usize) {
    if l.fields()[b].offset < l.fields()[a].offset {
        (b, a)
    } else {
        (a, b)
    }
}

/// `` `hot(a, b)` ``: the check as written.
const fn call(t: &mut Message, key: &str, l: &StructLayout, fields: &[usize]) {
    t.str("`");
    t.str(key);
    t.str("(");
    let mut i = 0;
    while i < fields.len() {
        if i > 0 {
            t.str(", ");
        }
        t.str(l.fields()[fields[i]].name);
        i += 1;
    }
    t.str(")`");
}

/// `pos in line 0`, or `big in lines 0-1` for a field that crosses a boundary.
const fn in_lines(t: &mut Message, l: &StructLayout, i: usize, line: usize) {
    let (first, last) = (first_line(l, i, line), last_line(l, i, line));
    t.str(l.fields()[i].name);
    if first == last {
        t.str(" in line ");
        t.num(first);
    } else {
        t.str(" in lines ");
        t.num(first);
        t.str("-");
        t.num(last);
    }
}

const fn line_size(t: &mut Message, line: usize) {
    t.str("; ");
    t.num(line);
    t.str("-byte lines");
}

/// `` `Close` (align 1) ``
const fn name_align(t: &mut Message, l: &StructLayout) {
    name(t, l);
    t.str(" (align ");
    t.num(l.align());
    t.str(")");
}

/// A line check that needs the struct aligned to a line, on a struct that isn't.
const fn needs_line_align(l: &StructLayout, key: &str, fields: &[usize], line: usize) -> Message {
    let mut t = Message::new();
    call(&mut t, key, l, fields);
    t.str(" counts ");
    t.num(line);
    t.str("-byte lines from the start of ");
    name_align(&mut t, l);
    t.str(", so where they fall depends on its address: add #[repr(align(");
    t.num(line);
    t.str("))]");
    t
}

/// `report`: always fails, with the full layout table as the message. `CAP` is the text
/// capacity; the derive sizes it from the field count.
pub const fn report<T: HasLayout, const N: usize, const CAP: usize>() -> Text<CAP> {
    let l = &T::LAYOUT;
    let memory = sorted::<N>(l, OrderKind::Memory);
    let best = sorted::<N>(l, OrderKind::Best);
    let mut t = Text::<CAP>::new();
    write_report_message(&mut t, l, Walk::Sorted(&memory), Walk::Sorted(&best));
    t
}

/// A text capacity that holds the report of a struct with `fields` fields whose names and types
/// are short; longer ones are cut at the end.
pub const fn report_capacity(fields: usize) -> usize {
    1024 + 160 * fields
}

const fn name<const CAP: usize>(t: &mut Text<CAP>, l: &StructLayout) {
    t.str("`");
    t.str(l.name());
    t.str("`");
}

/// `` `Name` is 24 bytes, expected 16 (size = 16)``. Shared with the enum checks.
pub(super) const fn size_head(t: &mut Message, name: &str, size: usize, expected: usize) {
    t.str("`");
    t.str(name);
    t.str("` is ");
    t.num(size);
    t.str(" bytes, expected ");
    t.num(expected);
    key(t, "size", expected);
}

/// `` `Name` is 24 bytes, at most 16 allowed (max_size = 16)``. Shared with the enum checks.
pub(super) const fn max_size_head(t: &mut Message, name: &str, size: usize, limit: usize) {
    t.str("`");
    t.str(name);
    t.str("` is ");
    t.num(size);
    t.str(" bytes, at most ");
    t.num(limit);
    t.str(" allowed");
    key(t, "max_size", limit);
}

/// `` `Name` has align 8, expected 16 (align = 16): `` and, when `repr(align(N))` sets the
/// alignment, that reason; returns whether it wrote the reason. Shared with the enum checks.
pub(super) const fn align_head(
    t: &mut Message,
    name: &str,
    align: usize,
    expected: usize,
    repr_align: Option<usize>,
) -> bool {
    t.str("`");
    t.str(name);
    t.str("` has align ");
    t.num(align);
    t.str(", expected ");
    t.num(expected);
    key(t, "align", expected);
    t.str(": ");
    match repr_align {
        Some(a) if a == align => {
            t.str("repr(align(");
            t.num(a);
            t.str(")) sets it");
            true
        }
        _ => false,
    }
}

/// `; add repr(align(16)) to raise it`, when the expected alignment is higher.
pub(super) const fn align_fix(t: &mut Message, align: usize, expected: usize) {
    if expected > align {
        t.str("; add repr(align(");
        t.num(expected);
        t.str(")) to raise it");
    }
}

pub(super) const fn key<const CAP: usize>(t: &mut Text<CAP>, key: &str, value: usize) {
    t.str(" (");
    t.str(key);
    t.str(" = ");
    t.num(value);
    t.str(")");
}

/// `: padding 7 between a and b, 7 at the end; reordering to (b, a, c) gives 16 bytes, saving 8`.
///
/// Memory order is declaration order under `repr(C)` and needs a sort otherwise; the fix lists at
/// most a few names of the best order, so scanning for each is cheaper than sorting them all.
const fn holes_and_fix<const N: usize>(t: &mut Message, l: &StructLayout) {
    let sorted_memory;
    let memory = if l.repr().keeps_declaration_order() {
        Walk::Declaration
    } else {
        sorted_memory = sorted::<N>(l, OrderKind::Memory);
        Walk::Sorted(&sorted_memory)
    };
    if l.padding() > 0 {
        t.str(": padding ");
        write_holes(t, l, memory);
        t.str("; ");
    } else {
        t.str(": ");
    }
    write_fix_short(t, l, Walk::Scan(OrderKind::Best));
}

const fn most_aligned_field(l: &StructLayout) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut i = 0;
    while i < l.fields().len() {
        best = match best {
            Some(b) if l.field_align(b) >= l.field_align(i) => Some(b),
            _ => Some(i),
        };
        i += 1;
    }
    best
}
