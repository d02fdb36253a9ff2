//! CSV and JSON for [`Report`] and [`History`], written by hand (no serializer needed).

use alloc::string::String;
use core::fmt::{self, Write};

use super::history::History;
use super::report::Report;
use super::tag::{Tag, TagPath};
use super::usage::Usage;

/// Writes `s` as a JSON string.
pub(super) fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `s` as a CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(out: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}

fn text(value: impl fmt::Display) -> String {
    let mut s = String::new();
    let _ = write!(s, "{value}");
    s
}

/// `"current":..,"peak":..,"allocations":..,"reserved":..`
fn json_usage(out: &mut String, u: &Usage) {
    let _ = write!(
        out,
        "\"current\":{},\"peak\":{},\"allocations\":{},\"reserved\":{}",
        u.current, u.peak, u.allocations, u.reserved
    );
}

fn json_budget(out: &mut String, budget: Option<usize>) {
    match budget {
        Some(b) => {
            let _ = write!(out, ",\"budget\":{b}");
        }
        None => out.push_str(",\"budget\":null"),
    }
}

impl<G: Tag> Report<G> {
    /// The report as CSV: a header, then one line per tag (`kind` = `tag`) and per allocator
    /// (`kind` = `allocator`). Tags are written as paths (`Rendering/Particles`); an empty
    /// `budget` means none.
    ///
    /// ```text
    /// kind,name,tag,current,peak,allocations,reserved,budget
    /// tag,Physics,Physics,4096,4096,64,4608,
    /// allocator,rigid bodies,Physics,4096,4096,64,4608,
    /// ```
    pub fn to_csv(&self) -> String {
        let mut out = String::from("kind,name,tag,current,peak,allocations,reserved,budget\n");
        let mut line = |kind: &str, name: &str, tag: &str, u: &Usage, budget: Option<usize>| {
            out.push_str(kind);
            out.push(',');
            csv_field(&mut out, name);
            out.push(',');
            csv_field(&mut out, tag);
            let _ = write!(
                out,
                ",{},{},{},{},",
                u.current, u.peak, u.allocations, u.reserved
            );
            if let Some(b) = budget {
                let _ = write!(out, "{b}");
            }
            out.push('\n');
        };
        for r in self.tags() {
            let path = text(TagPath(r.tag));
            line("tag", &path, &path, &r.usage, r.budget);
        }
        for a in self.allocators() {
            line(
                "allocator",
                a.name,
                &text(TagPath(a.tag)),
                &a.usage,
                a.budget,
            );
        }
        out
    }

    /// The report as JSON:
    /// `{"frame":0,"tags":[{"tag":"Physics","current":4096,...,"budget":null,"allocators":1,
    /// "own":{...}}],"allocators":[{"name":"rigid bodies","tag":"Physics",...}],"total":{...}}`:
    /// a tag's counters include its child tags, `own` counts its own allocators only. The same
    /// text as `serde_json` writes with the `serde` feature.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        let _ = write!(out, "{{\"frame\":{},\"tags\":[", self.frame());
        for (i, r) in self.tags().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"tag\":");
            json_str(&mut out, &text(TagPath(r.tag)));
            out.push(',');
            json_usage(&mut out, &r.usage);
            json_budget(&mut out, r.budget);
            let _ = write!(out, ",\"allocators\":{},\"own\":{{", r.allocators);
            json_usage(&mut out, &r.own);
            out.push_str("}}");
        }
        out.push_str("],\"allocators\":[");
        for (i, a) in self.allocators().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"name\":");
            json_str(&mut out, a.name);
            out.push_str(",\"tag\":");
            json_str(&mut out, &text(TagPath(a.tag)));
            out.push(',');
            json_usage(&mut out, &a.usage);
            json_budget(&mut out, a.budget);
            out.push('}');
        }
        out.push_str("],\"total\":{");
        json_usage(&mut out, &self.total());
        out.push_str("}}");
        out
    }
}

impl<G: Tag> History<G> {
    /// The history as CSV: `frame,tag,current,peak`, one line per tag per frame.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("frame,tag,current,peak\n");
        for s in self.samples() {
            for (tag, u) in &s.tags {
                let _ = write!(out, "{},", s.frame);
                csv_field(&mut out, &text(TagPath(*tag)));
                let _ = writeln!(out, ",{},{}", u.current, u.peak);
            }
        }
        out
    }

    /// The history as JSON: `{"frames":[{"frame":0,"tags":[{"tag":"Physics","current":..,
    /// "peak":..,"allocations":..,"reserved":..}]}]}`.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"frames\":[");
        for (i, s) in self.samples().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{{\"frame\":{},\"tags\":[", s.frame);
            for (j, (tag, u)) in s.tags.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                out.push_str("{\"tag\":");
                json_str(&mut out, &text(TagPath(*tag)));
                out.push(',');
                json_usage(&mut out, u);
                out.push('}');
            }
            out.push_str("]}");
        }
        out.push_str("]}");
        out
    }
}
