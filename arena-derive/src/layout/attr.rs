//! Parsing `#[layout(...)]`: every key keeps its span and its value's span, and every mistake is
//! recorded without stopping, so one build reports them all.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::{Attribute, Ident, LitInt, Token};

use crate::ctxt::Ctxt;

/// The keys `#[layout(...)]` accepts, for the unknown-key message.
const KEYS: &str = "size, max_size, align, max_padding, optimal, report, crate";

/// The struct-level `#[layout(...)]` attributes of one input.
#[derive(Default)]
pub struct Attrs {
    /// The checks to generate, in the order written.
    pub assertions: Vec<Assertion>,
    /// `report`, with its span.
    pub report: Option<Span>,
    /// `crate = path`: where arena-kit is, for renamed dependencies.
    pub krate: Option<syn::Path>,
}

/// One assertion such as `size = 16`.
pub struct Assertion {
    /// What is checked.
    pub kind: Kind,
    /// The key as written, for its span.
    pub key: Ident,
    /// The value as written (`16`), for its span; `None` for `optimal`.
    pub value: Option<LitInt>,
}

/// The kinds of layout assertion.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `size = N`
    Size,
    /// `max_size = N`
    MaxSize,
    /// `align = N`
    Align,
    /// `max_padding = N`
    MaxPadding,
    /// `optimal`
    Optimal,
}

impl Kind {
    fn from_key(key: &str) -> Option<Kind> {
        Some(match key {
            "size" => Kind::Size,
            "max_size" => Kind::MaxSize,
            "align" => Kind::Align,
            "max_padding" => Kind::MaxPadding,
            "optimal" => Kind::Optimal,
            _ => return None,
        })
    }

    /// Whether the key takes `= N`.
    fn takes_value(self) -> bool {
        self != Kind::Optimal
    }
}

/// Parses every `#[layout(...)]` on the struct.
pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> Attrs {
    let mut out = Attrs::default();
    let mut seen: Vec<String> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("layout")) {
        let parsed = attr.parse_nested_meta(|meta| {
            let key_text = meta.path.to_token_stream().to_string();
            if seen.contains(&key_text) {
                cx.error_spanned_by(
                    &meta.path,
                    format!("duplicate `{key_text}` in #[layout(...)]: give each key once"),
                );
                skip_value(meta.input)?;
                return Ok(());
            }
            seen.push(key_text.clone());

            if meta.path.is_ident("crate") {
                out.krate = Some(meta.value()?.parse()?);
            } else if meta.path.is_ident("report") {
                if meta.input.peek(Token![=]) {
                    cx.error_spanned_by(&meta.path, "`report` takes no value: write `report`");
                    skip_value(meta.input)?;
                }
                out.report = Some(
                    meta.path
                        .get_ident()
                        .map_or_else(Span::call_site, Ident::span),
                );
            } else if let Some(kind) = meta
                .path
                .get_ident()
                .and_then(|k| Kind::from_key(&k.to_string()).map(|kind| (kind, k.clone())))
            {
                let (kind, key) = kind;
                let value = parse_value(cx, &key, kind, meta.input)?;
                if !kind.takes_value() || value.is_some() {
                    out.assertions.push(Assertion { kind, key, value });
                }
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!("unknown #[layout] key `{key_text}`; expected one of: {KEYS}"),
                );
                skip_value(meta.input)?;
            }
            Ok(())
        });
        if let Err(err) = parsed {
            cx.syn_error(err);
        }
    }
    out
}

/// Parses `= N` after a key, recording what is wrong with it. `Ok(None)` after a recorded error.
fn parse_value(
    cx: &Ctxt,
    key: &Ident,
    kind: Kind,
    input: ParseStream<'_>,
) -> syn::Result<Option<LitInt>> {
    if !kind.takes_value() {
        if input.peek(Token![=]) {
            cx.error_spanned_by(key, format!("`{key}` takes no value: write `{key}`"));
            skip_value(input)?;
        }
        return Ok(None);
    }
    if !input.peek(Token![=]) {
        cx.error_spanned_by(key, format!("`{key}` needs a value, as in `{key} = 16`"));
        return Ok(None);
    }
    input.parse::<Token![=]>()?;
    if !input.peek(LitInt) {
        let tokens = take_until_comma(input)?;
        cx.error_spanned_by(
            &tokens,
            format!("`{key}` takes an integer literal, as in `{key} = 16`"),
        );
        return Ok(None);
    }
    let lit: LitInt = input.parse()?;
    let n = match lit.base10_parse::<u64>() {
        Ok(n) => n,
        Err(err) => {
            cx.syn_error(err);
            return Ok(None);
        }
    };
    if kind == Kind::Align && !n.is_power_of_two() {
        cx.error_spanned_by(
            &lit,
            format!("`align = {n}` can never hold: alignments are powers of two (1, 2, 4, 8, ...)"),
        );
        return Ok(None);
    }
    Ok(Some(lit))
}

/// Skips `= value` after a key that was rejected, so parsing goes on with the next key.
fn skip_value(input: ParseStream<'_>) -> syn::Result<()> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        take_until_comma(input)?;
    } else if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

fn take_until_comma(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    let mut tokens = TokenStream::new();
    while !input.is_empty() && !input.peek(Token![,]) {
        tokens.extend([input.parse::<proc_macro2::TokenTree>()?]);
    }
    Ok(tokens)
}
