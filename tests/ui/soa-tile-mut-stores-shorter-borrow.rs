use arena_kit::prelude::*;

#[derive(Soa)]
#[soa(tiled)]
pub struct Named<'n> {
    pub name: &'n str,
    pub score: u32,
}

fn main() {
    let mut t: SoaTiles<Named<'static>, 4> = SoaTiles::new();
    for _ in 0..4 {
        t.push(Named { name: "static", score: 0 });
    }
    {
        let short = String::from("short");
        // A tile's lane array is `&mut [&'static str; 4]`: a shorter borrow cannot be stored.
        for tile in t.tiles_mut() {
            tile.name[0] = &short;
        }
    }
    let name: &'static str = *t.get(0).unwrap().name;
    println!("{name}");
}
