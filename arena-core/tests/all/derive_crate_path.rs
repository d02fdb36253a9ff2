//! Both derives used from arena-kit-core itself, as a crate that depends on arena-kit-core without the
//! `arena-kit` facade would: `crate = arena_kit_core` (or the string form `crate = "arena_kit_core"`)
//! points the generated code at `arena_kit_core::__private_v0_1`.

use arena_kit_core::layout::HasLayout;
use arena_kit_core::soa::SoaVec;
use arena_kit_derive::{Layout, Soa};

/// Checked at compile time through arena-kit-core's own path.
#[derive(Layout)]
#[layout(crate = arena_kit_core, size = 16, align = 8, max_padding = 6, optimal)]
#[repr(C)]
struct Header {
    offset: u64,
    kind: u8,
    flags: u8,
}

/// The string form, as serde's `#[serde(crate = "...")]` takes it.
#[derive(Soa)]
#[soa(crate = "arena_kit_core")]
struct Point {
    x: f32,
    y: f32,
}

#[test]
fn layout_derive_reaches_core_through_the_crate_path() {
    let l = Header::LAYOUT;
    assert_eq!((l.size(), l.align(), l.padding()), (16, 8, 6));
    let names: Vec<&str> = l.fields().iter().map(|f| f.name).collect();
    assert_eq!(names, ["offset", "kind", "flags"]);
    assert_eq!(l.fields()[1].offset, 8);
}

#[test]
fn soa_derive_accepts_the_crate_path_as_a_string() {
    let mut v = SoaVec::new();
    v.push(Point { x: 1.0, y: 2.0 });
    v.push(Point { x: 3.0, y: 4.0 });
    assert_eq!(v.slices().x, &[1.0, 3.0]);
    assert_eq!(*v.get(1).unwrap().y, 4.0);
    let p = v.pop().unwrap();
    assert_eq!((p.x, p.y), (3.0, 4.0));
}
