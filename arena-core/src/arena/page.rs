//! Pages: the blocks of memory an arena bumps through.
//!
//! Page 0 is the *root*: the block of [`Arena::with_capacity`](super::Arena::with_capacity), the
//! user's buffer of [`Arena::from_buffer`](super::Arena::from_buffer), or empty for
//! [`Arena::chained`](super::Arena::chained). Its bounds live in the arena itself. Every further
//! page comes from the system allocator and starts with a [`PageHeader`]; pages form a singly
//! linked list in the order the bump pointer passes through them, and are kept across resets so
//! a steady frame loop stops calling the system allocator. Every page after the current one is
//! empty, so the slow path may move any of them up to be next; a reset after a frame that grew
//! coalesces them into one page (`bump.rs`).

use core::cell::Cell;
use core::ptr::NonNull;

/// Alignment of every heap page, and of the data area after its header.
pub(super) const PAGE_ALIGN: usize = 16;

/// The header at the start of a heap page.
pub(super) struct PageHeader {
    /// The next page in the chain.
    pub(super) next: Cell<Option<NonNull<PageHeader>>>,
    /// Position of this page in the chain (the root is 0). Renumbered when a page is inserted.
    pub(super) index: Cell<usize>,
    /// One past the last usable byte.
    pub(super) end: NonNull<u8>,
    /// Where the bump pointer stood when the arena moved on to a later page.
    pub(super) used_end: Cell<NonNull<u8>>,
    /// Bytes taken from the system allocator for this page, header included.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(super) total: usize,
    /// The arena's page-free count when this page was made. A marker taken at a lower count
    /// predates the page, so the page is not the one the marker points into, even at the same
    /// address (see [`Arena::rewind`](super::Arena::rewind)). In the header's padding: the
    /// header stays [`HEADER`] bytes.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(super) frees_before: u64,
}

/// Size of the header, rounded so the data area stays `PAGE_ALIGN`-aligned.
pub(super) const HEADER: usize = size_of::<PageHeader>().next_multiple_of(PAGE_ALIGN);

// The page-free count lives in what was padding: a page's capacity did not change with it.
const _: () = assert!(usize::BITS != 64 || HEADER == 48);

/// The first usable byte of a heap page.
#[inline]
pub(super) fn data_start(page: NonNull<PageHeader>) -> NonNull<u8> {
    // SAFETY: every heap page is at least `HEADER` bytes long (see `alloc_page`), so the data
    // start is inside (or one past the end of) the same allocation.
    unsafe { page.cast::<u8>().add(HEADER) }
}

/// A reference to a live page header.
#[inline]
pub(super) fn header<'a>(page: NonNull<PageHeader>) -> &'a PageHeader {
    // SAFETY: callers only pass pages linked into a live arena (a marker's page is first found
    // in the chain, see `Arena::rewind`). A page is freed only after it is unlinked (when the
    // arena is dropped, when a reset coalesces its pages, or when a limited arena gives back
    // its kept pages), and every reference from here is a temporary that ends before that.
    unsafe { page.as_ref() }
}

/// Takes a page of `total` bytes (header included) from the system allocator, charged to
/// `tag` (see [`PageTag`]).
#[cfg(feature = "alloc")]
pub(super) fn alloc_page(
    total: usize,
    index: usize,
    tag: crate::tags::PageTag,
    frees_before: u64,
) -> Option<NonNull<PageHeader>> {
    debug_assert!(total > HEADER);
    let layout = core::alloc::Layout::from_size_align(total, PAGE_ALIGN).ok()?;
    // SAFETY: `layout` has a non-zero size (`total > HEADER > 0`).
    let raw = NonNull::new(tag.charged(|| unsafe { alloc::alloc::alloc(layout) }))?;
    let page = raw.cast::<PageHeader>();
    // SAFETY: `raw` is valid for `total` bytes, so the end pointer stays in bounds.
    let end = unsafe { raw.add(total) };
    let start = data_start(page);
    // SAFETY: the allocation is `PAGE_ALIGN`-aligned and at least `HEADER` bytes, so a header fits.
    unsafe {
        page.write(PageHeader {
            next: Cell::new(None),
            index: Cell::new(index),
            end,
            used_end: Cell::new(start),
            total,
            frees_before,
        })
    };
    Some(page)
}

/// Gives a page back to the system allocator.
///
/// # Safety
///
/// - `page` came from [`alloc_page`] and is not used afterwards.
#[cfg(feature = "alloc")]
pub(super) unsafe fn free_page(page: NonNull<PageHeader>) {
    let total = header(page).total;
    // SAFETY: `alloc_page` accepted this exact layout.
    let layout = unsafe { core::alloc::Layout::from_size_align_unchecked(total, PAGE_ALIGN) };
    // SAFETY: the caller guarantees the page came from `alloc_page` with this layout and is dead.
    unsafe { alloc::alloc::dealloc(page.as_ptr().cast(), layout) };
}
