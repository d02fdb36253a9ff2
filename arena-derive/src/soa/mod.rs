//! `#[derive(Soa)]`: the model (`Input`, each field with its parsed `#[soa(...)]`), check
//! (`valid`), generate (`expand`).

mod attr;
pub mod expand;
mod tiled;
mod valid;

/// A `#[derive(Soa)]` input: the struct and its fields with their parsed `#[soa(...)]`.
type Input<'a> = crate::ast::Input<'a, attr::Container, attr::Field>;

/// One field of a `#[derive(Soa)]` input.
type Field<'a> = crate::ast::Field<'a, attr::Field>;
