//! Code generation for `#[derive(Layout)]` (enums go to [`super::enums`]): the `HasLayout` impl, then one free `const _` item per
//! assertion on the concrete type, so `cargo check` (and editors) evaluate it.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, GenericParam, Lifetime, Member, parse_quote};

use crate::ast::{self as ast_model, InputData};
use crate::ctxt::Ctxt;

use super::attr::{Container, Field, Kind, LineCheck, member_name};
use super::{Input, valid};

/// Expands `#[derive(Layout)]`. The impl is emitted even when attributes are wrong, so uses of
/// `LAYOUT` don't add follow-on errors to the real ones.
pub fn derive(node: &DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let input = Input::from_syn(&cx, node, Container::from_ast, Field::from_ast);
    valid::check(&cx, &input);

    let krate = input
        .attrs
        .krate
        .clone()
        .unwrap_or_else(|| parse_quote!(::arena_kit));
    let private = quote!(#krate::__private_v0_1);
    let (imp, checks) = match &node.data {
        Data::Enum(data) => {
            super::enums::check_variants(&cx, data);
            let imp = super::enums::impl_has_enum_layout(node, data, &private);
            let checks = if cx.has_errors() {
                TokenStream::new()
            } else {
                let mut checks = super::enums::assertions(&input, data, &private);
                checks.extend(registration(&input, &private));
                checks
            };
            (imp, checks)
        }
        _ => {
            let imp = impl_has_layout(&input, &private);
            let checks = if cx.has_errors() {
                TokenStream::new()
            } else {
                let mut checks = assertions(&input, &private);
                checks.extend(registration(&input, &private));
                checks
            };
            (imp, checks)
        }
    };
    match cx.check() {
        Ok(()) => quote!(#imp #checks),
        Err(err) => {
            let errors = err.to_compile_error();
            quote!(#imp #errors)
        }
    }
}

/// `private` is the versioned path generated code reaches arena-kit-core through.
fn impl_has_layout(input: &Input<'_>, private: &TokenStream) -> TokenStream {
    let InputData::Struct(_, fields) = &input.data else {
        return TokenStream::new();
    };
    let ident = input.ident;
    let name = ident.unraw().to_string();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let core = quote!(#private::core);
    let layout = quote!(#private::layout);
    let repr = repr_expr(input, &layout);
    let field_layouts = fields.iter().map(|f| {
        let name = f.name();
        let ty = f.ty;
        let ty_text = type_text(ty);
        let member = &f.member;
        quote! {
            #layout::FieldLayout::new(
                #name,
                #ty_text,
                #core::mem::offset_of!(Self, #member),
                #core::mem::size_of::<#ty>(),
                #core::mem::align_of::<#ty>(),
            )
        }
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #layout::HasLayout for #ident #ty_generics #where_clause {
            const LAYOUT: #layout::StructLayout = #layout::StructLayout::new(
                #name,
                #repr,
                #core::mem::size_of::<Self>(),
                #core::mem::align_of::<Self>(),
                &[#(#field_layouts),*],
            );
        }
    }
}

fn repr_expr(input: &Input<'_>, layout: &TokenStream) -> TokenStream {
    let repr = &input.repr;
    let mut expr = if repr.transparent {
        quote!(#layout::Repr::TRANSPARENT)
    } else if repr.c {
        quote!(#layout::Repr::C)
    } else {
        quote!(#layout::Repr::RUST)
    };
    if let Some(n) = repr.packed {
        let n = n as usize;
        expr = quote!(#expr.packed(#n));
    }
    if let Some(n) = repr.align {
        let n = n as usize;
        expr = quote!(#expr.aligned(#n));
    }
    expr
}

/// One `const _` item per assertion, and one for `report`. The `panic!` path carries the key's
/// span and its argument group the value's, so rustc underlines `size = 16`, not the derive.
fn assertions(input: &Input<'_>, private: &TokenStream) -> TokenStream {
    let attrs = &input.attrs;
    let InputData::Struct(_, fields) = &input.data else {
        return TokenStream::new();
    };
    let ty = concrete_type(input);
    let n = fields.len();
    let core = quote!(#private::core);
    let checks = quote!(#private::layout::check);
    let mut out = TokenStream::new();
    for a in &attrs.assertions {
        let check = syn::Ident::new(a.kind.key(), Span::call_site());
        let (args, value_span) = match &a.lines {
            Some(lines) => (line_args(a.kind, lines, fields), lines.span),
            None => (
                a.value.as_ref().map(|v| quote!(#v)).unwrap_or_default(),
                a.value.as_ref().map_or(a.key.span(), |v| v.span()),
            ),
        };
        let panic = spanned_panic(&core, a.key.span(), value_span);
        let cfg = a.cfg.as_ref().map(|pred| quote!(#[cfg(#pred)]));
        out.extend(quote! {
            #cfg
            const _: () = match #checks::#check::<#ty, #n>(#args) {
                #core::option::Option::Some(message) => #panic,
                #core::option::Option::None => {}
            };
        });
    }
    if let Some(span) = attrs.report {
        let panic = spanned_panic(&core, span, span);
        let cfg = attrs.report_cfg.as_ref().map(|pred| quote!(#[cfg(#pred)]));
        out.extend(quote! {
            #cfg
            const _: () = {
                let message = #checks::report::<
                    #ty,
                    #n,
                    { #checks::report_capacity(#n) },
                >();
                #panic
            };
        });
    }
    out
}

/// The arguments of a cache-line check: the fields as indices into `LAYOUT.fields()` (`valid`
/// has checked that each names a field), the line size and, for `hot`, the lines allowed.
fn line_args(kind: Kind, lines: &LineCheck, fields: &[ast_model::Field<'_, Field>]) -> TokenStream {
    let index = |m: &Member| {
        let name = member_name(m);
        fields
            .iter()
            .position(|f| f.name() == name)
            .expect("valid checked the field names")
    };
    let idx: Vec<usize> = lines.fields.iter().map(index).collect();
    let line = lines.line as usize;
    if kind == Kind::Hot {
        let hot_lines = lines.hot_lines as usize;
        quote!(&[#(#idx),*], #line, #hot_lines)
    } else {
        let (a, b) = (idx[0], idx[1]);
        quote!(#a, #b, #line)
    }
}

/// The call that adds the struct to the layout registry; `register!` expands to nothing unless
/// the facade's `layout-registry` feature is on. A struct with type or const parameters has no
/// layout of its own: users list its instantiations with `layouts![...]`.
fn registration(input: &Input<'_>, private: &TokenStream) -> TokenStream {
    let generic = input
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, GenericParam::Lifetime(_)));
    if generic {
        return TokenStream::new();
    }
    let ty = concrete_type(input);
    let name = input.ident.unraw().to_string();
    match input.data {
        InputData::Struct(..) => quote!(#private::layout::register!(#ty, #name);),
        InputData::Enum(..) => quote!(#private::layout::register!(@enum #ty, #name);),
        _ => TokenStream::new(),
    }
}

/// `core::panic!("{}", message.as_str())` with the path spanned at the key and the argument group
/// at the value: rustc reports a macro call from its path to its closing delimiter.
pub(super) fn spanned_panic(core: &TokenStream, key: Span, value: Span) -> TokenStream {
    let path = respan(quote!(#core::panic!), key);
    let mut args = Group::new(Delimiter::Parenthesis, quote!("{}", message.as_str()));
    args.set_span(value);
    quote!(#path #args)
}

/// `tokens` with every span set to `span`; a span that starts at the derive would make rustc
/// report the whole call at the derive.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// The struct's type for a free const item: lifetimes become `'static` (they don't change the
/// layout); type parameters were rejected before this runs.
pub(super) fn concrete_type(input: &Input<'_>) -> TokenStream {
    let ident = input.ident;
    let lifetimes: Vec<Lifetime> = input
        .generics
        .params
        .iter()
        .filter(|p| matches!(p, GenericParam::Lifetime(_)))
        .map(|_| parse_quote!('static))
        .collect();
    if lifetimes.is_empty() {
        quote!(#ident)
    } else {
        quote!(#ident<#(#lifetimes),*>)
    }
}

/// A type as a person writes it: `Vec<u32>`, not the token printer's `Vec < u32 >`.
pub(super) fn type_text(ty: &syn::Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        (" ;", ";"),
        (":: ", "::"),
        (" ::", "::"),
        ("& ", "&"),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        ("* const", "*const"),
        ("* mut", "*mut"),
    ] {
        s = s.replace(from, to);
    }
    s.replace("-><", "-> <").replace("dyn<", "dyn <")
}
