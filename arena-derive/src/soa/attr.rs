//! Parsing `#[soa(...)]` on the struct (`align = N`, `derive(..)`, `crate = path`) and on fields
//! (`nested`). Every mistake is recorded with the span of what was written, and parsing goes on.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Attribute, LitInt, Path, Token};

use crate::ctxt::Ctxt;

/// The largest alignment a `Layout` accepts on every target we build for.
const MAX_ALIGN: u64 = 1 << 29;

/// The struct-level `#[soa(...)]` settings.
#[derive(Default)]
pub struct Attrs {
    /// `align = N`: the value and the literal (for spans).
    pub align: Option<LitInt>,
    /// `derive(A, B)`: traits to derive on the view structs.
    pub derives: Vec<Path>,
    /// `crate = path`: where arena-kit is, for renamed dependencies.
    pub krate: Option<Path>,
}

/// The field-level `#[soa(...)]` settings.
#[derive(Default, Clone, Copy)]
pub struct FieldAttrs {
    /// `nested`: the field's type is itself `Soa`; its columns become columns of this struct.
    pub nested: Option<Span>,
}

/// Parses every `#[soa(...)]` on the struct.
pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> Attrs {
    let mut out = Attrs::default();
    each_key(cx, attrs, |key, meta| {
        match key {
            "align" => {
                let lit: LitInt = meta.value()?.parse()?;
                match lit.base10_parse::<u64>() {
                    Ok(n) if n.is_power_of_two() && n <= MAX_ALIGN => out.align = Some(lit),
                    Ok(n) => cx.error_spanned_by(
                        &lit,
                        format!(
                            "`align = {n}` is not a usable alignment: give a power of two up to \
                             2^29, such as 16 (SSE), 32 (AVX) or 64 (a cache line)"
                        ),
                    ),
                    Err(err) => cx.syn_error(err),
                }
            }
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
                out.derives.extend(paths);
            }
            "crate" => out.krate = Some(meta.value()?.parse()?),
            "nested" => {
                cx.error_spanned_by(
                    &meta.path,
                    "`nested` goes on a field whose type is itself `Soa`, not on the struct",
                );
            }
            _ => {
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown #[soa] key `{key}`; expected one of: align, derive, crate"),
                );
                skip_rest(meta)?;
            }
        }
        Ok(())
    });
    out
}

/// Parses every `#[soa(...)]` on a field.
pub fn parse_field(cx: &Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    each_key(cx, attrs, |key, meta| {
        match key {
            "nested" => {
                if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                    cx.error_spanned_by(
                        &meta.path,
                        "`nested` takes no value: write `#[soa(nested)]`",
                    );
                    skip_rest(meta)?;
                }
                out.nested = Some(meta.path.segments[0].ident.span());
            }
            "align" | "derive" | "crate" => {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "`{key}` applies to the whole struct: put it in a #[soa(...)] on the struct"
                    ),
                );
                skip_rest(meta)?;
            }
            _ => {
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown #[soa] field key `{key}`; the only field key is `nested`"),
                );
                skip_rest(meta)?;
            }
        }
        Ok(())
    });
    out
}

/// Calls `f` with each key of every `#[soa(...)]`, rejecting keys given twice.
fn each_key(
    cx: &Ctxt,
    attrs: &[Attribute],
    mut f: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    let mut seen: Vec<String> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("soa")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_else(|| {
                    quote::ToTokens::to_token_stream(&meta.path)
                        .to_string()
                        .replace(' ', "")
                });
            if seen.contains(&key) {
                cx.error_spanned_by(
                    &meta.path,
                    format!("duplicate `{key}` in #[soa(...)]: give it once"),
                );
                return skip_rest(&meta);
            }
            seen.push(key.clone());
            f(&key, &meta)
        });
        if let Err(err) = parsed {
            cx.syn_error(err);
        }
    }
}

/// Skips whatever follows a rejected key (`= value` or `(...)`), so the next key still parses.
fn skip_rest(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    let input = meta.input;
    if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        content.parse::<TokenStream>()?;
    } else if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        while !input.is_empty() && !input.peek(Token![,]) {
            input.parse::<proc_macro2::TokenTree>()?;
        }
    }
    Ok(())
}
