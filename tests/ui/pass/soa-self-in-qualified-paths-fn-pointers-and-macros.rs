// `Self` in field types in every position a type can hold it: a qualified path
// (`<Self as Trait>::X`), an associated const in an array length (`[u8; Self::N]`), function
// pointers and trait objects (`fn(Self) -> Self`, `dyn Fn(&Self)`), a macro invocation in type
// position, generic and lifetime-carrying rows. It names the row everywhere, so this compiles.
#![allow(dead_code)]

use arena_kit::prelude::*;

pub trait Named {
    type Name;
}

macro_rules! boxed {
    ($t:ty) => {
        Option<Box<$t>>
    };
}

#[derive(Soa)]
pub struct Plain {
    pub id: u32,
    pub name: <Self as Named>::Name,
    pub bytes: [u8; Self::N],
    pub make: fn(Self) -> Self,
    pub look: Option<Box<dyn Fn(&Self) -> u32>>,
    pub next: boxed!(Self),
}

impl Plain {
    pub const N: usize = 4;
}

impl Named for Plain {
    type Name = &'static str;
}

#[derive(Soa)]
pub struct Generic<'a, T: Clone> {
    pub value: T,
    pub text: &'a str,
    pub name: <Self as Named>::Name,
    pub next: Option<Box<Self>>,
    pub make: fn(&Self) -> T,
    pub also: boxed!(Generic<'a, T>),
}

impl<T: Clone> Named for Generic<'_, T> {
    type Name = T;
}

fn main() {
    let mut v = SoaVec::new();
    v.push(Plain {
        id: 1,
        name: "one",
        bytes: [1; 4],
        make: |p| p,
        look: Some(Box::new(|p: &Plain| p.id)),
        next: None,
    });
    let row = v.get(0).unwrap();
    let _: &[u8; 4] = row.bytes;
    let _: &fn(Plain) -> Plain = row.make;
    let _: &Option<Box<Plain>> = row.next;
    assert_eq!(*row.name, "one");

    let text = String::from("borrowed");
    let mut g = SoaVec::new();
    g.push(Generic {
        value: 7u8,
        text: &text,
        name: 9u8,
        next: None,
        make: |g: &Generic<'_, u8>| g.value,
        also: None,
    });
    let row = g.get(0).unwrap();
    let _: &Option<Box<Generic<'_, u8>>> = row.next;
    assert_eq!((*row.value, *row.name, *row.text), (7, 9, "borrowed"));
}
