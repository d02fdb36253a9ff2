//! `memory_map()`'s `rows` and `width` at their extremes (zero, `usize::MAX`, more rows than
//! the heap has granules): clamped to the documented range, never an overflow, and the SVG stays
//! small.
use arena_kit_core::heap::FreeListHeap;
use core::alloc::Layout;

/// Bytes of block space: small under Miri, where drawing every row is slow.
const CAPACITY: usize = if cfg!(miri) { 512 } else { 4096 };

fn heap() -> FreeListHeap<'static> {
    let mut heap = FreeListHeap::with_capacity(CAPACITY);
    heap.try_alloc(Layout::from_size_align(CAPACITY / 4, 16).unwrap())
        .unwrap();
    heap
}

/// The SVG's `width="..."` and `height="..."` attributes.
fn size_of_svg(svg: &str) -> (usize, usize) {
    let attr = |name: &str| {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("width"), attr("height"))
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws SVG maps, safe code only (the map code has no unsafe); zero_rows_and_width_are_raised_to_the_minimum walks the heap under Miri"
)]
fn huge_rows_and_width_are_clamped_not_overflowed() {
    let heap = heap();
    for (rows, width) in [(usize::MAX, 400), (4, usize::MAX), (usize::MAX, usize::MAX)] {
        let svg = heap.memory_map().rows(rows).width(width).to_string();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        let (w, h) = size_of_svg(&svg);
        assert!(w <= 16_384 + 20, "width {w}");
        assert!(h < 1_000_000, "height {h}");
        assert!(svg.len() < 1 << 20, "{} bytes of SVG", svg.len());
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws SVG maps, safe code only (the map code has no unsafe); zero_rows_and_width_are_raised_to_the_minimum walks the heap under Miri"
)]
fn rows_are_at_most_one_per_granule_and_at_most_the_row_limit() {
    let heap = heap();
    // At most one row per 16 bytes of block space.
    let most = heap.memory_map().rows(CAPACITY / 16).to_string();
    assert_eq!(heap.memory_map().rows(100_000).to_string(), most);
    assert_eq!(heap.memory_map().rows(usize::MAX).to_string(), most);
    assert_ne!(heap.memory_map().rows(CAPACITY / 16 - 1).to_string(), most);
}

#[test]
fn zero_rows_and_width_are_raised_to_the_minimum() {
    let heap = heap();
    assert_eq!(
        heap.memory_map().rows(0).width(0).to_string(),
        heap.memory_map().rows(1).width(100).to_string()
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws SVG maps, safe code only (the map code has no unsafe); zero_rows_and_width_are_raised_to_the_minimum walks the heap under Miri"
)]
fn width_above_the_limit_is_the_limit() {
    let heap = heap();
    assert_eq!(
        heap.memory_map().width(usize::MAX).to_string(),
        heap.memory_map().width(16_384).to_string()
    );
}
