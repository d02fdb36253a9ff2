//! What every derive's attribute parsing shares: a setting that may be given once ([`Attr`]),
//! flags ([`BoolAttr`]), the walk over every key of every `#[name(...)]`, and the value parsers
//! (`= N`, `align = N`, `crate = path`). Each mistake has one wording here, whichever derive finds
//! it, and is recorded in the [`Ctxt`] without stopping, so one build reports them all.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;

/// The largest alignment Rust accepts (`repr(align(N))` and `Layout` both stop at 2^29).
pub const MAX_ALIGN: u64 = 1 << 29;

/// A setting that may be given once. The first value wins; a second is reported at its key
/// (serde_derive's `Attr<T>` shape).
pub struct Attr<'c, T> {
    cx: &'c Ctxt,
    attr: &'static str,
    key: &'static str,
    value: Option<T>,
}

impl<'c, T> Attr<'c, T> {
    /// Not given yet: key `key` of `#[attr(...)]`.
    pub fn none(cx: &'c Ctxt, attr: &'static str, key: &'static str) -> Self {
        Attr {
            cx,
            attr,
            key,
            value: None,
        }
    }

    /// Records `value`, written as `obj`; reports a duplicate at `obj` if the key was given.
    pub fn set<A: ToTokens>(&mut self, obj: A, value: T) {
        if self.value.is_some() {
            self.cx
                .error_spanned_by(obj, duplicate(self.attr, self.key));
        } else {
            self.value = Some(value);
        }
    }

    /// Records `value` if there is one (`None` after a mistake that was already reported).
    pub fn set_opt<A: ToTokens>(&mut self, obj: A, value: Option<T>) {
        if let Some(value) = value {
            self.set(obj, value);
        }
    }

    /// Whether the key was given with a usable value.
    pub fn is_set(&self) -> bool {
        self.value.is_some()
    }

    /// The value, if given.
    pub fn get(self) -> Option<T> {
        self.value
    }
}

/// A flag such as `#[soa(nested)]`; its value is the key, for spans.
pub struct BoolAttr<'c>(Attr<'c, Path>);

impl<'c> BoolAttr<'c> {
    /// Not given yet.
    pub fn none(cx: &'c Ctxt, attr: &'static str, key: &'static str) -> Self {
        BoolAttr(Attr::none(cx, attr, key))
    }

    /// Records the flag, reporting a value after it (`nested = true`) and a second copy.
    pub fn set_from(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let cx = self.0.cx;
        if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
            cx.error_spanned_by(&meta.path, no_value(self.0.key));
            skip_value(meta.input)?;
        }
        self.0.set(&meta.path, meta.path.clone());
        Ok(())
    }

    /// The key, if the flag was given.
    pub fn get(self) -> Option<Path> {
        self.0.get()
    }
}

/// A key's name as written: `align`, or `a::b` for a path.
pub fn key_name(path: &Path) -> String {
    match path.get_ident() {
        Some(ident) => ident.to_string(),
        None => path.to_token_stream().to_string().replace(' ', ""),
    }
}

/// Calls `f` with each key of every `#[attr(...)]` in `attrs`. A malformed attribute is recorded
/// and the walk goes on with the next one.
pub fn each_key(
    cx: &Ctxt,
    attrs: &[Attribute],
    attr: &str,
    mut f: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for a in attrs.iter().filter(|a| a.path().is_ident(attr)) {
        let parsed = a.parse_nested_meta(|meta| f(&key_name(&meta.path), &meta));
        if let Err(err) = parsed {
            cx.syn_error(err);
        }
    }
}

/// The message for a key given twice.
fn duplicate(attr: &str, key: &str) -> String {
    format!("duplicate `{key}` in #[{attr}(...)]: give each key once")
}

/// The message for a flag given a value.
fn no_value(key: &str) -> String {
    format!("`{key}` takes no value: write `{key}`")
}

/// Reports a key this derive does not know, and skips its value. `keys` lists the ones it does.
pub fn unknown(cx: &Ctxt, meta: &ParseNestedMeta<'_>, attr: &str, keys: &str) -> syn::Result<()> {
    let key = key_name(&meta.path);
    cx.error_spanned_by(
        &meta.path,
        format!("unknown #[{attr}] key `{key}`; expected one of: {keys}"),
    );
    skip_value(meta.input)
}

/// Reports a key written at the wrong level (`where_` says where it goes), and skips its value.
pub fn misplaced(cx: &Ctxt, meta: &ParseNestedMeta<'_>, where_: &str) -> syn::Result<()> {
    let key = key_name(&meta.path);
    cx.error_spanned_by(&meta.path, format!("`{key}` goes {where_}"));
    skip_value(meta.input)
}

/// Reports a value after a flag that takes none (`optimal = 1`), and skips it.
pub fn reject_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, no_value(&key_name(&meta.path)));
        skip_value(meta.input)?;
    }
    Ok(())
}

/// Parses `= N` after `key`. `Ok(None)` after a recorded mistake: no value, not an integer
/// literal, or out of range.
pub fn int(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<(LitInt, u64)>> {
    let key = key_name(&meta.path);
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` needs a value, as in `{key} = 16`"),
        );
        skip_value(meta.input)?;
        return Ok(None);
    }
    meta.input.parse::<Token![=]>()?;
    if !meta.input.peek(LitInt) {
        let tokens = take_until_comma(meta.input)?;
        cx.error_spanned_by(
            &tokens,
            format!("`{key}` takes an integer literal, as in `{key} = 16`"),
        );
        return Ok(None);
    }
    let lit: LitInt = meta.input.parse()?;
    match lit.base10_parse::<u64>() {
        Ok(n) => Ok(Some((lit, n))),
        Err(err) => {
            cx.syn_error(err);
            Ok(None)
        }
    }
}

/// Parses `align = N`: an integer that is a power of two no larger than [`MAX_ALIGN`].
pub fn align(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<(LitInt, u64)>> {
    let Some((lit, n)) = int(cx, meta)? else {
        return Ok(None);
    };
    if !n.is_power_of_two() || n > MAX_ALIGN {
        cx.error_spanned_by(
            &lit,
            format!(
                "`align = {n}` is not an alignment: alignments are powers of two up to 2^29, \
                 such as 8, 16 (SSE), 32 (AVX) or 64 (a cache line)"
            ),
        );
        return Ok(None);
    }
    Ok(Some((lit, n)))
}

/// Parses `crate = path` or `crate = "path"`: where arena-kit (or arena-kit-core) is, for a renamed
/// dependency. `Ok(None)` after a recorded mistake.
pub fn krate(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<Path>> {
    const HOW: &str = "`crate` takes the path of arena-kit as this crate names it, as in \
                       `crate = arena_kit` or `crate = \"arena_kit\"`";
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(&meta.path, HOW);
        skip_value(meta.input)?;
        return Ok(None);
    }
    meta.input.parse::<Token![=]>()?;
    let tokens = take_until_comma(meta.input)?;
    let path = match syn::parse2::<LitStr>(tokens.clone()) {
        Ok(text) => text.parse::<Path>().ok(),
        Err(_) => syn::parse2::<Path>(tokens.clone()).ok(),
    };
    if path.is_none() {
        if tokens.is_empty() {
            cx.error_spanned_by(&meta.path, HOW);
        } else {
            cx.error_spanned_by(&tokens, HOW);
        }
    }
    Ok(path)
}

/// Skips whatever follows a rejected key (`= value` or `(...)`), so the next key still parses.
pub fn skip_value(input: ParseStream<'_>) -> syn::Result<()> {
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
