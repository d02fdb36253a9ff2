//! `#[derive(Layout)]`: the model (`Input`, with `attr`'s parsed attributes), check (`valid`),
//! generate (`expand`).

mod attr;
mod enums;
pub mod expand;
mod valid;

/// A `#[derive(Layout)]` input: the struct with its parsed `#[layout(...)]`.
type Input<'a> = crate::ast::Input<'a, attr::Container, attr::Field>;
