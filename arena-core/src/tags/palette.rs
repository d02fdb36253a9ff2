//! The colours of every picture arena-kit draws: the Okabe-Ito palette, which readers with any
//! common form of colour blindness can tell apart, and one stable colour per tag.

/// The Okabe-Ito palette: orange, sky blue, bluish green, yellow, blue, vermillion, reddish
/// purple, black. The charts and the heap's memory map fill and stroke with these and with
/// neutral greys (white background, grey grid and free space, dark grey axes and text) only.
pub const OKABE_ITO: [&str; 8] = [
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000",
];

/// The palette entries a tag's line may take: every Okabe-Ito colour but black (axes and text
/// are dark) and yellow (too faint as a thin line on white).
const TAG_COLOURS: [&str; 6] = [
    OKABE_ITO[4],
    OKABE_ITO[0],
    OKABE_ITO[2],
    OKABE_ITO[5],
    OKABE_ITO[1],
    OKABE_ITO[6],
];

/// The colour a tag's line is drawn in, from its path (`Rendering/Particles`): one of six
/// Okabe-Ito colours (not black or yellow), chosen by an FNV-1a hash of the path, so the same
/// tag has the same colour in every chart and every run. Two tags of one chart that hash to
/// the same colour are told apart by the chart: the later one (in order of first appearance)
/// takes the next colour no earlier tag of that chart uses.
///
/// ```
/// use arena_kit::tags::{OKABE_ITO, tag_colour};
///
/// assert_eq!(tag_colour("Physics"), tag_colour("Physics"));
/// assert!(OKABE_ITO.contains(&tag_colour("Rendering/Particles")));
/// ```
pub fn tag_colour(path: &str) -> &'static str {
    TAG_COLOURS[preferred(path)]
}

/// The index in [`TAG_COLOURS`] a tag path prefers.
fn preferred(path: &str) -> usize {
    let mut hash: u32 = 0x811c_9dc5;
    for b in path.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash as usize % TAG_COLOURS.len()
}

/// Colours for the tag paths of one chart, in order: each its [`tag_colour`], unless an earlier
/// path already took it, then the next colour not yet taken (reused only past six tags).
#[cfg(feature = "alloc")]
pub(crate) fn chart_colours(paths: &[alloc::string::String]) -> alloc::vec::Vec<&'static str> {
    let mut taken = [false; TAG_COLOURS.len()];
    let mut out = alloc::vec::Vec::with_capacity(paths.len());
    for (k, path) in paths.iter().enumerate() {
        let mut i = preferred(path);
        if k < TAG_COLOURS.len() {
            while taken[i] {
                i = (i + 1) % TAG_COLOURS.len();
            }
        }
        taken[i] = true;
        out.push(TAG_COLOURS[i]);
    }
    out
}
