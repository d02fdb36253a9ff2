//! `#[derive(Soa)]`: parse (`attr`), check (`valid`), generate (`expand`).

mod attr;
pub mod expand;
mod valid;
