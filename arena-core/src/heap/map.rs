//! Seeing the heap: a layout line (`Display` on [`FreeListHeap`]) and an SVG memory map.

use core::fmt;

use super::FreeListHeap;
use super::block::GRANULE;
use super::stats::{BlockInfo, BlockState};
use crate::tags::OKABE_ITO;

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

/// Live blocks: Okabe-Ito blue, labelled in white.
const USED_FILL: &str = OKABE_ITO[4];
/// Free blocks: a neutral light grey (empty space), labelled in dark grey.
const FREE_FILL: &str = "#d9d9d9";
/// The caption's colour for "free": the grey of free blocks is too faint as text.
const FREE_TEXT: &str = "#777777";
/// Blocks at least this many pixels wide carry a visible label.
const LABEL_MIN_WIDTH: f64 = 40.0;
/// Width of one character of the 12 px monospace labels (0.6 em).
const CHAR_PX: f64 = 7.2;
const ROW_HEIGHT: usize = 20;
const ROW_GAP: usize = 4;
const TOP: usize = 44;
const MIN_WIDTH: usize = 100;
const MAX_WIDTH: usize = 16_384;
const MAX_ROWS: usize = 1024;

/// An SVG picture of a heap, from [`FreeListHeap::memory_map`]: the block space drawn to scale
/// as rows read left to right, top to bottom, live blocks blue (Okabe-Ito, readable with colour
/// blindness), free blocks light grey, each with a tooltip (offset, size, state) and, when it is
/// at least 40 pixels wide, a visible label (`live 153 B`, `free 164 KiB`, or
/// as much of it as fits), under a caption with the [`stats`](FreeListHeap::stats).
///
/// `Display` writes the SVG document; with `std`, `std::fs::write(path, map.to_string())`
/// saves it.
///
/// ```
/// use arena_kit::FreeListHeap;
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
            r#"<text x="10" y="16">FreeListHeap, {capacity} bytes, {row_bytes} bytes per row: <tspan fill="{USED_FILL}">live</tspan> / <tspan fill="{FREE_TEXT}">free</tspan></text>"#
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
                    stroke = if w > 6.0 { 1.5 } else { 0.0 },
                    offset = block.offset,
                    size = block.size,
                )?;
                if w >= LABEL_MIN_WIDTH {
                    let colour = match block.state {
                        BlockState::Allocated { .. } => "white",
                        BlockState::Free => "#333333",
                    };
                    writeln!(
                        f,
                        r#"<text x="{:.2}" y="{}" fill="{colour}">{}</text>"#,
                        x + 3.0,
                        y + 14,
                        label(block, w),
                    )?;
                }
                start = row_end;
            }
        }
        writeln!(f, "</svg>")
    }
}

/// A block's label, the longest of `live 164 KiB`, `164 KiB`, `164K` that fits in `px` pixels
/// (the last, at most five characters, fits in [`LABEL_MIN_WIDTH`]).
fn label(block: BlockInfo, px: f64) -> alloc_free::Label {
    let (state, bytes) = match block.state {
        BlockState::Allocated { requested } => ("live", requested),
        BlockState::Free => ("free", block.payload_size()),
    };
    let fits = |chars: usize| chars as f64 * CHAR_PX + 4.0 <= px;
    let long = alloc_free::Label::new(format_args!("{state} {}", Size(bytes)));
    if fits(long.len()) {
        return long;
    }
    let mid = alloc_free::Label::new(format_args!("{}", Size(bytes)));
    if fits(mid.len()) {
        return mid;
    }
    alloc_free::Label::new(format_args!("{}", Short(bytes)))
}

/// Bytes as `153 B`, `164 KiB`, `1.5 MiB`.
struct Size(usize);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (tenths, unit) = scaled(self.0);
        if tenths < 100 && tenths % 10 != 0 {
            write!(f, "{}.{} {unit}", tenths / 10, tenths % 10)
        } else {
            write!(f, "{} {unit}", (tenths + 5) / 10)
        }
    }
}

/// Bytes in at most five characters: `153B`, `164K`, `1.5M`.
struct Short(usize);

impl fmt::Display for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (tenths, unit) = scaled(self.0);
        let unit = &unit[..1];
        if tenths < 100 && tenths % 10 != 0 {
            write!(f, "{}.{}{unit}", tenths / 10, tenths % 10)
        } else {
            write!(f, "{}{unit}", (tenths + 5) / 10)
        }
    }
}

/// `bytes` in tenths of the largest binary unit that leaves it below 1024 when rounded (integer
/// arithmetic: the map works without `std`).
fn scaled(bytes: usize) -> (u128, &'static str) {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut u = 0;
    loop {
        let div = 1u128 << (10 * u);
        let tenths = (bytes as u128 * 10 + div / 2) / div;
        if tenths < 10_235 || u + 1 == units.len() {
            return (tenths, units[u]);
        }
        u += 1;
    }
}

/// A short label formatted without allocating (the map works without `alloc`).
mod alloc_free {
    use core::fmt::{self, Write};

    /// Up to 24 bytes of ASCII text.
    pub(super) struct Label {
        buf: [u8; 24],
        len: usize,
    }

    impl Label {
        pub(super) fn new(args: fmt::Arguments<'_>) -> Label {
            let mut l = Label {
                buf: [0; 24],
                len: 0,
            };
            let _ = l.write_fmt(args);
            l
        }

        pub(super) fn len(&self) -> usize {
            self.len
        }
    }

    impl Write for Label {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let room = self.buf.len() - self.len;
            let n = s.len().min(room);
            self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
            self.len += n;
            if n < s.len() { Err(fmt::Error) } else { Ok(()) }
        }
    }

    impl fmt::Display for Label {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // Only ASCII is ever written (numbers, units, `live`, `free`).
            f.write_str(core::str::from_utf8(&self.buf[..self.len]).unwrap_or(""))
        }
    }
}
