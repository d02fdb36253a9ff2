//! What a struct or an enum costs in memory, known at compile time.
//!
//! `#[derive(Layout)]` (from the `arena-kit` facade) implements [`HasLayout`] for a struct: its
//! [`StructLayout`] holds every field's offset, size and alignment as the compiler laid them out
//! (read with `core::mem::offset_of!`, so it is right for `repr(Rust)` too, where the compiler
//! reorders fields). From that it tells the padding, the smallest size any field order could
//! give and the order that gives it, and prints a report in the spirit of `pahole`.
//!
//! Pick it when a struct is stored by the thousand (components, particles, network messages) and
//! every byte of padding is a byte of cache you pay for in each pass. Assertions such as
//! `#[layout(size = 16)]` or [`assert_layout!`](crate::assert_layout) keep it that way: a field
//! added later that grows the struct fails the build with the holes and the fix.
//!
//! ```
//! use arena_kit::{HasLayout, Layout};
//!
//! // A component stored by the thousand, its fields in a poor order.
//! #[derive(Layout)]
//! #[repr(C)]
//! struct Enemy { alive: bool, health: f64, kind: u8 }
//!
//! const LAYOUT: arena_kit::StructLayout = Enemy::LAYOUT; // known at compile time
//! const { assert!(LAYOUT.padding() == 14) };
//! assert_eq!(LAYOUT.size(), 24);
//! assert_eq!(LAYOUT.min_size(), 16); // what the best order would give
//! let best: Vec<&str> = LAYOUT.best_order().map(|f| f.name).collect();
//! assert_eq!(best, ["health", "alive", "kind"]);
//! ```
//!
//! [`StructLayout::new`] and [`FieldLayout::new`] build the same description by hand, for a type
//! the derive cannot see.
//!
//! On an enum the derive implements [`HasEnumLayout`] instead: an [`EnumLayout`] with the tag,
//! each variant's payload, and which variant to box.
//!
//! For the whole program at once, [`snapshot`] keeps a committed table of every registered
//! type's size (the `layout-registry` feature) and fails a test naming the type that grew; with
//! `serde`, a layout serializes (to JSON, ...) for tools.
//!
//! Not for: unions (their fields all start at 0), or types whose layout is only known at run time.

// The assertions and their text buffer are reached by generated code through
// `crate::__private_v0_1::layout`, not as API.
pub(crate) mod check;
pub(crate) mod enums;
mod order;
mod register;
#[cfg(feature = "layout-registry")]
pub mod registry;
mod report;
#[cfg(feature = "serde")]
mod serde;
#[cfg(feature = "std")]
pub mod snapshot;
pub(crate) mod text;

pub use enums::{EnumLayout, EnumRepr, HasEnumLayout, TagLayout, VariantLayout};
pub use order::FieldOrder;
#[cfg(feature = "layout-registry")]
pub use registry::{Described, Registered, registered};

/// A type whose memory layout is known as a constant. Implemented by `#[derive(Layout)]`.
pub trait HasLayout {
    /// Offsets, sizes and alignments of the type and its fields.
    const LAYOUT: StructLayout;
}

/// The `#[repr]` of a struct, as far as it decides the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Repr {
    /// The base representation.
    pub kind: ReprKind,
    /// `packed(N)`: every field's alignment is capped at `N`.
    pub packed: Option<usize>,
    /// `align(N)`: the struct's alignment is raised to at least `N`.
    pub align: Option<usize>,
}

/// The base representation of a struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReprKind {
    /// The default: the compiler may reorder fields.
    Rust,
    /// Fields in declaration order, each at the next offset its alignment allows.
    C,
    /// Same layout as the one non-zero-sized field.
    Transparent,
}

impl Repr {
    /// `repr(Rust)`, the default.
    pub const RUST: Repr = Repr {
        kind: ReprKind::Rust,
        packed: None,
        align: None,
    };
    /// `repr(C)`.
    pub const C: Repr = Repr {
        kind: ReprKind::C,
        packed: None,
        align: None,
    };
    /// `repr(transparent)`.
    pub const TRANSPARENT: Repr = Repr {
        kind: ReprKind::Transparent,
        packed: None,
        align: None,
    };

    /// This representation with `packed(n)` added.
    pub const fn packed(self, n: usize) -> Repr {
        Repr {
            packed: Some(n),
            ..self
        }
    }

    /// This representation with `align(n)` added.
    pub const fn aligned(self, n: usize) -> Repr {
        Repr {
            align: Some(n),
            ..self
        }
    }

    /// Whether the declaration order is the memory order (`repr(C)`), so reordering the source
    /// changes the size.
    pub const fn keeps_declaration_order(&self) -> bool {
        matches!(self.kind, ReprKind::C)
    }

    /// The alignment a field of alignment `align` gets in this representation.
    pub const fn field_align(&self, align: usize) -> usize {
        match self.packed {
            Some(pack) if pack < align => pack,
            _ => align,
        }
    }
}

impl core::fmt::Display for Repr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut text = text::Text::<48>::new();
        report::write_repr(&mut text, self);
        f.write_str(text.as_str())
    }
}

/// One field of a [`StructLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldLayout {
    /// The field's name: its identifier, or its position (`"0"`) in a tuple struct.
    pub name: &'static str,
    /// The field's type as written in the source.
    pub ty: &'static str,
    /// Bytes from the start of the struct.
    pub offset: usize,
    /// `size_of` the field's type.
    pub size: usize,
    /// `align_of` the field's type (before any `packed` cap).
    pub align: usize,
}

impl FieldLayout {
    /// A field description.
    pub const fn new(
        name: &'static str,
        ty: &'static str,
        offset: usize,
        size: usize,
        align: usize,
    ) -> Self {
        FieldLayout {
            name,
            ty,
            offset,
            size,
            align,
        }
    }

    /// The offset one past the field's last byte.
    pub const fn end(&self) -> usize {
        // Saturating: a hand-written layout may hold any numbers.
        self.offset.saturating_add(self.size)
    }

    /// The first 64-byte cache line the field touches (counted from the struct's start).
    pub const fn first_cache_line(&self) -> usize {
        self.offset / CACHE_LINE
    }

    /// The last 64-byte cache line the field touches; a field that straddles two lines has
    /// `last_cache_line() > first_cache_line()`.
    pub const fn last_cache_line(&self) -> usize {
        if self.size == 0 {
            self.first_cache_line()
        } else {
            (self.end() - 1) / CACHE_LINE
        }
    }
}

/// The cache-line size the reports count in, common to desktop and console CPUs.
pub const CACHE_LINE: usize = 64;

/// The memory layout of a struct: its size, alignment and fields.
///
/// Every method is a `const fn`, so layouts can be checked in `const` items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StructLayout {
    name: &'static str,
    repr: Repr,
    size: usize,
    align: usize,
    fields: &'static [FieldLayout],
}

impl StructLayout {
    /// A layout from its parts: `fields` in declaration order.
    pub const fn new(
        name: &'static str,
        repr: Repr,
        size: usize,
        align: usize,
        fields: &'static [FieldLayout],
    ) -> Self {
        StructLayout {
            name,
            repr,
            size,
            align,
            fields,
        }
    }

    /// The struct's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The struct's representation.
    pub const fn repr(&self) -> Repr {
        self.repr
    }

    /// `size_of` the struct.
    pub const fn size(&self) -> usize {
        self.size
    }

    /// `align_of` the struct.
    pub const fn align(&self) -> usize {
        self.align
    }

    /// The fields in declaration order. [`Self::memory_order`] gives them by offset.
    pub const fn fields(&self) -> &'static [FieldLayout] {
        self.fields
    }

    /// The bytes the fields themselves hold: the sum of their sizes. This is also what one element
    /// costs stored as struct-of-arrays, one column per field.
    pub const fn fields_size(&self) -> usize {
        enums::sum_sizes(self.fields)
    }

    /// Bytes per element stored as struct-of-arrays (one column per field, no padding between
    /// elements): the same as [`Self::fields_size`].
    pub const fn soa_size(&self) -> usize {
        self.fields_size()
    }

    /// All wasted bytes: holes between fields and the tail padding.
    pub const fn padding(&self) -> usize {
        // Saturating: a hand-written layout's fields may outgrow its size.
        self.size.saturating_sub(self.fields_size())
    }

    /// The smallest size any order of these fields could give under the same representation:
    /// the field bytes rounded up to the struct's alignment. Sorting fields by decreasing
    /// alignment reaches it, because every size is a multiple of its own alignment.
    pub const fn min_size(&self) -> usize {
        if matches!(self.repr.kind, ReprKind::Transparent) {
            return self.size;
        }
        round_up(self.fields_size(), self.align)
    }

    /// The bytes a better field order would save: `size() - min_size()`.
    pub const fn savings(&self) -> usize {
        self.size.saturating_sub(self.min_size())
    }

    /// Whether no field order gives a smaller struct.
    pub const fn is_optimal(&self) -> bool {
        self.size <= self.min_size()
    }

    /// The alignment field `index` has inside this struct (its type's, capped by `packed`).
    pub const fn field_align(&self, index: usize) -> usize {
        self.repr.field_align(self.fields[index].align)
    }

    /// The fields by increasing offset (declaration order breaks ties between zero-sized fields).
    pub fn memory_order(&self) -> FieldOrder<'_> {
        FieldOrder::memory(self)
    }

    /// The fields in the order that gives [`Self::min_size`]: by decreasing alignment, declaration
    /// order among equals.
    pub fn best_order(&self) -> FieldOrder<'_> {
        FieldOrder::best(self)
    }
}

/// `n` rounded up to a multiple of `align` (a power of two; 0 counts as 1), or the largest
/// such multiple if that is past `usize::MAX`.
pub const fn round_up(n: usize, align: usize) -> usize {
    let mask = align.saturating_sub(1);
    n.saturating_add(mask) & !mask
}

/// `part` as a whole percentage of `whole`, rounded down: 0 if `whole` is 0, `usize::MAX` if it
/// does not fit (computed in `u128`, so `part * 100` never overflows).
pub(crate) const fn percent(part: usize, whole: usize) -> usize {
    if whole == 0 {
        return 0;
    }
    let p = part as u128 * 100 / whole as u128;
    if p > usize::MAX as u128 {
        usize::MAX
    } else {
        p as usize
    }
}

/// Checks at compile time that a type has the layout you expect.
///
/// Takes a type that implements [`HasLayout`] and any of `size = N`, `max_size = N`,
/// `align = N`, `max_padding = N`, `optimal`. Use it for concrete instantiations of generic
/// structs, where `#[layout(...)]` on the struct cannot know the type arguments.
///
/// ```
/// use arena_kit::{Layout, assert_layout};
///
/// #[derive(Layout)]
/// struct Pair<T>(T, T);
///
/// assert_layout!(Pair<u32>, size = 8, align = 4, max_padding = 0);
/// assert_layout!(Pair<u64>, size = 16);
/// ```
///
/// A failing check stops the build (under `cargo check` too) with one line that names the holes
/// and the fix:
///
/// ```compile_fail,E0080
/// # use arena_kit::{Layout, assert_layout};
/// # #[derive(Layout)]
/// # struct Pair<T>(T, T);
/// assert_layout!(Pair<u64>, size = 8);
/// ```
#[macro_export]
macro_rules! assert_layout {
    ($ty:ty, $($key:ident $(= $value:expr)?),+ $(,)?) => {
        $(
            const _: () = if let $crate::__private_v0_1::core::option::Option::Some(message) =
                $crate::__assert_layout_one!($ty, $key $(= $value)?)
            {
                $crate::__private_v0_1::core::panic!("{}", message.as_str())
            };
        )+
    };
}

/// One assertion of [`assert_layout!`]. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __assert_layout_one {
    ($ty:ty, optimal) => {
        $crate::__private_v0_1::layout::check::optimal::<
            $ty,
            {
                <$ty as $crate::__private_v0_1::layout::HasLayout>::LAYOUT
                    .fields()
                    .len()
            },
        >()
    };
    ($ty:ty, $key:ident = $n:expr) => {
        $crate::__private_v0_1::layout::check::$key::<
            $ty,
            {
                <$ty as $crate::__private_v0_1::layout::HasLayout>::LAYOUT
                    .fields()
                    .len()
            },
        >($n)
    };
}
