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
    name(&mut t, l);
    t.str(" is ");
    t.num(l.size());
    t.str(" bytes, expected ");
    t.num(expected);
    key(&mut t, "size", expected);
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
    name(&mut t, l);
    t.str(" is ");
    t.num(l.size());
    t.str(" bytes, at most ");
    t.num(limit);
    t.str(" allowed");
    key(&mut t, "max_size", limit);
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
    name(&mut t, l);
    t.str(" has align ");
    t.num(l.align());
    t.str(", expected ");
    t.num(expected);
    key(&mut t, "align", expected);
    t.str(": ");
    match l.repr().align {
        Some(a) if a == l.align() => {
            t.str("repr(align(");
            t.num(a);
            t.str(")) sets it");
        }
        _ => match most_aligned_field(l) {
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
        },
    }
    if expected > l.align() {
        t.str("; add repr(align(");
        t.num(expected);
        t.str(")) to raise it");
    }
    Some(t)
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

const fn key<const CAP: usize>(t: &mut Text<CAP>, key: &str, value: usize) {
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
