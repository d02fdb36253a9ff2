//! [`Tag`]: who owns an allocator's memory, with optional parents for hierarchies.

use core::fmt;

/// A memory tag: the subsystem that owns an allocator's bytes (your `MemoryTag` enum).
///
/// Implement it for your own `enum`; [`parent`](Tag::parent) builds hierarchies such as
/// `Rendering/Particles`, whose bytes also count towards `Rendering` in a
/// [`Report`](super::Report). `&'static str` is a tag too, for quick experiments.
///
/// A tag is `Send + Sync`: the [`TaggingAllocator`](super::TaggingAllocator)'s counter slots keep
/// a copy of each tag they have seen, which every thread reads (an enum of plain variants and
/// `&'static str` are both).
///
/// ```
/// use arena_kit::Tag;
/// use arena_kit::tags::TagPath;
///
/// #[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// enum MemoryTag { Rendering, Particles }
///
/// impl Tag for MemoryTag {
///     fn name(&self) -> &'static str {
///         match self {
///             MemoryTag::Rendering => "Rendering",
///             MemoryTag::Particles => "Particles",
///         }
///     }
///     fn parent(&self) -> Option<Self> {
///         match self {
///             MemoryTag::Particles => Some(MemoryTag::Rendering),
///             MemoryTag::Rendering => None,
///         }
///     }
/// }
///
/// assert_eq!(TagPath(MemoryTag::Particles).to_string(), "Rendering/Particles");
/// ```
pub trait Tag: Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// The tag's own name (without its parents), as reports print it.
    fn name(&self) -> &'static str;

    /// The tag this one belongs to, if any. Parent chains must end (no cycles); reports follow
    /// at most [`MAX_DEPTH`] levels.
    fn parent(&self) -> Option<Self> {
        None
    }
}

/// The deepest tag hierarchy reports follow; deeper ancestors (or a cycle) are cut off.
pub const MAX_DEPTH: usize = 8;

impl Tag for &'static str {
    fn name(&self) -> &'static str {
        self
    }
}

/// Displays a tag with its parents, outermost first: `Rendering/Particles`.
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagPath<G>(pub G);

impl<G: Tag> fmt::Display for TagPath<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chain = [self.0; MAX_DEPTH];
        let mut depth = 1;
        while depth < MAX_DEPTH {
            match chain[depth - 1].parent() {
                Some(p) => {
                    chain[depth] = p;
                    depth += 1;
                }
                None => break,
            }
        }
        for (i, tag) in chain[..depth].iter().rev().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            f.write_str(tag.name())?;
        }
        Ok(())
    }
}

/// Whether `ancestor` is `tag` or one of its parents (within [`MAX_DEPTH`] levels).
#[cfg(feature = "alloc")]
pub(crate) fn is_within<G: Tag>(tag: G, ancestor: G) -> bool {
    let mut t = Some(tag);
    for _ in 0..MAX_DEPTH {
        match t {
            Some(x) if x == ancestor => return true,
            Some(x) => t = x.parent(),
            None => return false,
        }
    }
    false
}
