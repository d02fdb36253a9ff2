//! [`History`]: each tag's bytes at the end of every recorded frame.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::report::Report;
use super::tag::Tag;
use super::usage::Usage;

/// One frame of a [`History`]: each tag's usage (children included) at the end of the frame.
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameSample<G> {
    /// The frame number.
    pub frame: u64,
    /// Each tag's usage then.
    pub tags: Vec<(G, Usage)>,
}

/// Each tag's usage at the end of the last `capacity` frames recorded by a
/// [`Registry`](super::Registry) (older frames are dropped, so a long session keeps a bounded
/// window). A sample's `current` is the tag's bytes at the end of the frame; its `peak` is the
/// high-water mark of the tag's allocators up to that frame.
///
/// ```
/// use arena_kit::{Arena, Registry, Tracked};
///
/// let mut registry = Registry::with_history(60); // the last second at 60 fps
/// let streaming = Tracked::new(Arena::with_capacity(64 * 1024), "level streaming", "World");
/// for _ in 0..3 {
///     streaming.alloc([0u8; 1000]); // each frame streams in another chunk
///     registry.end_frame(&[&streaming]).unwrap();
/// }
/// let history = registry.history();
/// assert_eq!(history.len(), 3);
/// let bytes: Vec<usize> = history.series("World").map(|(_, usage)| usage.current).collect();
/// assert_eq!(bytes, [1000, 2000, 3000]);
/// assert_eq!(history.peak_frame("World"), Some((2, 3000))); // frames count from 0
/// ```
///
/// # Variance
///
/// Covariant in `G`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History<G> {
    samples: VecDeque<FrameSample<G>>,
    capacity: usize,
}

impl<G: Tag> History<G> {
    /// An empty history keeping the last `capacity` frames (at least 1).
    pub fn with_capacity(capacity: usize) -> History<G> {
        History {
            samples: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Records `report`'s tag rows as a frame.
    pub fn record(&mut self, report: &Report<G>) {
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(FrameSample {
            frame: report.frame(),
            tags: report.tags().iter().map(|r| (r.tag, r.usage)).collect(),
        });
    }

    /// The recorded frames, oldest first.
    pub fn samples(&self) -> impl ExactSizeIterator<Item = &FrameSample<G>> + '_ {
        self.samples.iter()
    }

    /// Number of frames recorded (at most the capacity).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no frame is recorded.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Every tag seen, in order of first appearance.
    pub fn tags(&self) -> Vec<G> {
        let mut tags = Vec::new();
        for s in &self.samples {
            for &(t, _) in &s.tags {
                if !tags.contains(&t) {
                    tags.push(t);
                }
            }
        }
        tags
    }

    /// `tag`'s usage in each recorded frame (zero in frames where it had no allocator).
    pub fn series(&self, tag: G) -> impl Iterator<Item = (u64, Usage)> + '_ {
        self.samples.iter().map(move |s| {
            let usage = s.tags.iter().find(|(t, _)| *t == tag).map(|p| p.1);
            (s.frame, usage.unwrap_or_default())
        })
    }

    /// The most bytes `tag` held at the end of any recorded frame, and in which frame.
    pub fn peak_frame(&self, tag: G) -> Option<(u64, usize)> {
        self.series(tag).map(|(frame, u)| (frame, u.current)).fold(
            None,
            |best: Option<(u64, usize)>, x| match best {
                Some(b) if b.1 >= x.1 => Some(b),
                _ => Some(x),
            },
        )
    }
}
