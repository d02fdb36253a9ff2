//! An SVG line chart of a [`History`]: bytes per tag over frames.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

use super::history::History;
use super::tag::{Tag, TagPath};

/// Line colours, one per tag (Tableau 10), reused after eight tags.
const COLOURS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
];

/// Bytes as `512 B`, `64 KiB`, `1.5 MiB`.
struct Bytes(f64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0;
        let mut u = 0;
        while v >= 1024.0 && u + 1 < units.len() {
            v /= 1024.0;
            u += 1;
        }
        if v == (v as u64) as f64 {
            write!(f, "{} {}", v as u64, units[u])
        } else {
            write!(f, "{v:.1} {}", units[u])
        }
    }
}

/// The axis top: `max` rounded up to a whole number of power-of-two steps, at most four, so
/// grid lines fall on round KiB and MiB values and the lines fill most of the plot.
fn axis_top(max: usize) -> f64 {
    let mut step = 1u128;
    while step * 4 < max as u128 {
        step *= 2;
    }
    ((max as u128).div_ceil(step) * step) as f64
}

/// Escapes text for SVG.
fn xml(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

impl<G: Tag> History<G> {
    /// A `width` × `height` SVG line chart: one line per tag (children included in their
    /// parent's line) of the bytes it held at the end of each recorded frame, with a legend
    /// giving each tag's highest value.
    pub fn to_svg(&self, width: u32, height: u32) -> String {
        let (w, h) = (f64::from(width.max(200)), f64::from(height.max(120)));
        let tags = self.tags();
        // The legend's width: about 7 px per character of `Rendering/Particles (max 1.5 MiB)`.
        let longest = tags
            .iter()
            .map(|&t| alloc::format!("{}", TagPath(t)).len() + 16)
            .max()
            .unwrap_or(0);
        let (left, right, top, bottom) = (80.0, 40.0 + 7.0 * longest as f64, 36.0, 40.0);
        let (pw, ph) = ((w - left - right).max(40.0), h - top - bottom);
        let frames: Vec<u64> = self.samples().map(|s| s.frame).collect();
        let max = tags
            .iter()
            .flat_map(|&t| self.series(t).map(|(_, u)| u.current))
            .max()
            .unwrap_or(0);
        let ymax = axis_top(max.max(1));
        let n = frames.len();
        let x = |i: usize| {
            if n <= 1 {
                left + pw / 2.0
            } else {
                left + pw * i as f64 / (n - 1) as f64
            }
        };
        let y = |v: usize| top + ph * (1.0 - v as f64 / ymax);

        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
             <text x=\"{left}\" y=\"20\" font-size=\"14\">memory per tag, bytes at the end of \
             each frame</text>\n"
        );
        // Horizontal grid and y labels at quarters of the axis.
        for q in 0..=4 {
            let v = ymax * f64::from(q) / 4.0;
            let gy = top + ph * (1.0 - f64::from(q) / 4.0);
            let _ = writeln!(
                out,
                "<line x1=\"{left}\" y1=\"{gy:.1}\" x2=\"{:.1}\" y2=\"{gy:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left + pw,
                left - 6.0,
                gy + 4.0,
                Bytes(v)
            );
        }
        // Frame labels: first, middle, last.
        let mut shown: Vec<usize> = [0, n / 2, n.saturating_sub(1)].into();
        shown.dedup();
        for &i in shown.iter().filter(|&&i| i < n) {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">frame {}</text>",
                x(i),
                top + ph + 18.0,
                frames[i]
            );
        }
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
            top + ph,
            left + pw,
            top + ph
        );
        for (k, &tag) in tags.iter().enumerate() {
            let colour = COLOURS[k % COLOURS.len()];
            out.push_str("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"");
            out.push_str(colour);
            out.push_str("\" points=\"");
            for (i, (_, u)) in self.series(tag).enumerate() {
                let _ = write!(out, "{:.1},{:.1} ", x(i), y(u.current));
            }
            out.push_str("\"/>\n");
            let ly = top + 16.0 * k as f64;
            let highest = self.peak_frame(tag).map_or(0, |p| p.1);
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{colour}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">",
                left + pw + 14.0,
                ly,
                left + pw + 32.0,
                ly + 10.0,
            );
            xml(&mut out, &alloc::format!("{}", TagPath(tag)));
            let _ = writeln!(out, " (max {})</text>", Bytes(highest as f64));
        }
        out.push_str("</svg>\n");
        out
    }
}
