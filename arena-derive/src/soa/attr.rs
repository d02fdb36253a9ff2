//! Parsing `#[soa(...)]` on the struct (`align = N`, `derive(..)`, `crate = path`, `tiled`,
//! `plain`) and on fields (`nested`), with the shared helpers of [`crate::attr`]. Every mistake is
//! recorded with the span of what was written, and parsing goes on. Also notes a `#[serde(..)]`
//! on the struct that checks its fields (`try_from`, `from`), which `plain` contradicts.

use syn::punctuated::Punctuated;
use syn::{Attribute, LitInt, Path, Token};

use crate::attr::{self, Attr, BoolAttr};
use crate::ctxt::Ctxt;

const ATTR: &str = "soa";
const CONTAINER_KEYS: &str = "align, derive, crate, tiled, plain";
const FIELD_KEYS: &str = "nested";

/// The struct-level `#[soa(...)]` settings.
pub struct Container {
    /// `align = N`: every column starts on an `N`-byte boundary. The literal, for its span.
    pub align: Option<LitInt>,
    /// `derive(A, B)`: traits to derive on the view structs (`Debug` is skipped: the views always
    /// implement it).
    pub derives: Vec<Path>,
    /// `crate = path`: where arena-kit is, for renamed dependencies.
    pub krate: Option<Path>,
    /// `tiled` (the key as written): also implement `SoaTiled`, with the tile views.
    pub tiled: Option<Path>,
    /// `plain` (the key as written): any field values make a valid row and its clone is its
    /// fields' clones, so implement `PlainRow` though some field is not `pub`.
    pub plain: Option<Path>,
    /// The key of a `#[serde(try_from = "..")]` or `#[serde(from = "..")]` on the struct: its
    /// `Deserialize` builds the row through a conversion, which may check the fields.
    pub serde_conversion: Option<Path>,
    /// The struct is `#[non_exhaustive]`: other crates cannot build it with a struct
    /// expression, even when every field is `pub`.
    pub non_exhaustive: bool,
}

/// The field-level `#[soa(...)]` settings.
pub struct Field {
    /// `nested` (the key as written): the field's type is itself `Soa`; its columns become
    /// columns of this struct.
    pub nested: Option<Path>,
}

impl Container {
    /// Parses every `#[soa(...)]` on the struct.
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut align = Attr::none(cx, ATTR, "align");
        let mut derives = Attr::none(cx, ATTR, "derive");
        let mut krate = Attr::none(cx, ATTR, "crate");
        let mut tiled = BoolAttr::none(cx, ATTR, "tiled");
        let mut plain = BoolAttr::none(cx, ATTR, "plain");
        attr::each_key(cx, attrs, ATTR, |key, meta| {
            match key {
                "align" => align.set_opt(&meta.path, attr::align(cx, meta)?.map(|(lit, _)| lit)),
                "derive" => {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let paths = Punctuated::<Path, Token![,]>::parse_terminated(&content)?;
                    if paths.is_empty() {
                        cx.error_spanned_by(
                            &meta.path,
                            "`derive()` is empty: list the traits, as in `derive(Debug, Clone)`",
                        );
                    }
                    derives.set(&meta.path, paths.into_iter().collect());
                }
                "crate" => krate.set_opt(&meta.path, attr::krate(cx, meta)?),
                "tiled" => tiled.set_from(meta)?,
                "plain" => plain.set_from(meta)?,
                "nested" => attr::misplaced(
                    cx,
                    meta,
                    "on a field whose type is itself `Soa`, not on the struct",
                )?,
                _ => attr::unknown(cx, meta, ATTR, CONTAINER_KEYS)?,
            }
            Ok(())
        });
        Container {
            align: align.get(),
            derives: derives.get().unwrap_or_default(),
            krate: krate.get(),
            tiled: tiled.get(),
            plain: plain.get(),
            serde_conversion: serde_conversion(attrs),
            non_exhaustive: attrs.iter().any(|a| a.path().is_ident("non_exhaustive")),
        }
    }
}

/// The `try_from` or `from` key of a `#[serde(...)]` on the struct, if any. serde's own attribute:
/// what it says otherwise, and any mistake in it, is serde's to report.
fn serde_conversion(attrs: &[Attribute]) -> Option<Path> {
    let mut found = None;
    for a in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|meta| {
            if found.is_none() && (meta.path.is_ident("try_from") || meta.path.is_ident("from")) {
                found = Some(meta.path.clone());
            }
            attr::skip_value(meta.input)
        });
    }
    found
}

impl Field {
    /// Parses every `#[soa(...)]` on a field.
    pub fn from_ast(cx: &Ctxt, field: &syn::Field) -> Self {
        let mut nested = BoolAttr::none(cx, ATTR, "nested");
        attr::each_key(cx, &field.attrs, ATTR, |key, meta| {
            match key {
                "nested" => nested.set_from(meta)?,
                "align" | "derive" | "crate" | "tiled" | "plain" => attr::misplaced(
                    cx,
                    meta,
                    "on the struct: put it in a #[soa(...)] above the struct, not on a field",
                )?,
                _ => attr::unknown(cx, meta, ATTR, FIELD_KEYS)?,
            }
            Ok(())
        });
        Field {
            nested: nested.get(),
        }
    }
}
