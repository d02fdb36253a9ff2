//! An SVG line chart of a [`History`]: bytes per tag over frames, on one shared axis or in one
//! panel per tag.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};

use super::history::History;
use super::palette::chart_colours;
use super::tag::{Tag, TagPath};

/// How [`History::to_svg_with`] scales the bytes axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChartScale {
    /// [`PerTag`](ChartScale::PerTag) when the largest tag's peak is at least
    /// [`PER_TAG_RATIO`] times the smallest non-zero one (its line would be a few pixels
    /// tall on a shared axis), else [`Shared`](ChartScale::Shared).
    #[default]
    Auto,
    /// Every tag on one axis, so heights compare directly.
    Shared,
    /// One panel per tag, each with its own axis, so every tag's shape shows whatever the
    /// others hold.
    PerTag,
}

/// The ratio of largest to smallest non-zero tag peak at which [`ChartScale::Auto`] draws one
/// panel per tag.
pub const PER_TAG_RATIO: usize = 25;

/// The smallest panel, in pixels, [`ChartScale::PerTag`] draws; the chart grows taller to fit.
const MIN_PANEL: f64 = 56.0;

/// Bytes as `512 B`, `64 KiB`, `1.5 MiB`.
pub(crate) struct Bytes(pub(crate) f64);

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

/// Where one axis is drawn: its top pixel, height in pixels and the bytes at its top.
#[derive(Clone, Copy)]
struct Axis {
    top: f64,
    height: f64,
    ymax: f64,
}

impl Axis {
    fn y(&self, v: usize) -> f64 {
        self.top + self.height * (1.0 - v as f64 / self.ymax)
    }
}

impl<G: Tag> History<G> {
    /// A `width` × `height` SVG line chart: one line per tag (children included in their
    /// parent's line) of the bytes it held at the end of each recorded frame, with a legend
    /// giving each tag's highest value. [`ChartScale::Auto`]: see
    /// [`to_svg_with`](History::to_svg_with).
    pub fn to_svg(&self, width: u32, height: u32) -> String {
        self.to_svg_with(width, height, ChartScale::Auto)
    }

    /// [`to_svg`](History::to_svg) with the bytes axis scaled as `scale` says. Each tag's
    /// colour is its [`tag_colour`](super::tag_colour); in [`ChartScale::PerTag`] the chart is
    /// at least 56 pixels per tag tall, growing past `height` if it must.
    pub fn to_svg_with(&self, width: u32, height: u32, scale: ChartScale) -> String {
        let (w, mut h) = (f64::from(width.max(200)), f64::from(height.max(120)));
        let tags = self.tags();
        let paths: Vec<String> = tags
            .iter()
            .map(|&t| alloc::format!("{}", TagPath(t)))
            .collect();
        let colours = chart_colours(&paths);
        let peaks: Vec<usize> = tags
            .iter()
            .map(|&t| self.peak_frame(t).map_or(0, |p| p.1))
            .collect();
        let per_tag = match scale {
            ChartScale::Shared => false,
            ChartScale::PerTag => true,
            ChartScale::Auto => {
                let most = peaks.iter().copied().max().unwrap_or(0);
                let least = peaks.iter().copied().filter(|&p| p > 0).min().unwrap_or(0);
                least > 0 && most / least >= PER_TAG_RATIO
            }
        };
        // The legend's width: about 7 px per character of `Rendering/Particles (max 1.5 MiB)`.
        let longest = paths.iter().map(|p| p.len() + 16).max().unwrap_or(0);
        let (left, right, top, bottom) = (80.0, 40.0 + 7.0 * longest as f64, 36.0, 40.0);
        // Room between panels for one panel's `0 B` and the next one's top label.
        let gap = 26.0;
        let panels = if per_tag { tags.len().max(1) } else { 1 };
        let gaps = gap * (panels - 1) as f64;
        if per_tag {
            h = h.max(top + bottom + gaps + MIN_PANEL * panels as f64);
        }
        let pw = (w - left - right).max(40.0);
        let panel_h = (h - top - bottom - gaps) / panels as f64;
        let axis = |k: usize, max: usize| Axis {
            top: top + (panel_h + gap) * k as f64,
            height: panel_h,
            ymax: axis_top(max.max(1)),
        };
        let frames: Vec<u64> = self.samples().map(|s| s.frame).collect();
        let n = frames.len();
        let x = |i: usize| {
            if n <= 1 {
                left + pw / 2.0
            } else {
                left + pw * i as f64 / (n - 1) as f64
            }
        };

        let mut out = String::new();
        let title = if per_tag {
            "memory per tag, bytes at the end of each frame (one axis per tag)"
        } else {
            "memory per tag, bytes at the end of each frame"
        };
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n\
             <text x=\"{left}\" y=\"20\" font-size=\"14\">{title}</text>\n"
        );
        let axes: Vec<Axis> = if per_tag {
            peaks.iter().enumerate().map(|(k, &p)| axis(k, p)).collect()
        } else {
            let max = peaks.iter().copied().max().unwrap_or(0);
            alloc::vec![axis(0, max)]
        };
        // Grid and y labels: quarters of a shared axis, halves of each panel.
        let steps = if per_tag { 2 } else { 4 };
        for a in &axes {
            for q in 0..=steps {
                let v = a.ymax * f64::from(q) / f64::from(steps);
                let gy = a.top + a.height * (1.0 - f64::from(q) / f64::from(steps));
                let _ = writeln!(
                    out,
                    "<line x1=\"{left}\" y1=\"{gy:.1}\" x2=\"{:.1}\" y2=\"{gy:.1}\" \
                     stroke=\"#dddddd\"/><text x=\"{:.1}\" y=\"{:.1}\" \
                     text-anchor=\"end\">{}</text>",
                    left + pw,
                    left - 6.0,
                    gy + 4.0,
                    Bytes(v)
                );
            }
            let base = a.top + a.height;
            let _ = writeln!(
                out,
                "<line x1=\"{left}\" y1=\"{base:.1}\" x2=\"{:.1}\" y2=\"{base:.1}\" \
                 stroke=\"#333333\"/>",
                left + pw,
            );
        }
        // Frame labels under the last axis: first, middle, last.
        let bottom_axis = axes[axes.len() - 1];
        let mut shown: Vec<usize> = [0, n / 2, n.saturating_sub(1)].into();
        shown.dedup();
        for &i in shown.iter().filter(|&&i| i < n) {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">frame {}</text>",
                x(i),
                bottom_axis.top + bottom_axis.height + 18.0,
                frames[i]
            );
        }
        for (k, &tag) in tags.iter().enumerate() {
            let a = axes[if per_tag { k } else { 0 }];
            let colour = colours[k];
            let _ = write!(
                out,
                "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"{colour}\" points=\""
            );
            for (i, (_, u)) in self.series(tag).enumerate() {
                let _ = write!(out, "{:.1},{:.1} ", x(i), a.y(u.current));
            }
            out.push_str("\"/>\n");
            let ly = if per_tag {
                a.top
            } else {
                top + 16.0 * k as f64
            };
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{colour}\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\">",
                left + pw + 14.0,
                ly,
                left + pw + 32.0,
                ly + 10.0,
            );
            xml(&mut out, &paths[k]);
            let _ = writeln!(out, " (max {})</text>", Bytes(peaks[k] as f64));
        }
        out.push_str("</svg>\n");
        out
    }
}
