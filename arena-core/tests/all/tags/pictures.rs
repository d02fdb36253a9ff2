//! The pictures people read: the usage chart and the heap's memory map use only the Okabe-Ito
//! palette and greys, every tag keeps its colour from chart to chart, every heap block at least
//! 40 px wide carries a visible label, and a tag 100 times smaller than another still shows.

use arena_kit_core::arena::Arena;
use arena_kit_core::heap::FreeListHeap;
use arena_kit_core::tags::{
    ChartScale, History, OKABE_ITO, PER_TAG_RATIO, Registry, Tracked, tag_colour,
};
use core::alloc::Layout;

/// Every element of `svg` with its name and attributes, in document order.
fn elements(svg: &str) -> Vec<(&str, Vec<(&str, &str)>)> {
    let mut out = Vec::new();
    for chunk in svg.split('<').skip(1) {
        if chunk.starts_with('/') {
            continue;
        }
        let head = chunk.split('>').next().unwrap();
        let name = head.split([' ', '/', '\n']).next().unwrap();
        let mut attrs = Vec::new();
        let mut rest = &head[name.len()..];
        while let Some(eq) = rest.find("=\"") {
            let key = rest[..eq].trim();
            let value_and_more = &rest[eq + 2..];
            let end = value_and_more.find('"').unwrap();
            attrs.push((key, &value_and_more[..end]));
            rest = &value_and_more[end + 1..];
        }
        out.push((name, attrs));
    }
    out
}

fn attr<'a>(attrs: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
    attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn num(attrs: &[(&str, &str)], key: &str) -> f64 {
    attr(attrs, key).unwrap().parse().unwrap()
}

/// Whether `c` is a neutral: white, none, or a grey `#rrggbb` with equal channels.
fn is_grey(c: &str) -> bool {
    let c = c.to_ascii_lowercase();
    if c == "white" || c == "none" {
        return true;
    }
    c.len() == 7 && c.starts_with('#') && c[1..3] == c[3..5] && c[3..5] == c[5..7]
}

/// Every `fill` and `stroke` in `svg` is an Okabe-Ito colour or a grey; returns the
/// Okabe-Ito ones.
fn assert_palette(svg: &str) -> Vec<String> {
    let mut used = Vec::new();
    for (name, attrs) in elements(svg) {
        for key in ["fill", "stroke"] {
            if let Some(c) = attr(&attrs, key) {
                let okabe = OKABE_ITO.iter().any(|o| o.eq_ignore_ascii_case(c));
                assert!(okabe || is_grey(c), "<{name}> {key}={c} is off the palette");
                if okabe {
                    used.push(c.to_ascii_uppercase());
                }
            }
        }
    }
    used
}

/// A history of `tags`, each an arena holding `bytes(tag, frame)` at the end of 24 frames.
fn history(tags: &[&'static str], bytes: impl Fn(usize, usize) -> usize) -> History<&'static str> {
    let mut arenas: Vec<_> = tags
        .iter()
        .map(|&t| Tracked::new(Arena::with_capacity(128 << 10), t, t))
        .collect();
    let mut registry = Registry::new();
    for f in 0..24 {
        for (k, a) in arenas.iter_mut().enumerate() {
            a.reset();
            // Uninitialised bytes: nothing to write, quick under Miri too.
            a.alloc_layout(Layout::from_size_align(bytes(k, f), 1).unwrap());
        }
        let sources: Vec<&dyn arena_kit_core::tags::Source<&'static str>> =
            arenas.iter().map(|a| a as _).collect();
        registry.end_frame(&sources).unwrap();
    }
    registry.history().clone()
}

/// The `points` of every polyline, as (x, y) pairs.
fn polylines(svg: &str) -> Vec<(String, Vec<(f64, f64)>)> {
    elements(svg)
        .into_iter()
        .filter(|(name, _)| *name == "polyline")
        .map(|(_, attrs)| {
            let points = attr(&attrs, "points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (attr(&attrs, "stroke").unwrap().to_string(), points)
        })
        .collect()
}

/// How many pixels a line rises from its lowest to its highest point.
fn rise(points: &[(f64, f64)]) -> f64 {
    let ys = points.iter().map(|p| p.1);
    ys.clone().fold(f64::MIN, f64::max) - ys.fold(f64::MAX, f64::min)
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws and parses SVG charts, safe code only (the chart code has no unsafe): 20 s of interpreting each, and nothing for Miri to check"
)]
fn the_chart_uses_okabe_ito_and_one_distinct_stable_colour_per_tag() {
    let six = [
        "Physics",
        "Audio",
        "Rendering",
        "Rendering/Particles",
        "AI",
        "UI",
    ];
    let svg = history(&six, |k, f| 1000 + 100 * k + 10 * f).to_svg(720, 360);
    let lines = polylines(&svg);
    assert_eq!(lines.len(), 6);
    let mut colours: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), 6, "six tags, six colours: {colours:?}");
    assert_palette(&svg);

    // The same tag, the same colour, in another chart with other tags in another order.
    let other = history(&["AI", "Physics"], |k, f| 500 * (k + 1) + f).to_svg(400, 200);
    let other_lines = polylines(&other);
    assert_eq!(other_lines[0].0, tag_colour("AI"));
    assert_eq!(other_lines[1].0, tag_colour("Physics"));
    assert_eq!(lines[0].0, tag_colour("Physics"));
    // A tag whose colour an earlier tag of the chart took gets the next free one.
    assert_eq!(tag_colour("Rendering"), tag_colour("AI"));
    assert_eq!(lines[2].0, tag_colour("Rendering"));
    assert_ne!(lines[4].0, tag_colour("AI"));
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws and parses SVG charts, safe code only (the chart code has no unsafe): 20 s of interpreting each, and nothing for Miri to check"
)]
fn a_tag_100_times_smaller_gets_its_own_panel_and_shows() {
    // Textures hold about 100 KiB, the two others about 1 KiB, each changing over the frames.
    let tags = ["Textures", "AI", "Audio"];
    let h = history(&tags, |k, f| {
        let base = if k == 0 { 100 << 10 } else { 1 << 10 };
        base / 2 + base / 2 * (f % 6) / 5
    });
    const { assert!(100 >= PER_TAG_RATIO) };

    // On one shared axis the small tags are flat lines a few pixels tall: why Auto splits.
    let shared = h.to_svg_with(720, 360, ChartScale::Shared);
    let flat = polylines(&shared);
    assert!(rise(&flat[1].1) < 4.0, "{}", rise(&flat[1].1));

    let auto = h.to_svg(720, 360);
    assert_eq!(auto, h.to_svg_with(720, 360, ChartScale::PerTag));
    assert!(auto.contains("one axis per tag"), "{auto}");
    assert_palette(&auto);
    let lines = polylines(&auto);
    assert_eq!(lines.len(), 3);
    for (tag, (colour, points)) in tags.iter().zip(&lines) {
        assert!(
            rise(points) >= 20.0,
            "{tag}'s line rises {} px in its panel",
            rise(points)
        );
        assert!(
            auto.contains(&format!(">{tag} (max ")),
            "{tag} has a legend"
        );
        assert_eq!(colour, tag_colour(tag));
    }
    // The panels do not overlap: each line stays in its own band.
    for pair in lines.windows(2) {
        let lowest_above = pair[0].1.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let highest_below = pair[1].1.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert!(lowest_above < highest_below);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "draws and parses three SVG maps of a 128 KiB heap: over 15 minutes under Tree Borrows; heap::memory_map_limits walks the heap under Miri"
)]
fn heap_map_labels_every_block_at_least_40_px_wide() {
    let mut heap = FreeListHeap::with_capacity(128 << 10);
    let mut live = Vec::new();
    for i in 0..40 {
        let size = 64 + (i * 997) % 3000;
        live.push(
            heap.try_alloc(Layout::from_size_align(size, 16).unwrap())
                .unwrap(),
        );
    }
    // Free every third block: free space between live blocks, in many widths.
    for p in live.iter().step_by(3) {
        heap.free(*p).unwrap();
    }
    for (width, rows) in [(960, 16), (480, 8), (300, 3)] {
        let svg = heap.memory_map().width(width).rows(rows).to_string();
        let used = assert_palette(&svg);
        assert!(
            used.contains(&OKABE_ITO[4].to_string()),
            "live blocks are blue"
        );
        let els = elements(&svg);
        let mut labelled = 0;
        for (i, (name, attrs)) in els.iter().enumerate() {
            // Block rects carry a tooltip; the background does not.
            if *name != "rect" || els.get(i + 1).is_none_or(|e| e.0 != "title") {
                continue;
            }
            let (x, y, w, h) = (
                num(attrs, "x"),
                num(attrs, "y"),
                num(attrs, "width"),
                num(attrs, "height"),
            );
            if w < 40.0 {
                continue;
            }
            let inside = els.iter().any(|(n, a)| {
                *n == "text" && {
                    let (tx, ty) = (num(a, "x"), num(a, "y"));
                    (x..x + w).contains(&tx) && (y..=y + h).contains(&ty)
                }
            });
            assert!(inside, "the {w:.0} px block at ({x}, {y}) has no label");
            labelled += 1;
        }
        if width == 960 {
            assert!(svg.contains(">live ") && svg.contains(">free "), "{svg}");
        }
        assert!(labelled >= 2, "{labelled} labelled blocks at width {width}");
        // The label text fits its block (7.2 px a character at 12 px monospace).
        for line in svg
            .lines()
            .filter(|l| l.starts_with("<text x=") && !l.starts_with("<text x=\"10\""))
        {
            let text = line.split('>').nth(1).unwrap().trim_end_matches("</text");
            assert!(text.len() <= 12, "{text}");
        }
    }
}
