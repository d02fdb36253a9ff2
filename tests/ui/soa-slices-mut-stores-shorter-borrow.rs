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
        // The column is `&mut [&'static str]`: a shorter borrow cannot be stored in it.
        v.slices_mut().name[0] = &short;
    }
    let name: &'static str = v.slices().name[0];
    println!("{name}");
}
