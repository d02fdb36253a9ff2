//! What an enum costs in memory, known at compile time: [`EnumLayout`] through
//! [`HasEnumLayout`], implemented by `#[derive(Layout)]` on an enum.
//!
//! Every number is read from the compiler, never guessed: the enum's size and alignment with
//! `size_of`/`align_of`, each variant's payload from a hidden struct holding that variant's fields,
//! and for `repr(C)`, `repr(u8)`..`repr(u64)` and `repr(C, u8)` each field's offset with
//! `offset_of!` on the hidden `#[repr(C)]` structs that RFC 2195 specifies these enums to be. For
//! the default `repr(Rust)` the compiler decides where the tag goes, so the layout says what the
//! sizes show (a tag that costs extra bytes, or none) and labels it inferred, and it leaves field
//! offsets inside variants out (`offset_of!` on enum variants is unstable).

use super::text::Text;
use super::{FieldLayout, round_up};

/// An enum whose memory layout is known as a constant. Implemented by `#[derive(Layout)]` on an
/// enum; structs implement [`HasLayout`](super::HasLayout) instead.
///
/// ```
/// use arena_kit::{HasEnumLayout, Layout};
///
/// #[derive(Layout)]
/// enum Target<'a> {
///     Entity(&'a u32),
///     Nothing,
/// }
///
/// // `Nothing` is the null reference: no tag bytes.
/// const { assert!(Target::LAYOUT.size() == size_of::<&u32>()) };
/// ```
pub trait HasEnumLayout {
    /// Size, alignment, tag and variants of the enum.
    const LAYOUT: EnumLayout;
}

/// The `#[repr]` of an enum, as far as it decides the layout.
///
/// ```
/// use arena_kit::{HasEnumLayout, Layout};
///
/// #[derive(Layout)]
/// #[repr(C, u8)]
/// enum Op { Push(u32), Pop }
///
/// let repr = Op::LAYOUT.repr();
/// assert!(repr.c && repr.int == Some("u8") && repr.is_specified());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EnumRepr {
    /// `repr(C)`: the tag is a C enum, followed by a union of the variants' payloads.
    pub c: bool,
    /// `repr(u8)` and the like: the tag's integer type as written.
    pub int: Option<&'static str>,
    /// `repr(align(N))`.
    pub align: Option<usize>,
}

impl EnumRepr {
    /// `repr(Rust)`, the default.
    pub const RUST: EnumRepr = EnumRepr {
        c: false,
        int: None,
        align: None,
    };

    /// Whether the layout is specified (`repr(C)` or an integer repr), so the tag's size and every
    /// field's offset are known.
    pub const fn is_specified(&self) -> bool {
        self.c || self.int.is_some()
    }
}

/// How an enum tells its variants apart.
///
/// ```
/// use arena_kit::layout::TagLayout;
/// use arena_kit::{HasEnumLayout, Layout};
///
/// #[derive(Layout)]
/// enum Value { Int(u64), Byte(u8) }
///
/// #[derive(Layout)]
/// #[repr(u8)]
/// enum Op { Push(u32), Pop }
///
/// // No niche in a `u64`: the tag and the padding after it take 8 bytes.
/// assert_eq!(Value::LAYOUT.tag(), TagLayout::Inferred { bytes: 8 });
/// assert_eq!(Op::LAYOUT.tag(), TagLayout::Explicit { size: 1 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TagLayout {
    /// A tag of `size` bytes at offset 0, as `repr(C)` or `repr(uN)` specify.
    Explicit {
        /// `size_of` the tag.
        size: usize,
    },
    /// `repr(Rust)`, inferred from sizes: the enum is `bytes` larger than its largest payload, so
    /// a tag (with the padding after it) takes them. The tag itself may be smaller.
    Inferred {
        /// Enum size minus the largest payload's size.
        bytes: usize,
    },
    /// `repr(Rust)`, inferred from sizes: the enum is no larger than its largest payload, so the
    /// tag costs nothing: it is a niche (an invalid value of a field, such as a null reference)
    /// or sits in a payload's padding.
    Niche,
    /// No variant to tell apart from another: zero or one variant.
    None,
}

impl TagLayout {
    /// The bytes the tag adds: its size when explicit, the extra bytes when inferred.
    pub const fn bytes(&self) -> usize {
        match *self {
            TagLayout::Explicit { size } => size,
            TagLayout::Inferred { bytes } => bytes,
            TagLayout::Niche | TagLayout::None => 0,
        }
    }
}

/// One variant of an [`EnumLayout`].
///
/// ```
/// use arena_kit::{HasEnumLayout, Layout};
///
/// #[derive(Layout)]
/// #[repr(u8)]
/// enum Op { Push { value: u32 }, Pop }
///
/// let push = &Op::LAYOUT.variants()[0];
/// assert_eq!((push.name, push.size, push.fields_size()), ("Push", 4, 4));
/// assert_eq!(push.fields[0].offset, 4); // after the 1-byte tag, aligned to 4
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VariantLayout {
    /// The variant's name.
    pub name: &'static str,
    /// `size_of` a struct holding the variant's fields (`#[repr(C)]` in declaration order when the
    /// enum's layout is specified, the compiler's order for `repr(Rust)`).
    pub size: usize,
    /// `align_of` that struct.
    pub align: usize,
    /// The fields. Their `offset` is from the start of the enum when
    /// [`EnumLayout::offsets_known`], and 0 otherwise.
    pub fields: &'static [FieldLayout],
    /// `size_of` the same enum with this variant's fields replaced by one `Box` (a non-null
    /// pointer), measured on a hidden copy of the enum. One copy per variant with fields makes the
    /// derive's compile time grow with the square of the variant count: measured with
    /// `cargo check`, 0.16 s more than without the derive at 30 variants, 1.9 s at 100.
    pub boxed_size: usize,
}

impl VariantLayout {
    /// A variant description.
    pub const fn new(
        name: &'static str,
        size: usize,
        align: usize,
        fields: &'static [FieldLayout],
        boxed_size: usize,
    ) -> Self {
        VariantLayout {
            name,
            size,
            align,
            fields,
            boxed_size,
        }
    }

    /// The bytes the fields themselves hold: the sum of their sizes.
    pub const fn fields_size(&self) -> usize {
        sum_sizes(self.fields)
    }

    /// Padding inside the payload: `size - fields_size()`.
    pub const fn padding(&self) -> usize {
        self.size - self.fields_size()
    }
}

/// The memory layout of an enum: size, alignment, tag and each variant's payload.
///
/// Every number is read from the compiler, never guessed: the enum's size and alignment with
/// `size_of`/`align_of`, each variant's payload from a hidden struct holding that variant's
/// fields, and for `repr(C)`, `repr(u8)`..`repr(u64)` and `repr(C, u8)` each field's offset with
/// `offset_of!` on the hidden `#[repr(C)]` structs that RFC 2195 specifies these enums to be. For
/// the default `repr(Rust)` the compiler decides where the tag goes, so the layout says what the
/// sizes show (a tag that costs extra bytes, or none: [`TagLayout`]) and leaves field offsets
/// inside variants out (`offset_of!` on enum variants is not stable).
///
/// Every method is a `const fn`, so layouts can be checked in `const` items.
///
/// ```
/// use arena_kit::{HasEnumLayout, Layout};
/// use arena_kit::layout::TagLayout;
///
/// #[derive(Layout)]
/// #[repr(u8)]
/// enum Command {
///     Move { x: f32, y: f32 },
///     Fire(u8),
///     Load([u8; 60]),
/// }
///
/// const LAYOUT: arena_kit::EnumLayout = Command::LAYOUT; // known at compile time
/// assert_eq!(LAYOUT.size(), 64);
/// assert_eq!(LAYOUT.tag(), TagLayout::Explicit { size: 1 });
/// assert_eq!(LAYOUT.largest_variant().unwrap().name, "Load");
/// // Boxing `Load` would make the enum 16 bytes (tag, padding, pointer):
/// assert_eq!(LAYOUT.variants()[2].boxed_size, 16);
/// assert_eq!(LAYOUT.variants()[0].fields[1].offset, 8); // `y`, after the tag and `x`
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EnumLayout {
    name: &'static str,
    repr: EnumRepr,
    size: usize,
    align: usize,
    tag: TagLayout,
    variants: &'static [VariantLayout],
}

impl EnumLayout {
    /// A layout from its parts, `variants` in declaration order. `tag_size` is the explicit tag's
    /// size for a specified repr and ignored for `repr(Rust)`, whose tag is inferred from sizes.
    pub const fn new(
        name: &'static str,
        repr: EnumRepr,
        size: usize,
        align: usize,
        tag_size: usize,
        variants: &'static [VariantLayout],
    ) -> Self {
        let tag = if repr.is_specified() {
            TagLayout::Explicit { size: tag_size }
        } else if variants.len() <= 1 {
            TagLayout::None
        } else {
            let mut largest = 0;
            let mut i = 0;
            while i < variants.len() {
                if variants[i].size > largest {
                    largest = variants[i].size;
                }
                i += 1;
            }
            match size.saturating_sub(round_up(largest, align)) {
                0 => TagLayout::Niche,
                bytes => TagLayout::Inferred { bytes },
            }
        };
        EnumLayout {
            name,
            repr,
            size,
            align,
            tag,
            variants,
        }
    }

    /// The enum's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The enum's representation.
    pub const fn repr(&self) -> EnumRepr {
        self.repr
    }

    /// `size_of` the enum.
    pub const fn size(&self) -> usize {
        self.size
    }

    /// `align_of` the enum.
    pub const fn align(&self) -> usize {
        self.align
    }

    /// How the variants are told apart.
    pub const fn tag(&self) -> TagLayout {
        self.tag
    }

    /// The variants in declaration order.
    pub const fn variants(&self) -> &'static [VariantLayout] {
        self.variants
    }

    /// Whether each field's offset is known (the repr is specified); see [`VariantLayout::fields`].
    pub const fn offsets_known(&self) -> bool {
        self.repr.is_specified()
    }

    /// The index of the variant with the largest payload (the first of equals), or `None` for an
    /// enum without variants.
    pub const fn largest(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut i = 0;
        while i < self.variants.len() {
            best = match best {
                Some(b) if self.variants[b].size >= self.variants[i].size => Some(b),
                _ => Some(i),
            };
            i += 1;
        }
        best
    }

    /// The variant with the largest payload.
    pub const fn largest_variant(&self) -> Option<&'static VariantLayout> {
        match self.largest() {
            Some(i) => Some(&self.variants[i]),
            None => None,
        }
    }

    /// The largest payload's size (0 without variants).
    pub const fn max_variant_size(&self) -> usize {
        match self.largest_variant() {
            Some(v) => v.size,
            None => 0,
        }
    }

    /// The index of the largest payload among the other variants.
    pub const fn second_largest(&self) -> Option<usize> {
        let Some(first) = self.largest() else {
            return None;
        };
        let mut best: Option<usize> = None;
        let mut i = 0;
        while i < self.variants.len() {
            if i != first {
                best = match best {
                    Some(b) if self.variants[b].size >= self.variants[i].size => Some(b),
                    _ => Some(i),
                };
            }
            i += 1;
        }
        best
    }

    /// The spread of payload sizes: the largest minus the smallest. Every value of the enum
    /// takes the largest, so a large spread is memory the small variants waste.
    pub const fn spread(&self) -> usize {
        let mut min = usize::MAX;
        let mut i = 0;
        while i < self.variants.len() {
            if self.variants[i].size < min {
                min = self.variants[i].size;
            }
            i += 1;
        }
        self.max_variant_size().saturating_sub(min)
    }

    /// Bytes that hold neither the tag nor the largest variant's fields when the enum holds that
    /// variant: `size - tag().bytes() - fields_size()` of the largest variant. For an inferred tag
    /// this counts the tag's padding as tag.
    pub const fn padding(&self) -> usize {
        let fields = match self.largest_variant() {
            Some(v) => v.fields_size(),
            None => 0,
        };
        self.size.saturating_sub(self.tag.bytes() + fields)
    }

    /// The smallest size the layout's own advice gives: the size with the variant
    /// [`boxing_hint`](Self::boxing_hint) names boxed, else the size.
    pub const fn best_size(&self) -> usize {
        match self.boxing_hint() {
            Some((_, boxed)) => boxed,
            None => self.size,
        }
    }

    /// The variant worth boxing and what the enum would then be: the largest variant, when its
    /// payload is at least twice the next one's and boxing it makes the enum smaller. Returns its
    /// index and the enum's size with it boxed.
    pub const fn boxing_hint(&self) -> Option<(usize, usize)> {
        let Some(first) = self.largest() else {
            return None;
        };
        let next = match self.second_largest() {
            Some(i) => self.variants[i].size,
            None => 0,
        };
        let v = &self.variants[first];
        if v.size >= 2 * next && v.boxed_size < self.size {
            Some((first, v.boxed_size))
        } else {
            None
        }
    }
}

/// Writes `repr(C, u8)`-style text.
pub(crate) const fn write_enum_repr<const CAP: usize>(t: &mut Text<CAP>, repr: &EnumRepr) {
    t.str("repr(");
    let mut parts = 0;
    if repr.c {
        t.str("C");
        parts += 1;
    }
    if let Some(int) = repr.int {
        if parts > 0 {
            t.str(", ");
        }
        t.str(int);
        parts += 1;
    }
    if parts == 0 {
        t.str("Rust");
    }
    if let Some(n) = repr.align {
        t.str(", align(");
        t.num(n);
        t.str(")");
    }
    t.str(")");
}

/// `tag: 1 byte (explicit)` and the like.
pub(crate) const fn write_tag<const CAP: usize>(t: &mut Text<CAP>, l: &EnumLayout) {
    match l.tag {
        TagLayout::Explicit { size } => {
            t.str("tag ");
            super::report::bytes(t, size);
            t.str(" at offset 0");
        }
        TagLayout::Inferred { bytes } => {
            t.str("tag and its padding take ");
            super::report::bytes(t, bytes);
            t.str(" (inferred from sizes)");
        }
        TagLayout::Niche => {
            t.str("no tag bytes: a niche or a payload's padding holds it (inferred from sizes)");
        }
        TagLayout::None => t.str("no tag: one variant or none"),
    }
}

/// `; boxing variant `Big` (64 bytes) gives 16 bytes`, when worth it.
pub(crate) const fn write_boxing<const CAP: usize>(t: &mut Text<CAP>, l: &EnumLayout) -> bool {
    let Some((i, boxed)) = l.boxing_hint() else {
        return false;
    };
    let v = &l.variants[i];
    t.str("boxing variant `");
    t.str(v.name);
    t.str("` (");
    super::report::bytes(t, v.size);
    t.str(") gives ");
    super::report::bytes(t, boxed);
    t.str(", saving ");
    t.num(l.size - boxed);
    true
}

/// The enum report: a header, the tag line and a block per variant.
pub(crate) const fn write_enum_report<const CAP: usize>(t: &mut Text<CAP>, l: &EnumLayout) {
    super::report::write_title(t, l.name, l.size, l.align);
    write_enum_repr(t, &l.repr);
    t.str("\n  ");
    write_tag(t, l);
    t.str("\n");
    let mut i = 0;
    while i < l.variants.len() {
        let v = &l.variants[i];
        t.str("  variant ");
        t.str(v.name);
        t.str(": payload ");
        super::report::bytes(t, v.size);
        t.str(", align ");
        t.num(v.align);
        t.str(", fields ");
        t.num(v.fields_size());
        t.str(", padding ");
        t.num(v.padding());
        if matches!(l.largest(), Some(b) if b == i) {
            t.str(" (largest)");
        }
        t.str("\n");
        let mut j = 0;
        while j < v.fields.len() {
            let f = &v.fields[j];
            t.str("    ");
            if l.offsets_known() {
                t.str("offset ");
                t.num_right(f.offset, 4);
                t.str("  ");
            }
            t.str("size ");
            t.num_right(f.size, 4);
            t.str("  ");
            t.str(f.name);
            t.str(": ");
            t.str(f.ty);
            t.str("\n");
            j += 1;
        }
        i += 1;
    }
    t.str("  largest payload ");
    super::report::bytes(t, l.max_variant_size());
    t.str(", spread ");
    t.num(l.spread());
    t.str(", padding ");
    t.num(l.padding());
    if !l.offsets_known() {
        t.str("\n  field offsets inside variants: not known for repr(Rust)");
    }
    let mut hint = Text::<256>::new();
    if write_boxing(&mut hint, l) {
        t.str("\n  ");
        t.str(hint.as_str());
    }
}

/// How many bytes of text windows `Display` streams the report through.
const WINDOW: usize = 512;

impl core::fmt::Display for EnumLayout {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut skip = 0;
        loop {
            let mut window = Text::<WINDOW>::window(skip);
            write_enum_report(&mut window, self);
            let s = window.as_str();
            f.write_str(s)?;
            skip += s.len();
            if skip >= window.total_len() || s.is_empty() {
                return Ok(());
            }
        }
    }
}

/// Compile-time assertions on enums, called from generated `const _` items.
pub mod check {
    use super::super::check::{Message, align_fix, align_head, key, max_size_head, size_head};
    use super::super::text::Text;
    use super::{EnumLayout, HasEnumLayout, TagLayout, write_boxing, write_enum_report};

    const fn head(t: &mut Message, l: &EnumLayout) {
        t.str("`");
        t.str(l.name());
        t.str("`");
    }

    /// `: largest variant `Big` (64 bytes), next `Small` (4); boxing variant `Big` ...`.
    const fn variants_and_fix(t: &mut Message, l: &EnumLayout) {
        let Some(first) = l.largest() else {
            t.str(": it has no variants");
            return;
        };
        let v = &l.variants()[first];
        t.str(": largest variant `");
        t.str(v.name);
        t.str("` (");
        super::super::report::bytes(t, v.size);
        t.str(")");
        if let Some(n) = l.second_largest() {
            let w = &l.variants()[n];
            t.str(", next `");
            t.str(w.name);
            t.str("` (");
            t.num(w.size);
            t.str(")");
        }
        match l.tag() {
            TagLayout::Explicit { size } => {
                t.str(", tag ");
                t.num(size);
            }
            TagLayout::Inferred { bytes } => {
                t.str(", tag and its padding ");
                t.num(bytes);
                t.str(" (inferred)");
            }
            TagLayout::Niche => t.str(", no tag bytes (niche or padding, inferred)"),
            TagLayout::None => t.str(", no tag"),
        }
        t.str(", padding ");
        t.num(l.padding());
        let mut hint = Text::<256>::new();
        if write_boxing(&mut hint, l) {
            t.str("; ");
            t.str(hint.as_str());
        }
    }

    /// `size = expected` on an enum.
    pub const fn enum_size<T: HasEnumLayout>(expected: usize) -> Option<Message> {
        let l = &T::LAYOUT;
        if l.size() == expected {
            return None;
        }
        let mut t = Message::new();
        size_head(&mut t, l.name(), l.size(), expected);
        variants_and_fix(&mut t, l);
        Some(t)
    }

    /// `max_size = limit` on an enum.
    pub const fn enum_max_size<T: HasEnumLayout>(limit: usize) -> Option<Message> {
        let l = &T::LAYOUT;
        if l.size() <= limit {
            return None;
        }
        let mut t = Message::new();
        max_size_head(&mut t, l.name(), l.size(), limit);
        variants_and_fix(&mut t, l);
        Some(t)
    }

    /// `max_padding = limit` on an enum: see [`EnumLayout::padding`].
    pub const fn enum_max_padding<T: HasEnumLayout>(limit: usize) -> Option<Message> {
        let l = &T::LAYOUT;
        if l.padding() <= limit {
            return None;
        }
        let mut t = Message::new();
        head(&mut t, l);
        t.str(" has ");
        t.num(l.padding());
        t.str(" bytes of padding with its largest variant, at most ");
        t.num(limit);
        t.str(" allowed");
        key(&mut t, "max_padding", limit);
        variants_and_fix(&mut t, l);
        Some(t)
    }

    /// `max_variant_size = limit`: no variant's payload is larger than `limit`.
    pub const fn enum_max_variant_size<T: HasEnumLayout>(limit: usize) -> Option<Message> {
        let l = &T::LAYOUT;
        if l.max_variant_size() <= limit {
            return None;
        }
        let mut t = Message::new();
        head(&mut t, l);
        t.str(" has a variant payload of ");
        t.num(l.max_variant_size());
        t.str(" bytes, at most ");
        t.num(limit);
        t.str(" allowed");
        key(&mut t, "max_variant_size", limit);
        // Name every variant over the limit.
        t.str(": over it ");
        let mut i = 0;
        let mut n = 0;
        while i < l.variants().len() {
            let v = &l.variants()[i];
            if v.size > limit {
                if n > 0 {
                    t.str(", ");
                }
                t.str("`");
                t.str(v.name);
                t.str("` (");
                t.num(v.size);
                t.str(")");
                n += 1;
            }
            i += 1;
        }
        let mut hint = Text::<256>::new();
        if write_boxing(&mut hint, l) {
            t.str("; ");
            t.str(hint.as_str());
        }
        Some(t)
    }

    /// `align = expected` on an enum.
    pub const fn enum_align<T: HasEnumLayout>(expected: usize) -> Option<Message> {
        let l = &T::LAYOUT;
        if l.align() == expected {
            return None;
        }
        let mut t = Message::new();
        if !align_head(&mut t, l.name(), l.align(), expected, l.repr().align) {
            let mut best: Option<usize> = None;
            let mut i = 0;
            while i < l.variants().len() {
                best = match best {
                    Some(b) if l.variants()[b].align >= l.variants()[i].align => Some(b),
                    _ => Some(i),
                };
                i += 1;
            }
            match best {
                Some(b) if l.variants()[b].align == l.align() => {
                    t.str("variant `");
                    t.str(l.variants()[b].name);
                    t.str("` has align ");
                    t.num(l.align());
                }
                _ => {
                    t.str("the tag has align ");
                    t.num(l.align());
                }
            }
        }
        align_fix(&mut t, l.align(), expected);
        Some(t)
    }

    /// `report` on an enum: always fails, with the report as the message.
    pub const fn enum_report<T: HasEnumLayout, const CAP: usize>() -> Text<CAP> {
        let mut t = Text::<CAP>::new();
        t.str("layout report (remove `report` from #[layout(...)] to build):\n");
        write_enum_report(&mut t, &T::LAYOUT);
        t
    }

    /// A text capacity for the report of an enum with `fields` fields over all variants and
    /// `variants` variants.
    pub const fn enum_report_capacity(variants: usize, fields: usize) -> usize {
        1024 + 120 * variants + 120 * fields
    }
}

/// The sum of the fields' sizes.
pub(crate) const fn sum_sizes(fields: &[FieldLayout]) -> usize {
    let mut sum = 0;
    let mut i = 0;
    while i < fields.len() {
        sum = usize::saturating_add(sum, fields[i].size); // hand-written layouts: any numbers
        i += 1;
    }
    sum
}

/// The largest of `values` (0 for none). Generated code uses it for a union's alignment.
pub const fn max_of(values: &[usize]) -> usize {
    let mut max = 0;
    let mut i = 0;
    while i < values.len() {
        if values[i] > max {
            max = values[i];
        }
        i += 1;
    }
    max
}

/// Checks at compile time that an enum has the layout you expect: [`assert_layout!`] for types
/// that implement [`HasEnumLayout`].
///
/// Takes any of `size = N`, `max_size = N`, `align = N`, `max_padding = N` and
/// `max_variant_size = N`. Use it for instantiations of generic enums, where `#[layout(...)]` on
/// the enum cannot know the type arguments.
///
/// ```
/// use arena_kit::{Layout, assert_enum_layout};
///
/// #[derive(Layout)]
/// enum Slot<T> {
///     Full(T),
///     Empty,
/// }
///
/// assert_enum_layout!(Slot<u32>, size = 8, max_variant_size = 4);
/// assert_enum_layout!(Slot<&'static u32>, size = 8); // the null niche holds the tag
/// ```
///
/// ```compile_fail,E0080
/// # use arena_kit::{Layout, assert_enum_layout};
/// # #[derive(Layout)]
/// # enum Slot<T> { Full(T), Empty }
/// assert_enum_layout!(Slot<[u64; 8]>, max_size = 16);
/// ```
///
/// [`assert_layout!`]: crate::assert_layout
#[macro_export]
macro_rules! assert_enum_layout {
    ($ty:ty, $($key:ident = $value:expr),+ $(,)?) => {
        $(
            const _: () = if let $crate::__private_v0_1::core::option::Option::Some(message) =
                $crate::__assert_enum_layout_one!($ty, $key, $value)
            {
                $crate::__private_v0_1::core::panic!("{}", message.as_str())
            };
        )+
    };
}

/// One assertion of [`assert_enum_layout!`]. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __assert_enum_layout_one {
    ($ty:ty, size, $n:expr) => {
        $crate::__private_v0_1::layout::check::enum_size::<$ty>($n)
    };
    ($ty:ty, max_size, $n:expr) => {
        $crate::__private_v0_1::layout::check::enum_max_size::<$ty>($n)
    };
    ($ty:ty, align, $n:expr) => {
        $crate::__private_v0_1::layout::check::enum_align::<$ty>($n)
    };
    ($ty:ty, max_padding, $n:expr) => {
        $crate::__private_v0_1::layout::check::enum_max_padding::<$ty>($n)
    };
    ($ty:ty, max_variant_size, $n:expr) => {
        $crate::__private_v0_1::layout::check::enum_max_variant_size::<$ty>($n)
    };
}
