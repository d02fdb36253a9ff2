//! [`Report`]: every allocator's counters gathered at one moment, per allocator and per tag.

use alloc::vec::Vec;
use core::fmt;

use super::budget::BudgetExceeded;
use super::tag::{Tag, TagPath, is_within};
use super::tracked::Source;
use super::usage::Usage;

/// One allocator's line in a [`Report`].
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocatorRow<G> {
    /// The allocator's name.
    pub name: &'static str,
    /// Its tag.
    pub tag: G,
    /// Its counters when the report was taken.
    pub usage: Usage,
    /// Its own budget in bytes, if any.
    pub budget: Option<usize>,
}

/// One tag's line in a [`Report`].
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagRow<G> {
    /// The tag.
    pub tag: G,
    /// The tag's allocators and those of its child tags, summed (each byte once).
    pub usage: Usage,
    /// The allocators tagged with exactly this tag, summed.
    pub own: Usage,
    /// How many allocators count towards `usage`.
    pub allocators: usize,
    /// The tag's budget in bytes (from the [`Registry`](super::Registry)), if any.
    pub budget: Option<usize>,
}

/// A snapshot of every allocator handed to it: per allocator and per tag, current bytes, peak,
/// live allocations, reserved bytes and budget. `Display` prints the table; [`totals`] prints the
/// one-line-per-tag form; [`to_csv`](Report::to_csv) and [`to_json`](Report::to_json)
/// export it.
///
/// ```
/// use arena_kit::{Arena, Pool, Report, Tracked};
///
/// let mut bodies = Tracked::new(Pool::with_capacity(16), "rigid bodies", "Physics");
/// let paths = Tracked::new(Arena::with_capacity(4096), "pathfinding", "AI");
/// for _ in 0..4 {
///     bodies.insert([0u8; 64]);
/// }
/// paths.alloc([0u8; 512]);
/// let report = Report::gather(&[&bodies, &paths]);
/// assert_eq!(report.tag("Physics").unwrap().usage.current, 256);
/// assert_eq!(report.total().current, 768);
/// assert_eq!(report.totals().to_string(), "Physics: 256 bytes\nAI: 512 bytes\n");
/// assert!(report.to_string().contains("rigid bodies")); // the table, one line per allocator
/// bodies.clear(); // a tracked pool dropped with live values is reported as a leak
/// ```
///
/// [`totals`]: Report::totals
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report<G> {
    pub(super) frame: u64,
    pub(super) allocators: Vec<AllocatorRow<G>>,
    pub(super) tags: Vec<TagRow<G>>,
}

impl<G: Tag> Report<G> {
    /// Reads every source now; tags appear in the order their first allocator does, each parent
    /// before its children.
    pub fn gather(sources: &[&dyn Source<G>]) -> Report<G> {
        Report::build(0, sources, &[])
    }

    pub(super) fn build(
        frame: u64,
        sources: &[&dyn Source<G>],
        budgets: &[(G, super::Budget)],
    ) -> Report<G> {
        let allocators: Vec<AllocatorRow<G>> = sources
            .iter()
            .map(|s| AllocatorRow {
                name: s.name(),
                tag: s.tag(),
                usage: s.usage(),
                budget: s.budget(),
            })
            .collect();
        let mut order: Vec<G> = Vec::new();
        for row in &allocators {
            // The tag and its ancestors, outermost first.
            let mut chain = Vec::new();
            let mut t = Some(row.tag);
            while let Some(x) = t.filter(|_| chain.len() < super::tag::MAX_DEPTH) {
                chain.push(x);
                t = x.parent();
            }
            for &tag in chain.iter().rev() {
                if !order.contains(&tag) {
                    // Insert after the parent's subtree so children stay next to their parent.
                    let at = match tag.parent() {
                        Some(p) => order
                            .iter()
                            .rposition(|&o| is_within(o, p))
                            .map_or(order.len(), |i| i + 1),
                        None => order.len(),
                    };
                    order.insert(at, tag);
                }
            }
        }
        let tags = order
            .into_iter()
            .map(|tag| {
                let mut row = TagRow {
                    tag,
                    usage: Usage::default(),
                    own: Usage::default(),
                    allocators: 0,
                    budget: budgets.iter().find(|b| b.0 == tag).map(|b| b.1.bytes),
                };
                for a in allocators.iter().filter(|a| is_within(a.tag, tag)) {
                    row.usage = row.usage + a.usage;
                    row.allocators += 1;
                    if a.tag == tag {
                        row.own = row.own + a.usage;
                    }
                }
                row
            })
            .collect();
        Report {
            frame,
            allocators,
            tags,
        }
    }

    /// The frame number the registry gave this report (0 for [`gather`](Report::gather)).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// One row per allocator, in the order given.
    pub fn allocators(&self) -> &[AllocatorRow<G>] {
        &self.allocators
    }

    /// One row per tag (parents included).
    pub fn tags(&self) -> &[TagRow<G>] {
        &self.tags
    }

    /// The row of `tag`, if any allocator counts towards it.
    pub fn tag(&self, tag: G) -> Option<&TagRow<G>> {
        self.tags.iter().find(|r| r.tag == tag)
    }

    /// Every allocator summed: each byte counted once.
    pub fn total(&self) -> Usage {
        self.allocators
            .iter()
            .fold(Usage::default(), |sum, a| sum + a.usage)
    }

    /// The tags whose current bytes are over their budget.
    pub fn over_budget(&self) -> impl Iterator<Item = BudgetExceeded> + '_ {
        self.over_budget_tags().map(|(_, e)| e)
    }

    pub(super) fn over_budget_tags(&self) -> impl Iterator<Item = (G, BudgetExceeded)> + '_ {
        self.tags.iter().filter_map(|r| {
            r.budget.filter(|&b| r.usage.current > b).map(|budget| {
                let e = BudgetExceeded {
                    allocator: "all allocators",
                    tag: r.tag.name(),
                    budget,
                    current: r.usage.current,
                    requested: 0,
                };
                (r.tag, e)
            })
        })
    }

    /// The short report: `Physics: 4096 bytes`, one line per tag (a parent's line includes its
    /// children).
    pub fn totals(&self) -> Totals<'_, G> {
        Totals(self)
    }
}

/// The one-line-per-tag form of a [`Report`], from [`Report::totals`].
///
/// # Variance
///
/// Covariant in `'a` and `G`, like the `&'a Report<G>` it prints.
#[derive(Debug, Clone, Copy)]
pub struct Totals<'a, G>(&'a Report<G>);

impl<G: Tag> fmt::Display for Totals<'_, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in &self.0.tags {
            writeln!(f, "{}: {} bytes", TagPath(row.tag), row.usage.current)?;
        }
        Ok(())
    }
}

/// Writes `n` or `-`.
struct Opt(Option<usize>);

impl fmt::Display for Opt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => n.fmt(f),
            None => "-".fmt(f),
        }
    }
}

/// Pads the `Display` of a value to the formatter's width (tag paths are written in pieces).
struct Padded<T>(T);

impl<T: fmt::Display> fmt::Display for Padded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = alloc::string::String::new();
        fmt::write(&mut s, format_args!("{}", self.0))?;
        f.pad(&s)
    }
}

/// The table: one line per tag (children indented under their parent), a total, then one line
/// per allocator.
impl<G: Tag> fmt::Display for Report<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "memory report, frame {}", self.frame)?;
        let line = |f: &mut fmt::Formatter<'_>, label: &dyn fmt::Display, u: &Usage, b| {
            writeln!(
                f,
                "{:<28} {:>12} {:>12} {:>8} {:>12} {:>12}",
                Padded(label),
                u.current,
                u.peak,
                u.allocations,
                u.reserved,
                Opt(b)
            )
        };
        writeln!(
            f,
            "{:<28} {:>12} {:>12} {:>8} {:>12} {:>12}",
            "tag", "current", "peak", "allocs", "reserved", "budget"
        )?;
        for row in &self.tags {
            line(f, &TagPath(row.tag), &row.usage, row.budget)?;
        }
        line(f, &"total", &self.total(), None)?;
        writeln!(
            f,
            "{:<28} {:>12} {:>12} {:>8} {:>12} {:>12}  tag",
            "allocator", "current", "peak", "allocs", "reserved", "budget"
        )?;
        for a in &self.allocators {
            writeln!(
                f,
                "{:<28} {:>12} {:>12} {:>8} {:>12} {:>12}  {}",
                a.name,
                a.usage.current,
                a.usage.peak,
                a.usage.allocations,
                a.usage.reserved,
                Opt(a.budget),
                TagPath(a.tag)
            )?;
        }
        Ok(())
    }
}
