use arena_kit::prelude::*;

#[derive(Soa)]
pub struct Named<'n> {
    pub name: &'n str,
    pub score: u32,
}

fn main() {
    let mut v: SoaVec<Named<'static>> = SoaVec::new();
    v.push(Named { name: "static", score: 0 });
    {
        let short = String::from("short");
        // The row view is `&mut &'static str`: a shorter borrow cannot be written through it.
        *v.get_mut(0).unwrap().name = &short;
    }
    let name: &'static str = *v.get(0).unwrap().name;
    println!("{name}");
}
