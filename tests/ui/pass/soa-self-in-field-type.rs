// `Self` in a field's type names the row, as in any struct: the generated views (where `Self`
// would name the view) and `to_value` must read it as the row, so this compiles.
use arena_kit::prelude::*;

#[derive(Soa)]
pub struct Node {
    pub id: u32,
    pub next: Option<Box<Self>>,
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Node { id: 1, next: None });
    let next: &Option<Box<Node>> = v.get(0).unwrap().next;
    assert!(next.is_none());
}
