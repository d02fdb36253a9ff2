//! Code generation for `#[soa(tiled)]`: the tile views `FooTile<'a, N>` and `FooTileMut<'a, N>`
//! (a `&[F; N]` / `&mut [F; N]` per field, a nested field's own tile view) and a safe impl of
//! arena-kit-core's `SoaTiled` that only wraps the tuple of lane arrays the container hands it.
//!
//! An attribute of `#[derive(Soa)]` rather than a derive of its own: the struct's `#[soa(...)]`
//! is parsed (and its mistakes reported) once, and `Soa` itself is unchanged, so a hand-written
//! `Soa` impl still compiles (and may implement `SoaTiled` by hand).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ConstParam, GenericParam, Ident, Lifetime, WherePredicate, parse_quote};

use crate::ast::Style;

use super::expand::{debug_impl, field_docs, view_generics};
use super::{Field, Input};

/// What the `Soa` expansion already computed and the tile views reuse.
pub struct Shared<'s> {
    /// The views' lifetime (`'a`, or `'__soa`).
    pub lt: &'s Lifetime,
    /// `<crate>::__private_v0_1::soa`.
    pub soa: &'s TokenStream,
    /// `<crate>::__private_v0_1`.
    pub private: &'s TokenStream,
    /// The nested tuple of bindings (`(__soa_0, (__soa_1, ()))`).
    pub pattern: &'s TokenStream,
    /// The struct body from the bindings (`{ x: __soa_0, y: __soa_1, }`).
    pub build: &'s TokenStream,
}

/// The tile views and the `SoaTiled` impl.
pub fn generate(
    input: &Input<'_>,
    style: Style,
    fields: &[Field<'_>],
    s: &Shared<'_>,
) -> TokenStream {
    let Shared {
        lt,
        soa,
        private,
        pattern,
        build,
    } = *s;
    let ident = input.ident;
    let name = ident.unraw().to_string();
    let vis = input.vis;
    let n = lanes_param(input);
    let nested: Vec<bool> = fields.iter().map(|f| f.attrs.nested.is_some()).collect();
    let tiled_bounds: Vec<WherePredicate> = fields
        .iter()
        .filter(|f| f.attrs.nested.is_some())
        .map(|f| {
            let ty = f.ty;
            parse_quote!(for<'__soa_nested> #ty: #soa::SoaTiled)
        })
        .collect();

    let (mut view_generics, impl_generics_tiled) = view_generics(input, lt, &tiled_bounds);
    view_generics.params.push(GenericParam::Const(ConstParam {
        attrs: Vec::new(),
        const_token: Default::default(),
        ident: n.clone(),
        colon_token: Default::default(),
        ty: parse_quote!(#private::core::primitive::usize),
        eq_token: None,
        default: None,
    }));
    let (_, view_ty, view_where) = view_generics.split_for_impl();
    let decl_params = &view_generics.params;
    let (impl_generics, ty_generics, _) = input.generics.split_for_impl();
    let tiled_where = impl_generics_tiled.split_for_impl().2;

    let mut out = TokenStream::new();
    let mut assoc = TokenStream::new();
    for exclusive in [false, true] {
        let suffix = if exclusive { "TileMut" } else { "Tile" };
        let view_name = format_ident!("{}{}", ident.unraw(), suffix);
        let field_ty = |ty: &syn::Type, nested: bool| -> TokenStream {
            match (nested, exclusive) {
                (true, false) => quote!(<#ty as #soa::SoaTiled>::Tile<#lt, #n>),
                (true, true) => quote!(<#ty as #soa::SoaTiled>::TileMut<#lt, #n>),
                (false, false) => quote!(&#lt [#ty; #n]),
                (false, true) => quote!(&#lt mut [#ty; #n]),
            }
        };
        let doc = if exclusive {
            format!(
                "One tile of stored [`{name}`] values: each field's `N` lanes as an exclusive \
                 array (from `tiles_mut`)."
            )
        } else {
            format!(
                "One tile of stored [`{name}`] values: each field's `N` lanes as a shared array \
                 (from `tiles`)."
            )
        };
        out.extend(debug_impl(
            &view_name,
            style,
            fields,
            &nested,
            (&view_generics, view_ty.clone(), view_where),
            field_ty,
            private,
        ));
        let field_decls = fields.iter().zip(&nested).map(|(f, &nf)| {
            let fvis = f.vis;
            let fty = field_ty(f.ty, nf);
            let docs = field_docs(f);
            match style {
                Style::Named => {
                    let m = &f.member;
                    quote!(#(#docs)* #fvis #m: #fty)
                }
                _ => quote!(#(#docs)* #fvis #fty),
            }
        });
        let body = match style {
            Style::Named => quote!(#view_where { #(#field_decls,)* }),
            _ => quote!(( #(#field_decls,)* ) #view_where;),
        };
        out.extend(quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            #vis struct #view_name<#decl_params> #body
        });
        let (ty, f, cols) = if exclusive {
            (
                format_ident!("TileMut"),
                format_ident!("view_tile_mut"),
                format_ident!("TileMut"),
            )
        } else {
            (
                format_ident!("Tile"),
                format_ident!("view_tile"),
                format_ident!("Tile"),
            )
        };
        assoc.extend(quote! {
            type #ty<#lt, const #n: #private::core::primitive::usize> = #view_name #view_ty where Self: #lt;
            #[inline(always)]
            fn #f<#lt, const #n: #private::core::primitive::usize>(
                #pattern: <Self::Columns as #soa::TileColumns>::#cols<#lt, #n>,
            ) -> Self::#ty<#lt, #n>
            where
                Self: #lt,
            {
                #view_name #build
            }
        });
    }
    let checks = tiled_checks(input, fields, soa);
    quote! {
        #out
        #[doc(hidden)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #soa::SoaTiled for #ident #ty_generics #tiled_where {
                #assoc
            }
            #checks
        };
    }
}

/// One check per `#[soa(nested)]` field that its type is tiled too, spanned at the type.
fn tiled_checks(input: &Input<'_>, fields: &[Field<'_>], soa: &TokenStream) -> TokenStream {
    if input.has_type_params() {
        return TokenStream::new();
    }
    let (impl_generics, _, where_clause) = input.generics.split_for_impl();
    let calls = fields.iter().filter(|f| f.attrs.nested.is_some()).map(|f| {
        let ty = f.ty;
        quote_spanned!(ty.span()=> #soa::nested_field_is_tiled::<#ty>();)
    });
    quote! {
        #[allow(dead_code)]
        fn __soa_nested_fields_tiled #impl_generics () #where_clause {
            #(#calls)*
        }
    }
}

/// The tile views' lane count parameter: `N`, or `__SOA_N` if the struct already has an `N`.
fn lanes_param(input: &Input<'_>) -> Ident {
    let taken = input.generics.params.iter().any(|p| match p {
        GenericParam::Type(t) => t.ident == "N",
        GenericParam::Const(c) => c.ident == "N",
        GenericParam::Lifetime(_) => false,
    });
    format_ident!("{}", if taken { "__SOA_N" } else { "N" })
}
