// The views an indirect sort's comparator gets are valid for one comparison: it cannot keep them
// (they would outlive the borrow of the rows, which a later `push` may move).
use arena_kit::{Soa, SoaVec};

#[derive(Soa)]
struct Sprite {
    depth: f32,
    id: u32,
}

fn main() {
    let mut sprites: SoaVec<Sprite> = SoaVec::new();
    sprites.push(Sprite { depth: 1.0, id: 0 });
    let mut kept = Vec::new();
    let _ = sprites.sort_indices_by(|a, b| {
        let order = a.depth.total_cmp(b.depth);
        kept.push(a);
        order
    });
    sprites.push(Sprite { depth: 2.0, id: 1 });
    println!("{}", kept[0].id);
}
