//! Seeing the heap: a layout line (`Display` on [`FreeListHeap`]) and an SVG memory map.

use core::fmt;

use super::FreeListHeap;
use super::block::GRANULE;
use super::stats::BlockState;

/// The heap's memory-layout line, one `[Size: N, Allocated]` or `[Size: N, Free]` per block in
/// address order, separated by spaces. Live blocks show the bytes asked for; free blocks the
/// payload they could hand out.
impl fmt::Display for FreeListHeap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, block) in self.blocks().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{block}")?;
        }
        Ok(())
    }
}

const USED_FILL: &str = "#d9534f";
const FREE_FILL: &str = "#5cb85c";
const ROW_HEIGHT: usize = 20;
const ROW_GAP: usize = 4;
const TOP: usize = 44;
const MIN_WIDTH: usize = 100;
const MAX_WIDTH: usize = 16_384;
const MAX_ROWS: usize = 1024;

/// An SVG picture of a heap, from [`FreeListHeap::memory_map`]: the block space drawn to scale
/// as rows read left to right, top to bottom, live blocks red, free blocks green, each with a
/// tooltip (offset, size, state), under a caption with the [`stats`](FreeListHeap::stats).
///
/// `Display` writes the SVG document; with `std`, `std::fs::write(path, map.to_string())`
/// saves it.
///
/// ```
/// use arena_kit_core::heap::FreeListHeap;
/// use core::alloc::Layout;
///
/// let mut heap = FreeListHeap::with_capacity(4096);
/// heap.alloc(Layout::from_size_align(1000, 16).unwrap());
/// let svg = heap.memory_map().width(400).rows(4).to_string();
/// assert!(svg.starts_with("<svg") && svg.contains("Allocated"));
/// ```
///
/// # Variance
///
/// Covariant in `'h` and `'buf`, like the `&'h FreeListHeap<'buf>` it reads.
pub struct MemoryMap<'h, 'buf> {
    heap: &'h FreeListHeap<'buf>,
    width: usize,
    rows: usize,
}

impl<'h, 'buf> MemoryMap<'h, 'buf> {
    pub(crate) fn new(heap: &'h FreeListHeap<'buf>) -> Self {
        MemoryMap {
            heap,
            width: 960,
            rows: 16,
        }
    }

    /// Drawing width in pixels (default 960), clamped to `100..=16384`: `width(0)` draws 100
    /// pixels wide, `width(usize::MAX)` 16384.
    pub fn width(mut self, px: usize) -> Self {
        self.width = px.clamp(MIN_WIDTH, MAX_WIDTH);
        self
    }

    /// Number of rows the block space is folded into (default 16), clamped to `1..=1024` and to
    /// at most one row per 16 bytes of block space: `rows(0)` draws one row, `rows(usize::MAX)`
    /// as many as the limits allow. Clamping keeps the SVG's size bounded by the heap's blocks,
    /// not by the argument.
    pub fn rows(mut self, rows: usize) -> Self {
        let most = (self.heap.capacity() / GRANULE).clamp(1, MAX_ROWS);
        self.rows = rows.clamp(1, most);
        self
    }
}

impl fmt::Display for MemoryMap<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let capacity = self.heap.capacity();
        let row_bytes = capacity.div_ceil(self.rows);
        let px = |bytes: usize| bytes as f64 * self.width as f64 / row_bytes as f64;
        let height = TOP + self.rows * (ROW_HEIGHT + ROW_GAP) + 8;
        let width = self.width + 20;
        writeln!(
            f,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"#
        )?;
        writeln!(
            f,
            r#"<rect width="{width}" height="{height}" fill="white"/>"#
        )?;
        let stats = self.heap.stats();
        writeln!(
            f,
            r#"<text x="10" y="16">FreeListHeap, {capacity} bytes, {row_bytes} bytes per row: <tspan fill="{USED_FILL}">live</tspan> / <tspan fill="{FREE_FILL}">free</tspan></text>"#
        )?;
        writeln!(f, r#"<text x="10" y="34">{stats}</text>"#)?;
        for block in self.heap.blocks() {
            let fill = match block.state {
                BlockState::Allocated { .. } => USED_FILL,
                BlockState::Free => FREE_FILL,
            };
            let (mut start, end) = (block.offset, block.offset + block.size);
            while start < end {
                let row = start / row_bytes;
                let row_end = ((row + 1) * row_bytes).min(end);
                let x = 10.0 + px(start - row * row_bytes);
                let y = TOP + row * (ROW_HEIGHT + ROW_GAP);
                let w = px(row_end - start);
                writeln!(
                    f,
                    r#"<rect x="{x:.2}" y="{y}" width="{w:.2}" height="{ROW_HEIGHT}" fill="{fill}" stroke="white" stroke-width="{stroke}"><title>offset {offset}, {size} bytes, {block}</title></rect>"#,
                    stroke = if w > 3.0 { 0.5 } else { 0.0 },
                    offset = block.offset,
                    size = block.size,
                )?;
                start = row_end;
            }
        }
        writeln!(f, "</svg>")
    }
}
