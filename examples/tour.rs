//! The tour of arena-kit: every part, on the seeds' own examples, in one run.
//!
//! `cargo run --release --example tour`

#[path = "layout_report.rs"]
mod layout_report;
#[path = "particles.rs"]
mod particles;

fn main() {
    layout_report::run();
    println!();
    particles::run();
}
