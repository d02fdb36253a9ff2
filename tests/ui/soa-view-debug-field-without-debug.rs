// Views are always `Debug`, bounded on their fields: a field type without `Debug` is an error
// only where a view is printed, and it names the field type, not the generated view.
use arena_kit::prelude::*;

struct Mesh;

#[derive(Soa)]
struct Model {
    id: u32,
    mesh: Mesh,
}

fn main() {
    let mut models = SoaVec::new();
    models.push(Model { id: 1, mesh: Mesh });
    println!("{}", models.slices().id[0]); // fine: nothing printed with `{:?}`
    println!("{:?}", models.get(0).unwrap());
}
