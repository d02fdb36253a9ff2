//! Field orders: memory order (by offset) and the best order (by decreasing alignment).
//!
//! Two ways to walk an order, one code path for the text that uses them. A scan finds the next
//! field in O(n), so a whole walk is O(n²) but needs no buffer: `Display` uses it, since it cannot
//! know the field count as a constant. A sorted index array (heap sort, O(n log n)) serves the
//! compile-time assertion messages, whose field count the derive passes as a const parameter.

use super::{FieldLayout, StructLayout};

/// Which order to walk the fields in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OrderKind {
    /// By offset; declaration order among fields at the same offset.
    Memory,
    /// By decreasing alignment; declaration order among equals.
    Best,
}

/// A field's sort key: the primary criterion in the high bits, its declaration index in the low.
const fn key(layout: &StructLayout, kind: OrderKind, index: usize) -> u128 {
    let primary = match kind {
        OrderKind::Memory => layout.fields[index].offset,
        OrderKind::Best => usize::MAX - layout.field_align(index),
    };
    ((primary as u128) << 64) | index as u128
}

/// How an order is walked: by scanning or through indices sorted beforehand.
#[derive(Clone, Copy)]
pub(crate) enum Walk<'a> {
    /// Declaration order, which is memory order under `repr(C)`.
    Declaration,
    /// Find each next field by scanning: O(n) a step, no buffer.
    Scan(OrderKind),
    /// Indices sorted beforehand.
    Sorted(&'a [u32]),
}

impl Walk<'_> {
    /// The field at position `pos` of the order, given the field at `pos - 1` (`prev`).
    pub(crate) const fn next(
        self,
        layout: &StructLayout,
        pos: usize,
        prev: Option<usize>,
    ) -> Option<usize> {
        match self {
            Walk::Declaration => {
                if pos < layout.fields.len() {
                    Some(pos)
                } else {
                    None
                }
            }
            Walk::Sorted(indices) => {
                if pos < indices.len() {
                    Some(indices[pos] as usize)
                } else {
                    None
                }
            }
            Walk::Scan(kind) => {
                let floor = match prev {
                    Some(p) => Some(key(layout, kind, p)),
                    None => None,
                };
                let mut best: Option<(usize, u128)> = None;
                let mut i = 0;
                while i < layout.fields.len() {
                    let k = key(layout, kind, i);
                    let above_floor = match floor {
                        Some(f) => k > f,
                        None => true,
                    };
                    let below_best = match best {
                        Some((_, b)) => k < b,
                        None => true,
                    };
                    if above_floor && below_best {
                        best = Some((i, k));
                    }
                    i += 1;
                }
                match best {
                    Some((i, _)) => Some(i),
                    None => None,
                }
            }
        }
    }
}

/// The indices of `layout`'s fields sorted in `kind` order. `N` must be the field count.
pub(crate) const fn sorted<const N: usize>(layout: &StructLayout, kind: OrderKind) -> [u32; N] {
    assert!(
        N == layout.fields.len(),
        "field count does not match the layout"
    );
    let mut keys = [0u128; N];
    let mut i = 0;
    while i < N {
        keys[i] = key(layout, kind, i);
        i += 1;
    }
    heap_sort(&mut keys);
    let mut out = [0u32; N];
    let mut i = 0;
    while i < N {
        out[i] = keys[i] as u32;
        i += 1;
    }
    out
}

/// In-place heap sort, usable in `const fn` (no recursion, no closures).
const fn heap_sort(keys: &mut [u128]) {
    let n = keys.len();
    let mut start = n / 2;
    while start > 0 {
        start -= 1;
        sift_down(keys, start, n);
    }
    let mut end = n;
    while end > 1 {
        end -= 1;
        keys.swap(0, end);
        sift_down(keys, 0, end);
    }
}

const fn sift_down(keys: &mut [u128], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && keys[child + 1] > keys[child] {
            child += 1;
        }
        if keys[root] >= keys[child] {
            return;
        }
        keys.swap(root, child);
        root = child;
    }
}

/// An iterator over a struct's fields in memory order or in the best order.
///
/// Made by [`StructLayout::memory_order`] and [`StructLayout::best_order`]. Each step scans the
/// fields, so a full walk is O(n²) in the field count; that is for reports, not hot loops.
///
/// # Variance
///
/// Covariant in `'a`, the borrow of the [`StructLayout`](super::StructLayout) it walks.
#[derive(Clone)]
pub struct FieldOrder<'a> {
    layout: &'a StructLayout,
    walk: Walk<'a>,
    pos: usize,
    prev: Option<usize>,
}

impl<'a> FieldOrder<'a> {
    pub(crate) fn memory(layout: &'a StructLayout) -> Self {
        FieldOrder {
            layout,
            walk: Walk::Scan(OrderKind::Memory),
            pos: 0,
            prev: None,
        }
    }

    pub(crate) fn best(layout: &'a StructLayout) -> Self {
        FieldOrder {
            layout,
            walk: Walk::Scan(OrderKind::Best),
            pos: 0,
            prev: None,
        }
    }
}

impl Iterator for FieldOrder<'_> {
    type Item = &'static FieldLayout;

    fn next(&mut self) -> Option<Self::Item> {
        let index = self.walk.next(self.layout, self.pos, self.prev)?;
        self.pos += 1;
        self.prev = Some(index);
        Some(&self.layout.fields[index])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.layout.fields.len() - self.pos;
        (left, Some(left))
    }
}

impl ExactSizeIterator for FieldOrder<'_> {}
