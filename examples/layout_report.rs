//! What structs cost: `#[derive(Layout)]` reports for `Bad`, `Good`, an `Enemy` with its fields
//! in a poor order and the 28-byte `Particle`, with the assertions that keep them that way.
//!
//! Run with `cargo run --example layout_report`; the tour's first stop shows `Enemy`.
//! `cargo run --example layout_report -- --markdown` prints one Markdown table instead: every
//! registered type with `--features layout-registry`, else these four.

#[cfg(not(feature = "layout-registry"))]
use arena_kit::layout::snapshot::Row;
use arena_kit::layout::snapshot::Snapshot;
use arena_kit::prelude::*;

/// `struct Bad { char a; double b; char c; }`: 10 bytes of data in 24.
#[derive(Layout)]
#[layout(size = 24)]
#[repr(C)]
pub struct Bad {
    a: u8,
    b: f64,
    c: u8,
}

/// The same fields, largest alignment first: 16 bytes.
#[derive(Layout)]
#[layout(size = 16, optimal)]
#[repr(C)]
pub struct Good {
    b: f64,
    a: u8,
    c: u8,
}

/// 24 bytes as written, 16 in the order the report suggests.
#[derive(Layout)]
#[layout(max_size = 24)]
#[repr(C)]
pub struct Enemy {
    alive: bool,
    health: f64,
    kind: u8,
    id: i32,
}

/// Seven floats: no padding, 28 bytes an element as an array of structs or as columns.
#[derive(Layout)]
#[layout(size = 28, max_padding = 0)]
#[repr(C)]
pub struct Particle {
    x: f32,
    y: f32,
    z: f32,
    vx: f32,
    vy: f32,
    vz: f32,
    life: f32,
}

/// Prints the four reports.
pub fn run() {
    println!("== Layout: what these structs cost ==\n");
    for layout in [Bad::LAYOUT, Good::LAYOUT, Enemy::LAYOUT, Particle::LAYOUT] {
        println!("{layout}\n");
    }
    // A million elements of N bytes take N MB (decimal).
    let bad = Bad::LAYOUT;
    println!(
        "A million `Bad`s take {} MB; reordered as `Good`, {} MB; as struct-of-arrays, {} MB.\n",
        bad.size(),
        bad.min_size(),
        bad.soa_size()
    );
}

/// The table of every registered type (`layout-registry`), or of the four above without it.
pub fn markdown() -> String {
    #[cfg(feature = "layout-registry")]
    let table = Snapshot::registered();
    #[cfg(not(feature = "layout-registry"))]
    let table = {
        let here = module_path!();
        Snapshot::from_rows([
            Row::of_struct(format!("{here}::Bad"), &Bad::LAYOUT),
            Row::of_struct(format!("{here}::Good"), &Good::LAYOUT),
            Row::of_struct(format!("{here}::Enemy"), &Enemy::LAYOUT),
            Row::of_struct(format!("{here}::Particle"), &Particle::LAYOUT),
        ])
    };
    table.to_markdown()
}

#[allow(dead_code)]
fn main() {
    if std::env::args().skip(1).any(|a| a == "--markdown") {
        print!("{}", markdown());
    } else {
        run();
    }
}
